"""Similarity indexes over the graph in Neo4j: build or reuse, query, write SIMILAR_TO back.

The index of each method lives in the index store (:mod:`linksim.store`), one directory per
database; it is used only for the graph it was built from (the graph fingerprint covers the
links and the URLs).

``SIMILAR_TO`` write-back of a method, so that a reader never sees a mix of runs or nothing:

1. the writer takes the method's lock (:mod:`linksim.procedures.locks`, ``similar:<method>``)
   before it reads the graph: a second writer of the method waits or is refused;
2. the new relationships are created with ``run: <new id>`` beside the old ones;
3. one transaction, which checks that the writer still holds the lock, records the run as a
   ``(:LinksimRun)`` and points the method's one ``(:LinksimCurrent {algorithm})`` node at it
   (``run``, updated in place);
4. after :data:`RETIRE_GRACE_SECONDS`, the relationships of every other run of the method are
   deleted in batches (the old run, and those of runs that died before step 3).

A reader reads ``LinksimCurrent.run`` once (``WITH current.run AS run``) and then the
relationships of that run: under read-committed isolation it sees the old run or the new one,
whole; the grace period lets a reader that took the old run id just before the switch finish
before that run is deleted. An interrupted write leaves the old current run and its
relationships intact; the next writer of the method cleans up.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from linksim import store
from linksim.digest import graph_fingerprint
from linksim.errors import ConfigurationError, LinksimError
from linksim.methods import method as registered
from linksim.inflight import in_flight
from linksim.procedures.runs import RunRecord, record_values
from linksim.procedures.stream import StreamedGraph, stream_link_graph

log = logging.getLogger(__name__)

# One row per source page: [source id, [target ids], [scores]], ranks 1.. in list order. Grouping
# by source matches the source once per list (57k relationships/s on cnr-2000 against 26k for one
# row per relationship with a string run id).
WRITE_SIMILAR = """
UNWIND $rows AS row
MATCH (a) WHERE id(a) = row[0]
UNWIND range(0, size(row[1]) - 1) AS i
MATCH (b) WHERE id(b) = row[1][i]
CREATE (a)-[:SIMILAR_TO {score: row[2][i], method: $method, rank: i + 1, run: $run}]->(b)
"""

# A run id is an integer from one counter of the database (inline in the relationship's property
# record, where the 32-character id of earlier versions took a string record of its own). The
# counter node is locked (`_lock`) before it is read, so two writers never get the same number.
# The run is noted as the method's `writing` run: one that dies before its switch leaves it there,
# and the next writer moves it to `retiring`, the runs whose relationships are to be deleted.
ALLOCATE_RUN = """
MATCH (lock:LinksimLock {name: $lock, owner: $owner})
MERGE (counter:LinksimCounter {name: 'run'})
SET counter._lock = true
WITH counter, coalesce(counter.value, 0) + 1 AS run
SET counter.value = run
REMOVE counter._lock
MERGE (current:LinksimCurrent {algorithm: $algorithm})
SET current.retiring = coalesce(current.retiring, []) +
      CASE WHEN current.writing IS NULL OR current.writing = current.run THEN [] ELSE [current.writing] END,
    current.writing = run
RETURN run
"""

#: Seconds between making a new run current and deleting the old one: a reader that read the
#: old run id just before the switch finishes its query (milliseconds) before its rows go.
RETIRE_GRACE_SECONDS = 2.0

# Nothing happens unless the writer still holds the lock (a fencing token: a writer taken for
# dead and overtaken must not publish).
MAKE_CURRENT = """
MATCH (lock:LinksimLock {name: $lock, owner: $owner})
MERGE (current:LinksimCurrent {algorithm: $algorithm})
WITH current, current.run AS previous,
     coalesce(current.retiring, []) + CASE WHEN current.run IS NULL THEN [] ELSE [current.run] END AS retiring
