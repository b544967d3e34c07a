"""``linksim browser``: where Neo4j Browser is, how to give it linksim's style and queries, and the
PageRank tier labels the style sizes pages by."""

from __future__ import annotations

import argparse
import os
import textwrap
from importlib import resources

from linksim.cli.options import command


def browser_query(url: str, method: str, procedure: bool = True) -> str:
    """The related-pages graph query with its parameters, ready to paste into the Browser's
    editor (the values are shown as Browser parameters, never put into the query): the call of
    ``linksim.related``, or where the server lacks it (``procedure=False``) the protocol query."""
    from linksim import cypher

    name = "related_graph_procedure" if procedure else "related_graph"
    return (f":param url => {_quoted(url)}\n:param method => {_quoted(method)}\n:param limit => 10\n"
            + cypher.query("related_pages", name))


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = command(
        commands, "browser", _browser, parents=[connection],
        help="print the Neo4j Browser URL and how to load linksim's style",
    )
    parser.add_argument("--no-tiers", action="store_true",
                        help="do not set the PageRank tier labels, only print the instructions")
    parser.add_argument("--property", default="pagerank",
                        help="the node property holding PageRank (default: pagerank)")


def _browser(args: argparse.Namespace) -> int:
    """Print the local Neo4j Browser URL and credentials, and how to load linksim's style and saved
    queries. The style captions pages by title and sizes them by PageRank, which a Browser style can
    only do through labels: this command labels the top 1% of the pages by PageRank :PageRankTop1
    and the rest of the top 10% :PageRankTop10 (once set, `linksim pagerank` keeps them in step;
    --no-tiers leaves the graph alone)."""

    from linksim.server.local import LocalServer
    from linksim.server.settings import ServerSettings

    folder = resources.files("linksim.cypher").joinpath("browser")
    style, favorites = folder.joinpath("style.grass"), folder.joinpath("favorites.cypher")
    settings = ServerSettings.from_env()
    external = bool(args.uri or os.environ.get("NEO4J_URI"))
    running = external or LocalServer(settings).status().running
    if external:
        print("Neo4j Browser: the one served by your Neo4j (NEO4J_URI / --uri)")
    elif running:
        print(f"Neo4j Browser: {settings.browser_url}")
        print(f"  connect to {settings.uri} as neo4j, password in {settings.password_file}")
    else:
        print(f"The local Neo4j is not running (`linksim neo4j start`); its Browser will be at {settings.browser_url}")
    procedure = not external  # the local server installs it at its start
    if running:
        from linksim.cli.main import open_facade
        from linksim.procedures.runs import related_procedure

        with open_facade(args) as ls:
            procedure = related_procedure(ls.runner)
            if not args.no_tiers:
                counts = ls.label_tiers(args.property)
                tiers = ", ".join(f":{label} {n:,}" for label, n in counts.labelled.items())
                print(f"\nPageRank tiers for the style: {tiers} of {counts.ranked:,} ranked pages.")
    print(f"\nStyle: drag {style} onto the Browser window, or run `:style` there and paste its text.")
    print("  Pages are captioned by title and sized by PageRank tier; SIMILAR_TO is labelled by score.")
    print(f"Saved queries: drag {favorites} onto the Favorites drawer (the star), or paste them.")
    example = browser_query("https://en.wikipedia.org/wiki/Albert_Einstein", "spectral", procedure)
    print("\nThen, for example:\n" + textwrap.indent(example, "  "))
    if not procedure:
        print("(This server has no linksim.related: `linksim neo4j plugin` builds it for your server.)")
    return 0
