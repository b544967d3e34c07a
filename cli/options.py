"""Option types shared by the commands: every value is checked by :mod:`linksim.parameters` while
the command line is parsed, so a bad one is refused before anything connects or reads a graph."""

from __future__ import annotations

import argparse
from pathlib import Path

from linksim.errors import ConfigurationError
from linksim.parameters import PARAMETERS


#: The exit codes of every command, the same for all; the docs' reference is rendered from these
#: tables, and tests/integration/cli/test_exit_codes.py runs each command into each code it gives.
EXIT_CODES = {
    0: "done",
    1: "something else went wrong",
    2: "a bad option, argument or setting",
    3: "Neo4j cannot be reached, refused the credentials, or failed a query",
    4: "a bad input file",
    5: "a write failed half-way; what was current stays current",
    6: "no stored index fits, or the one stored is stale or corrupt",
    7: "another writer holds the lock",
    8: "the run does not fit the memory budget or the free disk",
    130: "interrupted",
}
#: What a user meets under each code.
EXIT_CODE_EXAMPLES = {
    0: "an empty related-pages list is an answer, not an error",
    1: "the local server would not start (port taken, no Java), a download failed",
    2: "`--top-k 0`, `--memory-budget lots`, an empty URL or one not in the graph, a password file "
       "that is a folder or binary, a linksim home that cannot be written, `--mode bulk` on a "
       "database with data: refused before anything is read or written",
    3: "the server stopped, a wrong password",
    4: "a bad record (`file:line` or `file: record N (offset X)`), an empty, missing or unreadable "
       "file, in `linksim load`, `spark index --edges`, `evaluate --categories`",
    5: "the server stopped mid-load, the import tool failed (the database is put back), a Spark job "
       "failed; an index or PageRank asked of a graph whose load was cut short and not run again",
    6: "`related`, `sim` before `linksim index`",
    7: "a second `similar` of one method, a second `load`",
    8: "`similar simrank --memory-budget 1K`; a SIMILAR_TO write larger than the local server's "
       "free disk; an index store whose disk fills while it writes (the old index kept); nothing "
       "was started or written",
    130: "Ctrl-C",
}

#: Every setting read from the environment: (setting, option, variable, default). An option beats
#: its variable, which beats the local server; the docs' configuration reference is this table.
SETTINGS = (
    ("linksim home", "", "LINKSIM_HOME", "`~/.cache/linksim`"),
    ("local instance", "", "LINKSIM_INSTANCE", "`default`"),
    ("Bolt port", "`neo4j start --bolt-port`", "LINKSIM_BOLT_PORT", "7687"),
    ("HTTP port", "`neo4j start --http-port`", "LINKSIM_HTTP_PORT", "7474"),
    ("JVM heap", "`neo4j start --heap`", "LINKSIM_HEAP", "4g"),
    ("page cache", "`neo4j start --pagecache`", "LINKSIM_PAGECACHE", "2g"),
    ("Maven repository of the server's jars and Spark's connector", "", "LINKSIM_MAVEN_REPOSITORY",
     "Maven Central"),
    ("data sets", "", "LINKSIM_DATA", "`../shared/data` beside the repository, else `<home>/data`"),
    ("index store", "`--index-dir`", "LINKSIM_INDEX_DIR", "`<home>/indexes`"),
    ("server URI", "`--uri`", "NEO4J_URI", "the local server"),
    ("Browser URL of that server (tests)", "", "NEO4J_HTTP_URL", "none"),
    ("user", "`--user`", "NEO4J_USER", "neo4j"),
    ("password", "`--password-file FILE` (mode 0600)", "NEO4J_PASSWORD",
     "the local server's password file"),
    ("password file", "`--password-file FILE`", "NEO4J_PASSWORD_FILE", "the local server's"),
    ("database", "`--database`", "NEO4J_DATABASE", "neo4j"),
    ("retries of a failed write, seconds", "", "LINKSIM_RETRY_SECONDS", "30 (then the command stops)"),
    ("memory budget of `pagerank`, `index`, `similar`", "`--memory-budget SIZE`",
     "LINKSIM_MEMORY_BUDGET", "the memory available when the run starts (`none`: no check)"),
)

EXIT_CODES_HELP = "Exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items()) + "."


def command(commands, name: str, handler, **options) -> argparse.ArgumentParser:
    """A command's parser: its description is the handler's docstring, its epilog the exit codes
    (unless given), and it runs ``handler``."""
    options.setdefault("epilog", EXIT_CODES_HELP)
    parser = commands.add_parser(name, description=handler.__doc__, **options)
    parser.set_defaults(handler=handler)
    return parser