CREATE (r:LinksimRun {
  id: $id, algorithm: $algorithm, mode: $mode, parameters: $parameters,
  pages: $pages, links: $links, written: $written,
  started: datetime($started), millis: $millis,
  streamMillis: $stream_millis, computeMillis: $compute_millis, writeMillis: $write_millis,
  listsCut: $lists_cut
})
SET current.run = $id, current.since = datetime(), current.retiring = retiring
RETURN previous, retiring
"""

# The relationships of the runs given (the one current before, runs that died before their switch
# and runs whose retirement was cut short: the method's `retiring` list, which the switch extends
# in its own transaction), found through the relationship index on `run` and deleted in batches of
# $batch; then those runs leave the list. No other run is touched, whoever writes meanwhile.
RETIRE = """
UNWIND $runs AS old
MATCH ()-[s:SIMILAR_TO {run: old}]->()
CALL (s) { DELETE s } IN TRANSACTIONS OF $batch ROWS
"""

FORGET_RETIRED = """
MATCH (current:LinksimCurrent {algorithm: $algorithm})
SET current.retiring = [run IN coalesce(current.retiring, []) WHERE NOT run IN $runs]
"""

# What the run that was current before wrote, as it recorded it.
PREVIOUS = """
MATCH (r:LinksimRun {id: $previous})
RETURN r.written AS written
"""

PAGE_DETAILS = """
UNWIND $urls AS url
MATCH (p:Page {url: url})
RETURN p.url AS url, p.title AS title, p.pagerank AS pagerank
"""


def current_runs(runner) -> dict[str, dict]:
    """The current SIMILAR_TO run of each method: ``{method: {run, started, parameters, pages,
    relationships}}`` (parameters decoded)."""
    from linksim import cypher

    runs = {}
    for row in runner.run(cypher.query("related_pages", "similarity_runs")):
        runs[row.pop("method")] = dict(row, parameters=json.loads(row["parameters"] or "{}"))
    return runs


def default_index_root(uri: str, database: str, home: Path | None = None) -> Path:
    """``<LINKSIM_HOME>/indexes/<host_port>-<database>-<hash>``: one store per database."""
    from linksim.server.settings import linksim_home

    readable = "".join(ch if ch.isalnum() else "_" for ch in uri.split("://")[-1])[:40]
    digest = hashlib.sha256(f"{uri}\n{database}".encode()).hexdigest()[:8]
    return (home or linksim_home()) / "indexes" / f"{readable}-{database}-{digest}"


@dataclass
class IndexHandle:
    """An index ready to answer: built or reused by :func:`obtain_index` (with the graph streamed
    for it), or opened for queries by :func:`open_index` (no graph read)."""

    method: str
    index: object
    root: Path
    built: bool = False
    build_seconds: float = 0.0
    streamed: StreamedGraph | None = None
    path: Path | None = None
    _pages: object = None

    @property
    def pages(self):
        """Which page is which (a :class:`linksim.pagetable.PageTable`)."""
        if self._pages is None:
            from linksim.pagetable import PageTable

            self._pages = PageTable.from_urls(self.streamed.urls)
        return self._pages

    def page(self, url: str) -> int:
        page = self.pages.page(url)
        if page is None:
            raise ConfigurationError(
                f"{url} is not a page of the graph (URLs are stored normalised: lower-case scheme "
                "and host, no default port, no fragment)"
            )
        return page


def obtain_index(
    runner,
    method: str,
    root: Path,
    streamed: StreamedGraph | None = None,
    rebuild: bool = False,
    crawled_only: bool = False,
    show_progress: bool = True,
    memory_budget: str | int | None | bool = None,
    on_disk: bool = False,
    **given,
) -> IndexHandle:
    """The index of ``method`` with the given parameters (None: the papers' default) for the graph
    in Neo4j, streamed for it: the stored one if it was built from the same links and URLs (its
    recorded graph state then brought up to date), else built and stored. For ``index`` and
    ``similar``; queries open the stored index without reading the graph (:func:`open_index`).
    ``memory_budget``: see :mod:`linksim.procedures.budget` (False: checked by the caller, who
    passes ``on_disk``: build the index into memory-mapped files, when only that fits).
    """
    entry = registered(method)
    parameters = entry.parameters_for(**given)  # checked before the graph is read
    if streamed is None and memory_budget is not False:
        from linksim.procedures.budget import check_memory

        on_disk = check_memory(runner, "index", memory_budget, method, **given).on_disk
    if streamed is None:
        streamed = stream_link_graph(runner, crawled_only=crawled_only, show_progress=show_progress)
    graph = streamed.graph
    if graph.n == 0:
        raise LinksimError("the database has no pages: load a crawl first (`linksim load`)")
    if not rebuild:
        found = store.open_built(root, method, parameters, graph_fingerprint(graph), crawled_only)
        if found is not None:
            if found.meta.get("graphState") != streamed.state:
                store.record_state(found.path, streamed.state)
            log.info("using the stored %s index in %s", method, found.path)
            return IndexHandle(method, found.index, root, False, 0.0, streamed, found.path)
    log.info("building the %s index of %s pages (%s)", method, f"{graph.n:,}",
             ", ".join(f"{k}={v}" for k, v in parameters.items()))
    began = time.monotonic()
    with store.build_directory(root, method) if on_disk else contextlib.nullcontext() as directory:
        if directory is None:
            index = entry.build(graph, parameters, show_progress=show_progress)
        else:
            log.info("building on disk (memory-mapped, in %s): the index does not fit the memory budget", directory)
            index = entry.build(graph, parameters, show_progress=show_progress, directory=directory)
            index.layout()  # built on disk too, before the save moves the files
        seconds = time.monotonic() - began
        path = store.save(index, root, method, graph.n, graph.m, extra={"buildSeconds": round(seconds, 3)},
                          urls=streamed.urls, state=streamed.state, crawled_only=crawled_only)
    log.info("built in %.1f s, stored in %s", seconds, path)
    return IndexHandle(method, index, root, True, seconds, streamed, path)


def open_index(runner, method: str, root: Path, crawled_only: bool | None = None, state: dict | None = None,
               **given) -> IndexHandle:
    """The stored index of ``method`` for queries: the newest that fits the parameters given
    (``n_fingerprints``: at least that many) and the graph as it is now, which one constant-time
    query checks (:func:`linksim.procedures.stream.graph_state`). Nothing is built or streamed.

    Raises
    ------
    IndexNotFound, IndexMismatch
        No such index, or a stale one: the message names the ``linksim index`` command to run.
    """
    from linksim.procedures.stream import graph_state

    registered(method)
    state = graph_state(runner) if state is None else state
    if state["pages"] == 0:
        raise LinksimError("the database has no pages: load a crawl first (`linksim load`)")
    found = store.open_current(root, method, state, crawled_only, **given)
    if found.pages is None:
        raise store.IndexMismatch(f"the stored {method} index in {found.path} names no pages (written by an "
                                  f"older linksim): rebuild it with `linksim index {method} --rebuild`")
    return IndexHandle(method, found.index, root, path=found.path, _pages=found.pages)


@contextmanager
def _answering(handle: IndexHandle):
    """A stored index whose values make a query fail is corrupt (a file changed without its
    modification time, which only ``--verify`` reads whole): say so, never a traceback."""
    try:
        yield
    except (IndexError, ValueError) as error:
        raise store.IndexCorrupt(
            f"the stored {handle.method} index in {handle.path or store.index_dir(handle.root, handle.method)} gave an "
            f"impossible value ({type(error).__name__}: {error}): it is corrupt. Check it with `linksim "
            f"index {handle.method} --verify`, rebuild it with `linksim index {handle.method} --rebuild`"
        ) from None


def related_pages(handle: IndexHandle, runner, url: str, top_k: int = 10, threshold: float = 0.0,
                  n_fingerprints: int | None = None) -> pd.DataFrame:
    """The pages most similar to ``url``: rank, url, title, score, pagerank."""
    u = handle.page(url)
    kwargs = {"n_fingerprints": n_fingerprints} if n_fingerprints is not None else {}
    with _answering(handle):
        found = handle.index.related(u, top_k=top_k, threshold=threshold, **kwargs)
    urls = handle.pages.urls(v for v, _ in found)
    details = {row["url"]: row for row in runner.run(PAGE_DETAILS, {"urls": urls})} if urls else {}
    # Columns typed whatever the length: a page without related pages is an empty list, not a
    # frame whose columns pandas typed from nothing.
    return pd.DataFrame({
        "rank": pd.Series(np.arange(1, len(found) + 1), dtype="int64"),
        "url": pd.Series(urls, dtype=object),
        "title": pd.Series([details.get(url, {}).get("title") for url in urls], dtype=object),
        "score": pd.Series([score for _, score in found], dtype="float64"),
        "pagerank": pd.Series([details.get(url, {}).get("pagerank") for url in urls], dtype="float64"),
    })


def similarity(handle: IndexHandle, url: str, other: str, n_fingerprints: int | None = None) -> float:
    kwargs = {"n_fingerprints": n_fingerprints} if n_fingerprints is not None else {}
    with _answering(handle):
        return float(handle.index.sim(handle.page(url), handle.page(other), **kwargs))


def similar(
    runner,
    method: str,
    root: Path,
    top_k: int = 10,
    cutoff: float = 0.0,
    batch_size: int = 50_000,
    wait: float = 0.0,
    rebuild: bool = False,
    crawled_only: bool = False,
    show_progress: bool = True,
    memory_budget: str | int | None = None,
    retire: str = "wait",
    source_pages=None,
    max_members: int = 0,
    **given,
) -> RunRecord:
    """``linksim similar``: take the method's writer lock, obtain its index (built if needed),
    write every page's top-k as SIMILAR_TO of a new current run, retire the old one (``retire``:
    ``wait`` for it, or ``background``: a process of its own deletes the old run's relationships
    after this returns, see :func:`retire_in_background`).

    Every argument is checked, and the memory the run needs estimated against ``memory_budget``
    (:mod:`linksim.procedures.budget`), before the lock is taken or the graph read.
    """
    from linksim.parameters import check_parameters
    from linksim.procedures.budget import check_memory
    from linksim.procedures.locks import acquire

    registered(method).parameters_for(**given)  # the method's own parameters, checked by the registry
    check_parameters(top_k=top_k, similarity_cutoff=cutoff, batch_size=batch_size, wait=wait,
                     max_members=max_members)
    if max_members and not registered(method).fingerprint_trees:
        raise ConfigurationError(f"--max-members (max_members) applies to simrank and psimrank, not to {method}")
    if retire not in RETIRE_MODES:
        raise ConfigurationError(f"retire must be one of {', '.join(RETIRE_MODES)}, got {retire!r}")
    if retire == "background":
        retirement_log(method)
    source_pages = parse_source_pages(source_pages)
    on_disk = check_memory(runner, "similar", memory_budget, method, top_k=top_k, **given).on_disk
    from linksim.treescan import warm_up

    warm_up()  # a first compilation of the queries happens here, not while the lock is held
    with acquire(runner, f"similar:{method}", wait=wait) as lock:
        handle = obtain_index(runner, method, root, rebuild=rebuild, crawled_only=crawled_only,
                              show_progress=show_progress, memory_budget=False, on_disk=on_disk, **given)
        return write_similar(runner, handle, top_k=top_k, cutoff=cutoff, batch_size=batch_size,
                             show_progress=show_progress, lock=lock, retire=retire, source_pages=source_pages,
                             max_members=max_members)


def write_similar(
    runner,
    handle: IndexHandle,
    top_k: int = 10,
    cutoff: float = 0.0,
    batch_size: int = 50_000,
    workers: int | None = None,
    show_progress: bool = True,
    lock=None,
    grace: float | None = None,
    retire: str = "wait",
    source_pages=None,
    max_members: int = 0,
) -> RunRecord:
    """Write every page's top-k related pages as SIMILAR_TO of a new current run (see module).

    ``lock``: the method's writer lock when the caller holds it already (:func:`similar` takes it
    before reading the graph); otherwise it is taken here. ``grace``: seconds between the switch
    and the retirement of the old run (default :data:`RETIRE_GRACE_SECONDS`).
    """
    from linksim.parameters import check_parameters
    from linksim.procedures.locks import acquire

    check_parameters(top_k=top_k, similarity_cutoff=cutoff, batch_size=batch_size, max_members=max_members)
    if lock is None:
        with acquire(runner, f"similar:{handle.method}") as own:
            return write_similar(runner, handle, top_k, cutoff, batch_size, workers, show_progress, own, grace,
                                 retire, source_pages, max_members)
    return _write_similar(runner, handle, top_k, cutoff, batch_size, workers, show_progress, lock, grace, retire,
                          parse_source_pages(source_pages), max_members)


def _write_similar(runner, handle, top_k, cutoff, batch_size, workers, show_progress, lock, grace,
                   retire_mode="wait", source_pages=None, max_members=0) -> RunRecord:
    from linksim.progress import Progress
    from linksim.topk import top_k_all
    from linksim.procedures.schema import apply_schema

    apply_schema(runner)  # the indexes the write and the related-pages query use (idempotent)
    method, graph = handle.method, handle.streamed.graph
    record = RunRecord(
        algorithm=method, mode="write",
        parameters=dict(store.parameters_of(handle.index), topK=top_k, similarityCutoff=cutoff,
                        **({"sourcePages": source_pages.describe()} if source_pages else {}),
                        **({"maxMembers": max_members} if max_members else {})),
    )
    pages = source_pages.select(runner, handle) if source_pages else None
    record.pages, record.links = graph.n, graph.m
    record.stream_millis = int(handle.streamed.seconds * 1000)
    began = time.monotonic()
    counts: dict = {}
    with _answering(handle):
        source, target, score, rank = top_k_all(
            handle.index, top_k=top_k, threshold=cutoff, pages=pages, workers=workers, show_progress=show_progress,
            max_members=max_members, report=counts,
        )
    record.lists_cut = counts.get("lists_cut", 0)
    record.compute_millis = int((time.monotonic() - began + handle.build_seconds) * 1000)

    ids = handle.streamed.node_ids
    # Scores mean nothing beyond 12 decimals (ties are decided there); rounding drops the summation
    # noise that would otherwise show in the Browser's captions (0.17011199999999996).
    lists = _Lists(ids[source], ids[target], np.round(score, 12))

    def write_lists(run: int) -> int:
        params = {"method": method, "run": run}

        def write(span: tuple[int, int]) -> dict[str, int]:
            lock.check()
            return runner.write(WRITE_SIMILAR, dict(params, rows=lists.rows(*span)))

        # Two batches in flight: the driver encodes one while the server writes the other.
        with Progress(len(source), f"writing SIMILAR_TO ({method})", "relationships",
                      enabled=show_progress) as progress:
            for (first, last), counters in in_flight(iter(lists.batches(batch_size)), write, workers=2):
                size = lists.size(first, last)
                if counters.get("relationships_created", 0) != size:
                    raise LinksimError(
                        f"wrote {counters.get('relationships_created', 0)} of {size} SIMILAR_TO "
                        "relationships of a batch: pages were deleted while linksim ran; run it again"
                    )
                progress.update(size)
        return len(source)

    return publish_run(runner, lock, record, write_lists, grace, retire_mode, batch_size)


def publish_run(runner, lock, record: RunRecord, write_lists, grace: float | None = None, retire_mode: str = "wait",
                batch_size: int = 50_000) -> RunRecord:
    """Steps 2 to 4 of the protocol (see module) for a writer holding the method's ``lock``: a new
    run id, ``write_lists(run)`` creates the relationships with ``run`` (and returns how many),
    the switch, then the retirement of the other runs. Shared by ``linksim similar`` and
    ``linksim spark similar`` (whose relationships the Spark connector writes)."""
    method = record.algorithm
    began = time.monotonic()
    rows, _ = runner.write_returning(ALLOCATE_RUN, {"lock": lock.name, "owner": lock.owner, "algorithm": method})
    if not rows:
        lock.lost.set()
        lock.check()
    record.id = int(rows[0][0])
    record.written = write_lists(record.id)
    record.write_millis = int((time.monotonic() - began) * 1000)
    lock.check()
    rows, _ = runner.write_returning(MAKE_CURRENT, dict(record_values(record), lock=lock.name, owner=lock.owner))
    if not rows:
        lock.lost.set()
        lock.check()
    grace = RETIRE_GRACE_SECONDS if grace is None else grace
    if grace > 0:
        time.sleep(grace)
    previous, retiring = rows[0]
    if retire_mode == "background" and retire_in_background(runner, method, batch_size):
        return record
    retire(runner, method, record.id, previous=previous, retiring=retiring, batch=batch_size)
    return record


RETIRE_MODES = ("wait", "background")

CRAWLED_PAGES = """
MATCH (p:Page) WHERE p.crawled
RETURN collect(id(p)) AS ids
"""

PAGERANKS = """
MATCH (p:Page) WHERE p[$property] IS NOT NULL
RETURN collect(id(p)) AS ids, collect(p[$property]) AS ranks
"""


@dataclass(frozen=True)
class SourcePages:
    """Which pages get a list written (GDS's source node filter): ``crawled`` pages, pages whose
    PageRank is at or above a ``quantile`` of all ranks, or the pages of a list of ``urls``."""

    kind: str
    quantile: float = 0.0
    urls: tuple[str, ...] = ()

    def describe(self) -> str:
        return {"crawled": "crawled", "pagerank": f"pagerank>={self.quantile:g}"}.get(
            self.kind, f"{len(self.urls)} URLs")

    def select(self, runner, handle: "IndexHandle") -> np.ndarray:
        """The pages (indices of the streamed graph) to write lists for."""
        ids = handle.streamed.node_ids  # sorted: page i has the i-th smallest id
        if self.kind == "urls":
            from linksim.loader.urls import stored_key

            return np.unique(np.array([handle.page(stored_key(url)) for url in self.urls], dtype=np.int64))
        if self.kind == "crawled":
            chosen = np.array(runner.read_one(CRAWLED_PAGES)[0], dtype=np.int64)
        else:
            found, ranks = runner.read_one(PAGERANKS, {"property": "pagerank"})
            if not found:
                raise LinksimError("no page has a pagerank: run `linksim pagerank` first, or choose other source pages")
            ranks = np.asarray(ranks, dtype=np.float64)
            chosen = np.asarray(found, dtype=np.int64)[ranks >= np.quantile(ranks, self.quantile)]
        where = np.searchsorted(ids, chosen)
        inside = where < len(ids)
        inside[inside] = ids[where[inside]] == chosen[inside]
        return np.unique(where[inside])


def parse_source_pages(spec) -> SourcePages | None:
    """``None`` (every page), ``crawled``, ``pagerank>=Q`` (Q in [0, 1)), a list of URLs, or a
    :class:`SourcePages`. Anything else is a :class:`ConfigurationError`."""
    if spec is None or isinstance(spec, SourcePages):
        return spec
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise ConfigurationError("source_pages: the list of URLs is empty")
        return SourcePages("urls", urls=tuple(str(url) for url in spec))
    text = str(spec).strip()
    if text == "crawled":
        return SourcePages("crawled")
    if text.startswith("pagerank>="):
        try:
            quantile = float(text.split(">=", 1)[1])
        except ValueError:
            quantile = -1.0
        if not 0.0 <= quantile < 1.0:
            raise ConfigurationError(f"--source-pages pagerank>=Q takes a quantile Q in [0, 1), got {text!r}")
        return SourcePages("pagerank", quantile=quantile)
    raise ConfigurationError(
        f"--source-pages must be crawled, pagerank>=Q (a quantile in [0, 1)) or @FILE (URLs, one a line), got {text!r}")


def retire_in_background(runner, method: str, batch: int) -> bool:
    """Start a detached process that deletes the relationships of the method's ``retiring`` runs
    (``python -m linksim.procedures.retirement``); False if this runner cannot be reconnected to
    (then the caller retires them itself). The connection reaches the process through its
    environment, never its command line; its log is ``<linksim home>/logs/retire-<method>.log``.
    A retirement cut short leaves the runs in the list, for the next run of the method.
    """
    import os
    import subprocess
    import sys

    connection = getattr(runner, "connection", None)
    if connection is None:
        return False
    env = dict(os.environ, NEO4J_URI=connection.uri, NEO4J_USER=connection.user,
               NEO4J_PASSWORD=connection.password, NEO4J_DATABASE=connection.database)
    env.pop("NEO4J_PASSWORD_FILE", None)
    try:
        path = retirement_log(method)
        with open(path, "ab") as log_file:
            subprocess.Popen(
                [sys.executable, "-m", "linksim.procedures.retirement", method, "--batch", str(int(batch))],
                env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file, cwd="/",
                start_new_session=True,  # not killed with the command's terminal or process group
            )
    except (OSError, ConfigurationError) as error:  # the home changed since the check: retire here
        log.warning("cannot start the background retirement (%s): retiring the old run now", error)
        return False
    log.info("the previous %s run's relationships are deleted in the background (log: %s)", method, path)
    return True


def retirement_log(method: str) -> Path:
    """The background retirement's log file, ``<linksim home>/logs/retire-<method>.log``, made
    writable now: a home that cannot hold it is one message before anything is started."""
    from linksim.server.settings import home_folder, linksim_home

    folder = linksim_home() / "logs"
    try:
        home_folder(folder, "--retire background writes its log to")
        with open(folder / f"retire-{method}.log", "ab"):
            pass
    except (ConfigurationError, OSError) as error:
        raise ConfigurationError(f"{error}, or use --retire wait") from None
    return folder / f"retire-{method}.log"


CURRENT_AND_RETIRING = """
MATCH (current:LinksimCurrent {algorithm: $algorithm})
RETURN current.run AS run, coalesce(current.retiring, []) AS retiring
"""


def retire_pending(runner, method: str, batch: int = 50_000, attempts: int = 5) -> int:
    """Delete the relationships of the method's ``retiring`` runs (never its current run),
    retrying when a writer of the same nodes makes a transaction fail; returns how many."""
    from neo4j.exceptions import TransientError

    deleted = 0
    for attempt in range(attempts):
        rows = runner.run(CURRENT_AND_RETIRING, {"algorithm": method})
        if not rows or not rows[0]["retiring"]:
            return deleted
        try:
            deleted += retire(runner, method, rows[0]["run"], retiring=rows[0]["retiring"], batch=batch)
            return deleted
        except TransientError as error:  # a deadlock with a writer: what was committed stays deleted
            log.info("retiring %s runs: %s; again (%d)", method, error.code, attempt + 1)
            time.sleep(1.0 + attempt)
    return deleted


class _Lists:
    """The top-k lists as rows of the write query, ``[source, [targets], [scores]]``, one a source
    (the arrays come grouped by source, best first)."""

    def __init__(self, source: np.ndarray, target: np.ndarray, score: np.ndarray) -> None:
        self.source, self.target, self.score = source, target, score
        starts = np.flatnonzero(np.r_[True, source[1:] != source[:-1]]) if len(source) else np.zeros(0, np.int64)
        self.bounds = np.r_[starts, len(source)].astype(np.int64)

    def batches(self, relationships: int):
        """(first list, last list + 1) spans of about ``relationships`` relationships each."""
        first = 0
        lists = len(self.bounds) - 1
        while first < lists:
            last = int(np.searchsorted(self.bounds, self.bounds[first] + relationships, side="right")) - 1
            last = min(max(last, first + 1), lists)
            yield first, last
            first = last

    def size(self, first: int, last: int) -> int:
        return int(self.bounds[last] - self.bounds[first])

    def rows(self, first: int, last: int) -> list[list]:
        begin, end = int(self.bounds[first]), int(self.bounds[last])
        cuts = (self.bounds[first + 1 : last] - begin).tolist()
        targets = np.split(self.target[begin:end], cuts)
        scores = np.split(self.score[begin:end], cuts)
        sources = self.source[self.bounds[first:last]].tolist()
        return [[s, t.tolist(), c.tolist()] for s, t, c in zip(sources, targets, scores)]



def retire(runner, method: str, keep_run: int, previous=None, retiring=(), batch: int = 50_000) -> int:
    """Delete the SIMILAR_TO relationships of the method's ``retiring`` runs (the run ``previous``,
    current before ``keep_run``, writers that died before their switch, retirements cut short);
    returns how many. Only the runs named are touched, so a writer that runs meanwhile loses nothing.
    """
    began = time.monotonic()
    runs = list(dict.fromkeys(run for run in [previous, *retiring] if run is not None and run != keep_run))
    if not runs:
        return 0
    if previous is not None:
        rows = runner.run(PREVIOUS, {"previous": previous})
        if rows and rows[0]["written"]:
            log.info("deleting the %s SIMILAR_TO relationships of the previous %s run %s",
                     f"{rows[0]['written']:,}", method, previous)
    counters = runner.write_autocommit(RETIRE, {"runs": runs, "batch": int(batch)})
    runner.write(FORGET_RETIRED, {"algorithm": method, "runs": runs})
    deleted = counters.get("relationships_deleted", 0)
    if deleted:
        log.info("deleted %s SIMILAR_TO relationships of earlier %s runs in %.1f s", f"{deleted:,}", method,
                 time.monotonic() - began)
    return deleted
