"""``linksim neo4j start | stop | status | logs | init``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import deque
from pathlib import Path

from linksim.cli.options import command

from linksim.server.local import LocalServer, ServerStatus
from linksim.server.settings import ServerSettings

EXIT_NOT_RUNNING = 3  # as LSB init scripts report "program is not running"


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    neo4j = commands.add_parser(
        "neo4j",
        help="run the local Neo4j server (start, stop, status, logs, init)",
        description=(
            "Manage the local Neo4j 5.26 Community server that linksim assembles from Maven "
            "Central jars (needs Java 17 or 21; the first start downloads the jars "
            "server/jars.lock lists, from $LINKSIM_MAVEN_REPOSITORY if set, and asks Maven when "
            "that fails). It listens on 127.0.0.1 only, with authentication on and a generated "
            "password in an owner-only file. Its jars, data, logs and password live under $LINKSIM_HOME (default "
            "~/.cache/linksim)."
        ),
    )
    sub = neo4j.add_subparsers(dest="neo4j_command", metavar="ACTION", required=True)

    sizing = argparse.ArgumentParser(add_help=False)
    group = sizing.add_argument_group("server settings (also from LINKSIM_* variables)")
    group.add_argument("--bolt-port", type=int, help="Bolt port (env LINKSIM_BOLT_PORT; default 7687)")
    group.add_argument("--http-port", type=int, help="HTTP port (env LINKSIM_HTTP_PORT; default 7474)")
    group.add_argument("--heap", help="JVM heap, e.g. 4g (env LINKSIM_HEAP; default 4g)")
    group.add_argument(
        "--pagecache", help="page cache, e.g. 2g (env LINKSIM_PAGECACHE; default 2g)"
    )

    start = command(
        sub, "start", _start, parents=[sizing], help="start the server; returns when it answers queries",
    )
    start.add_argument(
        "--timeout", type=float, default=180.0, help="seconds to wait for Bolt (default 180)"
    )
    start.add_argument(
        "--with-gds", action="store_true",
        help="also install Neo4j Graph Data Science (Community, from Maven Central) as a plugin; "
        "used by the benchmarks as an anchor, not by linksim itself",
    )

    stop = command(sub, "stop", _stop, help="stop the server cleanly (data persists)")
    stop.add_argument(
        "--timeout", type=float, default=120.0, help="seconds before a forced kill (default 120)"
    )

    status = command(
        sub, "status", _status, help="print URI, Browser URL, version and pid (exit 3 if not running)",
    )
    status.add_argument("--json", action="store_true", help="print the status as JSON")

    logs = command(sub, "logs", _logs, help="print the end of the server log")
    logs.add_argument("-n", "--lines", type=int, default=50, help="lines to print (default 50)")
    logs.add_argument(
        "--file",
        choices=["neo4j", "debug", "console", "query", "http", "security"],
        default="neo4j",
        help="which log (default neo4j)",
    )
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")

    command(
        sub, "init", _init, parents=[connection],
        help="create linksim's constraints and indexes (idempotent)",
    )

    plugin = command(
        sub, "plugin", _plugin,
        help="build linksim's procedures (linksim.related) as a jar for another Neo4j 5.26 server",
    )
    plugin.add_argument(
        "--out", type=Path, default=Path("."),
        help="folder to put the jar in (default: the current one); copy it into the server's "
        "plugins folder and restart it",
    )


def _server(args: argparse.Namespace) -> LocalServer:
    settings = ServerSettings.from_env(
        bolt_port=getattr(args, "bolt_port", None),
        http_port=getattr(args, "http_port", None),
        heap=getattr(args, "heap", None),
        pagecache=getattr(args, "pagecache", None),
    )
    return LocalServer(settings)


def _print_status(status: ServerStatus) -> None:
    print(f"Neo4j {status.version} is running (pid {status.pid})")
    print(f"  Bolt URI:       {status.uri}")
    print(f"  Neo4j Browser:  {status.browser_url}")
    print(f"  user:           {status.user}")
    print(f"  password file:  {status.password_file}")
    print(f"  home:           {status.home}")


def _start(args: argparse.Namespace) -> int:
    """Start the local server and return once Bolt answers a query. The first start fetches the jars
    (server/jars.lock's, or Maven's) and generates the password; later starts take seconds. Exits
    0 and says so when the server already runs."""

    server = _server(args)
    began = time.monotonic()
    if args.with_gds:
        if server.is_running():
            print("Installing GDS takes effect at the next start: `linksim neo4j stop` first.")
        server.install_gds()
    status, started = server.start(timeout=args.timeout)
    if started:
        print(f"Started in {time.monotonic() - began:.1f} s.")
    else:
        print("Already running.")
    _print_status(status)
    return 0


def _stop(args: argparse.Namespace) -> int:
    server = _server(args)
    began = time.monotonic()
    if server.stop(grace=args.timeout):
        print(f"Stopped in {time.monotonic() - began:.1f} s; data kept in {server.settings.data_dir}.")
    else:
        print("The local Neo4j server is not running.")
    return 0


def _status(args: argparse.Namespace) -> int:
    """Print the state of the local server. Exit code 0 if it runs, 3 if not."""

    status = _server(args).status()
    if args.json:
        print(json.dumps(status.as_dict(), indent=2))
    elif status.running:
        _print_status(status)
    elif status.pid is not None:
        print(f"A server process (pid {status.pid}) exists but does not answer on {status.uri}.")
    else:
        print("The local Neo4j server is not running. Start it with `linksim neo4j start`.")
    return 0 if status.running else EXIT_NOT_RUNNING


def _logs(args: argparse.Namespace) -> int:
    settings = _server(args).settings
    path = settings.logs_dir / f"{args.file}.log"
    if not path.exists():
        print(f"No log yet at {path}.", file=sys.stderr)
        return 1
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in deque(handle, maxlen=max(args.lines, 0)):
            sys.stdout.write(line)
        sys.stdout.flush()
        while args.follow:
            line = handle.readline()
            if line:
                sys.stdout.write(line)
                sys.stdout.flush()
            else:
                time.sleep(0.5)
    return 0


def _init(args: argparse.Namespace) -> int:
    """Apply cypher/schema.cypher: the uniqueness constraint on :Page(url) and the indexes the
    procedures use. Safe to run again; the loader runs it before every load."""

    from linksim.cli.main import open_facade

    with open_facade(args) as ls:
        result = ls.init_schema()
        connection = ls.connection
    print(
        f"Schema applied to {connection.uri} (database {connection.database}): "
        f"{result['statements']} statements, {result['constraints_added']} constraints and "
        f"{result['indexes_added']} indexes added."
    )
    return 0


def _plugin(args: argparse.Namespace) -> int:
    """Compile linksim's procedures (linksim.related, linksim.relatedHosts: the current related
    pages of a page in one short query, under the run protocol) against the Neo4j 5.26 jars
    (fetched once, as for `start`) with the JDK's javac, and put the jar into --out. The local
    server gets it at every start; this is for a server of your own (NEO4J_URI). Exit 1 when no
    javac is found or it fails, 2 when --out is a file."""

    import shutil

    from linksim.errors import ConfigurationError
    from linksim.server import plugin

    if args.out.exists() and not args.out.is_dir():
        raise ConfigurationError(f"--out {args.out} is a file: give the folder to put the jar in")
    server = _server(args)
    server.ensure_jars()
    jar = plugin.build(server.settings.lib_dir, server.java())
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / jar.name
    shutil.copy2(jar, target)
    print(f"{target}\nCopy it into your server's plugins folder and restart the server: the procedure "
          "linksim.related then answers there (the query related_pages_procedure of "
          "cypher/related_pages.cypher).")
    return 0
