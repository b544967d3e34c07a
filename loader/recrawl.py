"""Recrawl loads: a new crawl of pages already in the graph replaces their out-links.

For every page whose out-links the input gives in full (:meth:`CrawlGraph.recrawled`), the links
the graph holds and the input no longer has are deleted, new ones are created and the counts of
the others set; a page no longer linked to by anything, never crawled and linking nowhere is
deleted. In order, each step idempotent so that a rerun after a failure finishes the load:

1. the pages are looked up (a read); where some are new, the graph's version is bumped and they
   are MERGEd first (new pages are a change of the graph);
2. the recrawled pages' links in the graph are read and compared with the input's;
3. a change record (``cypher/graph.cypher``, ``record_change``) lists the pages whose out-links
   change and the pages losing an in-link; where no page was new, the version is bumped in the
   same transaction as the record and the first page's new links, so that the version never moves
   without the data (a recrawl killed while it reads changes nothing that an index sees);
4. the links of the input are written page by page: one transaction deletes a page's links that
   are gone and MERGEs all of its links, so that at any moment each page has all its old
   out-links or all its new ones;
5. the pages left unlinked are deleted (with those of an earlier recrawl that failed before this
   step), and the change records are marked done.

A recrawl that changes no link, creates no page and finds no unfinished one before it leaves the
version where it was (its pages' titles and crawl times are still written). A rerun after a
failure sees the graph part-way: its diff is what is still to change, and its own record joins the
first one's, so the records cover every change between the two versions.
"""

from __future__ import annotations

import numpy as np

from linksim import cypher
from linksim.loader.graph import CrawlGraph, Links, joined
from linksim.inflight import in_flight
from linksim.loader.online import Stage, WriteCounts, interrupted, links_query, write_pages
from linksim.progress import Progress

PAGE_IDS = """
UNWIND $url AS url
OPTIONAL MATCH (p:Page {url: url})
RETURN collect(coalesce(id(p), -1)) AS ids
"""
GRAPH_VERSION = "MATCH (g:LinksimGraph {name: 'links'}) RETURN g.id AS id, g.version AS version"
# The version and the change record in one statement, so that they commit together (with the
# first page's links where no page was new).
BUMP_AND_RECORD = """
MERGE (g:LinksimGraph {name: 'links'})
ON CREATE SET g.id = randomUUID(), g.version = 0
SET g.version = g.version + 1, g.changed = datetime()
WITH g
UNWIND $records AS record
CREATE (:LinksimChange {graph: g.id, version: g.version, scope: 'pages', sources: record.sources,
                        removedTargets: record.removed_targets, done: false, at: datetime()})
RETURN DISTINCT g.id AS id, g.version AS version
"""

OLD_LINKS = """
UNWIND $ids AS id
MATCH (a) WHERE id(a) = id
MATCH (a)-[r:LINKS_TO]->(b)
RETURN id(a) AS a, id(b) AS b, id(r) AS r, coalesce(r.count, 1) AS count
"""
URLS = """
UNWIND $ids AS id
MATCH (p:Page) WHERE id(p) = id
RETURN id(p) AS id, p.url AS url
"""
# By the relationship ids just read (under the load lock no one else deletes): a seek each, where
# a match on the two pages expands a hub target's in-links (cnr-2000: 870 links/s).
DELETE_LINKS = """
UNWIND $ids AS id
MATCH ()-[r:LINKS_TO]->() WHERE id(r) = id
DELETE r
"""
# Never crawled, linked to by nothing and linking nowhere: a page only an old crawl linked to.
DELETE_UNLINKED = """
UNWIND $ids AS id
MATCH (p:Page) WHERE id(p) = id AND NOT coalesce(p.crawled, false)
  AND NOT EXISTS { (:Page)-[:LINKS_TO]->(p) } AND NOT EXISTS { (p)-[:LINKS_TO]->(:Page) }
DETACH DELETE p
"""
#: URLs a change record holds at most (longer lists go over several records of the version).
RECORD_URLS = 10_000


def pair_keys(a: np.ndarray, b: np.ndarray, base: int) -> np.ndarray:
    """One int64 per (a, b) node id pair, ``a * base + b``: set operations on pairs as on numbers."""
    return a.astype(np.int64) * base + b.astype(np.int64)


