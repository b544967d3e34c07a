"""Loading a crawl into Neo4j: the loader reads the files and writes the graph; this procedure
makes the write safe to run beside others: one load of a database at a time (the ``load`` writer
lock), the schema in place before the first write, and the graph's version bumped before the first
write and after the last (see ``cypher/graph.cypher``), so that no stored index answers for a graph
a load changed.
"""

from __future__ import annotations

import time
from pathlib import Path

from linksim import cypher
from linksim.loader.load import LoadSummary, choose_mode, copy_counts, read_crawl
from linksim.loader.online import database_is_empty, write_online
from linksim.loader.recrawl import write_recrawl
from linksim.parameters import check_parameters
from linksim.procedures.locks import acquire
from linksim.procedures.schema import apply_schema


def load(
    paths: list[Path | str],
    runner,
    fmt: str | None = None,
    mode: str = "auto",
    batch_size: int = 10_000,
    on_error: str = "stop",
    normalize: bool = True,
    local_server=None,
    show_progress: bool = True,
    wait: float = 0.0,
    recrawl: bool = False,
) -> LoadSummary:
    """Load crawl files into the database behind ``runner``.

    Parameters
    ----------
    paths : list of paths
        Input files (or a Wikispeedia folder), read in order into one graph.
    runner : QueryRunner
        Where to write.
    fmt : str, optional
        Format of every input; detected from each name when None.
    mode : {"auto", "online", "bulk"}
        ``bulk`` uses Neo4j's import tool (empty database of the local server only); ``auto``
        picks bulk for an empty local database and at least ``BULK_MIN_LINKS`` links (five
        million), else online.
    batch_size : int
        Rows per write transaction in online mode.
    on_error : {"stop", "skip"}
        ``stop``: the first bad record ends the load before anything is written. ``skip``:
        bad records are skipped and counted by reason.
    normalize : bool
        Normalise URLs (see :mod:`linksim.loader.urls`).
    local_server : LocalServer, optional
        The local server behind ``runner``, if it is one (needed for bulk mode).
    wait : float
        Seconds to wait for another load of the same database to finish (0: refuse at once).
        Two loads never write at once: the second waits or is refused with who is loading.
    recrawl : bool
        The input is a new crawl of its pages: the out-links of every page it gives in full
        replace those in the graph (see :mod:`linksim.loader.recrawl`). Without it a load only
        adds links and updates counts.

    Raises
    ------
    InputError, LoadInterrupted, LinksimError
        With a message naming the file and line, or how far the load got.
    """
    check_parameters(batch_size=batch_size, wait=wait)
    graph, links, summary = read_crawl(paths, fmt, mode, on_error, normalize)
    summary.recrawl = recrawl
    with graph:  # the spooled links go when the load ends, however it ends
        _write(graph, links, summary, runner, mode, batch_size, local_server, show_progress, wait, recrawl)
    return summary


def _write(graph, links, summary, runner, mode, batch_size, local_server, show_progress, wait, recrawl) -> None:
    bump = cypher.query("graph", "bump_graph_version")
    with acquire(runner, "load", wait=wait) as lock:  # one load at a time (docs/explanation/reliability.md)
        summary.mode = choose_mode(mode, runner, local_server, len(links))
        if summary.mode == "bulk":
            from linksim.loader.bulk import bulk_import

            began = time.monotonic()
            lock.stop_heartbeat()  # the lock goes with the old store, which the import replaces
            counts, summary.timings = bulk_import(local_server, runner.database, graph, links)
            runner.reset_bookmarks()
            summary.write_seconds = time.monotonic() - began
            began = time.monotonic()
            apply_schema(runner)
            summary.timings["schema"] = time.monotonic() - began
        else:
            began = time.monotonic()
            apply_schema(runner)
            summary.timings["schema"] = time.monotonic() - began
            began = time.monotonic()
            # The version changes before the first write (an index built meanwhile is stale, as
            # is one built before a load that failed half-way) and after the last. The change is
            # recorded under the first: page by page for a recrawl (which moves the version in
            # the transaction of its first change, and not at all when it changes nothing), as
            # "anything" for a load.
            if recrawl and not database_is_empty(runner):
                counts = write_recrawl(runner, graph, links, batch_size, show_progress)
                summary.timings.update(counts.timings)
                bumped = counts.bumped
            else:
                rows, _ = runner.write_returning(bump)
                graph_id, version = rows[0]
                record = {"graph": graph_id, "version": version, "scope": "all", "sources": [], "removed_targets": []}
                runner.write(cypher.query("graph", "record_change"), record)
                counts = write_online(runner, graph, links, batch_size, show_progress)
                runner.write(cypher.query("graph", "finish_changes"), {"graph": graph_id})
                bumped = True
            summary.write_seconds = time.monotonic() - began
        if summary.mode == "bulk" or bumped:
            runner.write(bump)
        if summary.mode != "bulk":  # a bulk load starts from an empty database: no host graph yet
            from linksim.procedures.hosts import build_host_graph, host_graph_built

            if host_graph_built(runner):  # kept in step with the pages and links (`linksim hosts`)
                began = time.monotonic()
                build_host_graph(runner, batch_size, show_progress, locked=True)
                summary.timings["host graph"] = time.monotonic() - began
    copy_counts(summary, counts)
