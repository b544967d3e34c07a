"""``linksim report`` on the database of a facade (:meth:`linksim.procedures.api.Linksim.report`):
the papers' experiments on the crawl in Neo4j, written as one HTML file (:mod:`linksim.analysis`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("linksim")


@dataclass(frozen=True)
class Report:
    """The file written, its sections and the findings said in them (by section title)."""

    path: Path
    sections: int
    findings: dict


def write_report(ls, out: Path, categories: dict | None = None, texts_path: Path | None = None,
                 quick: bool = False) -> Report:
    """Stream the graph, run the experiments, write ``out``; ``categories`` default to the pages'
    property, ``texts_path`` to the Wikispeedia data set's article texts (left out if missing)."""
    from linksim.analysis.report import build_report, write_html
    from linksim.evaluation import classes_of
    from linksim.evaluation.experiments import lists_of, monte_carlo_index
    from linksim.loader.datasets import DatasetMissing, locate
    from linksim.loader.texts import read_texts
    from linksim.methods import METHODS
    from linksim.pagesim import build_pagesim_index
    from linksim.procedures.evaluation import current_runs, page_categories, stored_lists
    from linksim.procedures.stream import stream_link_graph

    runner = ls.runner
    streamed = stream_link_graph(runner, show_progress=ls.show_progress)
    categories = categories if categories is not None else page_categories(runner)
    runs = current_runs(runner)
    pagesim_r3 = stored_lists(runner, "pagesim") if runs.get("pagesim", {}).get("radius") == 3 else None
    graph = streamed.graph
    index_of = {url: i for i, url in enumerate(streamed.urls)}
    classes = {index_of[u]: classes_of(p) for u, p in categories.items() if u in index_of}
    if texts_path is None:
        try:
            texts_path = locate("wikispeedia") / "plaintext_articles.tar.gz"
        except DatasetMissing as missing:
            log.warning("no texts for Delta(A, T): %s", missing)
    texts = None
    text_lists = {}
    if texts_path is not None:
        texts = {index_of[u]: t for u, t in read_texts(texts_path).items() if u in index_of}
        for method in [name for name, entry in METHODS.items() if entry.fingerprint_trees]:
            text_lists[f"{method} (N={METHODS[method].defaults['n_fingerprints']})"] = lists_of(monte_carlo_index(graph, method), 10)
        for radius in (1, 2):
            log.info("report: PageSim r=%d lists", radius)
            text_lists[f"pagesim r={radius}"] = lists_of(build_pagesim_index(graph, radius=radius), 10)
        if pagesim_r3 is not None:
            text_lists["pagesim r=3"] = {index_of[u]: [(index_of[v], s) for v, s in lst] for u, lst in pagesim_r3.items()}
        else:
            log.info("report: no current PageSim run of radius 3 in Neo4j (`linksim similar pagesim`): r=3 left out")
    grids = {}
    if quick:
        grids = {"lengths": (1, 2, 4, 6, 10), "fingerprints": (10, 100, 300), "decays": (0.4, 0.6, 0.8)}
    dataset = f"{graph.n:,} pages, {graph.m:,} links"
    sections = build_report(graph, classes, text_lists, texts, dataset, **grids)
    preamble = (f"Graph streamed from Neo4j: {dataset}; {len(classes):,} pages with categories. "
                f"Every figure states its data and parameters; the tables hold the numbers behind it.")
    write_html(sections, out, "linksim report", preamble)
    return Report(Path(out), len(sections), {s.title: s.findings for s in sections if s.findings})
