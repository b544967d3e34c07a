"""Stream the link graph out of Neo4j into a :class:`~linksim.graph.LinkGraph`.

Shared by every indexer:

1. the pages: their internal ids and URLs as two lists (optionally crawled pages only);
2. the links, by chunks of source pages: two long lists of integers per chunk, which the driver
   decodes far faster than millions of one-link records. Chunks are read by two threads, each in
   a read transaction of its own, so that the server's work and the driver's decoding overlap.
   Each chunk's links go, as page indices, to a spool that holds 4 Mi links in memory and the
   rest on disk; the CSR arrays are built from it range by range
   (:meth:`~linksim.graph.LinkGraph.from_spool`), so memory does not hold the streamed pairs.

Neo4j reads at read-committed isolation, so not even one transaction would see a frozen graph
while a load writes to it: stream when no load runs. Links to nodes that are not selected pages
are left out (and counted in the log), so a page created meanwhile cannot break the mapping.

Page ``i`` of the graph is the page with the ``i``-th smallest internal id: the mapping between
pages and indices is stable for a given state of the database, and ``graph.keys`` holds the URLs.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from linksim.errors import LinksimError
from linksim.graph import LinkGraph
from linksim.procedures.graphs import PAGE_GRAPH, LinkGraphOf, graph_of, refuse_crawled_only
from linksim.store.spool import LinkSpool
from linksim.progress import Progress

log = logging.getLogger(__name__)

# id() is deprecated in favour of elementId(), but the integer id is what lets the links come
# back as plain integer lists; it is only used within this one transaction.
# Records holding the ids, URLs and out-degrees of up to $block pages each: the driver decodes lists of values much
# faster than records (cnr-2000: 0.3 s against 5.2 s for 325,557 pages as one record each), and
# blocks read one at a time keep the driver from holding them all at once (one record of the
# 3.3M pages of a generated 30M-link crawl took linksim to 1.92 GiB before the first link).
#: The graph's fragments ({label}, {key}, {link}) come from linksim.procedures.graphs, never from a user.
PAGES = """
MATCH (p:{label})
WHERE $all_pages OR p.crawled
WITH id(p) AS id, p.{key} AS url, COUNT { (p)-[:{link}]->() } AS degree ORDER BY id
WITH id / $block AS block, collect(id) AS ids, collect(url) AS urls, collect(degree) AS degrees
RETURN ids, urls, degrees ORDER BY block
"""
#: Links a chunk of source pages holds at most (unless one page has more): a chunk of hub pages
#: would otherwise come back as one message of millions of links (the first 20,000 pages of a
#: generated 30M-link crawl took linksim from 0.5 to 1.7 GiB for a moment).
CHUNK_LINKS = 200_000
PAGE_BLOCK = 65_536

# Fragments, not parameters, choose the filters: a `$flag OR b.crawled` test still reads the
# property of every link's target, and labels on `a` and `b` cost label checks the id seek and
# the model (LINKS_TO joins pages) make redundant (cnr-2000: 1.8 s against 3.0 s server time).
LINKS = """
UNWIND $sources AS source
MATCH (a) WHERE id(a) = source
MATCH (a)-[:{link}]->(b)
{where}
RETURN collect(source) AS source, collect(id(b)) AS target
"""


def links_query(crawled_only: bool, self_loops: bool, graph: LinkGraphOf = PAGE_GRAPH) -> str:
    conditions = (["b <> a"] if not self_loops else []) + (["b.crawled"] if crawled_only else [])
    return LINKS.replace("{where}", "WHERE " + " AND ".join(conditions) if conditions else "").replace(
        "{link}", graph.link)


def pages_query(graph: LinkGraphOf = PAGE_GRAPH) -> str:
    return PAGES.replace("{label}", graph.label).replace("{key}", graph.key).replace("{link}", graph.link)


@dataclass
class StreamedGraph:
    """The graph read from Neo4j and what the read cost."""

    graph: LinkGraph
    node_ids: np.ndarray  # internal id of page i
    seconds: float
    state: dict | None = None  # graph_state() when the read began
    of: LinkGraphOf = PAGE_GRAPH  # which link graph: the pages' or the hosts'

    @property
    def urls(self) -> list[str]:
        return self.graph.keys  # type: ignore[return-value]

    @property
    def links_per_second(self) -> float:
        return self.graph.m / self.seconds if self.seconds > 0 else float("inf")


class GraphHalfWritten(LinksimError):
    """A load of the graph was cut short (killed, the server gone) and not run again: the graph
    is neither the old crawl nor the new one, and nothing is computed from it."""

    exit_code = 5


def refuse_half_written(runner, state: dict, graph: LinkGraphOf = PAGE_GRAPH) -> None:
    """Raise :class:`GraphHalfWritten` where a load's change record is not done (a host graph's
    build is marked under way) and no live writer holds the load lock (a load or build under way
    only makes what is built meanwhile stale)."""
    from linksim import cypher
    from linksim.procedures.locks import holder_alive

    if state.get("id") is None:
        return
    if graph is not PAGE_GRAPH:
        rows = runner.run(cypher.query("graph", "host_graph_building"))
        if rows and rows[0]["building"] and not holder_alive(runner, "load"):
            raise GraphHalfWritten("the host graph is half-built: a `linksim hosts` (or a load that keeps it in "
                                   "step) was cut short and not run again. Run `linksim hosts` again to finish it; "
                                   "nothing was computed.")
        return
    rows = runner.run(cypher.query("graph", "unfinished_changes"), {"graph": state["id"]})
    if not rows or not rows[0]["records"] or holder_alive(runner, "load"):
        return
    raise GraphHalfWritten(
        f"the graph is half-written: a load (graph version {rows[0]['version']}, begun {rows[0]['at']}) was cut "
        "short and not run again, so some pages have their new links and others their old ones. Run the same "
        "`linksim load` (with --recrawl, if it was one) again to finish it; nothing was computed."
    )


def graph_state(runner, graph: str | LinkGraphOf = "pages") -> dict:
    """``{id, version, pages, links}`` of the graph now (the page graph, or the host graph with
    its hosts as ``pages``), in constant time: what an index records and what a query compares it
    with (see ``cypher/graph.cypher``)."""
    from linksim import cypher

    return runner.run(cypher.query("graph", graph_of(graph).state))[0]


def read_pages(runner, all_pages: bool = True, graph: LinkGraphOf = PAGE_GRAPH) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The internal ids (ascending), the URLs (host names) and the out-degrees of the pages (hosts),
    read block by block in one transaction."""
    blocks: list[np.ndarray] = []
    degrees: list[np.ndarray] = []
    urls: list[str] = []
    for record in runner.stream(pages_query(graph), {"all_pages": all_pages, "block": PAGE_BLOCK}, fetch_size=1):
        blocks.append(np.array(record["ids"], dtype=np.int64))
        degrees.append(np.array(record["degrees"], dtype=np.int64))
        urls.extend(record["urls"])
    node_ids = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)
    degree = np.concatenate(degrees) if degrees else np.zeros(0, dtype=np.int64)
    if len(node_ids) > 1 and not (node_ids[1:] > node_ids[:-1]).all():
        # Cypher does not promise that collect() keeps the order of its input: make sure.
        order = np.argsort(node_ids, kind="stable")
        node_ids, degree, urls = node_ids[order], degree[order], [urls[i] for i in order]
    return node_ids, urls, degree


