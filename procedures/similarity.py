"""Similarity indexes over the graph in Neo4j: build or reuse, query, write SIMILAR_TO back.

The index of each method lives in the index store (:mod:`linksim.store`), one directory per
database; it is used only for the graph it was built from (the graph fingerprint covers the
links and the URLs).

The run protocol that makes the new lists current (one writer per method, readers never see a
mix or nothing) is :mod:`linksim.procedures.runs`; index handles are
:mod:`linksim.procedures.indexes`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from linksim import store
from linksim.errors import ConfigurationError, LinksimError
from linksim.inflight import in_flight
from linksim.parameters import SIMILAR_WRITE_BATCH, Query
from linksim.methods import check_sample, method as registered
from linksim.procedures.graphs import graph_of, index_root_of, refuse_crawled_only, run_key
from linksim.procedures.indexes import IndexHandle, answering, obtain_index
from linksim.procedures.runs import (RETIRE_MODES, RUNS_OF_CURRENT, RunRecord, is_current, publish_run, publish_update,
                                     retire_leftovers, retirement_log)
from linksim.ranking.lists import CodedLists
from linksim.ranking.reader import lists_reader
from linksim.procedures.source_pages import parse_source_pages
from linksim.procedures.targets import HOST_KINDS, parse_targets, refuse_on_hosts

log = logging.getLogger(__name__)

# One row per source page: [source id, [target ids], [scores]], ranks 1.. in list order. Grouping
# by source matches the source once per list (57k relationships/s on cnr-2000 against 26k for one
# row per relationship with a string run id).
#
# Concurrent transactions deadlock where they insert into the relationship chains of the same pages
# (Neo4j locks two neighbouring relationships of each chain it inserts into), and the pages of
# neighbouring lists are mostly near each other in id (a crawl numbers a site's pages together):
# measured on a wget crawl of a documentation site, every deadlock was between two transactions of
# neighbouring lists, at pages a few ids apart. So the lists are cut into WRITE_LANES lanes of
# consecutive sources, and the lanes are written at once, one query each at a time, far apart in id;
# within a lane the server commits a query's transactions one after another.
# A query's rows are whole lists (about QUERY_RELATIONSHIPS relationships); its transactions hold
# about --batch-size relationships (SIMILAR_WRITE_BATCH).
QUERY_RELATIONSHIPS = 50_000
WRITE_LANES = 4
# Deletes of retired runs go in larger transactions (one query, committed batch by batch).
RETIRE_BATCH = 50_000
WRITE_SIMILAR = """
UNWIND $rows AS row
CALL (row) {
  MATCH (a) WHERE id(a) = row[0]
  UNWIND range(0, size(row[1]) - 1) AS i
  MATCH (b) WHERE id(b) = row[1][i]
  CREATE (a)-[:SIMILAR_TO {score: row[2][i], method: $method, rank: i + 1, run: $run}]->(b)
} IN TRANSACTIONS OF $lists ROWS
"""

# A query cut short (a deadlock between its transactions, a server gone) leaves some of its
# transactions committed: its lists are deleted, then written again.
UNDO_LISTS = """
UNWIND $sources AS source
MATCH (a)-[s:SIMILAR_TO {run: $run}]->() WHERE id(a) = source
DELETE s
"""

# An update (procedures.runs.publish_update) marks the current relationships of the lists it
# replaces with its run id, and deletes them after its switch.
MARK_SUPERSEDED = f"""
UNWIND $sources AS source
MATCH (a)-[s:SIMILAR_TO]->() WHERE id(a) = source AND {is_current("$runs")}
SET s.until = $run
"""
DROP_SUPERSEDED = """
UNWIND $sources AS source
MATCH (a)-[s:SIMILAR_TO {until: $run}]->() WHERE id(a) = source
DELETE s
"""
SUPERSEDE_BATCH = 5_000
CURRENT_RUNS = f"""
MATCH (current:LinksimCurrent {{algorithm: $algorithm}})
RETURN {RUNS_OF_CURRENT} AS runs
"""
COUNT_CURRENT = f"""
MATCH ()-[s:SIMILAR_TO]->() WHERE {is_current("$runs")}
RETURN count(s) AS relationships
"""
#: An update rewrites the lists that changed while they are at most this share of the pages; beyond,
#: every list is written (marking and deleting the old relationships then costs more than it saves).
UPDATE_LISTS_SHARE = 0.5


PAGE_DETAILS = """
UNWIND $urls AS url
MATCH (p:Page {url: url})
RETURN p.url AS url, p.title AS title, p.pagerank AS pagerank
"""
# A host's details: its PageRank (`linksim pagerank --graph hosts`) and how many pages it has.
HOST_DETAILS = """
UNWIND $urls AS name
MATCH (h:Host {name: name})
RETURN h.name AS url, COUNT { (h)<-[:ON_HOST]-() } AS pages, h.pagerank AS pagerank
"""


def related_pages(handle: IndexHandle, runner, url: str, query: Query = Query(), n_fingerprints: int | None = None,
                  targets=None) -> pd.DataFrame:
    """The pages most similar to ``url`` for a checked ``query``: rank, url, title, score, pagerank.
    ``targets`` (:mod:`linksim.procedures.targets`): only the pages that pass, chosen while the list
    is ranked."""
    u = handle.page(url)
    kwargs = {"n_fingerprints": n_fingerprints} if n_fingerprints is not None else {}
    chosen = _targets_of(runner, handle, targets)
    with answering(handle):
        if chosen is None:
            found = lists_reader(handle.index).related_one(u, query, **kwargs)
        else:
            from linksim.ranking.targets import ranked_within

            found = ranked_within(handle.index, np.array([u]), query, chosen, **kwargs)[0]
    return _related_frame(handle, runner, [v for v, _ in found], [score for _, score in found])


def _targets_of(runner, handle: IndexHandle, targets):
    """The target filter ``targets`` asks (a spec, :func:`linksim.procedures.targets.parse_targets`)
    for the pages of ``handle``; the host filters are kept with the handle (its pages' URLs never
    change), the others read each time (labels and crawled pages change without the links)."""
    spec = parse_targets(targets)
    if spec is None:
        return None
    refuse_on_hosts(handle.of, spec)
    kept = handle.host_filters
    if spec in kept:
        return kept[spec]
    chosen = spec.resolve(runner, _urls_of(handle))
    if spec.kind in HOST_KINDS:
        kept[spec] = chosen
    return chosen


def _urls_of(handle: IndexHandle) -> list[str]:
    """Every page's URL, page i's i-th: from the graph streamed for the index, or its page table."""
    graph = handle.streamed.graph if handle.streamed is not None else None
    if graph is not None and graph.keys is not None:
        return list(graph.keys)
    return handle.pages.urls(range(len(handle.pages)))


def related_to_set(handle: IndexHandle, runner, urls: list[str], query: Query = Query(),
                   n_fingerprints: int | None = None, pool: int | None = None, targets=None) -> pd.DataFrame:
    """The pages most similar to ``urls`` together (:mod:`linksim.ranking.sets`) for a checked
    ``query`` and ``pool``: rank, url, title, score, lists (how many of the given pages' lists hold
    the page), pagerank."""
    from linksim.ranking.sets import set_list

    members = [handle.page(url) for url in urls]
    kwargs = {"n_fingerprints": n_fingerprints} if n_fingerprints is not None else {}
    with answering(handle):
        pages, scores, counts = set_list(handle.index, members, query, pool,
                                         targets=_targets_of(runner, handle, targets), **kwargs)
    frame = _related_frame(handle, runner, pages.tolist(), scores.tolist())
    frame.insert(4, "lists", pd.Series(counts, dtype="int64"))
    return frame


def _related_frame(handle: IndexHandle, runner, pages: list[int], scores: list[float]) -> pd.DataFrame:
    """A list of related pages with their details from the graph: rank, url, title, score, pagerank
    (of hosts: rank, host, pages, score, pagerank)."""
    urls = handle.pages.urls(pages)
    query = PAGE_DETAILS if handle.of.pages else HOST_DETAILS
    details = {row["url"]: row for row in runner.run(query, {"urls": urls})} if urls else {}
    # Columns typed whatever the length: a page without related pages is an empty list, not a
    # frame whose columns pandas typed from nothing.
    if not handle.of.pages:
        return pd.DataFrame({
            "rank": pd.Series(np.arange(1, len(pages) + 1), dtype="int64"),
            "host": pd.Series(urls, dtype=object),
            "pages": pd.Series([details.get(url, {}).get("pages", 0) for url in urls], dtype="int64"),
            "score": pd.Series(scores, dtype="float64"),
            "pagerank": pd.Series([details.get(url, {}).get("pagerank") for url in urls], dtype="float64"),
        })
    return pd.DataFrame({
        "rank": pd.Series(np.arange(1, len(pages) + 1), dtype="int64"),
        "url": pd.Series(urls, dtype=object),
        "title": pd.Series([details.get(url, {}).get("title") for url in urls], dtype=object),
        "score": pd.Series(scores, dtype="float64"),
        "pagerank": pd.Series([details.get(url, {}).get("pagerank") for url in urls], dtype="float64"),
    })


def similarity(handle: IndexHandle, url: str, other: str, n_fingerprints: int | None = None) -> float:
    kwargs = {"n_fingerprints": n_fingerprints} if n_fingerprints is not None else {}
    with answering(handle):
        return float(handle.index.sim(handle.page(url), handle.page(other), **kwargs))


def similar(
    runner,
    method: str,
    root: Path,
    query: Query = Query(),
    batch_size: int | None = None,
    wait: float = 0.0,
    rebuild: bool = False,
    crawled_only: bool = False,
    show_progress: bool = True,
    memory_budget: str | int | None = None,
    retire: str = "wait",
    source_pages=None,
    sample: int | None = None,
    graph: str = "pages",
    rewrite: bool = False,
    targets=None,
    **given,
) -> RunRecord:
    """``linksim similar``: take the method's writer lock, obtain its index (built or updated if
    needed), write every page's list of the checked ``query`` as SIMILAR_TO of a new current run, retire the old one
    (``retire``: ``wait`` for it, or ``background``: a process of its own deletes the old run's
    relationships after this returns, see :func:`retire_in_background`).

    Where the method has a current run whose lists were kept (:mod:`linksim.store.lists`), only the
    lists that changed are written, as an update of the current lists
    (:func:`linksim.procedures.runs.publish_update`); ``rewrite``: write every list all the same.

    Every argument is checked, and the memory the run needs estimated against ``memory_budget``
    (:mod:`linksim.procedures.budget`), before the lock is taken or the graph read. ``graph="hosts"``:
    the same on the host graph (:mod:`linksim.procedures.graphs`), SIMILAR_TO between hosts.
    ``targets`` (:mod:`linksim.procedures.targets`): each list holds only the pages that pass,
    chosen while it is ranked; the run is current under ``<method>@<filter>``.
    """
    from linksim.parameters import check_parameters
    from linksim.procedures.budget import check_memory
    from linksim.procedures.locks import acquire

    registered(method).parameters_for(**given)  # the method's own parameters, checked by the registry
    check_parameters(batch_size=batch_size, wait=wait, sample=sample)
    check_sample(method, sample)
    if retire not in RETIRE_MODES:
        raise ConfigurationError(f"retire must be one of {', '.join(RETIRE_MODES)}, got {retire!r}")
    of = graph_of(graph)
    refuse_crawled_only(of, crawled_only)
    if source_pages is not None and not of.pages:
        raise ConfigurationError("--source-pages (source_pages) selects pages: it does not apply to the host graph")
    targets = parse_targets(targets)
    refuse_on_hosts(of, targets)
    key = run_key(method, of, targets.name if targets else None)
    if retire == "background":
        retirement_log(key)
    source_pages = parse_source_pages(source_pages)
    fits = check_memory(runner, "similar", memory_budget, method, top_k=query.top_k, graph=of.name, **given)
    on_disk = fits.on_disk
    from linksim.fingerprints import treescan

    treescan.warm_up()  # a first compilation of the queries happens here, not while the lock is held
    if registered(method).warm_up is not None:
        registered(method).warm_up()  # and of the method's own lists
    if registered(method).update is not None:
        from linksim.fingerprints import update

        update.warm_up()  # and of the index updates
    if targets is not None:
        from linksim.ranking import targets as filters

        filters.warm_up()  # and of the target filter
    with acquire(runner, f"similar:{key}", wait=wait) as lock:
        # The runs a retirement cut short go first: their room in the store is this run's.
        retire_leftovers(runner, key, batch_size or RETIRE_BATCH)
        _check_disk(runner, fits, index_root_of(root, of), method, query.top_k)
        handle = obtain_index(runner, method, root, rebuild=rebuild, crawled_only=crawled_only,
                              show_progress=show_progress, memory_budget=memory_budget, counted=True,
                              on_disk=on_disk, graph=of, reopen=True, **given)
        # The page-major copies, where they do not fit the budget, go to a scratch folder of the
        # store for the run (removed after it, or by the next save or load if the run is killed).
        rows = store.build_directory(handle.root, method) if fits.rows_on_disk else contextlib.nullcontext()
        with rows as folder:
            # The first-step bands would not fit the budget of an index on disk either.
            lists_reader(handle.index).read_lists_as(page_major=fits.page_major, folder=folder, bands=not on_disk)
            # A run whose index does not fit in memory writes every list and keeps none (the
            # comparison would hold two sets of lists).
            return _write_similar(runner, handle, query, batch_size, workers=None,
                                  show_progress=show_progress, lock=lock, grace=None, retire_mode=retire,
                                  source_pages=source_pages, sample=sample, rewrite=rewrite or on_disk,
                                  keep_lists=not on_disk, let_go=True, targets=targets)


def write_similar(
    runner,
    handle: IndexHandle,
    query: Query = Query(),
    batch_size: int | None = None,
    workers: int | None = None,
    show_progress: bool = True,
    lock=None,
    grace: float | None = None,
    retire: str = "wait",
    source_pages=None,
    sample: int | None = None,
    rewrite: bool = False,
    keep_lists: bool = True,
    targets=None,
) -> RunRecord:
    """Write every page's list of the checked ``query`` as SIMILAR_TO of a new current run (see module), or
    only the lists that changed since the current run (see :func:`similar`; ``rewrite``: all).
    ``keep_lists``: keep the lists for the next run's comparison (False: write every list, keep none).

    ``lock``: the method's writer lock when the caller holds it already (:func:`similar` takes it
    before reading the graph); otherwise it is taken here. ``grace``: seconds between the switch
    and the retirement of the old run (default :data:`RETIRE_GRACE_SECONDS`).
    """
    from linksim.parameters import check_parameters
    from linksim.procedures.locks import acquire

    check_parameters(batch_size=batch_size, sample=sample)
    targets = parse_targets(targets)
    refuse_on_hosts(handle.of, targets)
    if lock is None:
        with acquire(runner, f"similar:{run_key(handle.method, handle.of, targets.name if targets else None)}") as own:
            return write_similar(runner, handle, query, batch_size, workers, show_progress, own,
                                 grace, retire, source_pages, sample, rewrite, keep_lists, targets)
    return _write_similar(runner, handle, query, batch_size, workers, show_progress, lock, grace,
                          retire, parse_source_pages(source_pages), sample, rewrite or not keep_lists, keep_lists,
                          targets=targets)


def _write_similar(runner, handle, query, given_batch, workers, show_progress, lock, grace,
                   retire_mode="wait", source_pages=None, sample=None, rewrite=False, keep_lists=True,
                   let_go=False, targets=None) -> RunRecord:
    """``let_go`` (the handle is this run's own, :func:`similar`): the URLs are let go once the
    source pages are found, and the index once the lists are made; at 10^7 pages they are a few
    GB that the lists and the write do not read."""
    from linksim.ranking.topk import lists_of_all
    from linksim.procedures.schema import apply_schema

    apply_schema(runner)  # the indexes the write and the related-pages query use (idempotent)
    # --batch-size: relationships per write transaction (default SIMILAR_WRITE_BATCH) and, when
    # given, per retirement transaction too (default RETIRE_BATCH).
    batch_size = given_batch or SIMILAR_WRITE_BATCH
    method, graph = handle.method, handle.streamed.graph
    # The run is current under its method's key on its graph (`simrank`, `simrank@hosts`), or
    # under its target filter's (`simrank@other-hosts`), which its relationships carry as their
    # method: the plain pattern `{method: 'simrank'}` never mixes a filtered run in.
    key = run_key(method, handle.of, targets.name if targets else None)
    record = RunRecord(
        algorithm=method, mode="write", key=key,
        parameters=dict(store.parameters_of(handle.index), topK=query.top_k, similarityCutoff=query.similarity_cutoff,
                        **({"sourcePages": source_pages.describe()} if source_pages else {}),
                        **({"targets": targets.describe()} if targets else {}),
                        **({"sample": sample} if sample is not None else {}),
                        **({} if handle.of.pages else {"graph": handle.of.name})),
    )
    pages = source_pages.select(runner, handle) if source_pages else None
    chosen = targets.resolve(runner, _urls_of(handle)) if targets else None
    written_as = key if targets else method
    lists_name = key if targets else method
    if let_go:
        graph = _without_urls(handle, keep_codes=keep_lists)
    record.pages, record.links = graph.n, graph.m
    linked = None
    if let_go and not keep_lists:
        # A run that keeps no lists reads nothing of the graph after them but which pages have a
        # link: found now, the graph (its links both ways, 0.9 GiB at 10^8 links) goes before them.
        linked = graph.linked()
        handle.streamed = dataclasses.replace(handle.streamed, graph=None)
        graph = None
    record.stream_millis = int(handle.streamed.seconds * 1000)
    began = time.monotonic()
    counts: dict = {}
    made_by = {"graph": handle.index.graph_fingerprint, "query": [query.top_k, query.similarity_cutoff]}
    reached = None
    if keep_lists and not rewrite and pages is None and chosen is None and sample is None:
        reached = _reached(runner, handle, query, key, lists_name, made_by)
    checkpoint = None if reached is not None else _checkpoint(handle, record, chosen.digest() if chosen is not None else None)
    with answering(handle):
        source, target, score, rank = lists_of_all(
            handle.index, query, pages=pages if reached is None else reached[0], workers=workers,
            show_progress=show_progress, sample=sample, report=counts, checkpoint=checkpoint,
            hold=keep_lists,  # a run that keeps none: its index on disk needs that memory as page cache
            targets=chosen,
        )
    del rank  # the write numbers each list's pairs itself
    if reached is not None:
        source, target, score = _with_kept(reached, source, target, score)
    if let_go:
        handle.index = None
    record.lists_sampled = counts.get("lists_sampled", 0)
    record.lists_resumed = counts.get("lists_resumed", 0)
    linked = graph.linked() if linked is None else linked
    record.answered = int(np.count_nonzero(source[1:] != source[:-1]) + 1) if len(source) else 0
    record.linked = int(linked.sum() if pages is None else linked[np.asarray(pages, dtype=np.int64)].sum())
    record.compute_millis = int((time.monotonic() - began + handle.build_seconds) * 1000)

    ids = handle.streamed.node_ids
    # Scores mean nothing beyond 12 decimals (ties are decided there); rounding drops the summation
    # noise that would otherwise show in the Browser's captions (0.17011199999999996).
    np.round(score, 12, out=score)
    coded = CodedLists.of(graph.codes, source, target, score) if keep_lists else None
    retire_batch = given_batch or RETIRE_BATCH
    plan = None if rewrite else _update_plan(runner, handle, record.key, coded, graph, lists_name)
    if plan is None:
        lists = _Lists(source, target, score, ids)
        _check_write_disk(runner, len(lists.source), checkpoint)

        def write_lists(run: int) -> int:
            return _write_lists(runner, lists, written_as, run, batch_size, lock, record.key, show_progress)

        record = publish_run(runner, lock, record, write_lists, grace, retire_mode, retire_batch)
        _keep_lists(handle, record.key, coded, [record.id], record.written, lists_name, made_by)
        if checkpoint is not None:
            checkpoint.discard()
        return record

    changed = np.isin(source, plan.pages)
    lists = _Lists(source[changed], target[changed], score[changed], ids)
    _check_write_disk(runner, len(lists.source), checkpoint)
    sources = ids[plan.pages].tolist()
    record.lists_rewritten = len(plan.pages)
    log.info("%s of %s lists changed since the current %s run: writing those only", f"{len(plan.pages):,}",
             f"{graph.n:,}", record.key)

    def write_changes(run: int) -> int:
        written = _write_lists(runner, lists, written_as, run, batch_size, lock, record.key, show_progress)
        superseded = 0
        for first in range(0, len(sources), SUPERSEDE_BATCH):
            lock.check()
            counters = runner.write(MARK_SUPERSEDED, {"sources": sources[first : first + SUPERSEDE_BATCH],
                                                      "runs": plan.runs, "run": run})
            superseded += counters.get("properties_set", 0)
        return plan.relationships - superseded + written

    def drop_superseded(run: int) -> None:
        for first in range(0, len(sources), SUPERSEDE_BATCH):
            runner.write(DROP_SUPERSEDED, {"sources": sources[first : first + SUPERSEDE_BATCH], "run": run})

    record = publish_update(runner, lock, record, plan.runs, write_changes, drop_superseded, grace, retire_batch)
    _keep_lists(handle, record.key, coded, [*plan.runs, record.id], record.written, lists_name, made_by)
    if checkpoint is not None:
        checkpoint.discard()
    return record


def _check_disk(runner, fits, root, method: str, top_k: int) -> None:
    """Before anything starts: refuse a run whose scratch files and write do not fit the free disk.
    Counted: the page-major rows it writes beside its index, the finished lists it keeps until
    they are written, and, for a run that writes every list (its index built on disk keeps no
    lists to compare), the store's growth beyond the room it has (:func:`linksim.procedures.budget.
    reusable_relationships`) and the transaction logs of the write where the server is on this
    machine. The write of an update is checked when its size is known (:func:`_check_write_disk`)."""
    from linksim.estimate import check_free_space
    from linksim.procedures.budget import write_disk

    needs = [(name, Path(root), size) for name, size in fits.disk.items()
             if name.startswith(("page-major", "finished lists"))]
    if fits.on_disk:
        needs += write_disk(runner, top_k * fits.pages)
    check_free_space(needs, f"similar {method} on {fits.pages:,} pages",
                     "; nothing was started. Free that space, and run it again.")


def _check_write_disk(runner, relationships: int, checkpoint) -> None:
    """Before the first relationship is written (:func:`linksim.procedures.budget.check_write_disk`)."""
    from linksim.procedures.budget import check_write_disk

    check_write_disk(runner, relationships, f" The lists are kept in {checkpoint.folder}: the same command, run "
                     "again, reads them back and only writes." if checkpoint is not None else "")


def _checkpoint(handle: IndexHandle, record: RunRecord, targets: str | None = None):
    """Where the run keeps its finished lists until they are written (:mod:`linksim.store.partial`):
    a run cut short (killed, a crash, the server gone) and started again with the same index and
    parameters computes only the lists it had not finished. None for an index not in the store."""
    import hashlib

    from linksim import __version__
    from linksim.store.partial import Checkpoint

    if handle.path is None:
        return None
    try:
        meta = json.loads((Path(handle.path) / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    meta.pop("graphState", None)  # where the database was when the index was last used: not the index
    digest = hashlib.blake2b(json.dumps(meta, sort_keys=True).encode(), digest_size=16).hexdigest()
    identity = {"index": digest, "linksim": __version__, "parameters": record.parameters,
                **({"targets": targets} if targets else {})}
    return Checkpoint(Path(handle.root) / "lists" / f".{record.key}.partial", identity)


def _write_lists(runner, lists: "_Lists", method: str, run: int, batch_size: int, lock, key: str,
                 show_progress: bool) -> int:
    """Create the relationships of ``lists`` under ``run``; returns how many."""
    from linksim.progress import Progress

    total = len(lists.source)
    per_list = max(1.0, total / max(1, len(lists.bounds) - 1))
    params = {"method": method, "run": run, "lists": max(1, round(batch_size / per_list))}

    def write(span: tuple[int, int]) -> dict[str, int]:
        rows = lists.rows(*span)

        def attempt(tries: int) -> dict[str, int]:
            lock.check()
            return runner.write_autocommit(WRITE_SIMILAR, dict(params, rows=rows))

        def undo(error, tries: int) -> None:
            log.info("writing SIMILAR_TO: %s; the batch again (%d)", getattr(error, "code", error), tries)
            runner.write(UNDO_LISTS, {"sources": [row[0] for row in rows], "run": run})

        return runner.retried(attempt, undo)  # the runner's retry time (30 s, the driver's default)

    with Progress(total, f"writing SIMILAR_TO ({key})", "relationships", enabled=show_progress) as progress:
        batches = lists.lane_batches(max(batch_size, QUERY_RELATIONSHIPS), WRITE_LANES)
        for (first, last), counters in in_flight(batches, write, workers=WRITE_LANES):
            size = lists.size(first, last)
            if counters.get("relationships_created", 0) != size:
                raise LinksimError(
                    f"wrote {counters.get('relationships_created', 0)} of {size} SIMILAR_TO "
                    "relationships of a batch: pages were deleted while linksim ran; run it again"
                )
            progress.update(size)
    return total


@dataclass
class _UpdatePlan:
    runs: list[int]  # the current runs the lists were compared with
    pages: np.ndarray  # the pages whose list changed (page numbers of the streamed graph)
    relationships: int  # how many relationships the current lists hold


def _update_plan(runner, handle: IndexHandle, key: str, new: CodedLists, graph, name: str) -> _UpdatePlan | None:
    """How to bring the current lists to ``new`` by rewriting only the lists that changed, or None
    where every list is to be written (no lists kept from the current run, a database that does
    not hold what they say, or so many changes that a full write costs less)."""
    from linksim.ranking.lists import changed_lists
    from linksim.store.lists import open_lists

    kept = open_lists(handle.root, name)
    if kept is None:
        return None
    old, description = kept
    rows = runner.run(CURRENT_RUNS, {"algorithm": key})
    runs = rows[0]["runs"] if rows else []
    if not runs or description.get("runs") != runs:
        log.info("the lists kept in %s are not those of the current %s run: every list is written",
                 handle.root, key)
        return None
    changed, expected = changed_lists(old, new, graph.codes)
    if len(changed) > UPDATE_LISTS_SHARE * graph.n:  # decided before the count, a scan of every SIMILAR_TO
        log.info("%s of %s lists changed since the current %s run: writing every list (cheaper than an "
                 "update beyond %.0f %%)", f"{len(changed):,}", f"{graph.n:,}", key, 100 * UPDATE_LISTS_SHARE)
        return None
    held = runner.run(COUNT_CURRENT, {"runs": runs})[0]["relationships"]
    if held != expected:
        log.info("the current %s lists hold %s relationships where %s were expected (changed outside this "
                 "run): every list is written", key, f"{held:,}", f"{expected:,}")
        return None
    codes = graph.codes
    order = np.argsort(codes, kind="stable")
    pages = np.sort(order[np.searchsorted(codes[order], changed)])
    return _UpdatePlan(list(runs), pages, int(held))


def _reached(runner, handle: IndexHandle, query: Query, key: str, name: str, made_by: dict):
    """After an update of the index that says what it changed (the default's,
    :mod:`linksim.spectral_update`): the pages whose lists the change can reach, and the current
    lists of the others, kept by the last run on the index updated, with this query: ``(pages,
    (indptr, targets, scores) by page)``. None where the lists are to be made for every page (no
    such change, no such lists, or lists that are not the database's current ones)."""
    change = getattr(handle.index, "change", None)
    if change is None or query.top_k is None:
        return None
    from linksim.spectral_update import lists_reach, page_lists
    from linksim.store.lists import open_lists

    kept = open_lists(handle.root, name)
    if kept is None:
        return None
    old, description = kept
    if description.get("graph") == made_by["graph"]:
        return None  # the lists of this very index (the run after the update's): every list is made
    if description.get("graph") != change.before or description.get("query") != made_by["query"]:
        log.info("the kept %s lists were not made on the index just updated with this query: every list is made", key)
        return None
    rows = runner.run(CURRENT_RUNS, {"algorithm": key})
    if not rows or description.get("runs") != rows[0]["runs"]:
        return None
    graph = handle.streamed.graph
    lists = page_lists(old.sources, old.indptr, old.targets, old.scores, graph.codes)
    pages = lists_reach(handle.index, lists, query.top_k)
    log.info("%s of %s pages' lists are within reach of the change (%s pages folded into the embedding): "
             "making those", f"{len(pages):,}", f"{graph.n:,}", f"{len(change.folded):,}")
    return pages, lists


def _with_kept(reached, source: np.ndarray, target: np.ndarray, score: np.ndarray):
    """The lists of every page: those just made for the pages reached, the kept ones of the others."""
    pages, (indptr, targets, scores) = reached
    n = len(indptr) - 1
    lengths = np.diff(indptr)
    owner = np.repeat(np.arange(n), lengths)
    others = np.ones(n, dtype=bool)
    others[pages] = False
    kept = others[owner]
    source = np.concatenate([owner[kept], np.asarray(source, dtype=np.int64)])
    order = np.argsort(source, kind="stable")  # a page's list comes from one of the two, in its order
    return (source[order], np.concatenate([targets[kept], np.asarray(target, dtype=np.int64)])[order],
            np.concatenate([scores[kept], np.asarray(score, dtype=np.float64)])[order])


def _keep_lists(handle: IndexHandle, key: str, lists: CodedLists | None, runs: list[int], relationships: int,
                name: str, made_by: dict | None = None) -> None:
    """Keep the lists just made current for the next run's comparison (a failure costs that run a
    full write, never a result); None: keep none. ``name``: the file's (the method, or the key of
    a filtered run)."""
    from linksim.store.lists import forget_lists, save_lists

    if lists is None:
        forget_lists(handle.root, name)
        return
    try:
        save_lists(handle.root, name, lists, {"runs": runs, "relationships": relationships, "key": key,
                                              **(made_by or {})})
    except OSError as error:
        log.warning("cannot keep the %s lists for the next run's update (%s): it writes every list", key, error)
        forget_lists(handle.root, name)


def _without_urls(handle: IndexHandle, keep_codes: bool):
    """The handle's graph without its URLs (their draw codes kept where the run keeps its lists
    by code), for a run that reads no URL after its source pages are found."""
    graph = handle.streamed.graph
    codes = {"draw_codes": graph.codes} if keep_codes else {}
    graph = dataclasses.replace(graph, keys=None, **codes)
    handle.streamed = dataclasses.replace(handle.streamed, graph=graph)
    return graph


class _Lists:
    """The top-k lists as rows of the write query, ``[source, [targets], [scores]]``, one a source
    (the arrays come grouped by source, best first). ``ids``: the database id of each page number
    (None: the arrays hold ids), looked up a batch at a time rather than copied for every list."""

    def __init__(self, source: np.ndarray, target: np.ndarray, score: np.ndarray, ids: np.ndarray | None = None) -> None:
        self.source, self.target, self.score = source, target, score
        self.ids = ids
        starts = np.flatnonzero(np.r_[True, source[1:] != source[:-1]]) if len(source) else np.zeros(0, np.int64)
        self.bounds = np.r_[starts, len(source)].astype(np.int64)

    def _spans(self, first: int, end: int, relationships: int):
        """(first list, last list + 1) spans of about ``relationships`` relationships each, from
        list ``first`` to list ``end`` (excluded)."""
        while first < end:
            last = int(np.searchsorted(self.bounds, self.bounds[first] + relationships, side="right")) - 1
            last = min(max(last, first + 1), end)
            yield first, last
            first = last

    def lane_batches(self, relationships: int, lanes: int):
        """Spans of about ``relationships`` relationships within ``lanes`` lanes of consecutive
        lists (about as many relationships each), taken from the lanes in turn: a lane's next span
        comes once the spans of the other lanes before it, so that those written at once are a
        lane apart."""
        total = int(self.bounds[-1])
        cuts = np.searchsorted(self.bounds, [total * k // lanes for k in range(1, lanes)], side="left")
        edges = [0, *sorted(set(int(c) for c in cuts)), len(self.bounds) - 1]
        per_lane = [list(self._spans(first, last, relationships)) for first, last in zip(edges, edges[1:])
                    if last > first]
        for turn in range(max((len(spans) for spans in per_lane), default=0)):
            for spans in per_lane:
                if turn < len(spans):
                    yield spans[turn]

    def size(self, first: int, last: int) -> int:
        return int(self.bounds[last] - self.bounds[first])

    def rows(self, first: int, last: int) -> list[list]:
        begin, end = int(self.bounds[first]), int(self.bounds[last])
        cuts = (self.bounds[first + 1 : last] - begin).tolist()
        target, source = self.target[begin:end], self.source[self.bounds[first:last]]
        if self.ids is not None:
            target, source = self.ids[target], self.ids[source]
        targets = np.split(target, cuts)
        scores = np.split(self.score[begin:end], cuts)
        sources = source.tolist()
        return [[s, t.tolist(), c.tolist()] for s, t, c in zip(sources, targets, scores)]