def checked(name: str):
    """An argparse ``type`` that converts and range-checks the parameter ``name``."""
    parameter = PARAMETERS[name]

    def convert(text: str):
        try:
            return parameter.check(text)
        except ConfigurationError:
            raise argparse.ArgumentTypeError(f"must be {parameter.describe()}, got {text!r}") from None

    convert.__name__ = parameter.kind.__name__  # argparse names the type in its messages
    return convert


def add_wait(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--wait", type=checked("wait"), default=0.0, metavar="SECONDS",
        help=f"if another {what} is running, wait up to SECONDS for it to finish (default 0: refuse "
        "at once, saying who holds it)",
    )


def add_memory(parser: argparse.ArgumentParser) -> None:
    """``--estimate`` and ``--memory-budget``, for the commands that compute over the whole graph."""
    parser.add_argument(
        "--estimate", action="store_true",
        help="print the memory (bytes min and max, and what takes them) and disk the run would take on "
        "the graph as it is now under the memory budget (an index it would build on disk is estimated on "
        "disk), and stop (reads only the page and link counts)",
    )
    parser.add_argument(
        "--memory-budget", metavar="SIZE", type=memory_size,
        help="refuse to start (exit 8, nothing written) when the estimate exceeds SIZE: 8G, 512M, none "
        "(env LINKSIM_MEMORY_BUDGET; default: the memory available when the run starts)",
    )


def add_sampling(group, fingerprints_help: str, seed_help: str) -> None:
    """The Monte Carlo methods' build parameters: --fingerprints, --length, --decay, --seed."""
    group.add_argument("--fingerprints", type=checked("n_fingerprints"), metavar="N", dest="n_fingerprints",
                       help=fingerprints_help)
    group.add_argument("--length", type=checked("length"), metavar="L", help="walk length / neighbourhood depth L, 1..127")
    group.add_argument("--decay", type=checked("decay"), metavar="C", help="decay factor c, in (0, 1)")
    group.add_argument("--seed", type=checked("seed"), help=seed_help)


def add_list_options(parser: argparse.ArgumentParser, sample_help: str, retire_help: str) -> None:
    """What every writer of SIMILAR_TO lists takes: --top-k, --similarity-cutoff, --sample,
    --rebuild, --retire, --wait."""
    parser.add_argument("--top-k", type=checked("top_k"), default=10, help="related pages per page (default 10)")
    parser.add_argument("--similarity-cutoff", type=checked("similarity_cutoff"), default=0.0,
                        help="write only scores above this, in [0, 1) (default 0)")
    parser.add_argument("--sample", type=checked("sample"), default=None, metavar="S", help=sample_help)
    parser.add_argument("--rebuild", action="store_true",
                        help="build the index from nothing first (not the stored one, nor an update of it)")
    parser.add_argument("--retire", choices=("wait", "background"), default="wait", help=retire_help)
    add_wait(parser, "`linksim similar` of the same method")


def add_graph(parser, detected: bool = False) -> None:
    """``--graph pages|hosts``: which link graph the command runs on (``detected``: by default the
    hosts when every name given is a bare host name, else the pages)."""
    from linksim.parameters import GRAPHS

    parser.add_argument(
        "--graph", choices=GRAPHS, default=None if detected else "pages",
        help="the link graph: pages (:Page, LINKS_TO) or hosts (:Host, HOST_LINKS_TO, built by `linksim hosts`; "
        "a host links to another when one of its pages links to one of the other's) "
        + ("(default: hosts when every name given is a bare host name such as www.example.org and no page is "
           "stored under it, else pages)"
           if detected else "(default pages)"),
    )


def memory_size(text: str) -> str:
    """An argparse ``type`` for a memory size (checked now, kept as written for the budget)."""
    from linksim.estimate import parse_bytes

    try:
        parse_bytes(text)
    except ConfigurationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def print_estimate(estimate, as_json: bool) -> int:
    import json

    if as_json:
        print(json.dumps(estimate.as_dict(), indent=2))
    else:
        print("\n".join(estimate.lines()))
    return 0


def table(frame) -> str:
    """``frame`` as the commands print it: no index, a missing value (a page without a title, a
    PageRank not run) a blank cell, not NaN or None."""
    shown = frame.copy()
    for column in shown.columns:
        if shown[column].dtype == object:
            shown[column] = shown[column].where(shown[column].notna(), "")
    return shown.to_string(index=False, na_rep="")


def urls_file(spec: str | None, option: str):
    """``@FILE`` becomes the list of its URLs (blank lines and ``#`` comments skipped)."""
    if spec is None or not spec.startswith("@"):
        return spec
    path = Path(spec[1:])
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"{option} {spec}: cannot read {path} ({error})") from None
    urls = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not urls:
        raise ConfigurationError(f"{option} {spec}: {path} holds no URL")
    return urls
