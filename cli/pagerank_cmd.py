"""``linksim pagerank``."""

from __future__ import annotations

import argparse
import json
import sys

from linksim.cli.options import add_graph, add_memory, add_wait, checked, command, print_estimate, table


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = command(
        commands, "pagerank", _pagerank, parents=[connection],
        help="compute PageRank of the pages in Neo4j (write, stream or stats)",
    )
    parser.add_argument("--mode", choices=("write", "stream", "stats"), default="write",
                        help="write (default): set the property; stream: print the top pages; stats: summary only")
    parser.add_argument("--damping", type=checked("damping"), default=0.85, help="damping factor c (default 0.85)")
    parser.add_argument("--tol", type=checked("tol"), default=1e-6, help="stop when the L1 residual is below this (default 1e-6)")
    parser.add_argument("--max-iter", type=checked("max_iter"), default=100, help="at most this many iterations (default 100)")
    parser.add_argument("--dangling", choices=("uniform", "remove"), default="uniform",
                        help="pages without out-links: spread their rank uniformly (default) or remove "
                        "them iteratively first and add them back after, as in the paper")
    parser.add_argument("--personalize", nargs="+", metavar="URL",
                        help="teleport only to these pages, with equal weights (personalised PageRank; "
                        "other weights through the Python API)")
    parser.add_argument("--write-property", default="pagerank", help="property to write (default pagerank)")
    parser.add_argument("--crawled-only", action="store_true",
                        help="rank crawled pages only (pages only linked to get no rank)")
    parser.add_argument("--top", type=checked("top"), default=10, help="top pages to print (default 10)")
    parser.add_argument("--batch-size", type=checked("batch_size"), default=50_000,
                        help="pages per write transaction (default 50000)")
    parser.add_argument("--warm-start", action="store_true",
                        help="iterate from the ranks the write property holds (a run before a recrawl): the same "
                        "ranks to the same tolerance in fewer iterations when the graph changed little")
    add_graph(parser)
    add_wait(parser, "PageRank write of the same property")
    add_memory(parser)
    parser.add_argument("--json", action="store_true", help="print the run summary as JSON")


def _pagerank(args: argparse.Namespace) -> int:
    """Stream the link graph out of Neo4j, compute PageRank by power iteration (Haveliwala 1999:
    damping, L1 residual, single-precision rank vectors) and write it to a property of every :Page
    (mode write, the default), print the top pages (stream) or only the summary (stats). Every run
    is recorded as a (:LinksimRun) node. Self-loops are left out. With --graph hosts, the same on
    the host graph (`linksim hosts`): the property is written on every :Host."""

    from linksim.cli.main import open_facade

    personalization = {url: 1.0 for url in args.personalize} if args.personalize else None
    with open_facade(args) as ls:
        if args.estimate:
            return print_estimate(ls.pagerank.estimate(graph=args.graph), args.json)
        run = ls.pagerank.run(
            args.mode, damping=args.damping, tol=args.tol, max_iter=args.max_iter, dangling=args.dangling,
            personalization=personalization, write_property=args.write_property, crawled_only=args.crawled_only,
            top=args.top, batch_size=args.batch_size, wait=args.wait, memory_budget=args.memory_budget,
            warm_start=args.warm_start, graph=args.graph,
        )
    record = run.record
    if args.json:
        print(json.dumps(dict(record.as_dict(), top=run.top.to_dict(orient="records")), indent=2))
        return 0
    state = "converged" if record.converged else "did NOT converge"
    if record.parameters.get("warmStart"):
        state += f" from the previous {args.write_property}"
    nodes = args.graph  # a graph is named by its nodes: pages, hosts
    print(
        f"PageRank ({args.mode}) over {record.pages:,} {nodes} and {record.links:,} links: {state} after "
        f"{record.iterations} iterations (residual {record.residual:.2e}, tol {args.tol:g}) in "
        f"{record.millis / 1000:.1f} s (stream {record.stream_millis / 1000:.1f} s, compute "
        f"{record.compute_millis / 1000:.1f} s, write {record.write_millis / 1000:.1f} s)."
    )
    if args.mode == "write":
        print(f"Wrote {args.write_property} on {record.written:,} {nodes}; run {record.id}.")
    if args.mode != "stats":
        print(table(run.top))
    sys.stdout.flush()
    return 0
