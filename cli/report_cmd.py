"""``linksim report``."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

log = logging.getLogger("linksim")


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "report", parents=[connection], help="write an HTML report with the papers' plots",
        description=(
            "Run the papers' experiments on the crawl in Neo4j (Wikispeedia: load it with `linksim "
            "demo` or `linksim load`) and write one self-contained HTML file: sibling Gamma against "
            "the path length L, the number of fingerprints N and the decay c per method, Monte Carlo "
            "and exact (Fogaras & Racz 2005, Fig. 4); fingerprint tree sizes against L (Fig. 5); "
            "PageRank residual and top-n overlap per iteration (Haveliwala 1999); Delta(A, T) for "
            "PageSim and the Monte Carlo methods (Lin, King & Lyu 2006, Fig. 4). Takes 15 to 25 "
            "minutes on Wikispeedia with the full grids; --quick takes a few."
        ),
    )
    parser.add_argument("--out", type=Path, default=Path("linksim-report.html"), help="output file")
    parser.add_argument("--categories", type=Path, metavar="FILE", help="categories file (default: the pages' property)")
    parser.add_argument("--texts", type=Path, metavar="PATH",
                        help="article texts (default: the Wikispeedia data set's plaintext_articles.tar.gz)")
    parser.add_argument("--quick", action="store_true", help="coarse grids (L 1,2,4,6,10; N 10,100,300; c 0.4,0.6,0.8)")
    parser.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from linksim.cli.main import connection_from_args
    from linksim.evaluation import classes_of
    from linksim.experiments import lists_of
    from linksim.loader.categories import read_categories
    from linksim.loader.datasets import DatasetMissing, locate
    from linksim.loader.texts import read_texts
    from linksim.pagesim import build_pagesim_index
    from linksim.procedures import QueryRunner
    from linksim.procedures.evaluation import current_runs, page_categories, stored_lists
    from linksim.procedures.stream import stream_link_graph
    from linksim.analysis.report import build_report, write_html
    from linksim.experiments import monte_carlo_index
    from linksim.methods import METHODS

    with QueryRunner.connect(connection_from_args(args)) as runner:
        streamed = stream_link_graph(runner, show_progress=not args.quiet)
        categories = read_categories(args.categories) if args.categories else page_categories(runner)
        runs = current_runs(runner)
        pagesim_r3 = stored_lists(runner, "pagesim") if runs.get("pagesim", {}).get("radius") == 3 else None
    graph = streamed.graph
    index_of = {url: i for i, url in enumerate(streamed.urls)}
    classes = {index_of[u]: classes_of(p) for u, p in categories.items() if u in index_of}
    texts_path = args.texts
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
    if args.quick:
        grids = {"lengths": (1, 2, 4, 6, 10), "fingerprints": (10, 100, 300), "decays": (0.4, 0.6, 0.8)}
    dataset = f"{graph.n:,} pages, {graph.m:,} links"
    sections = build_report(graph, classes, text_lists, texts, dataset, **grids)
    preamble = (f"Graph streamed from Neo4j: {dataset}; {len(classes):,} pages with categories. "
                f"Every figure states its data and parameters; the tables hold the numbers behind it.")
    write_html(sections, args.out, "linksim report", preamble)
    print(f"Wrote {args.out} ({len(sections)} sections).")
    summary = {s.title: s.findings for s in sections if s.findings}
    if summary:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0
