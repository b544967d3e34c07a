"""The crawl as read from the input files, before it is written to Neo4j.

Readers add pages and links one by one; :meth:`CrawlGraph.links` then aggregates the links to one
per ordered pair with the number of times it was seen, which is what makes a load idempotent:
``LINKS_TO.count`` is set to the count of this input, never incremented.

Memory grows with the pages, not the links: the links read are held in memory up to
:data:`SPOOL_LINKS`, then appended to a spool file (8 bytes a link) in a folder of their own under
the linksim home (``spool/``), and aggregated from there by source range into on-disk arrays
(:class:`Links` then reads them chunk by chunk). Both ways give the same links, bit for bit.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from linksim.loader.urls import host_of

MAX_SKIP_EXAMPLES = 5
#: Links held in memory before they go to the spool file (4 Mi links: 32 MiB as two int32 columns;
#: aggregating that many in memory takes about 250 MiB at its peak).
SPOOL_LINKS = 1 << 22
#: Links a source range of the on-disk aggregation holds at most (a page with more out-links is a
#: range of its own).
PARTITION_LINKS = 1 << 22
MAX_PAGES = (1 << 31) - 1


@dataclass
class Skipped:
    """Records skipped, by reason, with a few examples (``file:line``) of each."""

    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, where: str) -> None:
        self.counts[reason] += 1
        examples = self.examples.setdefault(reason, [])
        if len(examples) < MAX_SKIP_EXAMPLES:
            examples.append(where)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


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
        self.spilled = 0
        self._aggregated: tuple[int, Links] | None = None

    def __len__(self) -> int:
        return self.spilled + len(self.source)

    def append(self, source: int, target: int) -> None:
        self.source.append(source)
        self.target.append(target)
        if len(self.source) >= self.limit:
            self.spill()

    def extend(self, source: np.ndarray, target: np.ndarray) -> None:
        self.source.frombytes(np.asarray(source, dtype=np.int32).tobytes())
        self.target.frombytes(np.asarray(target, dtype=np.int32).tobytes())
        if len(self.source) >= self.limit:
            self.spill()

    def spill(self) -> None:
        if not self.source:
            return
        if self.folder is None:
            self.folder = _spool_folder(self.root)
        for name, column in (("source.raw", self.source), ("target.raw", self.target)):
            with open(self.folder / name, "ab") as handle:
                column.tofile(handle)
        self.spilled += len(self.source)
        del self.source[:], self.target[:]

    def mark(self) -> int:
        return len(self)

    def truncate(self, mark: int) -> None:
        """Forget every link added after ``mark``."""
        if mark >= self.spilled:
            del self.source[mark - self.spilled:], self.target[mark - self.spilled:]
            return
        for name in ("source.raw", "target.raw"):
            os.truncate(self.folder / name, mark * 4)
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
            pairs, counts = np.unique(source * n + target, return_counts=True)
            src, dst = np.divmod(pairs, n)
            loops = src == dst
            return Links(src, dst, counts.astype(np.int64), seen=len(source),
                         self_loops=int(loops.sum()), self_loops_seen=int(counts[loops].sum()))
        self.spill()
        links = _aggregate_on_disk(self.folder, self.spilled, pages)
        self._aggregated = (len(self), links)
        return links

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        del self.source[:], self.target[:]
        self.spilled = 0
        self._aggregated = None


def _raw_chunks(folder: Path, total: int, size: int = PARTITION_LINKS):
    for begin in range(0, total, size):
        count = min(size, total - begin)
        yield (np.fromfile(folder / "source.raw", dtype=np.int32, count=count, offset=begin * 4),
               np.fromfile(folder / "target.raw", dtype=np.int32, count=count, offset=begin * 4))


def _aggregate_on_disk(folder: Path, total: int, pages: int) -> Links:
    """The spooled links, by source range (ranges of at most PARTITION_LINKS links read, by the
    pages' out-degrees), each range sorted and counted in memory and appended to the result."""
    degrees = np.zeros(pages, dtype=np.int64)
    for source, _ in _raw_chunks(folder, total):
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
    for source, target in _raw_chunks(folder, total):
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
    for name in ("source.raw", "target.raw"):
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
            pairs, counts = np.unique((source << 32) | target, return_counts=True)
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
    """A new folder for one load's spooled links under ``root`` (default: the linksim home's
    ``spool``); folders left by loads whose process is gone are removed first."""
    if root is None:
        from linksim.home import home_folder, linksim_home

        root = home_folder(linksim_home() / "spool")
    root.mkdir(parents=True, exist_ok=True)
    for left in root.glob("load-*"):
        pid = left.name.split("-")[1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(left, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"load-{os.getpid()}-", dir=root))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class CrawlGraph:
    """Pages (by URL key) and raw links accumulated from the input files.

    Holds a spool folder once more than :data:`SPOOL_LINKS` links were read: :meth:`close` (or
    ``with``) removes it, and the on-disk links aggregated from it."""

    def __init__(self, spool_links: int | None = None, spool_root: Path | None = None) -> None:
        self.index: dict[str, int] = {}
        self.urls: list[str] = []
        self.crawled = bytearray()
        self.titles: dict[int, str] = {}
        self.properties: dict[int, dict[str, object]] = {}
        self.anchors: dict[tuple[int, int], str] = {}
        self.spool = LinkSpool(spool_links, spool_root)
        self.non_web = 0
        self.skipped = Skipped()

    def __len__(self) -> int:
        return len(self.urls)

    def __enter__(self) -> "CrawlGraph":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Remove the spooled links (and the on-disk links made from them)."""
        self.spool.close()

    def page(
        self,
        key: str,
        crawled: bool = False,
        title: str | None = None,
        properties: dict[str, object] | None = None,
    ) -> int:
        """Add or update a page; return its index. A page once crawled stays crawled."""
        idx = self.index.get(key)
        if idx is None:
            idx = len(self.urls)
            if idx >= MAX_PAGES:
                raise OverflowError(f"more than {MAX_PAGES:,} pages")
            self.index[key] = idx
            self.urls.append(key)
            self.crawled.append(0)
        if crawled:
            self.crawled[idx] = 1
        if title is not None:
            self.titles[idx] = title
        if properties:
            self.properties.setdefault(idx, {}).update(properties)
        return idx

    def link(self, source: int, target: int, anchor: str | None = None) -> None:
        self.spool.append(source, target)
        if anchor and (source, target) not in self.anchors:
            self.anchors[(source, target)] = anchor

    def extend_links(self, source: np.ndarray, target: np.ndarray) -> None:
        """Add many links at once (page indices, no anchors)."""
        self.spool.extend(source, target)

    def mark(self) -> tuple[int, int, bytes]:
        """Where the graph stands, for :meth:`rollback` (pages and links only: no title, property
        or anchor may be added between the two)."""
        return len(self.urls), self.spool.mark(), bytes(self.crawled)

    def rollback(self, mark: tuple[int, int, bytes]) -> None:
        """Take back the pages and links added since ``mark`` and the crawled flags set since."""
        pages, links, crawled = mark
        for key in self.urls[pages:]:
            del self.index[key]
        del self.urls[pages:]
        self.crawled[:] = crawled
        self.spool.truncate(links)

    @property
    def links_seen(self) -> int:
        return len(self.spool)

    def links(self) -> Links:
        """Aggregate the links read so far to one per ordered pair, sorted by (source, target)."""
        return self.spool.aggregate(len(self.urls))

    def hosts(self) -> list[str | None]:
        return [host_of(url) for url in self.urls]
