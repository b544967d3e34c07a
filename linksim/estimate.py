"""Memory and disk a run will take, from the page and link counts and the parameters, before it
starts (in the style of GDS's ``.estimate``: bytes min / max and what takes them).

The model follows what each stage holds at its peak (``linksim.graph.LinkGraph.from_edges``,
``linksim.fingerprints.walks``, ``linksim.fingerprints.index.TreeLayout``, ``linksim.ranking.topk``, the write-back in
``linksim.procedures.similarity``): numpy arrays whose sizes are exact functions of the counts,
plus the Python objects of the streamed URLs and the interpreter with its libraries, whose sizes
were measured (``benchmarks/similar.py``, ``benchmarks/scale.py`` print the estimate beside the
measured peak). ``bytes_min`` assumes URLs of :data:`URL_CHARS_MIN` characters, ``bytes_max`` of
:data:`URL_CHARS_MAX`; the peak is the largest stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linksim.errors import ConfigurationError, LinksimError

MIB = 1 << 20
#: The interpreter with numpy, scipy, pandas and the Neo4j driver loaded and the compiled kernels
#: read from numba's cache (measured: 214-220 MiB after ``linksim.fingerprints.treescan.warm_up``).
#: Freed arrays go back to the system (:mod:`linksim.allocator`), so the stages' peaks add up
#: from the arrays they hold.
BASE_BYTES = 224 * MIB
#: A streamed URL: the str object (49 bytes + its characters) and its slot in the list.
URL_OVERHEAD = 49 + 8
URL_CHARS_MIN, URL_CHARS_MAX = 40, 100
#: The streamed page ids (a list of Python ints before they become an array).
PAGE_ID_BYTES = 32 + 8
#: What a SIMILAR_TO relationship adds to Neo4j's store (record format "aligned"): its relationship
#: record (34 bytes) and two property records (41 bytes each: score, method, rank, run), with the
#: id files and the dense pages' relationship groups.
STORE_BYTES_PER_SIMILAR = 120
#: What writing one takes of Neo4j's transaction logs (measured on the 100M-link crawl: 12.1 GB of
#: logs for 26.9M relationships). The logs are pruned at checkpoints: how much of them the disk
#: holds at once depends on the server's checkpoint policy (linksim.procedures.budget).
LOG_BYTES_PER_SIMILAR = 450


class DiskSpaceExceeded(LinksimError):
    """A run would write more than the free space of a file system: refused before it writes."""

    exit_code = 8


def check_free_space(needs: list[tuple[str, object, int]], what: str, after: str = "") -> None:
    """Refuse (:class:`DiskSpaceExceeded`) when what ``needs`` writes (``(name, folder, bytes)``
    triples; folders on one file system add up) exceeds the free space of a file system.
    ``what``: the run, for the message; ``after``: what the message adds (what to do)."""
    import os

    by_device: dict[int, tuple[str, list[tuple[str, int]]]] = {}
    for name, folder, size in needs:
        if size <= 0:
            continue
        path = os.fspath(folder)
        while not os.path.exists(path):  # a folder the run creates: the file system it will be on
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
        device = os.stat(path).st_dev
        by_device.setdefault(device, (path, []))[1].append((name, size))
    for path, parts in by_device.values():
        usage = os.statvfs(path)
        free = usage.f_bavail * usage.f_frsize
        total = sum(size for _, size in parts)
        if total > free:
            listed = ", ".join(f"{name} {_size(size)}" for name, size in parts)
            raise DiskSpaceExceeded(f"{what} needs {_size(total)} of disk on the file system of {path} "
                                    f"({listed}), which has {_size(free)} free{after}")


class MemoryBudgetExceeded(LinksimError):
    """A run would need more memory than the budget allows: refused before it starts. ``reason``
    says what and how much; the remedy (a larger budget, fewer fingerprints, a smaller top k) is
    worded by the caller in its own terms (:meth:`worded`)."""

    exit_code = 8

    def __init__(self, reason: str, shrink: tuple[str, ...] = ("n_fingerprints", "top_k")) -> None:
        self.reason, self.shrink = reason, shrink
        super().__init__(self.worded("memory_budget", "estimate()"))

    def worded(self, budget: str, estimate: str, flags: dict[str, str] | None = None) -> str:
        """The message, each parameter that would shrink the run (``shrink``) named as ``flags``
        names it (by default, as the API does)."""
        flags = flags or {}
        ways = " or ".join(SHRINKING[name].format(flags.get(name, name)) for name in self.shrink)
        return (f"{self.reason}; nothing was started. Raise the budget ({budget}){f', or use {ways}' if ways else ''}; "
                f"{estimate} prints the estimate.")


#: How each parameter that shrinks a run is asked for (MemoryBudgetExceeded).
SHRINKING = {"n_fingerprints": "fewer fingerprints ({})", "top_k": "a smaller {}", "radius": "a smaller {}",
             "prune": "a larger {}"}


@dataclass(frozen=True)
class Estimate:
    """What a run will take. ``stages``: bytes of each stage (excluding the base); ``parts``: what
    takes the memory at the peak stage; ``disk``: bytes written to disk by the run."""

    task: str
    pages: int
    links: int
    stages: dict[str, tuple[int, int]]
    parts: dict[str, int]
    disk: dict[str, int] = field(default_factory=dict)
    on_disk: bool = False  # the index built in memory-mapped files (only one fingerprint in memory)
    page_major: bool = False  # the top-k lists scored from page-major copies of the index (prepare_all_pages)
    rows_on_disk: bool = False  # ... copies written to memory-mapped files (the budget does not hold them)
    nodes: str = "pages"  # what the graph's nodes are: pages, or hosts (the host graph)
    # Of an index or page-major rows on disk: the bytes of their files a similar run's queries read
    # at random (the preorder and its labels, the positions or the rows): free memory for the
    # kernel's page cache beside the peak, or those reads go to the disk.
    random_reads: int = 0
    shrink: tuple[str, ...] = ("n_fingerprints", "top_k")  # the parameters that shrink it (Method.shrink)

    @property
    def peak_stage(self) -> str:
        return max(self.stages, key=lambda name: self.stages[name][1])

    @property
    def bytes_min(self) -> int:
        return BASE_BYTES + max(low for low, _ in self.stages.values())

    @property
    def bytes_max(self) -> int:
        return BASE_BYTES + max(high for _, high in self.stages.values())

    @property
    def disk_bytes(self) -> int:
        return sum(self.disk.values())

    def as_dict(self) -> dict:
        return {
            "task": self.task, "pages": self.pages, "links": self.links,
            "bytesMin": self.bytes_min, "bytesMax": self.bytes_max, "peakStage": self.peak_stage,
            "stages": {name: {"bytesMin": low, "bytesMax": high} for name, (low, high) in self.stages.items()},
            "parts": dict(self.parts), "diskBytes": self.disk_bytes, "disk": dict(self.disk),
            "onDisk": self.on_disk, "pageMajor": self.page_major, "rowsOnDisk": self.rows_on_disk, "nodes": self.nodes,
            "randomReadBytes": self.random_reads,
        }

    def lines(self) -> list[str]:
        out = [f"Estimate for {self.task} on {self.pages:,} {self.nodes} and {self.links:,} links"
               + (" (index built on disk, memory-mapped):" if self.on_disk else ":"),
               f"  memory: {_size(self.bytes_min)} to {_size(self.bytes_max)} at the peak ({self.peak_stage})"]
        for name, value in sorted(self.parts.items(), key=lambda kv: -kv[1]):
            out.append(f"    {name}: {_size(value)}")
        out.append(f"    interpreter and libraries: {_size(BASE_BYTES)}")
        for name, (low, high) in self.stages.items():
            out.append(f"  stage {name}: {_size(BASE_BYTES + low)} to {_size(BASE_BYTES + high)}")
        if self.disk:
            out.append(f"  disk: {_size(self.disk_bytes)} ("
                       + ", ".join(f"{name} {_size(value)}" for name, value in self.disk.items()) + ")")
        if self.random_reads:
            out.append(f"  files read at random by the queries: {_size(self.random_reads)} (free memory beyond "
                       "the peak for the page cache, or these reads go to the disk)")
        return out

    def check(self, budget: int | None) -> None:
        """Refuse (:class:`MemoryBudgetExceeded`) when even the smallest estimate exceeds ``budget``
        bytes (None: no budget)."""
        if budget is None or self.bytes_min <= budget:
            return
        biggest = max(self.parts, key=self.parts.get)
        raise MemoryBudgetExceeded(
            f"{self.task} on {self.pages:,} pages and {self.links:,} links needs at least "
            f"{_size(self.bytes_min)} of memory{' even with its index built on disk' if self.on_disk else ''} "
            f"(most of it {biggest}, {_size(self.parts[biggest])}), more than the budget of {_size(budget)}",
            self.shrink)


def _size(value: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if value >= scale:
            return f"{value / scale:,.2f} {unit}"
    return f"{value} B"


def _urls(pages: int) -> tuple[int, int]:
    return (pages * (URL_OVERHEAD + URL_CHARS_MIN + PAGE_ID_BYTES // 4),
            pages * (URL_OVERHEAD + URL_CHARS_MAX + PAGE_ID_BYTES // 4))


def _graph_parts(pages: int, links: int) -> dict[str, int]:
    """The link graph as kept while a run computes: out- and in-CSR (int32 indices) and the page
    ids of Neo4j."""
    return {"link graph (CSR both ways)": 8 * links + 16 * (pages + 1), "page ids": 8 * pages}


def _build_graph(pages: int, links: int) -> int:
    """The peak of streaming and building the CSR. Up to the spool's limit (4 Mi links) the links
    are held and built in memory: the spool's int32 pairs, their int64 copies and the copy without
    self-loops, scipy's COO (int64 pairs) and CSR (int32 indices, int8 data). Beyond it they go to
    disk and memory holds the CSR's two int32 index arrays and one range of pairs at a time (the
    in-memory cost of 4 Mi links). Plus the streamed page ids as Python ints. (Measured before
    the spool on a generated crawl of 10M links: 0.98 GiB for `linksim pagerank`, estimated
    0.85-0.91 GiB.)"""
    from linksim.store.spool import SPOOL_LINKS

    held = (8 + 16 + 16 + 16 + 16 + 9) * min(links, SPOOL_LINKS)
    return held + (8 * links if links > SPOOL_LINKS else 0) + pages * PAGE_ID_BYTES


def estimate_pagerank(pages: int, links: int) -> Estimate:
    """``linksim pagerank`` (write, stream or stats)."""
    urls = _urls(pages)
    graph = sum(_graph_parts(pages, links).values())
    build = _build_graph(pages, links)
    # Power iteration: the transposed matrix as float32 (data 4 bytes a link), rank vectors.
    iterate = graph + 4 * links + 8 * (pages + 1) + 6 * 8 * pages
    stages = {
        "stream": (urls[0] + build, urls[1] + build),
        "iterate": (urls[0] + iterate, urls[1] + iterate),
    }
    parts = dict(_graph_parts(pages, links), **{"transition matrix": 4 * links + 8 * (pages + 1),
                                                "rank vectors": 6 * 8 * pages, "URLs": urls[1]})
    return Estimate("pagerank", pages, links, stages, parts, shrink=())


def estimate_index(method: str, pages: int, links: int, n_fingerprints: int = 100, length: int = 10,
                   top_k: int | None = None, radius: int = 3, on_disk: bool = False,
                   page_major: bool = True, rows_on_disk: bool = False, prune: float = 0.0,
                   decay: float | None = None, measured: dict | None = None) -> Estimate:
    """``linksim index METHOD`` (``top_k`` None) or ``linksim similar METHOD --top-k K``.
    ``prune`` and ``decay``: PageSim's, which bound its pruned rows. ``measured``: what the
    method's ``measure`` found on the streamed graph (PageSim's reach), where it was measured.

    ``page_major`` (a method with ``page_major_rows``, with ``top_k``): the lists are scored from page-major
    copies of the index (:meth:`FingerprintIndex.prepare_all_pages`, 6 bytes a page and
    fingerprint, walks of at most 15 steps), in memory or, ``rows_on_disk`` (always with the index
    on disk), in memory-mapped files the queries read through the page cache.

    ``on_disk`` (the fingerprint-tree methods): the fingerprints and their layout built into memory-mapped
    files one fingerprint at a time; memory then holds one fingerprint's rows, and the pages of
    the files the queries read are the kernel's page cache (reclaimable, not counted)."""
    urls = _urls(pages)
    graph = _graph_parts(pages, links)
    held = sum(graph.values())
    build_graph = _build_graph(pages, links)
    parts: dict[str, int] = dict(graph)
    parts["URLs"] = urls[1]
    from linksim.methods import method as registered

    entry = registered(method)
    if on_disk and not entry.build_on_disk:
        raise LinksimError(f"{method} indexes are built in memory only")
    sized = {"n_fingerprints": n_fingerprints, "length": length, "radius": radius, "prune": prune,
             **(measured or {})}
    index, walking, stored, own = entry.estimate(pages, links, sized if decay is None else dict(sized, decay=decay),
                                                 on_disk)
    parts.update(own)
    stages = {
        "stream": (urls[0] + build_graph, urls[1] + build_graph),
        "build": (urls[0] + held + index + walking, urls[1] + held + index + walking),
    }
    disk = {"index": stored + pages * (URL_CHARS_MAX + 16)}
    if top_k is not None:
        lists = top_k * pages
        from linksim.ranking.topk import page_dtype

        # source, target (int32 where the pages fit, linksim.ranking.topk.page_dtype), score (float64), rank (int32)
        results = (12 + 2 * np.dtype(page_dtype(pages)).itemsize) * lists
        disk["Neo4j store (SIMILAR_TO)"] = STORE_BYTES_PER_SIMILAR * lists
        writing = 2 * 50_000 * 200  # the batches in flight (their database ids looked up a batch at a time)
        if not on_disk:
            # The lists by page code, this run's and the kept ones it is compared with (an update,
            # linksim.ranking.lists): a code and a score a relationship, each, and the comparison's
            # gathers (about as much again). A run whose index is built on disk writes every list.
            writing += 2 * 16 * lists + 16 * lists
            disk["kept lists"] = 16 * lists + 8 * pages
        # the twin classes (and each page's representative); the queries' scratch: scores, marks,
        # touched pages (16 bytes a page) and band hits (2)
        twins = 28 * pages + 18 * pages
        kept = 0  # what prepare_all_pages adds to the index, held until the run ends
        from linksim.fingerprints.index import FingerprintIndex

        if FingerprintIndex.reading_value(entry.reading, "_band_candidates"):  # the first-step bands (linksim.ranking.bands)
            from linksim.ranking.bands import ROWS

            if not on_disk:  # a run whose index is built on disk reads without them
                bands = 12 * (n_fingerprints // ROWS) * pages
                kept += bands
                parts["first-step bands"] = bands
        from linksim.fingerprints.treescan import PATH_BITS, TRANSPOSE_PAGES, page_major_bytes

        page_major = page_major and entry.page_major_rows and length <= PATH_BITS
        rows_on_disk = page_major and (rows_on_disk or on_disk)
        rows = page_major_bytes(length) * n_fingerprints * pages if page_major else 0  # position, path labels
        if rows_on_disk:  # FingerprintIndex.page_major_folder: a scratch folder of the store while the run lasts
            disk["page-major rows (while the run lasts)"] = rows
        elif page_major:  # FingerprintIndex.prepare_all_pages
            kept += rows
            parts["page-major rows"] = rows
        parts["top-k lists"] = results
        mapped = 0  # what the lists read of an index on disk beyond its trees (spectral: its embedding, ...)
        if on_disk:
            # A similar run reads an index built on disk from the store, memory-mapped
            # (obtain_index(reopen=True)): its top-k stage holds none of it, only the block maxima of
            # the preorder labels (linksim.fingerprints.treescan.label_blocks). What it reads of the
            # files, at random, is page cache: the random reads below, beside the memory.
            from linksim.methods.fingerprints import ONE_FINGERPRINT

            mapped = sum(size for part, size in own.items() if part not in (*TREE_PARTS, ONE_FINGERPRINT))
            index = label_block_bytes(n_fingerprints, pages) if entry.page_major_rows else 0
        elif not entry.page_major_rows:
            # The walk state is stored with the index and let go before the lists (procedures/similarity).
            index += kept - own.get("walk state (for updates)", 0)
        else:
            # A similar run reads its index from the store, memory-mapped (obtain_index(reopen=True)):
            # its top-k and write stages hold the pages they read, the fingerprints (parent, label)
            # once for the twin classes (the fingerprint-tree methods'; spectral's lists have none),
            # the bands and the page-major rows, and what the queries read (linksim.fingerprints.treescan:
            # the preorder, its labels and the positions, those of the page-major rows where they are
            # made); not the subtree sizes, the roots or the walk state. Beyond the trees, the whole
            # of the rest (spectral: the embedding, the neighbour and nearest lists each list reads).
            from linksim.methods.spectral import FOLDING_PART

            beyond = index - sum(own.get(part, 0) for part in (*TREE_PARTS, FOLDING_PART))
            parents = 5 if entry.fingerprint_trees else 0
            # Making the page-major rows (treescan.page_major) reads every fingerprint's parents,
            # labels and positions once: mapped pages the process holds until the index goes.
            from linksim.fingerprints.treescan import QUERY_POSITION_BYTES

            prepared = (5 - parents + QUERY_POSITION_BYTES) * n_fingerprints * pages if page_major else 0
            index = (parents + _query_bytes(page_major)) * n_fingerprints * pages + kept + beyond + prepared
        # `linksim similar` lets the URLs go before the lists, and the index before the write
        # (linksim.procedures.similarity); the lists' rank is let go before the write too. A run
        # whose index is on disk keeps no lists: the graph goes before them too.
        kept_graph = held - (graph["link graph (CSR both ways)"] if on_disk else 0)
        # Page-major rows written to disk are built first (treescan.page_major): 32 fingerprints'
        # path labels (treescan.path_dtype) and a step of the transposition at once, before any list.
        building = ((page_major_bytes(length) - 4) * min(n_fingerprints, 32) * pages
                    + 4 * n_fingerprints * min(pages, TRANSPOSE_PAGES)
                    if rows_on_disk else 0)
        if on_disk:
            # A run that keeps no lists holds none while it makes them (top_k_all(hold=False)): the
            # checkpoint's files do until all are made (the index's page cache has that memory).
            stages["top-k"] = (kept_graph + index + max(twins, building),) * 2
            stages["lists read back"] = (kept_graph + index + results,) * 2
        else:
            stages["top-k"] = (kept_graph + index + max(results + twins, building),) * 2
        # linksim.store.partial.Checkpoint: a page pair's source, target (int64) and score until written
        disk["finished lists (while the run lasts)"] = 24 * lists
        stages["write"] = (kept_graph + results - lists * 4 + writing,) * 2
        random_reads = (_query_bytes(page_major, entry.fingerprint_trees) * n_fingerprints * pages + mapped if on_disk
                        else 0) + (rows if rows_on_disk else 0)
    else:
        page_major = rows_on_disk = False
        random_reads = 0
    task = f"{'similar' if top_k is not None else 'index'} {method}"
    return Estimate(task, pages, links, stages, parts, disk, on_disk, page_major, rows_on_disk, shrink=entry.shrink,
                    random_reads=random_reads)


#: The parts of a method's estimate that are its fingerprint trees (linksim.methods.fingerprints.estimate).
TREE_PARTS = ("fingerprints (parent, label)", "tree layout", "walk state (for updates)")


def label_block_bytes(n_fingerprints: int, pages: int) -> int:
    """The block maxima of the preorder labels (:func:`linksim.fingerprints.treescan.label_blocks`)."""
    from linksim.fingerprints.treescan import BLOCK, SUPER

    width = -(-pages // SUPER) * SUPER
    return n_fingerprints * (width // BLOCK + width // SUPER)


def _query_bytes(page_major: bool, member_scans: bool = True) -> int:
    """What the compiled queries read of the index, a page and fingerprint: the preorder (the scans
    of a tree's members; not spectral's lists, which score given candidates), its labels and the
    positions, which they read from the page-major rows instead where those are made."""
    from linksim.fingerprints.treescan import QUERY_BYTES, QUERY_ORDER_BYTES, QUERY_POSITION_BYTES

    return QUERY_BYTES - (QUERY_POSITION_BYTES if page_major else 0) - (0 if member_scans else QUERY_ORDER_BYTES)


def parse_bytes(text: str | int | None) -> int | None:
    """``8G``, ``512M``, ``12GiB``, ``1e10`` or a number of bytes; None or ``none``: no budget."""
    if text is None:
        return None
    if isinstance(text, int):
        return text
    value = str(text).strip().lower().replace("ib", "").rstrip("b")
    if value in ("", "none", "off"):
        return None
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}.get(value[-1:], 1)
    number = value[:-1] if scale != 1 else value
    try:
        result = float(number) * scale
    except ValueError:
        raise ConfigurationError(f"a memory budget is a size such as 8G, 512M or 12GiB, got {text!r}") from None
    if not 0 < result < float(1 << 62):
        raise ConfigurationError(f"a memory budget must be a positive size, got {text!r}")
    return int(result)
