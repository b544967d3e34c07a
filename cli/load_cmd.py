"""``linksim load PATH...``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from linksim.cli.options import add_wait, checked, command
from linksim.loader.load import BULK_MIN_LINKS, MODES
from linksim.loader.readers import FORMATS


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = command(
        commands, "load", _load, parents=[connection], help="import crawled pages and links into Neo4j",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or a Wikispeedia folder")
    parser.add_argument("--format", choices=FORMATS, help="format of every PATH (default: from the name)")
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="auto",
        help="online: batched transactions; bulk: Neo4j's import tool, for an empty database of "
        f"the local server; auto (default): bulk when that is safe and the crawl has >= {BULK_MIN_LINKS:,} links",
    )
    parser.add_argument(
        "--batch-size", type=checked("batch_size"), default=10_000, help="rows per transaction online (default 10000)"
    )
    parser.add_argument(
        "--on-error",
        choices=("stop", "skip"),
        default="stop",
        help="stop (default): a bad record ends the load before anything is written; "
        "skip: skip bad records and count them by reason",
    )
    parser.add_argument(
        "--no-normalize", action="store_true", help="keep web URLs as written (no normalisation)"
    )
    parser.add_argument(
        "--recrawl", action="store_true",
        help="the input is a new crawl of its pages: the links of every page it crawled replace those in "
        "the graph (links gone are removed, pages no longer linked to and never crawled are deleted); "
        "without it a load only adds links and updates counts. From an edge list, a page's links are "
        "replaced when the list has a link from it",
    )
    add_wait(parser, "load of this database")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _load(args: argparse.Namespace) -> int:
    """Import crawl files into Neo4j as (:Page {url, title, host, crawled})-[:LINKS_TO
    {count}]->(:Page). The format comes from each file name (.gz read transparently):
    .tsv/.txt/.edges edge lists, .cites (WebKB), .csv (pages file with url,title,... or links file
    with source,target,anchor), .jsonl ({url,title,links}), .net (Pajek), .warc/.warc.gz, .wacz
    (WACZ packages), .warc.wat.gz (Common Crawl's WAT), a Wikispeedia folder, or a folder of
    Common Crawl's host or domain graph (*vertices.txt.gz, *edges.txt.gz), or a WebGraph BV graph
    (BASENAME.graph with its .properties and .ef; the nodes named by BASENAME.urls if it is
    there, else by number), or the link table folder of `linksim spark extract`. URLs are normalised (scheme and host lower-cased, default port and fragment
    dropped, dot segments and relative links resolved, percent-encoding normalised); mailto:,
    javascript: and other non-web links are skipped and counted. Loading the same input again leaves
    the same graph; a later crawl adds and updates, and with --recrawl replaces the links of the pages
    it crawled again. Every crawled page records when it was last crawled (lastCrawled)."""

    from dataclasses import asdict

    from linksim.cli.main import open_facade

    with open_facade(args) as ls:
        summary = ls.load(args.paths, format=args.format, mode=args.mode, batch_size=args.batch_size,
                          on_error=args.on_error, normalize=not args.no_normalize, wait=args.wait,
                          recrawl=args.recrawl)
    if args.json:
        print(json.dumps(asdict(summary), indent=2))
    else:
        print("\n".join(summary.lines()))
    sys.stdout.flush()
    return 0
