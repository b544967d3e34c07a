"""PageRank inside Neo4j: stream the link graph, compute with :mod:`linksim.pagerank`, then
``write`` the rank to a node property, ``stream`` the top pages as a DataFrame, or report
``stats`` only. Every run is recorded as a ``(:LinksimRun)`` node.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pandas as pd

from linksim.errors import ConfigurationError, LinksimError
from linksim.pagerank import DANGLING, pagerank
from linksim.parameters import check_parameters
from linksim.procedures.browser import label_pagerank_tiers, tiers_in_use
from linksim.inflight import in_flight
from linksim.procedures.results import PageRankStatsResult, PageRankWriteResult
from linksim.procedures.runs import RunRecord, record_run
from linksim.procedures.graphs import PAGE_GRAPH, LinkGraphOf, empty_graph, graph_of, refuse_crawled_only
from linksim.procedures.stream import StreamedGraph, stream_link_graph
from linksim.progress import Progress

MODES = ("write", "stream", "stats")
RESERVED_PROPERTIES = {"url", "title", "host", "crawled", "lastCrawled"}
_PROPERTY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# The ids come from the pages just streamed, so no label check (cnr-2000: 0.37 s against 1.2 s
# with `:Page`, two batches in flight).
WRITE_RANKS = """
UNWIND range(0, size($ids) - 1) AS i
MATCH (p) WHERE id(p) = $ids[i]
SET p[$property] = $ranks[i]
"""

# Pages left out of this run (crawled-only runs) must not keep a rank from an earlier run.
# The ranks a previous run wrote, for a warm start (null where a page has none).
PREVIOUS_RANKS = """
UNWIND $ids AS id
MATCH (p) WHERE id(p) = id
RETURN p[$property] AS rank
"""

CLEAR_OTHERS = """
MATCH (p:Page) WHERE p[$property] IS NOT NULL AND NOT coalesce(p.crawled, false)
CALL (p) { SET p[$property] = null } IN TRANSACTIONS OF 50000 ROWS
"""


def _check_property(name: str) -> str:
    if not _PROPERTY.match(name):
        raise ConfigurationError(
            f"--write-property must be a plain property name (letters, digits, _), got {name!r}"
        )
    if name in RESERVED_PROPERTIES:
        raise ConfigurationError(f"--write-property {name!r} would overwrite the page's own {name}")
    return name


def _teleport(streamed: StreamedGraph, personalization: dict[str, float] | None) -> dict[int, float] | None:
    """The personalization's URLs as pages of the streamed graph."""
    if not personalization:
        return None
    index = {url: i for i, url in enumerate(streamed.urls)}
    missing = [url for url in personalization if url not in index]
    if missing and not streamed.of.pages:
        raise LinksimError(f"--personalize names hosts that are not in the host graph: {', '.join(missing[:5])}")
    if missing:
        raise LinksimError(
            f"--personalize names pages that are not in the graph: {', '.join(missing[:5])} "
            "(URLs are stored normalised: lower-case host, no default port, no fragment)"
        )
    return {index[url]: weight for url, weight in personalization.items()}


def finish_write(runner, record: RunRecord, write_property: str, pages: int, of: LinkGraphOf = PAGE_GRAPH) -> None:
    """The tail of every PageRank write, whichever engine computed and wrote the ranks: the
    Browser's tiers kept in step, the written count checked against the pages, the run recorded."""
    if of.pages and write_property == "pagerank" and tiers_in_use(runner):
        label_pagerank_tiers(runner)  # keep the Browser's PageRank tiers in step with the ranks
    if record.written != pages:
        raise LinksimError(
            f"wrote {record.written:,} ranks for {pages:,} pages: the graph changed while "
            "PageRank ran (a load at the same time?); run it again"
        )
    record_run(runner, record)


