"""Grade the SIMILAR_TO lists in Neo4j (and, for small graphs, the exact references and the anchors)
by precision@10, hits@10, sibling Γ and coverage."""

from __future__ import annotations

import logging
import time

import numpy as np

from linksim.errors import LinksimError
from linksim.evaluation import (
    GammaReport, classes_of, sibling_gamma, text_quality, top_lists_from_matrix,
)
from linksim.methods import method as registered
from linksim.procedures.runs import RUNS_OF_CURRENT, is_current
from linksim.procedures.stream import stream_link_graph

log = logging.getLogger(__name__)

CURRENT_LISTS = f"""
MATCH (current:LinksimCurrent {{algorithm: $method}})
WITH {RUNS_OF_CURRENT} AS runs
MATCH (p:Page)-[s:SIMILAR_TO]->(q:Page)
WHERE {is_current()}
WITH p, s, q ORDER BY s.rank
RETURN p.url AS url, collect(q.url) AS related, collect(s.score) AS scores
"""

LINKED_PAGES = """
MATCH (p:Page) WHERE EXISTS { MATCH (p)-[:LINKS_TO]-(q:Page) WHERE q <> p }
RETURN p.url AS url
"""

PAGE_CATEGORIES = """
MATCH (p:Page) WHERE p.categories IS NOT NULL
RETURN p.url AS url, p.categories AS categories
"""

#: The anchors the server computes, with Graph Data Science: (what it is, its parameters). FastRP
#: as the issue that asked for it measured it best on Wikispeedia: 256 dimensions, the iteration
#: weights and normalization of GDS's own examples for node similarity, links both ways; the lists
#: are the exact cosine neighbours of its vectors (:func:`linksim.evaluation.anchors.nearest_lists`).
GDS_ANCHORS = {
    "fastrp": ("GDS FastRP (256 dimensions, iteration weights [0, 1, 1, 1], normalization -0.5, links both "
               "ways) + exact kNN by cosine",
               {"embeddingDimension": 256, "iterationWeights": [0.0, 1.0, 1.0, 1.0], "normalizationStrength": -0.5,
                "randomSeed": 42, "concurrency": 1}),
}

HAS_FASTRP = "SHOW PROCEDURES YIELD name WHERE name = 'gds.fastRP.stream' RETURN count(*) AS found"
PROJECT = ("CALL gds.graph.project($name, 'Page', {LINKS_TO: {orientation: 'UNDIRECTED'}}) "
           "YIELD nodeCount RETURN nodeCount")
FASTRP = ("CALL gds.fastRP.stream($name, $configuration) YIELD nodeId, embedding "
          "RETURN gds.util.asNode(nodeId).url AS url, embedding")
DROP = "CALL gds.graph.drop($name, false) YIELD graphName RETURN graphName"


def has_gds(runner) -> bool:
    """Whether the server has Graph Data Science's FastRP."""
    return runner.run(HAS_FASTRP)[0]["found"] > 0


def gds_anchor_lists(runner, name: str, top: int) -> dict[str, list[tuple[str, float]]]:
    """The lists of a server anchor (:data:`GDS_ANCHORS`) by URL: its vectors from GDS on an
    in-memory graph of its own (dropped after, whatever happens), their exact cosine neighbours here."""
    import uuid

    from linksim.evaluation.anchors import nearest_lists

    if not has_gds(runner):
        raise LinksimError(f"the {name} anchor runs Graph Data Science on the server, which this one lacks: "
                           "start a local server with it (`linksim neo4j stop && linksim neo4j start --with-gds`)")
    graph = f"linksim-{name}-{uuid.uuid4().hex}"
    try:
        runner.run(PROJECT, {"name": graph})
        rows = runner.run(FASTRP, {"name": graph, "configuration": GDS_ANCHORS[name][1]})
    finally:
        runner.run(DROP, {"name": graph})
    urls = [row["url"] for row in rows]
    found = nearest_lists(np.array([row["embedding"] for row in rows], dtype=np.float64).reshape(len(rows), -1), top)
    return {urls[u]: [(urls[v], s) for v, s in ranked] for u, ranked in found.items()}


#: Largest graph for which ``exact=True`` computes the dense exact references.
EXACT_MAX_PAGES = 20_000
#: Largest graph for which the anchors are computed (sparse products that grow with the hubs' degrees).
ANCHOR_MAX_PAGES = 200_000


