"""``linksim hosts``."""

from __future__ import annotations

import argparse
import json

from linksim.cli.options import add_wait, checked, command


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = command(commands, "hosts", _hosts, parents=[connection],
                     help="build the host graph of the pages (Host, ON_HOST, HOST_LINKS_TO)")
    parser.add_argument("--batch-size", type=checked("batch_size"), default=10_000,
                        help="hosts, node ids or host links per transaction (default 10,000)")
    add_wait(parser, "load or host graph build")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")


def _hosts(args: argparse.Namespace) -> int:
    """Build the host graph of the page graph, or bring it up to date: one (:Host {name}) per host
    of the pages, (:Page)-[:ON_HOST]->(:Host), and (:Host)-[:HOST_LINKS_TO {links}]->(:Host) where
    `links` counts the page links from one host to the other (links inside a host do not count).
    Idempotent; once it exists, every `linksim load` rebuilds it, so that it stays the host graph of
    the pages and links (hosts and host links gone from the pages are deleted). Then every method
    runs on it with --graph hosts (`linksim pagerank --graph hosts`, `linksim similar METHOD --graph
    hosts`), and `linksim related HOST` answers the hosts most similar to a host."""
    from linksim.cli.main import open_facade

    with open_facade(args) as ls:
        result = ls.hosts(batch_size=args.batch_size, wait=args.wait)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
        return 0
    print(f"Host graph: {result.hosts:,} hosts, {result.pages:,} pages on them, {result.host_links:,} host links "
          f"counting {result.links:,} page links between hosts ({result.seconds:.1f} s)"
          + ("." if result.changed else "; nothing changed."))
    return 0