def run_pagerank(
    runner,
    mode: str = "write",
    damping: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    dangling: str = "uniform",
    personalization: dict[str, float] | None = None,
    write_property: str = "pagerank",
    crawled_only: bool = False,
    top: int = 20,
    batch_size: int = 50_000,
    show_progress: bool = True,
    wait: float = 0.0,
    memory_budget: str | int | None = None,
    warm_start: bool = False,
    graph: str = "pages",
) -> PageRankStatsResult:
    """Compute PageRank over the graph in Neo4j.

    Parameters
    ----------
    runner : QueryRunner
    mode : {"write", "stream", "stats"}
        ``write`` sets ``write_property`` on every page; ``stream`` and ``stats`` write nothing
        to the pages. All three record a ``(:LinksimRun)``.
    damping, tol, max_iter, dangling
        As in :func:`linksim.pagerank.pagerank`.
    personalization : dict of URL -> weight, optional
        Teleport to these pages only (personalised PageRank).
    write_property : str
        Node property to write (default ``pagerank``).
    crawled_only : bool
        Compute over crawled pages only; other pages get no rank.
    top : int
        Rows of the returned top-pages DataFrame.
    wait : float
        Mode write: seconds to wait for another PageRank write of the same property (0: refuse
        at once). Two writers of one property never run at once.
    memory_budget : str or int, optional
        Refuse to start when the estimate exceeds it (see :mod:`linksim.procedures.budget`).
    warm_start : bool
        Iterate from the ranks in ``write_property`` (a previous run's, before a recrawl) instead
        of the teleport vector: the same fixed point to the same tolerance, in fewer iterations
        when the graph changed little; pages without a rank start at the teleport value.
    graph : {"pages", "hosts"}
        Rank the pages (default) or the hosts of the host graph (``linksim hosts``), whose
        ``write_property`` is then set on every ``:Host`` (personalization by host name).
    """
    if mode not in MODES:
        raise ConfigurationError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    write_property = _check_property(write_property)
    check_parameters(damping=damping, tol=tol, max_iter=max_iter, top=top, batch_size=batch_size, wait=wait)
    if dangling not in DANGLING:
        raise ConfigurationError(f"dangling must be one of {', '.join(DANGLING)}, got {dangling!r}")
    of = graph_of(graph)
    refuse_crawled_only(of, crawled_only)
    from linksim.procedures.budget import check_memory

    check_memory(runner, "pagerank", memory_budget, graph=of.name)
    if mode != "write":
        return _run(runner, mode, damping, tol, max_iter, dangling, personalization, write_property, crawled_only,
                    top, batch_size, show_progress, warm_start, of)
    from linksim.procedures.locks import acquire

    with acquire(runner, f"pagerank:{write_property}" if of.pages else f"pagerank@{of.name}:{write_property}",
                 wait=wait):
        return _run(runner, mode, damping, tol, max_iter, dangling, personalization, write_property, crawled_only,
                    top, batch_size, show_progress, warm_start, of)


def previous_ranks(runner, streamed: StreamedGraph, write_property: str, batch_size: int) -> np.ndarray:
    """The ranks ``write_property`` holds for the streamed pages, in their order (NaN: none)."""
    ids = streamed.node_ids.tolist()
    ranks = np.full(len(ids), np.nan)
    for start in range(0, len(ids), batch_size):
        rows = runner.run(PREVIOUS_RANKS, {"ids": ids[start : start + batch_size], "property": write_property})
        values = [row["rank"] for row in rows]
        ranks[start : start + len(values)] = [np.nan if not isinstance(v, (int, float)) else v for v in values]
    return ranks


def _run(runner, mode, damping, tol, max_iter, dangling, personalization, write_property, crawled_only, top,
         batch_size, show_progress, warm_start=False, of: LinkGraphOf = PAGE_GRAPH) -> PageRankStatsResult:
    record = RunRecord(
        algorithm="pagerank",
        mode=mode,
        parameters={
            "damping": damping, "tol": tol, "maxIter": max_iter, "dangling": dangling,
            "personalization": personalization or {}, "crawledOnly": crawled_only,
            "writeProperty": write_property, "warmStart": warm_start,
            **({} if of.pages else {"graph": of.name}),
        },
    )
    began = time.monotonic()
    streamed = stream_link_graph(runner, crawled_only=crawled_only, show_progress=show_progress, graph=of)
    record.stream_millis = int((time.monotonic() - began) * 1000)
    graph = streamed.graph
    record.pages, record.links = graph.n, graph.m
    if graph.n == 0:
        raise empty_graph(of)

    start = None
    if warm_start:  # read with the graph, before the clock of the computation starts
        start = previous_ranks(runner, streamed, write_property, batch_size)
        if np.isnan(start).all():
            start = None  # nothing to start from: a cold start, as the record says
            record.parameters["warmStart"] = False
    began = time.monotonic()
    result = pagerank(
        graph, damping=damping, tol=tol, max_iter=max_iter, dangling=dangling,
        personalization=_teleport(streamed, personalization), start=start,
    )
    record.compute_millis = int((time.monotonic() - began) * 1000)
    record.iterations, record.converged, record.residual = result.iterations, result.converged, result.residual

    if mode == "write":
        began = time.monotonic()
        ids = streamed.node_ids.tolist()
        ranks = result.ranks.astype(np.float64).tolist()

        def write(start: int) -> dict[str, int]:
            return runner.write(
                WRITE_RANKS,
                {"ids": ids[start : start + batch_size], "ranks": ranks[start : start + batch_size],
                 "property": write_property},
            )

        # Two batches in flight: the driver encodes one while the server writes the other.
        with Progress(len(ids), f"writing {write_property}", of.name, enabled=show_progress) as progress:
            for start, counters in in_flight(iter(range(0, len(ids), batch_size)), write, workers=2):
                record.written += counters.get("properties_set", 0)
                progress.update(min(batch_size, len(ids) - start))
        if crawled_only:
            runner.write_autocommit(CLEAR_OTHERS, {"property": write_property})
        record.write_millis = int((time.monotonic() - began) * 1000)
        finish_write(runner, record, write_property, graph.n, of)
    else:
        record_run(runner, record)
    order = np.argsort(-result.ranks, kind="stable")[:top]
    top_pages = pd.DataFrame(
        {"rank": np.arange(1, len(order) + 1), of.key if of.pages else "host": [streamed.urls[i] for i in order],
         write_property: result.ranks[order].astype(np.float64)}
    )
    kind = PageRankWriteResult if mode == "write" else PageRankStatsResult
    return kind(record, top_pages, result.ranks)
