"""The memory budget of a run and the estimate checked against it before anything starts.

The budget is, first found: the value given (``--memory-budget``, ``memory_budget=``), the
``LINKSIM_MEMORY_BUDGET`` environment variable (``8G``, ``512M``, ``none``), or the memory the
machine has available when the run starts (psutil's ``available``: free plus reclaimable cache).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from linksim.estimate import (LOG_BYTES_PER_SIMILAR, STORE_BYTES_PER_SIMILAR, Estimate, estimate_index,
                              estimate_pagerank, parse_bytes)

log = logging.getLogger(__name__)

ENV = "LINKSIM_MEMORY_BUDGET"


def memory_budget(given: str | int | None = None) -> int | None:
    """The budget in bytes (None: no limit, when ``none`` is given)."""
    if given is not None:
        return parse_bytes(given)
    if os.environ.get(ENV):
        return parse_bytes(os.environ[ENV])
    import psutil

    return int(psutil.virtual_memory().available)


_budget_bytes = memory_budget  # for the functions whose parameter of that name hides it


def _counts(runner, graph: str = "pages") -> tuple[int, int]:
    from linksim.procedures.stream import graph_state

    state = graph_state(runner, graph)  # constant time: Neo4j's count store
    return int(state["pages"]), int(state["links"])


def estimate_run(runner, task: str, method: str | None = None, top_k: int | None = None,
                 memory_budget: str | int | None = None, graph: str = "pages", **parameters) -> Estimate:
    """The estimate of ``task`` (``pagerank``, ``index`` or ``similar``) on the graph in Neo4j now
    (its page and link counts; with --crawled-only the whole graph is counted, an upper bound), as
    the run would go under ``memory_budget`` (default: the environment's, else the memory
    available): with its index built on disk when that is how the run would build it. ``graph``:
    the page graph or the host graph (:mod:`linksim.procedures.graphs`)."""
    import dataclasses

    measured = _measured(runner, task, method, graph, parameters)
    estimate = _as_run(_counts(runner, graph), task, method, top_k, _budget_bytes(memory_budget), measured=measured,
                       **parameters)
    return dataclasses.replace(estimate, nodes=graph)


def _measured(runner, task: str, method: str | None, graph: str, parameters: dict) -> dict | None:
    """What the method's ``measure`` finds on the graph streamed from Neo4j (PageSim's reach),
    for a method whose index the counts do not size; None for the others."""
    from linksim.methods import method as registered

    if task == "pagerank" or registered(method).measure is None:
        return None
    from linksim.procedures.graphs import graph_of
    from linksim.procedures.stream import stream_link_graph

    log.info("%s's index is sized by the crawl's structure: reading the link graph to measure it", method)
    streamed = stream_link_graph(runner, show_progress=False, graph=graph_of(graph))
    return measure(method, streamed.graph, parameters)


def measure(method: str, graph, parameters: dict) -> dict:
    from linksim.methods import method as registered

    entry = registered(method)
    return entry.measure(graph, entry.parameters_for(**parameters))


def check_measured(graph, method: str, budget: str | int | None, what: str, **parameters) -> dict | None:
    """Once the graph is streamed, before an index whose size its structure sets is built:
    refuse (exit 8) the build that the measured estimate says cannot fit ``budget``; returns
    what was measured (None for a method the counts size)."""
    from linksim.methods import method as registered

    if registered(method).measure is None:
        return None
    limit = memory_budget(budget)
    measured = measure(method, graph, parameters)
    estimate = _estimate(graph.n, graph.m, "index", method, None, measured=measured, **parameters)
    log.info("%s: %s measured on the graph, the build's estimate %s", what,
             ", ".join(f"{k} {v:,}" for k, v in measured.items()), f"{estimate.bytes_max:,} bytes")
    estimate.check(limit)
    return measured


def _as_run(counts: tuple[int, int], task: str, method: str | None, top_k: int | None, limit: int | None,
            measured: dict | None = None, **parameters) -> Estimate:
    """The estimate of the run as it would go under ``limit``: the lists of an index of fingerprint
    trees (spectral P-PSimRank's too) are scored from page-major copies of it (``page_major``), in
    memory when those fit too, else in files the queries read through the page cache
    (``rows_on_disk``); a fingerprint-tree index that does not fit in memory is built (and read) on
    disk."""
    from linksim.methods import method as registered

    estimate = _estimate(*counts, task, method, top_k, measured=measured, **parameters)
    if limit is None or estimate.bytes_min <= limit or task == "pagerank" or not registered(method).page_major_rows:
        return estimate
    if estimate.page_major:
        rows_on_disk = _estimate(*counts, task, method, top_k, rows_on_disk=True, **parameters)
        if rows_on_disk.bytes_min <= limit or not registered(method).build_on_disk:
            return rows_on_disk
    if not registered(method).build_on_disk:
        return estimate  # built in memory only: refused
    return _estimate(*counts, task, method, top_k, on_disk=True, **parameters)


def _estimate(pages: int, links: int, task: str, method: str | None, top_k: int | None, on_disk: bool = False,
              rows_on_disk: bool = False, measured: dict | None = None, **parameters) -> Estimate:
    if task == "pagerank":
        return estimate_pagerank(pages, links)
    from linksim.methods import method as registered

    values = registered(method).parameters_for(**parameters)
    sized = {k: values[k] for k in ("n_fingerprints", "length", "radius", "prune", "decay") if k in values}
    return estimate_index(method, pages, links, top_k=top_k if task == "similar" else None, on_disk=on_disk,
                          rows_on_disk=rows_on_disk, measured=measured, **sized)


def check_index_disk(root: Path, method: str, pages: int, links: int, on_disk: bool, what: str,
                     measured: dict | None = None, **parameters) -> None:
    """Before an index is built: refuse (exit 8) one whose files the store's file system cannot
    hold (the estimate's ``index`` bytes). The build writes them beside the stored index it
    replaces, which goes only once the new one is in place; out of disk half-way, it would fail
    after minutes or hours, and fill the disk the server shares."""
    from linksim.estimate import check_free_space

    size = _estimate(pages, links, "index", method, None, on_disk=on_disk, measured=measured, **parameters).disk["index"]
    check_free_space([("index", root, size)], what, "; nothing was built. Free that space, and run it again.")


def check_memory(runner, task: str, budget: str | int | None = None, method: str | None = None,
                 top_k: int | None = None, graph: str = "pages", **parameters) -> Estimate:
    """Estimate ``task`` (on ``graph``) and refuse it (``MemoryBudgetExceeded``, exit 8) when it cannot fit.

    A SimRank or PSimRank index that does not fit in memory is built on disk when that fits
    (the estimate returned says so: ``on_disk``); only when neither fits is the run refused."""
    limit = memory_budget(budget)
    estimate = _as_run(_counts(runner, graph), task, method, top_k, limit, **parameters)
    estimate.check(limit)
    return estimate


# Where the server keeps its store and its transaction logs, and when it prunes the logs.
SERVER_DISK_SETTINGS = """
SHOW SETTINGS YIELD name, value WHERE name IN $names
RETURN name, value
"""
_DISK_SETTINGS = ["server.directories.data", "server.directories.transaction.logs.root", "db.checkpoint",
                  "db.checkpoint.interval.volume", "db.tx_log.rotation.size", "db.tx_log.rotation.retention_policy"]
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def server_folders(runner) -> dict[str, str] | None:
    """The disk settings of the server (:data:`_DISK_SETTINGS`, by name) when it runs on this
    machine and shows them; None for a server elsewhere (its disk is not this machine's to check)
    or a user not allowed to list settings."""
    from urllib.parse import urlsplit

    connection = getattr(runner, "connection", None)
    if connection is not None and urlsplit(connection.uri).hostname not in _LOOPBACK:
        return None
    try:
        rows = runner.run(SERVER_DISK_SETTINGS, {"names": _DISK_SETTINGS})
    except Exception as error:  # noqa: BLE001 - SHOW SETTINGS refused: the disk is not checked
        log.debug("the server's settings cannot be listed (%s): its free disk is not checked", error)
        return None
    settings = {row["name"]: str(row["value"]) for row in rows}
    data = settings.get("server.directories.data")
    if not data or not Path(data).is_absolute() or not Path(data).is_dir():
        return None  # a server on this host whose folders this process does not see (a container)
    return settings


def write_disk(runner, relationships: int) -> list[tuple[str, Path, int]]:
    """What writing ``relationships`` SIMILAR_TO takes of the server's disk, where the server is on
    this machine (else nothing): the store's growth and the transaction logs held at once. A
    server whose checkpoints come by log volume (``db.checkpoint=VOLUME``, as linksim's local
    server runs) prunes its logs as they grow: it holds at most the volume between checkpoints, the
    files its retention policy keeps and the file being written (with one more for the checkpoint
    under way); any other server (checkpoints every 15 minutes or 100,000 transactions by default)
    may hold the logs of the whole write."""
    settings = server_folders(runner)
    if settings is None or relationships <= 0:
        return []
    data = Path(settings["server.directories.data"])
    logs = LOG_BYTES_PER_SIMILAR * relationships
    if settings.get("db.checkpoint", "").upper() in ("VOLUME", "VOLUMETRIC"):
        rotation = parse_bytes(settings.get("db.tx_log.rotation.size") or "256MiB") or 0
        volume = parse_bytes(settings.get("db.checkpoint.interval.volume") or "250MiB") or 0
        retention = settings.get("db.tx_log.rotation.retention_policy", "").split()
        kept = int(retention[0]) if len(retention) == 2 and retention[1] == "files" and retention[0].isdigit() else None
        if kept is not None:
            logs = min(logs, volume + (kept + 2) * rotation)
    database = getattr(runner, "database", None) or "neo4j"
    logs_root = Path(settings.get("server.directories.transaction.logs.root") or data / "transactions")
    growth = max(0, relationships - reusable_relationships(runner, data / "databases" / database, database))
    return [("Neo4j store (SIMILAR_TO)", data / "databases" / database, STORE_BYTES_PER_SIMILAR * growth),
            ("Neo4j transaction logs", logs_root / database, logs)]


#: Bytes of a relationship record of Neo4j's record formats, and the page a record of the aligned
#: format never crosses.
RELATIONSHIP_RECORD, STORE_PAGE = 34, 8192

STORE_FORMAT = """
SHOW DATABASES YIELD name, store WHERE name = $name
RETURN store
"""
RELATIONSHIPS = "MATCH ()-[r]->() RETURN count(r) AS relationships"


def reusable_relationships(runner, folder: Path, database: str) -> int:
    """Relationships the store in ``folder`` holds room for beyond those it has: Neo4j keeps the
    records of deleted relationships (and their properties) to reuse before its files grow, so
    a SIMILAR_TO run written after another was deleted takes the old run's room first. The
    relationship store's records (its file's size, by the record format) less the relationships
    in it (the counts store: no scan); 0 where the format is not a record format known here."""
    try:
        rows = runner.run(STORE_FORMAT, {"name": database})
        store = str(rows[0]["store"]) if rows else ""
        size = (folder / "neostore.relationshipstore.db").stat().st_size
        if store.startswith("record-aligned"):
            records = size // STORE_PAGE * (STORE_PAGE // RELATIONSHIP_RECORD)
        elif store.startswith("record-standard"):
            records = size // RELATIONSHIP_RECORD
        else:
            return 0
        have = int(runner.run(RELATIONSHIPS)[0]["relationships"])
    except Exception as error:  # noqa: BLE001 - not shown to this user, or no file here: none counted
        log.debug("the store's free records are not known (%s): a write is checked as if it had none", error)
        return 0
    return max(0, records - have)


def check_write_disk(runner, relationships: int, kept: str = "") -> None:
    """Before the first relationship is written: refuse (exit 8) a write of ``relationships``
    SIMILAR_TO that the server's disk cannot hold (:func:`write_disk`); it would fail half-way,
    and a full disk stops the server's other work too. ``kept``: what the message adds."""
    from linksim.estimate import check_free_space

    check_free_space(write_disk(runner, relationships), f"writing {relationships:,} SIMILAR_TO relationships",
                     f"; nothing was written.{kept}")
