"""Online import: batched, parameterised write transactions against a running server.

Pages are written first (MERGE on the unique ``url``), then links. Every batch is one managed
transaction of ``UNWIND $rows`` that the driver retries on transient errors; every statement is
idempotent, so a rerun after an interruption finishes the load without duplicates.

When the database held no page at all before the load, no link can exist yet: links are then
written with CREATE instead of MERGE, which is several times faster. An interrupted load leaves
pages behind, so its rerun takes the MERGE path. Two link batches are in flight at once, so the
driver encodes one while the server writes the other; links find their pages by the node ids the
page batches returned (integers: far less to send than element ids).
"""

from __future__ import annotations

from contextlib import contextmanager
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from linksim.errors import LinksimError
from linksim.loader.graph import CrawlGraph, Links
from linksim.inflight import in_flight
from linksim.progress import Progress

# Batches travel as parallel lists ($url[i], $crawled[i], ...) rather than one map per row: the
# driver and the server handle a few long lists faster than many small maps (measured: links 73k/s
# against 54k/s on cnr-2000). The page query returns each page's node id in order; links then
# find their ends by id, about twice as fast as two index seeks on the URL per link. The ids come
# back as one list a batch, in the batch's order: the driver takes about 30 us a record, and the
# pages of najdisi.si (115,148) were written in 9.4-14.9 s returning a row each, 5.4-5.5 s so.
# A crawled page records when it was last crawled (the load's time, $at).
PAGES = """
UNWIND range(0, size($url) - 1) AS i
MERGE (p:Page {url: $url[i]})
SET p.crawled = coalesce(p.crawled, false) OR $crawled[i],
    p.lastCrawled = CASE WHEN $crawled[i] THEN $at ELSE p.lastCrawled END{properties}
RETURN collect(id(p)) AS ids
"""
# A recrawl also learns which pages are new (a recrawled page met for the first time has changed
# even with no out-links): all lookups of a batch run before its first MERGE (the planner makes it
# eager), so a URL is new when it was not there before the batch.
PAGES_RECRAWL = PAGES.replace(
    "MERGE (p:Page", "OPTIONAL MATCH (old:Page {url: $url[i]})\nWITH i, old IS NULL AS created\nMERGE (p:Page"
).replace("collect(id(p))", "collect([id(p), created])")

LINKS = """
UNWIND range(0, size($source) - 1) AS i
MATCH (a) WHERE id(a) = $source[i]
MATCH (b) WHERE id(b) = $target[i]
{write}
"""
CREATE_LINK = "CREATE (a)-[:LINKS_TO {{count: $count[i]{anchor}}}]->(b)"
MERGE_LINK = "MERGE (a)-[r:LINKS_TO]->(b)\nSET r.count = $count[i]{anchor}"


def pages_query(with_properties: bool, recrawl: bool = False) -> str:
    query = PAGES_RECRAWL if recrawl else PAGES
    return query.replace("{properties}", ", p += $properties[i]" if with_properties else "")


def links_query(create: bool, with_anchor: bool) -> str:
    if create:
        write = CREATE_LINK.format(anchor=", anchor: $anchor[i]" if with_anchor else "")
    else:
        write = MERGE_LINK.format(anchor=", r.anchor = $anchor[i]" if with_anchor else "")
    return LINKS.replace("{write}", write)


class LoadInterrupted(LinksimError):
    """The database failed mid-load (after the driver's retries)."""

    exit_code = 5


@dataclass
class WriteCounts:
    pages_created: int = 0
    pages_updated: int = 0
    links_created: int = 0
    links_updated: int = 0
    recrawled_pages: int = 0
    changed_pages: int = 0
    links_removed: int = 0
    pages_deleted: int = 0
    bumped: bool = False  # a recrawl's: the graph's version moved (it changed something)
    timings: dict[str, float] = field(default_factory=dict)  # seconds of each stage (a recrawl's)


def page_batches(graph: CrawlGraph, hosts: list[str | None], size: int, with_properties: bool, at=None):
    """Parameter maps of ``size`` pages each: url, crawled flag and properties to set, and the
    time ``at`` the crawled ones were crawled (default: now)."""
    at = at or datetime.now(timezone.utc)
    for begin in range(0, len(graph), size):
        indices = range(begin, min(begin + size, len(graph)))
        batch: dict[str, Any] = {
            "url": graph.urls[begin : indices.stop],
            "crawled": [bool(graph.crawled[i]) for i in indices],
            "at": at,
        }
        if with_properties:
            batch["properties"] = [_properties(graph, hosts, i) for i in indices]
        yield batch


def _properties(graph: CrawlGraph, hosts: list[str | None], idx: int) -> dict[str, Any]:
    properties: dict[str, Any] = dict(graph.properties.get(idx, {}))
    if idx in graph.titles:
        properties["title"] = graph.titles[idx]
    if hosts[idx] is not None:
        properties["host"] = hosts[idx]
    return properties


def link_batches(graph: CrawlGraph, links: Links, node_ids: list[int], size: int):
    """Parameter maps of ``size`` links each: source and target node ids, count, anchor."""
    anchors = graph.anchors
    for source, target, count in links.chunks(size):
        source, target = source.tolist(), target.tolist()
        batch: dict[str, list[Any]] = {
            "source": [node_ids[i] for i in source],
            "target": [node_ids[i] for i in target],
            "count": count.tolist(),
        }
        if anchors:
            batch["anchor"] = [anchors.get(pair) for pair in zip(source, target)]
        yield batch


