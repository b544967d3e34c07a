"""Links spooled to disk: memory that grows with the pages, not the links.

A :class:`LinkSpool` takes ``(source, target)`` page pairs in any order, each seen once or a
given number of times (an edge list's count column); it holds them in memory up to
:data:`SPOOL_LINKS`, then appends them to two int32 files in a folder of its own under the linksim
home (``spool/``), and a third of counts once a pair with a count other than 1 was added.
:meth:`LinkSpool.aggregate` gives :class:`Links`, one per ordered pair with the times it was seen
(its counts summed), sorted by (source, target): in memory when nothing was spilled, else
merged source range by source range (ranges cut by out-degree, :data:`PARTITION_LINKS` each) into
on-disk arrays read chunk by chunk. Both ways give the same links, bit for bit. The loader spools
the links it reads; the graph stream spools the links it reads from Neo4j
(:meth:`linksim.graph.LinkGraph.from_spool`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from array import array
from pathlib import Path
from typing import Iterator

import numpy as np

#: Links held in memory before they go to the spool file (4 Mi links: 32 MiB as two int32 columns;
#: aggregating that many in memory takes about 250 MiB at its peak).
SPOOL_LINKS = 1 << 22
#: Links a source range of the on-disk aggregation holds at most (a page with more out-links is a
#: range of its own).
PARTITION_LINKS = 1 << 22
MAX_PAGES = (1 << 31) - 1


class Links:
    """Links aggregated to one per ordered pair (indices into ``CrawlGraph.urls``), sorted by
    (source, target): in memory, or in on-disk arrays read chunk by chunk (:meth:`chunks`)."""

    def __init__(self, source, target, count, seen: int, self_loops: int, self_loops_seen: int,
                 folder: Path | None = None) -> None:
        self._arrays = (source, target, count)
        self.seen = seen  # links read, before aggregation
        self.self_loops = self_loops  # distinct self-loop pairs (kept in the graph)
        self.self_loops_seen = self_loops_seen
        self.folder = folder  # the on-disk arrays' folder, or None
        self._length = len(source) if folder is None else os.path.getsize(folder / "source.i32") // 4

    @classmethod
    def on_disk(cls, folder: Path, seen: int, self_loops: int, self_loops_seen: int) -> "Links":
        return cls((), (), (), seen, self_loops, self_loops_seen, folder)

    def _column(self, position: int) -> np.ndarray:
        if self.folder is None:
            return self._arrays[position]
        name, dtype = _COLUMNS[position]
        return np.fromfile(self.folder / name, dtype=dtype).astype(np.int64)

    @property
    def source(self) -> np.ndarray:
        return self._column(0)

    @property
    def target(self) -> np.ndarray:
        return self._column(1)

    @property
    def count(self) -> np.ndarray:
        return self._column(2)

    def chunks(self, size: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(source, target, count)`` int64 arrays of at most ``size`` links, in order; on disk,
        only one chunk is in memory at a time."""
        for begin in range(0, len(self), size):
            end = min(begin + size, len(self))
            if self.folder is None:
                yield tuple(a[begin:end] for a in self._arrays)
            else:
                yield tuple(
                    np.fromfile(self.folder / name, dtype=dtype, count=end - begin,
                                offset=begin * np.dtype(dtype).itemsize).astype(np.int64)
                    for name, dtype in _COLUMNS
                )

    @property
    def duplicates(self) -> int:
        """Links read more than once for the same ordered pair (seen - distinct)."""
        return self.seen - len(self)

    def __len__(self) -> int:
        return self._length


_COLUMNS = (("source.i32", np.int32), ("target.i32", np.int32), ("count.i64", np.int64))


