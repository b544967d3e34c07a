"""Recrawl loads: a new crawl of pages already in the graph replaces their out-links.

For every page whose out-links the input gives in full (:meth:`CrawlGraph.recrawled`), the links
the graph holds and the input no longer has are deleted, new ones are created and the counts of
the others set; a page no longer linked to by anything, never crawled and linking nowhere is
deleted. In order, each step idempotent so that a rerun after a failure finishes the load:

1. the pages are MERGEd as in any load (learning which are new);
2. the recrawled pages' links in the graph are read and compared with the input's;
3. a change record (``cypher/graph.cypher``, ``record_change``) lists the pages whose out-links
   change and the pages losing an in-link, under the graph version the load bumped first;
4. the links gone are deleted, then every link of the input is MERGEd;
5. the pages left unlinked are deleted (with those of an earlier recrawl that failed before this
   step), and the change records are marked done.

A rerun after a failure sees the graph part-way: its diff is what is still to change, and its own
record joins the first one's, so the records cover every change between the two versions.
"""

from __future__ import annotations

import numpy as np

from linksim import cypher
from linksim.loader.graph import CrawlGraph, Links, joined
from linksim.loader.online import Stage, WriteCounts, interrupted, write_links, write_pages
from linksim.progress import Progress

OLD_LINKS = """
UNWIND $ids AS id
MATCH (a) WHERE id(a) = id
MATCH (a)-[r:LINKS_TO]->(b)
RETURN id(a) AS a, id(b) AS b, id(r) AS r
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
    runner, graph: CrawlGraph, links: Links, graph_id: str, version: int, batch_size: int = 10_000,
    show_progress: bool = True, workers: int = 2,
) -> WriteCounts:
    """Write a recrawl (steps in the module docstring); the counts, with links removed and pages
    deleted. ``graph_id`` and ``version``: the graph version the load bumped before writing.

    Raises
    ------
    LoadInterrupted
        The database failed after retries; a rerun of the same load finishes it.
    """
    counts = WriteCounts()
    recrawled, input_sources, input_targets, unrecrawled = graph.recrawl_input(links)
    counts.recrawled_pages = int(recrawled.sum())
    stage = Stage(len(graph))
    with interrupted(stage, len(graph)):
        ids, created = write_pages(runner, graph, counts, stage, batch_size, show_progress, recrawl=True)
        node_ids = np.asarray(ids, dtype=np.int64)
        created_pages = np.asarray(created, dtype=bool)
        sources = node_ids[recrawled]
        old_a, old_b, old_r = _old_links(runner, sources, batch_size, stage, show_progress)
        stage.begin("comparison", 1)
        new_a, new_b = node_ids[input_sources], node_ids[input_targets]
        base = int(max(node_ids.max(initial=0), old_b.max(initial=0))) + 1
        if base > 3_037_000_499:  # base ** 2 must fit an int64
            raise OverflowError(f"node ids up to {base - 1:,} are beyond a recrawl's pair keys")
        old_keys, new_keys = pair_keys(old_a, old_b, base), pair_keys(new_a, new_b, base)
        gone = ~np.isin(old_keys, new_keys)
        removed_a, removed_b, removed_r = old_a[gone], old_b[gone], old_r[gone]
        added = ~np.isin(new_keys, old_keys)
        changed = np.union1d(np.union1d(removed_a, new_a[added]), node_ids[recrawled & created_pages])
        changed = np.union1d(changed, node_ids[unrecrawled])  # their links are added, never compared
        counts.changed_pages = len(changed)

        stage.begin("change records", 1)
        changed_urls = _urls(runner, changed, batch_size)
        removed_targets = np.unique(removed_b)
        _record(runner, graph_id, version, changed_urls, _urls(runner, removed_targets, batch_size))

        stage.begin("link deletions", len(removed_a))
        with Progress(len(removed_a), "links removed", "links", enabled=show_progress) as progress:
            for begin in range(0, len(removed_r), batch_size):
                batch = removed_r[begin : begin + batch_size].tolist()
                counters = runner.write(DELETE_LINKS, {"ids": batch})
                counts.links_removed += counters.get("relationships_deleted", 0)
                stage.written += len(batch)
                progress.update(len(batch))

        write_links(runner, graph, links, ids, counts, stage, False, batch_size, show_progress, workers)

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
    """The links the graph holds from ``sources`` (node ids): source, target and relationship ids."""
    stage.begin("old links read", len(sources))
    a_parts, b_parts, r_parts = [], [], []
    with Progress(len(sources), "recrawled pages' links read", "pages", enabled=show_progress) as progress:
        for begin in range(0, len(sources), batch_size):
            batch = sources[begin : begin + batch_size].tolist()
            rows = np.asarray(runner.values(OLD_LINKS, {"ids": batch}), dtype=np.int64).reshape(-1, 3)
            a_parts.append(rows[:, 0])
            b_parts.append(rows[:, 1])
            r_parts.append(rows[:, 2])
            stage.written += len(batch)
            progress.update(len(batch))
    return joined(a_parts), joined(b_parts), joined(r_parts)


def _urls(runner, ids: np.ndarray, batch_size: int) -> list[str]:
    """The URLs of pages by node id (in id order)."""
    found: dict[int, str] = {}
    for begin in range(0, len(ids), batch_size):
        for row in runner.run(URLS, {"ids": ids[begin : begin + batch_size].tolist()}):
            found[row["id"]] = row["url"]
    return [found[i] for i in ids.tolist() if i in found]


def _record(runner, graph_id: str, version: int, sources: list[str], removed_targets: list[str]) -> None:
    """The change records of this load (one at least, :data:`RECORD_URLS` URLs each at most)."""
    query = cypher.query("graph", "record_change")
    chunks = max(1, -(-len(sources) // RECORD_URLS), -(-len(removed_targets) // RECORD_URLS))
    statements = [
        (query, {"graph": graph_id, "version": version, "scope": "pages",
                 "sources": sources[i * RECORD_URLS : (i + 1) * RECORD_URLS],
                 "removed_targets": removed_targets[i * RECORD_URLS : (i + 1) * RECORD_URLS]})
        for i in range(chunks)
    ]
    runner.write_many(statements)
