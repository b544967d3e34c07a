"""``linksim browser``: where Neo4j Browser is and how to give it linksim's style and queries."""

from __future__ import annotations

import argparse
from importlib import resources


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "browser", parents=[connection], help="print the Neo4j Browser URL and how to load linksim's style",
        description="Print the local Neo4j Browser URL and credentials, and how to load linksim's style "
        "(Page captioned by title, SIMILAR_TO labelled by score) and saved queries.",
    )
    parser.set_defaults(handler=_browser)


def _browser(args: argparse.Namespace) -> int:
    from linksim.server.local import LocalServer
    from linksim.server.settings import ServerSettings

    folder = resources.files("linksim.cypher").joinpath("browser")
    style, favorites = folder.joinpath("style.grass"), folder.joinpath("favorites.cypher")
    settings = ServerSettings.from_env()
    status = LocalServer(settings).status()
    if status.running:
        print(f"Neo4j Browser: {settings.browser_url}")
        print(f"  connect to {settings.uri} as neo4j, password in {settings.password_file}")
    else:
        print(f"The local Neo4j is not running (`linksim neo4j start`); its Browser will be at {settings.browser_url}")
    print(f"\nStyle: drag {style} onto the Browser window, or run `:style` there and paste its text.")
    print(f"Saved queries: drag {favorites} onto the Favorites drawer (the star), or paste them.")
    print("\nThen, for example:\n  :param url => 'https://en.wikipedia.org/wiki/Albert_Einstein'\n"
          "  :param method => 'psimrank'\n  :param limit => 10\n"
          "  MATCH (run:LinksimRun {algorithm: $method, current: true})\n"
          "  MATCH path = (p:Page {url: $url})-[s:SIMILAR_TO {run: run.id}]->(q:Page)\n"
          "  WHERE s.rank <= $limit RETURN path")
    return 0