class LinkSpool:
    """The links read, in the order read: in memory up to ``limit`` links, then appended to two
    int32 files in a folder of their own (made at the first spill, removed by :meth:`close`).
    :meth:`mark` and :meth:`truncate` take back what was added since a mark (a reader that gives
    up on a file)."""

    def __init__(self, limit: int | None = None, root: Path | None = None) -> None:
        self.limit = SPOOL_LINKS if limit is None else limit
        self.root = root
        self.folder: Path | None = None
        self.source = array("i")
        self.target = array("i")
        self.counts: array | None = None  # a count a pair, once one pair's count is not 1
        self.spilled = 0
        self._aggregated: tuple[int, Links] | None = None

    def __len__(self) -> int:
        return self.spilled + len(self.source)

    def append(self, source: int, target: int, count: int = 1) -> None:
        if count != 1 and self.counts is None:
            self._count_from_now()
        self.source.append(source)
        self.target.append(target)
        if self.counts is not None:
            self.counts.append(count)
        if len(self.source) >= self.limit:
            self.spill()

    def append_from(self, source: int, targets: list[int]) -> None:
        """:meth:`append` of a link from ``source`` to each of ``targets``, seen once each."""
        self.source.extend([source] * len(targets))
        self.target.extend(targets)
        if self.counts is not None:
            self.counts.extend([1] * len(targets))
        if len(self.source) >= self.limit:
            self.spill()

    def extend(self, source: np.ndarray, target: np.ndarray, counts: np.ndarray | None = None) -> None:
        if counts is not None and self.counts is None and bool(np.any(counts != 1)):
            self._count_from_now()
        self.source.frombytes(np.asarray(source, dtype=np.int32).tobytes())
        self.target.frombytes(np.asarray(target, dtype=np.int32).tobytes())
        if self.counts is not None:
            self.counts.frombytes((np.ones(len(source), dtype=np.int64) if counts is None else
                                   np.asarray(counts, dtype=np.int64)).tobytes())
        if len(self.source) >= self.limit:
            self.spill()

    def _count_from_now(self) -> None:
        """Keep a count a pair from now on: the pairs added before were each seen once. Most
        inputs never give a count, and pay nothing for the column."""
        self.counts = array("q", bytes(8 * len(self.source)))
        np.frombuffer(self.counts, dtype=np.int64)[:] = 1
        if self.spilled:
            ones = np.ones(min(self.spilled, PARTITION_LINKS), dtype=np.int64)
            with open(self.folder / "count.raw", "wb") as handle:
                for begin in range(0, self.spilled, len(ones)):
                    ones[: min(len(ones), self.spilled - begin)].tofile(handle)

    def spill(self) -> None:
        if not self.source:
            return
        if self.folder is None:
            self.folder = _spool_folder(self.root)
        columns = [("source.raw", self.source), ("target.raw", self.target)]
        if self.counts is not None:
            columns.append(("count.raw", self.counts))
        for name, column in columns:
            with open(self.folder / name, "ab") as handle:
                column.tofile(handle)
        self.spilled += len(self.source)
        del self.source[:], self.target[:]
        if self.counts is not None:
            del self.counts[:]

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Every pair appended so far, in order: (source, target) int32 and each one's count
        (int64; None where every pair was seen once), read back from disk where spilled."""
        parts = list(_raw_chunks(self.folder, self.spilled, counted=self.counts is not None)) if self.spilled else []
        held = (np.frombuffer(self.source, dtype=np.int32), np.frombuffer(self.target, dtype=np.int32),
                np.frombuffer(self.counts, dtype=np.int64) if self.counts is not None else None)
        parts.append(held)
        source = np.concatenate([part[0] for part in parts])
        target = np.concatenate([part[1] for part in parts])
        counts = np.concatenate([part[2] for part in parts]) if self.counts is not None else None
        return source, target, counts

    def held(self) -> tuple[np.ndarray, np.ndarray]:
        """The pairs held in memory (all of them when nothing was spilled), as int32 views."""
        return np.frombuffer(self.source, dtype=np.int32), np.frombuffer(self.target, dtype=np.int32)

    def mark(self) -> int:
        return len(self)

    def truncate(self, mark: int) -> None:
        """Forget every link added after ``mark``."""
        if mark >= self.spilled:
            del self.source[mark - self.spilled:], self.target[mark - self.spilled:]
            if self.counts is not None:
                del self.counts[mark - self.spilled:]
            return
        for name in ("source.raw", "target.raw"):
            os.truncate(self.folder / name, mark * 4)
        if self.counts is not None:
            os.truncate(self.folder / "count.raw", mark * 8)
            del self.counts[:]
        self.spilled = mark
        del self.source[:], self.target[:]

    def aggregate(self, pages: int) -> Links:
        """One link per ordered pair with the times it was read, sorted by (source, target)."""
        if self._aggregated is not None and self._aggregated[0] == len(self):
            return self._aggregated[1]
        if self.spilled and self._aggregated is not None:
            raise RuntimeError("links were added after the spooled links were aggregated")
        if not self.spilled:
            source = np.frombuffer(self.source, dtype=np.int32).astype(np.int64)
            target = np.frombuffer(self.target, dtype=np.int32).astype(np.int64)
            n = max(pages, 1)
            pairs, counts = _counted(source * n + target, self.counts)
            src, dst = np.divmod(pairs, n)
            loops = src == dst
            return Links(src, dst, counts.astype(np.int64), seen=len(source),
                         self_loops=int(loops.sum()), self_loops_seen=int(counts[loops].sum()))
        self.spill()
        links = _aggregate_on_disk(self.folder, self.spilled, pages, self.counts is not None)
        self._aggregated = (len(self), links)
        return links

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        del self.source[:], self.target[:]
        self.counts = None
        self.spilled = 0
        self._aggregated = None


def _counted(pairs: np.ndarray, counts) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs, sorted, and the times each was seen (its counts summed, if given)."""
    if counts is None:
        return np.unique(pairs, return_counts=True)
    distinct, inverse = np.unique(pairs, return_inverse=True)
    weights = np.frombuffer(counts, dtype=np.int64) if isinstance(counts, array) else counts
    return distinct, np.bincount(inverse, weights=weights, minlength=len(distinct)).astype(np.int64)


