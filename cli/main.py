"""The ``linksim`` command line.

Every command that talks to Neo4j takes the same connection options (``--uri``, ``--user``,
``--password-file``, ``--database``), falling back to ``NEO4J_*`` environment variables and then
to the local server that ``linksim neo4j start`` runs.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Callable, Sequence

from linksim import __version__
from linksim.cli.options import EXIT_CODES_HELP
from linksim.errors import LinksimError

log = logging.getLogger("linksim")

Handler = Callable[[argparse.Namespace], int]


def connection_options() -> argparse.ArgumentParser:
    """The options shared by every command that connects to Neo4j."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group(
        "connection",
        "Which Neo4j to use. Default: $NEO4J_URI / $NEO4J_USER / $NEO4J_PASSWORD if set, "
        "otherwise the local server of `linksim neo4j start`.",
    )
    group.add_argument("--uri", help="Bolt URI, e.g. bolt://127.0.0.1:7687 (env NEO4J_URI)")
    group.add_argument("--user", help="user name (env NEO4J_USER; default neo4j)")
    group.add_argument(
        "--password-file",
        metavar="FILE",
        help="file holding the password, mode 0600 (env NEO4J_PASSWORD or NEO4J_PASSWORD_FILE)",
    )
    group.add_argument("--database", help="database name (env NEO4J_DATABASE; default neo4j)")
    return parent


def open_facade(args: argparse.Namespace):
    """The API (:func:`linksim.connect`) opened from a command's options: the one place the command
    line resolves the connection, the local server and the index root."""
    from linksim.procedures.api import connect

    return connect(uri=args.uri, user=args.user, password_file=args.password_file, database=args.database,
                   index_dir=getattr(args, "index_dir", None), show_progress=not args.quiet)


def connection_from_args(args: argparse.Namespace):
    from linksim.server.connection import resolve_connection

    return resolve_connection(
        uri=args.uri, user=args.user, password_file=args.password_file, database=args.database
    )


def build_parser() -> argparse.ArgumentParser:
    from linksim.cli import (browser_cmd, demo_cmd, evaluate_cmd, generate_cmd, hosts_cmd, load_cmd, neo4j_cmd,
                             pagerank_cmd, report_cmd, similarity_cmd, spark_cmd)

    parser = argparse.ArgumentParser(
        prog="linksim",
        description=(
            "Related pages from the link structure of a web crawl, computed in Python and "
            "stored in Neo4j: load a crawl, index it (PageRank, the default spectral "
            "P-PSimRank, P-PSimRank, SimRank, PSimRank, extended Jaccard, PageSim), then ask for related pages in Cypher or from this command."
        ),
        epilog="Run `linksim COMMAND --help` for the options of a command. " + EXIT_CODES_HELP,
    )
    parser.add_argument("--version", action="version", version=f"linksim {__version__}")
    _global_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    demo_cmd.register(commands, connection_options())
    neo4j_cmd.register(commands, connection_options())
    load_cmd.register(commands, connection_options())
    hosts_cmd.register(commands, connection_options())
    generate_cmd.register(commands, connection_options())
    pagerank_cmd.register(commands, connection_options())
    similarity_cmd.register(commands, connection_options())
    spark_cmd.register(commands, connection_options())
    evaluate_cmd.register(commands, connection_options())
    report_cmd.register(commands, connection_options())
    browser_cmd.register(commands, connection_options())
    _global_options_everywhere(parser)
    return parser


def _global_options(parser: argparse.ArgumentParser, after_command: bool = False) -> None:
    # After the command, a default that leaves the value given before it as it is.
    keep = {"default": argparse.SUPPRESS} if after_command else {}
    parser.add_argument("-v", "--verbose", action="count", help="more log output (-vv for debug)",
                        **(keep or {"default": 0}))
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors", **keep)


def _global_options_everywhere(parser: argparse.ArgumentParser) -> None:
    """-v and -q after a command too (`linksim load x.tsv -q`), as before it."""
    for action in parser._actions:  # argparse lists a parser's subcommands only there
        for command in (action.choices or {}).values() if isinstance(action, argparse._SubParsersAction) else ():
            if not any("-q" in known.option_strings for known in command._actions):
                _global_options(command, after_command=True)
            _global_options_everywhere(command)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the record, not at creation."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


def _configure_logging(verbose: int, quiet: bool) -> None:
    level = logging.WARNING if quiet else (logging.DEBUG if verbose >= 2 else logging.INFO)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("linksim: %(message)s"))
    root = logging.getLogger("linksim")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    # The driver logs what it then raises ("defunct connection" when the server dies), which
    # linksim reports as one message: its lines are for -vv only (warnings, not its chatty debug).
    driver = logging.getLogger("neo4j")
    driver.handlers[:] = [handler] if verbose >= 2 else [logging.NullHandler()]
    driver.setLevel(logging.WARNING)
    driver.propagate = False


def worded(error: LinksimError) -> str:
    """An error's message in the command line's terms: the errors of the core carry what would
    mend them as fields (an index to build, a budget to raise), worded here as commands and flags."""
    from linksim.estimate import MemoryBudgetExceeded
    from linksim.store import IndexCorrupt, IndexStoreError

    if isinstance(error, MemoryBudgetExceeded):
        return error.worded("--memory-budget / LINKSIM_MEMORY_BUDGET", "`--estimate`",
                            {"n_fingerprints": "--fingerprints", "top_k": "--top-k", "radius": "--radius",
                             "prune": "--prune"})
    if isinstance(error, IndexStoreError):
        return error.worded(_index_command(isinstance(error, IndexCorrupt)))
    return str(error)


def _index_command(corrupt: bool):
    def word(method: str, parameters: dict, rebuild: bool) -> str:
        from linksim.parameters import PARAMETERS

        flags = [f"{PARAMETERS[k].option if k in PARAMETERS else '--' + k.replace('_', '-')} {v}"
                 for k, v in parameters.items()] + (["--rebuild"] if rebuild else [])
        command = f"`linksim index {method}{''.join(' ' + flag for flag in flags)}`"
        if corrupt:
            return f"check it with `linksim index {method} --verify`, build it again with {command}"
        return f"build it again with {command}" if rebuild else f"build one with {command}"

    return word


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``linksim`` console script."""
    from linksim.allocator import return_freed_memory

    return_freed_memory()
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose, args.quiet)
    handler: Handler = args.handler
    try:
        return handler(args)
    except LinksimError as exc:
        print(f"linksim: error: {worded(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("linksim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like: not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        from linksim.procedures.runner import driver_error

        error = driver_error(exc)
        if error is None:
            raise
        print(f"linksim: error: {error}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
