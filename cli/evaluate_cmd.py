"""``linksim evaluate``."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from linksim.cli.options import checked, command


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = command(
        commands, "evaluate", _evaluate, parents=[connection],
        help="grade the SIMILAR_TO lists against a category tree",
    )
    parser.add_argument("--categories", type=Path, metavar="FILE",
                        help="page<TAB>category path per line (URL or Wikispeedia article name; a "
                        "Wikispeedia folder reads its categories.tsv); default: the pages' "
                        "`categories` property")
    parser.add_argument("--method", action="append", dest="methods", metavar="METHOD",
                        help="grade this method (repeatable; default: every method with a current run)")
    parser.add_argument("--depth", type=int, default=2,
                        help="classes are category paths (without `subject.`) cut to this many components (default 2)")
    parser.add_argument("--top", type=checked("top_k"), default=100, help="list length graded per page (default 100)")
    parser.add_argument("--exact", action="store_true",
                        help="also grade the exact reference of each method (small graphs: dense matrices)")
    parser.add_argument("--texts", type=Path, metavar="PATH",
                        help="page texts (folder or tar.gz of <article>.txt, the Wikispeedia layout): also "
                        "report Delta(A, T), the mean cosine TF-IDF similarity of a page and its top T "
                        "related pages, T = 1..10 (PageSim paper, Section 6)")
    parser.add_argument("--json", action="store_true", help="print JSON rows")


def _evaluate(args: argparse.Namespace) -> int:
    """Grade the current SIMILAR_TO run of each method by sibling Gamma (Fogaras & Racz 2005): for each
    page with a category, the same-class pages of its list should score above the pages that are
    only in a sibling class. Prints the mean Gamma over queries, the pooled Gamma, the number of
    queries and of comparable pairs, and precision@10. Write the lists with `linksim similar METHOD
    --top-k 100` first."""

    from linksim.cli.main import open_facade
    from linksim.loader.categories import read_categories
    from linksim.loader.texts import read_texts

    categories = read_categories(args.categories) if args.categories else None
    texts = read_texts(args.texts) if args.texts else None
    with open_facade(args) as ls:
        rows = ls.evaluate(categories, args.methods, depth=args.depth, top=args.top, exact=args.exact, texts=texts)
    if args.json:
        print(json.dumps([{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                          for row in rows], indent=2))
        return 0
    if any("gamma" in row for row in rows):
        print(f"Sibling Gamma (top {args.top}, classes = categories cut to {args.depth} components):")
        print(f"{'method':<10} {'source':<7} {'Gamma':>7} {'pooled':>7} {'queries':>8} {'pairs':>12} {'P@10':>6}  parameters")
        for row in rows:
            if "gamma" not in row:
                continue
            shown = " ".join(f"{k}={v}" for k, v in row["parameters"].items())
            print(f"{row['method']:<10} {row['source']:<7} {row['gamma']:>7.4f} {row['pooled']:>7.4f} "
                  f"{row['queries']:>8,} {row['pairs']:>12,} {row['precision_at_10']:>6.3f}  {shown}")
    if any("delta" in row for row in rows):
        print("\nDelta(A, T): mean cosine TF-IDF similarity of a page and its top T related pages")
        print(f"{'method':<10} {'source':<7}" + "".join(f"{'T=' + str(t):>7}" for t in range(1, 11)) + f"{'pages':>7}")
        for row in rows:
            if "delta" in row:
                print(f"{row['method']:<10} {row['source']:<7}"
                      + "".join(f"{row['delta'][t]:>7.4f}" for t in range(1, 11)) + f"{row['text_pages']:>7,}")
    return 0