def _raw_chunks(folder: Path, total: int, size: int | None = None, counted: bool = False):
    size = size or PARTITION_LINKS
    for begin in range(0, total, size):
        count = min(size, total - begin)
        yield (np.fromfile(folder / "source.raw", dtype=np.int32, count=count, offset=begin * 4),
               np.fromfile(folder / "target.raw", dtype=np.int32, count=count, offset=begin * 4),
               np.fromfile(folder / "count.raw", dtype=np.int64, count=count, offset=begin * 8)
               if counted else None)


def _aggregate_on_disk(folder: Path, total: int, pages: int, counted: bool = False) -> Links:
    """The spooled links, by source range (ranges of at most PARTITION_LINKS links read, by the
    pages' out-degrees), each range sorted and counted in memory and appended to the result."""
    degrees = np.zeros(pages, dtype=np.int64)
    for source, target, _ in _raw_chunks(folder, total):
        if len(source) and (min(source.min(), target.min()) < 0 or max(source.max(), target.max()) >= pages):
            raise IndexError(f"page indices must lie in 0..{pages - 1}")
        degrees += np.bincount(source, minlength=pages)
    ends = np.cumsum(degrees)
    # cut before the page whose links would take the range past PARTITION_LINKS
    bounds, start = [], 0
    while start < pages:
        limit = (ends[start - 1] if start else 0) + PARTITION_LINKS
        stop = max(int(np.searchsorted(ends, limit, side="right")), start + 1)
        bounds.append(stop)
        start = stop
    bounds = np.asarray(bounds, dtype=np.int64)
    parts = folder / "parts"
    parts.mkdir(exist_ok=True)
    for source, target, counts in _raw_chunks(folder, total, counted=counted):
        which = np.searchsorted(bounds, source, side="right")
        order = np.argsort(which, kind="stable")
        cuts = np.searchsorted(which[order], np.arange(len(bounds) + 1))
        for part in range(len(bounds)):
            chosen = order[cuts[part]:cuts[part + 1]]
            if len(chosen):
                with open(parts / f"{part}.s", "ab") as handle:
                    source[chosen].tofile(handle)
                with open(parts / f"{part}.t", "ab") as handle:
                    target[chosen].tofile(handle)
                if counted:
                    with open(parts / f"{part}.c", "ab") as handle:
                        counts[chosen].tofile(handle)
    for name in ("source.raw", "target.raw") + (("count.raw",) if counted else ()):
        os.remove(folder / name)
    out = folder / "links"
    out.mkdir(exist_ok=True)
    handles = [open(out / name, "wb") for name, _ in _COLUMNS]
    self_loops = self_loops_seen = 0
    try:
        for part in range(len(bounds)):
            if not (parts / f"{part}.s").exists():
                continue
            source = np.fromfile(parts / f"{part}.s", dtype=np.int32).astype(np.int64)
            target = np.fromfile(parts / f"{part}.t", dtype=np.int32).astype(np.int64)
            os.remove(parts / f"{part}.s"), os.remove(parts / f"{part}.t")
            seen = None
            if counted:
                seen = np.fromfile(parts / f"{part}.c", dtype=np.int64)
                os.remove(parts / f"{part}.c")
            pairs, counts = _counted((source << 32) | target, seen)
            src, dst = pairs >> 32, pairs & 0xFFFFFFFF
            loops = src == dst
            self_loops += int(loops.sum())
            self_loops_seen += int(counts[loops].sum())
            for handle, column, (_, dtype) in zip(handles, (src, dst, counts), _COLUMNS):
                column.astype(dtype).tofile(handle)
    finally:
        for handle in handles:
            handle.close()
    shutil.rmtree(parts, ignore_errors=True)
    return Links.on_disk(out, seen=total, self_loops=self_loops, self_loops_seen=self_loops_seen)


def _spool_folder(root: Path | None) -> Path:
    """A new folder for one spool under ``root`` (default: the linksim home's ``spool``); folders
    left by processes that are gone (a load or a stream killed half-way) are removed first, as the
    index store removes its dead scratch folders."""
    import psutil

    if root is None:
        from linksim.home import home_folder, linksim_home

        root = home_folder(linksim_home() / "spool")
    root.mkdir(parents=True, exist_ok=True)
    for left in root.glob("load-*"):
        pid = left.name.split("-")[1]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(left, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"load-{os.getpid()}-", dir=root))
