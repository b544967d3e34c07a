"""``load()``: read crawl files, then write them to Neo4j online or in bulk, with a summary."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from linksim.cores import leave_interrupts
from linksim.errors import ConfigurationError, LinksimError
from linksim.loader.graph import CrawlGraph, GraphPart
from linksim.loader.online import WriteCounts, database_is_empty
from linksim.loader.readers import ErrorPolicy, read_input
from linksim.loader.urls import forget_resolved

log = logging.getLogger(__name__)

MODES = ("auto", "online", "bulk")
# Below this, the online path is as fast: on cnr-2000 (3.2M links, 2 cores) bulk took 30 s of
# which 16 s are fixed (server stop, start, schema) and ~4.9 us a link; online ~9-11 us a link.
BULK_MIN_LINKS = 5_000_000


@dataclass
class LoadSummary:
    """What a load read, wrote and skipped, and how long it took."""

    files: list[str]
    formats: list[str]
    mode: str
    pages: int = 0
    crawled_pages: int = 0
    links_seen: int = 0
    links: int = 0
    duplicates: int = 0
    self_loops: int = 0
    non_web_links: int = 0
    pages_created: int = 0
    pages_updated: int = 0
    links_created: int = 0
    links_updated: int = 0
    recrawl: bool = False
    recrawled_pages: int = 0
    changed_pages: int = 0
    links_removed: int = 0
    pages_deleted: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    read_seconds: float = 0.0
    write_seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.read_seconds + self.write_seconds

    @property
    def links_per_second(self) -> float:
        return self.links / self.write_seconds if self.write_seconds > 0 else 0.0

    def lines(self) -> list[str]:
        """The human-readable summary printed at the end of a load."""
        out = [
            f"Loaded {', '.join(self.files)} ({', '.join(sorted(set(self.formats)))}) in "
            f"{self.mode} mode in {self.seconds:.1f} s "
            f"(read {self.read_seconds:.1f} s, write {self.write_seconds:.1f} s, "
            f"{self.links_per_second:,.0f} links/s).",
            f"  pages: {self.pages:,} ({self.crawled_pages:,} crawled): "
            f"{self.pages_created:,} created, {self.pages_updated:,} updated",
            f"  links: {self.links:,} distinct of {self.links_seen:,} read: "
            f"{self.links_created:,} created, {self.links_updated:,} updated; "
            f"{self.duplicates:,} duplicates merged, {self.self_loops:,} self-loops kept",
            f"  non-web links skipped: {self.non_web_links:,}",
        ]
        if self.recrawl:
            out.insert(3, (
                f"  recrawl: {self.recrawled_pages:,} pages recrawled, {self.changed_pages:,} with links changed: "
                f"{self.links_created:,} links added, {self.links_removed:,} removed; "
                f"{self.pages_deleted:,} pages no longer linked to deleted"))
        if self.skipped:
            out.append(f"  records skipped: {sum(self.skipped.values()):,}")
            for reason, count in sorted(self.skipped.items(), key=lambda kv: -kv[1]):
                examples = ", ".join(self.skipped_examples.get(reason, [])[:3])
                out.append(f"    {count:,} × {reason} (e.g. {examples})")
        else:
            out.append("  records skipped: 0")
        return out


def read_files(
    paths: list[Path], fmt: str | None = None, on_error: str = "stop", normalize: bool = True,
    workers: int | None = None,
) -> tuple[CrawlGraph, list[str]]:
    """Read every input into one :class:`CrawlGraph` (nothing is written yet). The caller closes
    it (its spooled links on disk); a read that fails leaves nothing behind.

    Several files are read by ``workers`` processes at once (default: the cores this process may
    use), each file into a graph of its own, merged in the files' order
    (:meth:`CrawlGraph.merge`): the same graph, page numbers and all, as one reading of them in
    that order, and the same first error of ``on_error="stop"``."""
    from linksim.cores import usable_cores

    paths = [Path(path) for path in paths]
    workers = min(len(paths), usable_cores() if workers is None else max(1, int(workers)))
    graph = CrawlGraph()
    policy = ErrorPolicy(on_error, graph)
    formats = []
    began = time.monotonic()
    try:
        if workers <= 1:
            for path in paths:
                formats.append(read_input(path, graph, policy, normalize, fmt))
                _log_read(path, formats[-1], graph, began)
        else:
            import multiprocessing

            tasks = [(path, fmt, on_error, normalize) for path in paths]
            with multiprocessing.get_context("fork").Pool(workers, initializer=leave_interrupts) as pool:
                for path, (used, part) in zip(paths, pool.imap(_read_part, tasks)):
                    graph.merge(part)
                    formats.append(used)
                    _log_read(path, used, graph, began)
    except BaseException:
        graph.close()
        raise
    finally:
        forget_resolved()
    return graph, formats


def _log_read(path: Path, used: str, graph: CrawlGraph, began: float) -> None:
    log.info("read %s (%s): %s pages, %s links so far, %.1f s", path, used, f"{len(graph):,}",
             f"{graph.links_seen:,}", time.monotonic() - began)


def _read_part(task: tuple) -> tuple[str, GraphPart]:
    """A worker of :func:`read_files`: one file read into a graph of its own, handed back whole."""
    path, fmt, on_error, normalize = task
    with CrawlGraph() as graph:
        used = read_input(path, graph, ErrorPolicy(on_error, graph), normalize, fmt)
        return used, graph.part()


class NothingToLoad(LinksimError):
    """Input files that hold no page: bad input, like a bad record."""

    exit_code = 4


def choose_mode(mode: str, runner, local_server, links: int) -> str:
    if mode == "online":
        return "online"
    if mode == "bulk":
        if local_server is None:
            raise ConfigurationError(
                "--mode bulk needs the local server that linksim runs (it stops the server to "
                "import); this connection is to another server. Use --mode online."
            )
        if not database_is_empty(runner):
            raise ConfigurationError(
                "--mode bulk replaces the whole database and is only for an empty one; this "
                "database has data. Use --mode online (it adds and updates), or empty it first."
            )
        return "bulk"
    if local_server is not None and links >= BULK_MIN_LINKS and database_is_empty(runner):
        return "bulk"
    return "online"


def read_crawl(
    paths: list[Path | str], fmt: str | None = None, mode: str = "auto", on_error: str = "stop",
    normalize: bool = True,
):
    """Read every input into one crawl graph (nothing is written): ``(graph, links, summary)``,
    the summary holding what was read and skipped. The caller closes the graph (``graph.close()``:
    the links spooled to disk for a large crawl). Writing it is the load procedure's
    (:func:`linksim.procedures.load.load`: one load at a time, the schema, the graph version)."""
    if mode not in MODES:
        raise ConfigurationError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    if not paths:
        raise ConfigurationError("nothing to load: give at least one file")
    began = time.monotonic()
    graph, formats = read_files([Path(p) for p in paths], fmt, on_error, normalize)
    try:
        links = graph.links()
        summary = _summary(graph, links, paths, formats, mode)
    except BaseException:
        graph.close()
        raise
    summary.read_seconds = time.monotonic() - began
    return graph, links, summary


def _summary(graph: CrawlGraph, links, paths, formats: list[str], mode: str) -> LoadSummary:
    summary = LoadSummary(files=[str(p) for p in paths], formats=formats, mode=mode)
    summary.pages = len(graph)
    summary.crawled_pages = sum(graph.crawled)
    summary.links_seen = links.seen
    summary.links = len(links)
    summary.duplicates = links.duplicates
    summary.self_loops = links.self_loops
    summary.non_web_links = graph.non_web
    summary.skipped = dict(graph.skipped.counts)
    summary.skipped_examples = dict(graph.skipped.examples)
    if len(graph) == 0:
        raise NothingToLoad(
            f"nothing to load: no page was read from {', '.join(map(str, paths))}"
            + (" (every record was skipped)" if graph.skipped.total else "")
        )
    return summary


def copy_counts(summary: LoadSummary, counts: WriteCounts) -> None:
    summary.pages_created = counts.pages_created
    summary.pages_updated = counts.pages_updated
    summary.links_created = counts.links_created
    summary.links_updated = counts.links_updated
    summary.recrawled_pages = counts.recrawled_pages
    summary.changed_pages = counts.changed_pages
    summary.links_removed = counts.links_removed
    summary.pages_deleted = counts.pages_deleted
