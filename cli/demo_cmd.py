"""``linksim demo``: from nothing to related pages of Wikipedia in one command."""

from __future__ import annotations

import argparse
import textwrap
import time

from linksim.cli.options import checked, command
from linksim.methods import DEFAULT_METHOD

DEMO_PAGES = ("Albert_Einstein", "Paris", "Dog")


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = command(
        commands, "demo", _demo, parents=[connection],
        help="start Neo4j, load Wikispeedia, compute everything, show related pages",
    )
    parser.add_argument("--pages", nargs="+", metavar="ARTICLE", default=list(DEMO_PAGES),
                        help=f"Wikipedia article names to show (default: {' '.join(DEMO_PAGES)})")
    parser.add_argument("--top-k", type=checked("top_k"), default=10, help="related pages per page (default 10)")
    parser.add_argument("--pagesim-radius", type=int, default=2,
                        help="PageSim radius for the demo (default 2: Wikispeedia is dense, and radius 3, "
                        "the paper's, takes about 15 minutes here for all pages; `linksim similar pagesim` "
                        "uses 3)")
    parser.add_argument("--rebuild", action="store_true", help="recompute everything, even what is there")


def _demo(args: argparse.Namespace) -> int:
    """The one-command tour: provisions and starts the local Neo4j (or uses $NEO4J_URI), loads the
    Wikispeedia crawl (4,604 Wikipedia articles as pages with titles and categories), computes
    PageRank and the top-10 SIMILAR_TO relationships of the default method (spectral P-PSimRank),
    SimRank, PSimRank, extended Jaccard and PageSim, then prints the related pages of three well-known pages side by side and the Neo4j
    Browser URL with a query to paste. A rerun reuses what is already there."""

    import os

    from linksim.cli.browser_cmd import browser_query
    from linksim.cli.main import open_facade
    from linksim.loader.datasets import locate
    from linksim.methods import METHODS
    from linksim.procedures.demo import WIKI, step_done, step_logged
    from linksim.procedures.runs import related_procedure

    started = time.monotonic()
    folder = locate("wikispeedia")
    began = step_logged(1, "Neo4j")
    browser = None
    local = not (args.uri or os.environ.get("NEO4J_URI"))  # no server of the user's: the local one
    if local:
        from linksim.server.local import LocalServer
        from linksim.server.settings import ServerSettings

        status, fresh = LocalServer(ServerSettings.from_env()).start()
        browser = status.http_url.rstrip("/") + "/browser/" if status.http_url else None
    with open_facade(args) as ls:
        if local:
            step_done(began, ("started" if fresh else "already running") + f" at {ls.connection.uri}")
        tour = ls.tour(folder, args.pages, top_k=args.top_k, pagesim_radius=args.pagesim_radius, rebuild=args.rebuild)
        procedure = related_procedure(ls.runner)
    width = 24
    for article, lists in tour.lists.items():
        url = WIKI + article
        title = article.replace("_", " ")
        if not any(lists.values()):
            print(f"\n{title}: not a page of the crawl (or no related pages).")
            continue
        print(f"\nPages related to {title} ({url}):")
        names = {m: m + (f" r={args.pagesim_radius}" if "radius" in METHODS[m].defaults else "")
                 + f" P@10 {tour.graded[m]:.2f}" for m in tour.order}
        print(f"{'':>3} " + " ".join(f"{names[m]:<{width}}" for m in tour.order))
        for position in range(args.top_k):
            cells = []
            for m in tour.order:
                rows = lists[m]
                text = rows[position]["title"] or rows[position]["url"] if position < len(rows) else ""
                cells.append(textwrap.shorten(text, width=width, placeholder="…").ljust(width))
            print(f"{position + 1:>3} " + " ".join(cells))
    print(f"\nAll of it in {time.monotonic() - started:.0f} s.")
    if browser:
        print(f"\nNeo4j Browser: {browser} (user neo4j, password in the file `linksim neo4j status` shows).")
    print("Paste this into the Browser's editor to see a page and its related pages as a graph:\n")
    print(browser_query(WIKI + args.pages[0], DEFAULT_METHOD, procedure))
    return 0
