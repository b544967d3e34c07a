"""``linksim demo``: from nothing to related pages of Wikipedia in one command."""

from __future__ import annotations

import argparse
import logging
import textwrap
import time

from linksim.cli.options import checked
from linksim.methods import DEFAULT_METHOD

log = logging.getLogger("linksim")

WIKI = "https://en.wikipedia.org/wiki/"
DEMO_PAGES = ("Albert_Einstein", "Paris", "Dog")
DEMO_METHODS = ("simrank", "psimrank", "xjaccard", "pagesim")


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "demo", parents=[connection], help="start Neo4j, load Wikispeedia, compute everything, show related pages",
        description=(
            "The one-command tour: provisions and starts the local Neo4j (or uses $NEO4J_URI), "
            "loads the Wikispeedia crawl (4,604 Wikipedia articles as pages with titles and "
            "categories), computes PageRank and the top-10 SIMILAR_TO relationships of SimRank, "
            "PSimRank, extended Jaccard and PageSim, then prints the related pages of three "
            "well-known pages side by side and the Neo4j Browser URL with a query to paste. "
            "A rerun reuses what is already there."
        ),
    )
    parser.add_argument("--pages", nargs="+", metavar="ARTICLE", default=list(DEMO_PAGES),
                        help=f"Wikipedia article names to show (default: {' '.join(DEMO_PAGES)})")
    parser.add_argument("--top-k", type=checked("top_k"), default=10, help="related pages per page (default 10)")
    parser.add_argument("--pagesim-radius", type=int, default=2,
                        help="PageSim radius for the demo (default 2: Wikispeedia is dense, and radius 3, "
                        "the paper's, takes about 15 minutes here for all pages; `linksim similar pagesim` "
                        "uses 3)")
    parser.add_argument("--rebuild", action="store_true", help="recompute everything, even what is there")
    parser.set_defaults(handler=_demo)


def _step(number: int, total: int, text: str) -> float:
    log.info("[%d/%d] %s", number, total, text)
    return time.monotonic()


def _done(began: float, text: str) -> None:
    log.info("      %s (%.1f s)", text, time.monotonic() - began)