def chunk_starts(degree: np.ndarray, pages: int, links: int) -> list[int]:
    """The first page of each chunk: at most ``pages`` pages and, unless one page has more, at
    most ``links`` links."""
    starts, position, total = [], 0, np.concatenate([[0], np.cumsum(degree)])
    while position < len(degree):
        starts.append(position)
        end = int(np.searchsorted(total, total[position] + links, side="right")) - 1
        position = min(max(end, position + 1), position + pages, len(degree))
    return starts


def stream_link_graph(
    runner,
    crawled_only: bool = False,
    self_loops: bool = False,
    chunk: int = 20_000,
    workers: int = 2,
    show_progress: bool = True,
    spool_links: int | None = None,
    graph: str | LinkGraphOf = "pages",
) -> StreamedGraph:
    """Read the ``(:Page)-[:LINKS_TO]->(:Page)`` graph (or the host graph: ``graph="hosts"``,
    :mod:`linksim.procedures.graphs`; its hosts are the graph's pages, their names its keys).

    Parameters
    ----------
    runner : QueryRunner
    crawled_only : bool
        Only pages with ``crawled: true`` and the links between them (default: all pages).
    self_loops : bool
        Keep links from a page to itself (default: excluded, as the computations expect).
    chunk : int
        Source pages per link query.
    workers : int
        Link queries in flight at once (each in its own read transaction).
    spool_links : int, optional
        Links held in memory before they are spooled to disk (default
        :data:`linksim.store.spool.SPOOL_LINKS`); the graph is the same either way, bit for bit.
    graph : {"pages", "hosts"}
        Which link graph (:mod:`linksim.procedures.graphs`).
    """
    began = time.monotonic()
    of = graph_of(graph)
    refuse_crawled_only(of, crawled_only)
    all_pages = not crawled_only
    state = graph_state(runner, of)  # before reading: a load meanwhile makes the index stale, never wrong
    refuse_half_written(runner, state, of)
    node_ids, urls, degree = read_pages(runner, all_pages, of)
    query = links_query(crawled_only, self_loops, of)
    starts = chunk_starts(degree, chunk, CHUNK_LINKS)
    ends = starts[1:] + [len(node_ids)]
    # The links, as page indices, go to a spool (on disk beyond 4 Mi links): memory holds the
    # graph's CSR arrays, not the streamed pairs (linksim.store.spool).
    spool = LinkSpool(limit=spool_links)
    lock = threading.Lock()
    unknown = [0]

    def read(position: int) -> int:
        # One read transaction per chunk, on its own session: while the server works out one
        # chunk, the driver decodes another (the decoding holds the GIL, the waiting does not).
        part = node_ids[starts[position] : ends[position]].tolist()
        record = runner.read_one(query, {"sources": part})
        source = np.searchsorted(node_ids, np.array(record[0], dtype=np.int64))
        target_ids = np.array(record[1], dtype=np.int64)
        target = np.searchsorted(node_ids, target_ids)
        # A LINKS_TO to a node that is not a (selected) page has no index: leave it out, and say so.
        known = node_ids[np.minimum(target, len(node_ids) - 1)] == target_ids
        with lock:
            if not known.all():
                unknown[0] += int((~known).sum())
                source, target = source[known], target[known]
            spool.extend(source, target)
        return len(part)

    try:
        with Progress(len(node_ids), "streaming links", "pages", enabled=show_progress) as progress:
            if workers > 1 and len(starts) > 1:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    for done in pool.map(read, range(len(starts))):
                        progress.update(done)
            else:
                for position in range(len(starts)):
                    progress.update(read(position))
        if unknown[0]:
            log.warning("left out %s %s relationships to nodes that are not :%s", f"{unknown[0]:,}", of.link,
                        of.label)
        graph = LinkGraph.from_spool(spool, len(node_ids), keys=urls, self_loops=self_loops)
    finally:
        spool.close()
    seconds = time.monotonic() - began
    log.info(
        "streamed %s %ss and %s links from Neo4j in %.1f s (%s links/s)",
        f"{graph.n:,}", of.noun, f"{graph.m:,}", seconds, f"{graph.m / max(seconds, 1e-9):,.0f}",
    )
    return StreamedGraph(graph, node_ids, seconds, state, of)
