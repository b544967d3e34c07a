"""``linksim evaluate``."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from linksim.cli.options import checked, command, urls_file


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = command(
        commands, "evaluate", _evaluate, parents=[connection],
        help="grade the SIMILAR_TO lists against categories or classes, beside the anchors",
    )
    parser.add_argument("--categories", type=Path, metavar="FILE",
                        help="page<TAB>category path per line (URL or Wikispeedia article name; a "
                        "Wikispeedia folder reads its categories.tsv), or a LINQS .content file (URL, "
                        "features, class: WebKB) or a folder of them; default: the pages' "
                        "`categories` property")
    parser.add_argument("--method", action="append", dest="methods", metavar="METHOD",
                        help="grade this method (repeatable; default: every method with a current run)")
    parser.add_argument("--depth", type=int, default=2,
                        help="classes are category paths (without `subject.`) cut to this many components (default 2)")
    parser.add_argument("--top", type=checked("top_k"), default=100, help="list length graded per page (default 100)")
    parser.add_argument("--exact", action="store_true",
                        help="also grade the exact reference of each method (small graphs: dense matrices)")
    parser.add_argument("--anchors", nargs="*", metavar="ANCHOR", default=None,
                        help="also grade the anchors on the same pages, computed here from the graph: "
                        "jaccard-in, jaccard-out, jaccard-both (GDS nodeSimilarity), cocitation, cosine-in (Marginalia's "
                        "website similarity), adamic-adar, hub-cosine (Marginalia), cocitation-dh (Dean & Henzinger); on "
                        "the server, where it has Graph Data Science (`linksim neo4j start --with-gds`): fastrp "
                        "(GDS FastRP, 256 dimensions, + exact kNN); no name: all of them")
    parser.add_argument("--texts", type=Path, metavar="PATH",
                        help="page texts (folder or tar.gz of <article>.txt, the Wikispeedia layout): also "
                        "report Delta(A, T), the mean cosine TF-IDF similarity of a page and its top T "
                        "related pages, T = 1..10 (PageSim paper, Section 6)")
    parser.add_argument("--targets", metavar="SPEC",
                        help="grade the runs written with this target filter (`linksim similar METHOD --targets "
                        "SPEC`: other-hosts, same-host, crawled, label:NAME, @FILE) and the anchors' lists of the "
                        "pages that pass (each anchor's whole ranking filtered)")
    parser.add_argument("--json", action="store_true", help="print JSON rows")


def _evaluate(args: argparse.Namespace) -> int:
    """Grade the current SIMILAR_TO run of each method against the pages' categories or classes:
    precision@10 (the share of a list's first 10 places that share the page's class, over the
    pages with a list), hits@10 (the same over every labelled page: an empty or short list counts
    its missing places as misses), sibling Gamma (Fogaras & Racz 2005: the same-class pages of a
    list should score above the pages only in a sibling class; mean over queries and pooled), the
    number of queries with comparable pairs, and the coverage (the share of pages with a link
    that have a list). With --anchors, the measures other tools give graded on the same pages.
    Write the lists with `linksim similar METHOD --top-k 100` first."""

    from linksim.cli.main import open_facade
    from linksim.loader.categories import read_categories
    from linksim.loader.texts import read_texts

    categories = read_categories(args.categories) if args.categories else None
    texts = read_texts(args.texts) if args.texts else None
    with open_facade(args) as ls:
        rows = ls.evaluate(categories, args.methods, depth=args.depth, top=args.top, exact=args.exact, texts=texts,
                           anchors=True if args.anchors == [] else (args.anchors or False),
                           targets=urls_file(args.targets, "--targets"))
    if args.json:
        print(json.dumps([{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                          for row in rows], indent=2))
        return 0
    if any("gamma" in row for row in rows):
        print(f"Top {args.top} graded; classes = categories cut to {args.depth} components:")
        wide = max(14, *(len(row["method"]) for row in rows))
        print(f"{'method':<{wide}} {'source':<7} {'P@10':>6} {'hits@10':>7} {'Gamma':>7} {'pooled':>7} {'queries':>8} "
              f"{'pairs':>12} {'coverage':>8}  parameters")
        for row in rows:
            if "gamma" not in row:
                continue
            shown = " ".join(f"{k}={v}" for k, v in row["parameters"].items())
            print(f"{row['method']:<{wide}} {row['source']:<7} {row['precision_at_10']:>6.3f} {row['hits_at_10']:>7.3f} "
                  f"{row['gamma']:>7.4f} {row['pooled']:>7.4f} {row['queries']:>8,} {row['pairs']:>12,} "
                  f"{row['coverage']:>8.1%}  {shown}")
    if any("delta" in row for row in rows):
        print("\nDelta(A, T): mean cosine TF-IDF similarity of a page and its top T related pages")
        print(f"{'method':<10} {'source':<7}" + "".join(f"{'T=' + str(t):>7}" for t in range(1, 11)) + f"{'pages':>7}")
        for row in rows:
            if "delta" in row:
                print(f"{row['method']:<10} {row['source']:<7}"
                      + "".join(f"{row['delta'][t]:>7.4f}" for t in range(1, 11)) + f"{row['text_pages']:>7,}")
    return 0