def write_recrawl(
    runner, graph: CrawlGraph, links: Links, batch_size: int = 10_000, show_progress: bool = True,
    workers: int = 2,
) -> WriteCounts:
    """Write a recrawl (steps in the module docstring); the counts, with links removed and pages
    deleted, and ``counts.bumped``: whether the graph's version moved (the caller then bumps it
    again after the last write).

    Raises
    ------
    LoadInterrupted
        The database failed after retries; a rerun of the same load finishes it.
    """
    counts = WriteCounts()
    recrawled, input_sources, input_targets, unrecrawled, input_counts = graph.recrawl_input(links)
    counts.recrawled_pages = int(recrawled.sum())
    stage = Stage(len(graph))
    begun: tuple[str, int] | None = None
    with interrupted(stage, len(graph)):
        stage.begin("page look-up", len(graph))
        node_ids = _page_ids(runner, graph, batch_size)
        created_pages = node_ids < 0
        if created_pages.any():  # new pages: the version moves before they are written
            rows, _ = runner.write_returning(cypher.query("graph", "bump_graph_version"))
            begun = (rows[0][0], rows[0][1])
            ids, created = write_pages(runner, graph, counts, stage, batch_size, show_progress, recrawl=True)
            node_ids = np.asarray(ids, dtype=np.int64)
            created_pages = np.asarray(created, dtype=bool)
        sources = node_ids[recrawled]
        old_a, old_b, old_r, old_count = _old_links(runner, sources, batch_size, stage, show_progress)
        stage.begin("comparison", 1)
        new_a, new_b = node_ids[input_sources], node_ids[input_targets]
        base = int(max(node_ids.max(initial=0), old_b.max(initial=0))) + 1
        if base > 3_037_000_499:  # base ** 2 must fit an int64
            raise OverflowError(f"node ids up to {base - 1:,} are beyond a recrawl's pair keys")
        old_keys, new_keys = pair_keys(old_a, old_b, base), pair_keys(new_a, new_b, base)
        gone = ~np.isin(old_keys, new_keys)
        removed_a, removed_b, removed_r = old_a[gone], old_b[gone], old_r[gone]
        added = ~np.isin(new_keys, old_keys)
        # A link kept with another count is a change too (of its page's out-links' data).
        order = np.argsort(old_keys, kind="stable")
        at = order[np.minimum(np.searchsorted(old_keys, new_keys, sorter=order), max(len(order) - 1, 0))] \
            if len(order) else np.zeros(0, dtype=np.int64)
        recounted = ~added & (old_count[at] != input_counts) if len(order) else np.zeros(len(new_keys), dtype=bool)
        changed = np.union1d(np.union1d(removed_a, new_a[added | recounted]), node_ids[recrawled & created_pages])
        changed = np.union1d(changed, node_ids[unrecrawled])  # their links are added, never compared
        counts.changed_pages = len(changed)

        removed_targets = np.unique(removed_b)
        unfinished = runner.run(cypher.query("graph", "unfinished_changes"), {"graph": None})[0]["records"]
        if begun is None and not len(changed) and not unfinished:
            # Nothing to change: the pages' titles and crawl times only, the version left as it is.
            write_pages(runner, graph, counts, stage, batch_size, show_progress, recrawl=True)
            counts.links_updated = len(links)
            stage.end()
            counts.timings = stage.timings
            return counts

        stage.begin("change records", 1)
        records = _records(_urls(runner, changed, batch_size), _urls(runner, removed_targets, batch_size))
        if begun is not None:  # the version moved with the new pages
            graph_id, version = begun
            _record(runner, graph_id, version, records)
            first = []
        else:
            first = [(BUMP_AND_RECORD, {"records": records})]
        batches = _page_batches(graph, links, node_ids, removed_a, removed_r, batch_size)
        _write_page_links(runner, graph, links, batches, first, counts, stage, show_progress, workers)
        if begun is None:  # the version the first transaction moved to (no one else bumps it: the load lock)
            state = runner.run(GRAPH_VERSION)[0]
            graph_id, version = state["id"], state["version"]
            write_pages(runner, graph, counts, stage, batch_size, show_progress, recrawl=True)
        counts.bumped = True

        undone = runner.run(cypher.query("graph", "undone_removed_targets"), {"graph": graph_id, "version": version})
        candidates = np.union1d(removed_targets, np.asarray(undone[0]["ids"] if undone else [], dtype=np.int64))
        stage.begin("unlinked pages", len(candidates))
        for begin in range(0, len(candidates), batch_size):
            batch = candidates[begin : begin + batch_size].tolist()
            counts.pages_deleted += runner.write(DELETE_UNLINKED, {"ids": batch}).get("nodes_deleted", 0)
            stage.written += len(batch)
        runner.write(cypher.query("graph", "finish_changes"), {"graph": graph_id})
        stage.end()
    counts.timings = stage.timings
    return counts


def _old_links(runner, sources: np.ndarray, batch_size: int, stage: Stage, show_progress: bool):
    """The links the graph holds from ``sources`` (node ids): source, target and relationship ids,
    and counts."""
    stage.begin("old links read", len(sources))
    a_parts, b_parts, r_parts, c_parts = [], [], [], []
    with Progress(len(sources), "recrawled pages' links read", "pages", enabled=show_progress) as progress:
        for begin in range(0, len(sources), batch_size):
            batch = sources[begin : begin + batch_size].tolist()
            rows = np.asarray(runner.values(OLD_LINKS, {"ids": batch}), dtype=np.int64).reshape(-1, 4)
            a_parts.append(rows[:, 0])
            b_parts.append(rows[:, 1])
            r_parts.append(rows[:, 2])
            c_parts.append(rows[:, 3])
            stage.written += len(batch)
            progress.update(len(batch))
    return joined(a_parts), joined(b_parts), joined(r_parts), joined(c_parts)