def current_runs(runner) -> dict[str, dict]:
    """The parameters of each method's current SIMILAR_TO run."""
    from linksim.procedures.runs import current_runs as runs

    return {method: run["parameters"] for method, run in runs(runner).items()}


def stored_lists(runner, method: str) -> dict[str, list[tuple[str, float]]]:
    return {row["url"]: list(zip(row["related"], row["scores"])) for row in runner.stream(CURRENT_LISTS, {"method": method})}


def page_categories(runner) -> dict[str, list[str]]:
    return {row["url"]: list(row["categories"]) for row in runner.stream(PAGE_CATEGORIES)}


def exact_scores(graph, method: str, parameters: dict) -> np.ndarray:
    """The exact reference of ``method`` with the parameters of its run (the defaults for those
    the run does not name)."""
    entry = registered(method)
    if entry.exact is None:
        raise LinksimError(f"no exact reference for {method}")
    p = dict(entry.defaults, **{k: v for k, v in parameters.items() if k in entry.defaults})
    return entry.exact(graph, float(p["decay"]), int(p["length"]))


def evaluate(
    runner,
    categories: dict[str, list[str]] | None = None,
    methods: list[str] | None = None,
    depth: int = 2,
    top: int = 100,
    exact: bool = False,
    texts: dict[str, str] | None = None,
    show_progress: bool = True,
    anchors: bool | list[str] = False,
    targets=None,
) -> list[dict]:
    """Rows of (method, source, Γ, pooled Γ, queries, pairs, precision@10, graded, hits@10,
    labelled, coverage).

    ``source`` is ``neo4j`` (the current SIMILAR_TO run), ``exact`` (the exact reference of
    the method with that run's parameters, computed here; graphs of at most
    :data:`EXACT_MAX_PAGES` pages) or ``anchor`` (``anchors``: True for every anchor of
    :mod:`linksim.evaluation.anchors` and, where the server has Graph Data Science, of
    :data:`GDS_ANCHORS`; or their names; graphs of at most :data:`ANCHOR_MAX_PAGES` pages), graded
    on the same pages.

    ``targets`` (:mod:`linksim.procedures.targets`): grade the runs written with that target
    filter (``<method>@<filter>``, rows named so) and the anchors' lists of the pages that pass
    (each anchor's whole ranking filtered, then cut); without it, the unfiltered runs.
    """
    from linksim.evaluation.anchors import ANCHORS
    from linksim.procedures.targets import parse_targets
    from linksim.ranking.targets import filtered_lists

    spec = parse_targets(targets)

    known = [*ANCHORS, *GDS_ANCHORS]
    if anchors is True:
        anchor_names = list(ANCHORS) + (list(GDS_ANCHORS) if has_gds(runner) else [])
    else:
        anchor_names = list(anchors or [])
    unknown = [a for a in anchor_names if a not in known]
    if unknown:
        raise LinksimError(f"no anchor {unknown[0]!r}: the anchors are {', '.join(known)}")
    if categories is None:
        categories = page_categories(runner)
        if not categories and texts is None:
            raise LinksimError(
                "no page has a `categories` property: give a categories file (--categories FILE) "
                "or page texts (--texts)"
            )
    classes = {url: classes_of(paths, depth) for url, paths in categories.items()}
    text_keys = text_matrix = None
    if texts:
        from linksim.analysis.texts import tfidf_matrix

        text_keys = list(texts)
        text_matrix = tfidf_matrix([texts[k] for k in text_keys])
    suffix = f"@{spec.name}" if spec else ""
    runs = {}
    for key, run in current_runs(runner).items():  # the runs of that filter, or the unfiltered ones
        method = key[: len(key) - len(suffix)] if key.endswith(suffix) else key
        if key == method + suffix and "@" not in method:
            runs[method] = run
    if methods is None:
        methods = sorted(runs)
    missing = [m for m in methods if m not in runs]
    if missing:
        raise LinksimError(
            f"no SIMILAR_TO run for {', '.join(m + suffix for m in missing)}: write one first (`linksim similar "
            f"{missing[0]} --top-k {top}{' --targets ' + spec.describe() if spec else ''}`)"
        )
    if not methods:
        raise LinksimError("no SIMILAR_TO relationships to grade: run `linksim similar METHOD --top-k 100` first")
    rows = []
    streamed = None
    linked = [row["url"] for row in runner.stream(LINKED_PAGES)]
    for method in methods:
        lists = stored_lists(runner, method + suffix)
        longest = max((len(v) for v in lists.values()), default=0)
        if longest < top:
            log.warning("%s lists hold at most %d pages, fewer than the %d graded; write them with --top-k %d",
                        method + suffix, longest, top, top)
        report = sibling_gamma(lists, classes, top=top, linked=linked) if classes else None
        row = _row(method + suffix, "neo4j", report, runs[method])
        if texts:
            quality = text_quality(lists, texts, 10, text_matrix, text_keys)
            row.update(delta=quality.delta, text_pages=quality.pages, text_lists_short=quality.lists_short)
        rows.append(row)
        if exact and spec:
            log.info("%s: the exact references are not filtered; none graded beside a filtered run", method + suffix)
        elif exact and not registered(method).samples:
            log.info("%s has no separate exact reference: its index is exact (no sampling)", method)
        elif exact:
            if streamed is None:
                streamed = stream_link_graph(runner, show_progress=show_progress)
                if streamed.graph.n > EXACT_MAX_PAGES:
                    raise LinksimError(
                        f"exact references are dense n x n matrices: {streamed.graph.n:,} pages is more "
                        f"than the {EXACT_MAX_PAGES:,} they are computed for"
                    )
            began = time.monotonic()
            matrix = exact_scores(streamed.graph, method, runs[method])
            log.info("exact %s for %s pages in %.1f s", method, f"{streamed.graph.n:,}", time.monotonic() - began)
            urls = streamed.urls
            exact_lists = {
                urls[u]: [(urls[v], s) for v, s in ranked] for u, ranked in top_lists_from_matrix(matrix, top).items()
            }
            row = _row(method, "exact", sibling_gamma(exact_lists, classes, top=top, linked=linked) if classes else None,
                       runs[method])
            if texts:
                quality = text_quality(exact_lists, texts, 10, text_matrix, text_keys)
                row.update(delta=quality.delta, text_pages=quality.pages, text_lists_short=quality.lists_short)
            rows.append(row)
    if anchor_names:
        from linksim.evaluation.anchors import anchor_lists

        if streamed is None:
            streamed = stream_link_graph(runner, show_progress=show_progress)
        if streamed.graph.n > ANCHOR_MAX_PAGES:
            raise LinksimError(f"the anchors are computed for graphs of at most {ANCHOR_MAX_PAGES:,} pages, "
                               f"not {streamed.graph.n:,}")
        urls = streamed.urls
        chosen = spec.resolve(runner, list(urls)) if spec else None
        depth = streamed.graph.n if spec else top  # a filtered anchor: its whole ranking, filtered
        for name in anchor_names:
            began = time.monotonic()
            if name in GDS_ANCHORS:
                page_of = {url: i for i, url in enumerate(urls)}
                found = {page_of[u]: [(page_of[v], s) for v, s in ranked]
                         for u, ranked in gds_anchor_lists(runner, name, depth).items()}
            else:
                found = anchor_lists(streamed.graph, name, depth)
            if chosen is not None:
                found = filtered_lists(chosen, found, top)
            lists = {urls[u]: [(urls[v], s) for v, s in ranked] for u, ranked in found.items()}
            log.info("anchor %s for %s pages in %.1f s", name, f"{streamed.graph.n:,}", time.monotonic() - began)
            row = _row(name + suffix, "anchor", sibling_gamma(lists, classes, top=top, linked=linked) if classes else None,
                       {})
            if texts:
                quality = text_quality(lists, texts, 10, text_matrix, text_keys)
                row.update(delta=quality.delta, text_pages=quality.pages, text_lists_short=quality.lists_short)
            rows.append(row)
    return rows


def _row(method: str, source: str, report: GammaReport | None, parameters: dict) -> dict:
    shown = {k: v for k, v in parameters.items() if k not in ("topK", "similarityCutoff")}
    graded = report.as_dict() if report is not None else {}
    return {"method": method, "source": source, **graded, "parameters": shown}
