"""``linksim generate``: a seeded synthetic crawl for scale work."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from linksim.cli.options import checked, command


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    del connection  # generating touches no database
    parser = command(
        commands, "generate", _generate,
        help="write a synthetic web crawl with power-law degrees (for scale tests)",
        epilog="Example: linksim generate crawl-10M.tsv.gz --links 10M --seed 1 && linksim load crawl-10M.tsv.gz",
    )
    parser.add_argument("output", help="file to write, e.g. crawl.tsv.gz (written whole or not at all)")
    parser.add_argument("--links", type=checked("links"), default=1_000_000,
                        help="links to generate: 100000, 1e6, 10M, 1_000_000 (default 1M; at least 10)")
    parser.add_argument("--seed", type=checked("seed"), default=0, help="random seed (default 0)")
    parser.add_argument("--out-exponent", type=checked("out_exponent"), default=2.1,
                        help="power-law exponent of the out-degrees (default 2.1)")
    parser.add_argument("--in-exponent", type=checked("in_exponent"), default=2.38,
                        help="power-law exponent of the in-degrees (default 2.38)")
    parser.add_argument("--labels", action="store_true",
                        help="a crawl with planted topics, sites, sections and navigation hubs instead, its pages' "
                             "labels (topic.subtopic) written beside it as OUTPUT's stem + .categories.tsv, for "
                             "`linksim evaluate --categories` (see docs/how-to/generate.md)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _generate(args: argparse.Namespace) -> int:
    """Write a seeded synthetic crawl as a gzip edge list of URLs (one `source<TAB>target` pair a line,
    the `edges` format of `linksim load`). Links follow a copying model of Kumar et al. set to the
    (alpha, beta) model's degree exponents that the PageSim term paper uses: out-degree 2.1, in-
    degree 2.38 (see docs/how-to/generate.md). About 0.11 pages a link, 11 out-links a
    crawled page, one host per 50 pages. The same --seed and --links give the same file."""

    from linksim.generate import CopyingModel, LabelledModel
    from linksim.loader.synthetic import write_synthetic_crawl

    model = CopyingModel(out_exponent=args.out_exponent, in_exponent=args.in_exponent)
    model.check()
    labels = LabelledModel(out_exponent=args.out_exponent, in_exponent=args.in_exponent) if args.labels else None
    crawl = write_synthetic_crawl(args.output, args.links, args.seed, model, show_progress=not args.quiet,
                                  labels=labels)
    if args.json:
        print(json.dumps({**asdict(crawl), "path": str(crawl.path),
                          "categories": None if crawl.categories is None else str(crawl.categories)}))
    else:
        print("\n".join(crawl.lines()), file=sys.stdout)
    return 0