def _page_ids(runner, graph: CrawlGraph, batch_size: int) -> np.ndarray:
    """The node id of every page of ``graph`` (-1 for a page not in the database), by a read."""
    parts = [runner.values(PAGE_IDS, {"url": graph.urls[begin : begin + batch_size]})[0][0]
             for begin in range(0, len(graph), batch_size)]
    return np.asarray([i for part in parts for i in part], dtype=np.int64)


def _page_batches(graph: CrawlGraph, links: Links, node_ids: np.ndarray, removed_a: np.ndarray,
                  removed_r: np.ndarray, size: int):
    """Batches of whole pages (a page with more links than ``size`` is a batch of its own): the
    ids of the page's links that are gone and the parameters of all of its links in the input;
    then the pages that lose links and have none in the input."""
    order = np.argsort(removed_a, kind="stable")
    removed_a, removed_r = removed_a[order], removed_r[order]
    done = np.zeros(len(removed_a), dtype=bool)

    def gone(source_nodes: np.ndarray) -> list[int]:
        begin = np.searchsorted(removed_a, source_nodes, side="left")
        end = np.searchsorted(removed_a, source_nodes, side="right")
        spans = [np.arange(b, e) for b, e in zip(begin.tolist(), end.tolist()) if e > b]
        if not spans:
            return []
        at = np.concatenate(spans)
        done[at] = True
        return removed_r[at].tolist()

    anchors = graph.anchors
    source, target, count = links.source, links.target, links.count
    starts = np.flatnonzero(np.diff(source, prepend=-1))  # where each page's links begin
    begin = 0
    while begin < len(source):
        limit = begin + size
        last = int(np.searchsorted(starts, limit, side="right")) - 1  # the last page to begin by then
        if limit >= len(source):
            end = len(source)
        elif starts[last] > begin:
            end = int(starts[last])
        else:  # one page of more than ``size`` links: all of them
            following = int(np.searchsorted(starts, begin, side="right"))
            end = int(starts[following]) if following < len(starts) else len(source)
        s, t = source[begin:end], target[begin:end]
        rows = {"source": node_ids[s].tolist(), "target": node_ids[t].tolist(), "count": count[begin:end].tolist()}
        if anchors:
            rows["anchor"] = [anchors.get(pair) for pair in zip(s.tolist(), t.tolist())]
        yield gone(np.unique(node_ids[s])), rows
        begin = end
    rest = np.unique(removed_a[~done])
    step = max(1, size // 16)
    for first in range(0, len(rest), step):
        yield gone(rest[first : first + step]), None


def _write_page_links(runner, graph: CrawlGraph, links: Links, batches, first: list, counts: WriteCounts,
                      stage: Stage, show_progress: bool, workers: int) -> None:
    """Write the page batches, each in one transaction; the first alone, with the statements
    ``first`` (the version's bump and the change record) in its transaction."""
    query = links_query(create=False, with_anchor=bool(graph.anchors))

    def statements(batch) -> list:
        gone, rows = batch
        return [(DELETE_LINKS, {"ids": gone})] + ([(query, rows)] if rows is not None else [])

    def tally(batch, counters) -> None:
        rows = batch[1]
        counts.links_removed += counters[0].get("relationships_deleted", 0)
        if rows is not None:
            created = counters[1].get("relationships_created", 0)
            counts.links_created += created
            counts.links_updated += len(rows["count"]) - created
            stage.written += len(rows["count"])
            progress.update(len(rows["count"]))

    stage.begin("links", len(links))
    batches = iter(batches)
    with Progress(len(links), "links", "links", enabled=show_progress) as progress:
        head = next(batches, None)
        if head is None:
            if first:
                runner.write_many(first)
        else:
            tally(head, runner.write_many(first + statements(head))[len(first):])
        for batch, counters in in_flight(batches, lambda batch: runner.write_many(statements(batch)), workers):
            tally(batch, counters)


def _urls(runner, ids: np.ndarray, batch_size: int) -> list[str]:
    """The URLs of pages by node id (in id order)."""
    found: dict[int, str] = {}
    for begin in range(0, len(ids), batch_size):
        for row in runner.run(URLS, {"ids": ids[begin : begin + batch_size].tolist()}):
            found[row["id"]] = row["url"]
    return [found[i] for i in ids.tolist() if i in found]


def _records(sources: list[str], removed_targets: list[str]) -> list[dict[str, list[str]]]:
    """The change records of this load (one at least, :data:`RECORD_URLS` URLs each at most)."""
    chunks = max(1, -(-len(sources) // RECORD_URLS), -(-len(removed_targets) // RECORD_URLS))
    return [{"sources": sources[i * RECORD_URLS : (i + 1) * RECORD_URLS],
             "removed_targets": removed_targets[i * RECORD_URLS : (i + 1) * RECORD_URLS]} for i in range(chunks)]


def _record(runner, graph_id: str, version: int, records: list[dict[str, list[str]]]) -> None:
    query = cypher.query("graph", "record_change")
    runner.write_many([(query, dict(record, graph=graph_id, version=version, scope="pages")) for record in records])
