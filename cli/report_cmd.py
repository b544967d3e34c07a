"""``linksim report``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from linksim.cli.options import command


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = command(
        commands, "report", _report, parents=[connection],
        help="write an HTML report with the papers' plots",
    )
    parser.add_argument("--out", type=Path, default=Path("linksim-report.html"), help="output file")
    parser.add_argument("--categories", type=Path, metavar="FILE", help="categories file (default: the pages' property)")
    parser.add_argument("--texts", type=Path, metavar="PATH",
                        help="article texts (default: the Wikispeedia data set's plaintext_articles.tar.gz)")
    parser.add_argument("--quick", action="store_true", help="coarse grids (L 1,2,4,6,10; N 10,100,300; c 0.4,0.6,0.8)")


def _report(args: argparse.Namespace) -> int:
    """Run the papers' experiments on the crawl in Neo4j (Wikispeedia: load it with `linksim demo` or
    `linksim load`) and write one self-contained HTML file: sibling Gamma against the path length L,
    the number of fingerprints N and the decay c per method, Monte Carlo and exact (Fogaras & Racz
    2005, Fig. 4); fingerprint tree sizes against L (Fig. 5); PageRank residual and top-n overlap
    per iteration (Haveliwala 1999); Delta(A, T) for PageSim and the Monte Carlo methods (Lin, King
    & Lyu 2006, Fig. 4). Takes 15 to 25 minutes on Wikispeedia with the full grids; --quick takes a
    few."""

    from linksim.cli.main import open_facade
    from linksim.loader.categories import read_categories

    categories = read_categories(args.categories) if args.categories else None
    with open_facade(args) as ls:
        report = ls.report(args.out, categories=categories, texts=args.texts, quick=args.quick)
    print(f"Wrote {report.path} ({report.sections} sections).")
    if report.findings:
        print(json.dumps(report.findings, indent=2, ensure_ascii=False))
    return 0