def _demo(args: argparse.Namespace) -> int:
    import os

    from linksim.cli.browser_cmd import browser_query
    from linksim.cli.main import connection_from_args
    from linksim.procedures.load import load
    from linksim.loader.datasets import locate
    from linksim.procedures import QueryRunner, demo
    from linksim.procedures.browser import label_pagerank_tiers, tiers_in_use
    from linksim.procedures.pagerank import run_pagerank
    from linksim.methods import METHODS
    from linksim.procedures.api import index_root
    from linksim.procedures.indexes import obtain_index
    from linksim.procedures.runs import current_runs
    from linksim.procedures.similarity import write_similar
    from linksim.procedures.stream import stream_link_graph
    from linksim.server.local import LocalServer
    from linksim.server.settings import ServerSettings

    total = 5
    quiet = args.quiet
    started = time.monotonic()
    folder = locate("wikispeedia")
    began = _step(1, total, "Neo4j")
    browser = None
    local = not (args.uri or os.environ.get("NEO4J_URI"))  # no server of the user's: the local one
    if local:
        status, fresh = LocalServer(ServerSettings.from_env()).start()
        browser = status.http_url.rstrip("/") + "/browser/" if status.http_url else None
    connection = connection_from_args(args)
    if local:
        _done(began, ("started" if fresh else "already running") + f" at {connection.uri}")

    with QueryRunner.connect(connection) as runner:
        began = _step(2, total, f"Wikispeedia crawl from {folder}")
        loaded = demo.progress(runner, WIKI)["crawled"]
        if loaded >= 4604 and not args.rebuild:
            _done(began, f"already loaded ({loaded:,} articles)")
        else:
            summary = load([folder], runner, mode="online", show_progress=not quiet)
            _done(began, f"loaded {summary.pages_created + summary.pages_updated:,} pages and "
                         f"{summary.links_created + summary.links_updated:,} links")

        began = _step(3, total, "PageRank")
        counts = demo.progress(runner, WIKI)
        ranked, pages = counts["ranked"], counts["pages"]
        if ranked == pages and not args.rebuild:
            _done(began, "already computed")
        else:
            run = run_pagerank(runner, show_progress=not quiet)
            _done(began, f"{run.record.iterations} iterations, written on {run.record.written:,} pages")
        if not tiers_in_use(runner):  # once set, PageRank keeps them in step itself
            label_pagerank_tiers(runner)  # the Browser style sizes pages by these labels

        began = _step(4, total, "related pages: " + ", ".join(DEMO_METHODS))
        root = index_root(connection.uri, connection.database)  # --index-dir's rules: LINKSIM_INDEX_DIR first
        streamed = None
        runs = current_runs(runner)
        for method in DEMO_METHODS:
            current = dict(runs[method]["parameters"], pages=runs[method]["pages"]) if method in runs else None
            wanted = dict(METHODS[method].defaults)
            given = {"radius": args.pagesim_radius} if "radius" in METHODS[method].defaults else {}
            wanted.update(given)
            fits = (
                current is not None and current.get("topK", 0) >= args.top_k and current["pages"] == pages
                and all(current.get(k) == v for k, v in wanted.items() if k in current)
            )
            if fits and not args.rebuild:
                log.info("      %s: current run is there", method)
                continue
            if streamed is None:
                streamed = stream_link_graph(runner, show_progress=False)
            one = time.monotonic()
            handle = obtain_index(runner, method, root, streamed=streamed, rebuild=args.rebuild,
                                  show_progress=False, **given)
            record = write_similar(runner, handle, top_k=args.top_k, show_progress=not quiet)
            log.info("      %s: %s SIMILAR_TO written (%.1f s)", method, f"{record.written:,}", time.monotonic() - one)
        _done(began, "done")

        _step(5, total, "the related pages, the best-graded method first")
        from linksim.procedures.evaluation import evaluate

        # What each column is worth, measured here: the share of each page's first 10 related
        # pages that share its category (precision@10 of the lists just written).
        graded = {row["method"]: row.get("precision_at_10", float("nan"))
                  for row in evaluate(runner, methods=list(DEMO_METHODS), top=args.top_k, show_progress=False)}
        order = sorted(DEMO_METHODS, key=lambda m: -graded[m] if graded[m] == graded[m] else 1.0)
        width = 24
        for article in args.pages:
            url = WIKI + article
            lists = demo.related_lists(runner, url, order, args.top_k)
            title = article.replace("_", " ")
            if not any(lists.values()):
                print(f"\n{title}: not a page of the crawl (or no related pages).")
                continue
            print(f"\nPages related to {title} ({url}):")
            names = {m: m + (f" r={args.pagesim_radius}" if "radius" in METHODS[m].defaults else "")
                     + f" P@10 {graded[m]:.2f}"
                     for m in order}
            print(f"{'':>3} " + " ".join(f"{names[m]:<{width}}" for m in order))
            for position in range(args.top_k):
                cells = []
                for m in order:
                    rows = lists[m]
                    text = rows[position]["title"] or rows[position]["url"] if position < len(rows) else ""
                    cells.append(textwrap.shorten(text, width=width, placeholder="…").ljust(width))
                print(f"{position + 1:>3} " + " ".join(cells))
    print(f"\nAll of it in {time.monotonic() - started:.0f} s.")
    if browser:
        print(f"\nNeo4j Browser: {browser} (user neo4j, password in the file `linksim neo4j status` shows).")
    print("Paste this into the Browser's editor to see a page and its related pages as a graph:\n")
    print(browser_query(WIKI + args.pages[0], DEFAULT_METHOD))
    return 0