def database_is_empty(runner) -> bool:
    """True if the database has no node and no relationship (counts store: O(1)); a writer lock
    (the load's own), the graph's version node and its change records do not count."""
    nodes = runner.run("MATCH (n) RETURN count(n) AS n")[0]["n"]
    for bookkeeping in ("MATCH (n:LinksimLock) RETURN count(n) AS n", "MATCH (n:LinksimGraph) RETURN count(n) AS n",
                        "MATCH (n:LinksimChange) RETURN count(n) AS n"):
        nodes -= runner.run(bookkeeping)[0]["n"]
    relationships = runner.run("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    return nodes == 0 and relationships == 0


def write_online(
    runner, graph: CrawlGraph, links: Links, batch_size: int = 10_000, show_progress: bool = True,
    workers: int = 2,
) -> WriteCounts:
    """Write pages then links in batches of ``batch_size`` rows.

    Raises
    ------
    LoadInterrupted
        The database failed after retries; the message says how far the load got.
    """
    counts = WriteCounts()
    fresh = runner.run("MATCH (p:Page) RETURN count(p) AS n")[0]["n"] == 0
    stage = Stage(len(graph))
    with interrupted(stage, len(graph)):
        node_ids, _ = write_pages(runner, graph, counts, stage, batch_size, show_progress)
        write_links(runner, graph, links, node_ids, counts, stage, fresh, batch_size, show_progress, workers)
    return counts


@dataclass
class Stage:
    """How far a load got, for the message of an interrupted one, and the seconds of each stage."""

    total: int
    name: str = "pages"
    written: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    began: float = field(default_factory=time.monotonic)

    def begin(self, name: str, total: int) -> None:
        self.end()
        self.name, self.written, self.total, self.began = name, 0, total, time.monotonic()

    def end(self) -> None:
        self.timings[self.name] = self.timings.get(self.name, 0.0) + time.monotonic() - self.began
        self.began = time.monotonic()


@contextmanager
def interrupted(stage: Stage, pages: int):
    """Turn the database failing mid-load into :class:`LoadInterrupted`, saying how far it got."""
    from neo4j.exceptions import DriverError, Neo4jError

    try:
        yield
    except (DriverError, Neo4jError, OSError) as exc:
        if stage.name == "pages":
            done = f"pages {stage.written:,} of {stage.total:,} written, links not started"
        elif stage.name == "links":
            done = f"all {pages:,} pages and at least {stage.written:,} of {stage.total:,} links written"
        else:
            done = f"all {pages:,} pages written, then {stage.name} {stage.written:,} of {stage.total:,}"
        raise LoadInterrupted(
            f"the database failed during the load ({type(exc).__name__}: {exc}); {done}. The "
            "failed batch was not committed. Rerun the same command to finish: the load is "
            "idempotent and writes no duplicates."
        ) from None


def write_pages(
    runner, graph: CrawlGraph, counts: WriteCounts, stage: Stage, batch_size: int, show_progress: bool,
    recrawl: bool = False,
) -> tuple[list[int], list[bool]]:
    """MERGE every page; its node ids in page order, and (``recrawl``) whether each was new."""
    hosts = graph.hosts()
    with_properties = bool(graph.properties or graph.titles) or any(h is not None for h in hosts)
    query = pages_query(with_properties, recrawl)
    node_ids: list[int] = []
    created_flags: list[bool] = []
    stage.begin("pages", len(graph))
    with Progress(len(graph), "pages", "pages", enabled=show_progress) as progress:
        for batch in page_batches(graph, hosts, batch_size, with_properties):
            rows, counters = runner.write_returning(query, batch)
            answered = rows[0][0]  # one list a batch: ids, or [id, created] pairs for a recrawl
            if recrawl:
                node_ids.extend(pair[0] for pair in answered)
                created_flags.extend(pair[1] for pair in answered)
            else:
                node_ids.extend(answered)
            created = counters.get("nodes_created", 0)
            counts.pages_created += created
            counts.pages_updated += len(batch["url"]) - created
            stage.written += len(batch["url"])
            progress.update(len(batch["url"]))
    return node_ids, created_flags


def write_links(
    runner, graph: CrawlGraph, links: Links, node_ids: list[int], counts: WriteCounts, stage: Stage, fresh: bool,
    batch_size: int, show_progress: bool, workers: int,
) -> None:
    """CREATE (``fresh``: the database held no page) or MERGE every link, ``workers`` batches at once."""
    stage.begin("links", len(links))
    query = links_query(create=fresh, with_anchor=bool(graph.anchors))
    with Progress(len(links), "links", "links", enabled=show_progress) as progress:
        batches = link_batches(graph, links, node_ids, batch_size)
        for batch, counters in in_flight(batches, lambda batch: runner.write(query, batch), workers):
            created = counters.get("relationships_created", 0)
            counts.links_created += created
            counts.links_updated += len(batch["count"]) - created
            stage.written += len(batch["count"])
            progress.update(len(batch["count"]))
