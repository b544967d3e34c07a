"""``linksim index``, ``linksim similar``, ``linksim related`` and ``linksim sim``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from linksim.cli.options import add_wait, checked

METHOD_HELP = (
    "simrank: SimRank by coalescing random walks; psimrank: PSimRank (walks coupled by random "
    "permutations); xjaccard: extended Jaccard by min-hashing (Fogaras & Racz 2004/2005); pagesim: "
    "PageRank propagated along paths of at most --radius links (Lin, King & Lyu 2006)"
)


def _methods() -> tuple[str, ...]:
    from linksim.procedures.similarity import METHODS

    return METHODS


def _index_options(parser: argparse.ArgumentParser, build: bool) -> None:
    group = parser.add_argument_group(
        "index",
        "Where the index lives and how it is built. Unset parameters take the stored index's "
        "values, or the papers' defaults when a new index is built: N=100 fingerprints, length "
        "L=10 (4 for xjaccard), decay c=0.6, seed 0; PageSim radius 3, decay 0.5.",
    )
    group.add_argument("--index-dir", type=Path, metavar="DIR",
                       help="index store (env LINKSIM_INDEX_DIR; default "
                       "$LINKSIM_HOME/indexes/<server>-<database>-<hash>)")
    fingerprints = ("number of fingerprints N to build, 1..100000" if build else
                    "use the first N fingerprints of the stored index, 1..as many as it has (default all)")
    group.add_argument("--fingerprints", type=checked("n_fingerprints"), metavar="N", dest="n_fingerprints",
                       help=fingerprints)
    if build:
        group.add_argument("--length", type=checked("length"), metavar="L",
                           help="walk length / neighbourhood depth L, 1..127")
        group.add_argument("--decay", type=checked("decay"), metavar="C", help="decay factor c, in (0, 1)")
        group.add_argument("--seed", type=checked("seed"), help="random seed >= 0 (same seed, same graph: same index)")
        group.add_argument("--radius", type=checked("radius"), help="PageSim: propagation radius r, 1..20 (default 3)")
        group.add_argument("--formula", choices=("minmax", "sum"),
                           help="PageSim: minmax = sum of min^2/max (2006 paper, default); sum = sum of min")
    group.add_argument("--crawled-only", action="store_true",
                       help="only crawled pages and the links between them")


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    methods = _methods()
    index = commands.add_parser(
        "index", parents=[connection], help="build (or check) the similarity index of a method",
        description=(
            "Stream the link graph out of Neo4j and build the similarity index of METHOD "
            f"({METHOD_HELP}). The index is stored with its parameters, seed and a fingerprint of "
            "the graph; it answers only for that graph. An index that already matches is reused "
            "unless --rebuild."
        ),
    )
    index.add_argument("method", metavar="METHOD", choices=methods, help=" | ".join(methods))
    _index_options(index, build=True)
    index.add_argument("--rebuild", action="store_true", help="build even if a matching index exists")
    index.add_argument("--verify", action="store_true",
                       help="check the stored index without building: every array's digest and value "
                       "ranges (exit 6 if it is corrupt); reads no graph")
    index.add_argument("--json", action="store_true", help="print the index description as JSON")
    index.set_defaults(handler=_index)

    similar = commands.add_parser(
        "similar", parents=[connection], help="write every page's related pages as SIMILAR_TO",
        description=(
            "Write the top-k related pages of every page by METHOD as "
            "(:Page)-[:SIMILAR_TO {score, method, rank, run}]->(:Page), building the index first "
            "when no matching one is stored. A rerun replaces the method's relationships: the new "
            "run is written beside the old one, made current in one transaction, then the old one "
            "is deleted, so a reader of the current run never sees a mix or nothing. Other "
            "methods are untouched. One run of a method at a time: a second one waits (--wait) or "
            "is refused."
        ),
        epilog="Exit codes: 0 written, 2 bad option, 3 Neo4j error, 6 index store problem, 7 another "
        "run of the method holds its lock.",
    )
    similar.add_argument("method", metavar="METHOD", choices=methods, help=" | ".join(methods))
    similar.add_argument("--top-k", type=checked("top_k"), default=10, help="related pages per page (default 10)")
    similar.add_argument("--similarity-cutoff", type=checked("similarity_cutoff"), default=0.0,
                         help="write only scores above this, in [0, 1) (default 0)")
    _index_options(similar, build=True)
    similar.add_argument("--rebuild", action="store_true", help="rebuild the index first")
    similar.add_argument("--batch-size", type=checked("batch_size"), default=50_000,
                         help="relationships per write transaction (default 50000)")
    add_wait(similar, "`linksim similar` of the same method")
    similar.add_argument("--json", action="store_true", help="print the run summary as JSON")
    similar.set_defaults(handler=_similar)

    related = commands.add_parser(
        "related", parents=[connection], help="the pages most similar to a page",
        description="Print the pages most similar to URL, from the stored index of --method "
        "(built first if there is none).",
    )
    related.add_argument("url", metavar="URL", help="the page, as stored (normalised URL)")
    related.add_argument("--method", choices=methods, default="simrank", help="default simrank")
    related.add_argument("--top-k", type=checked("top_k"), default=10, help="how many (default 10)")
    related.add_argument("--similarity-cutoff", type=checked("similarity_cutoff"), default=0.0,
                         help="only scores above this, in [0, 1)")
    _index_options(related, build=False)
    related.add_argument("--json", action="store_true", help="print JSON records")
    related.set_defaults(handler=_related)

    sim = commands.add_parser(
        "sim", parents=[connection], help="the similarity of two pages",
        description="Print the similarity of two pages by --method, from its stored index.",
    )
    sim.add_argument("url", metavar="URL")
    sim.add_argument("other", metavar="URL")
    sim.add_argument("--method", choices=methods, default="simrank", help="default simrank")
    _index_options(sim, build=False)
    sim.add_argument("--json", action="store_true")
    sim.set_defaults(handler=_sim)


def _root(args: argparse.Namespace, connection) -> Path:
    from linksim.procedures.similarity import default_index_root

    if args.index_dir is not None:
        return args.index_dir
    if os.environ.get("LINKSIM_INDEX_DIR"):
        return Path(os.environ["LINKSIM_INDEX_DIR"])
    return default_index_root(connection.uri, connection.database)


def _given(args: argparse.Namespace) -> dict:
    names = ("n_fingerprints", "length", "decay", "seed", "radius", "formula")
    given = {name: getattr(args, name, None) for name in names}
    method = getattr(args, "method")
    if method == "pagesim":
        for name in ("n_fingerprints", "length", "seed"):
            given.pop(name)
    else:
        given.pop("radius"), given.pop("formula")
    return given


def _handle(args: argparse.Namespace, runner, connection, rebuild: bool = False, query: bool = False):
    from linksim.procedures.similarity import obtain_index

    given = _given(args)
    if query:  # a query may use fewer fingerprints than were built; it is checked against the index
        given.pop("n_fingerprints", None)
    return obtain_index(
        runner, args.method, _root(args, connection), rebuild=rebuild, crawled_only=args.crawled_only,
        show_progress=not args.quiet, **given,
    )


def _connect(args: argparse.Namespace):
    from linksim.cli.main import connection_from_args
    from linksim.procedures import QueryRunner

    connection = connection_from_args(args)
    return connection, QueryRunner.connect(connection)


def _index(args: argparse.Namespace) -> int:
    from linksim import store

    if args.verify:
        return _verify(args)
    connection, runner = _connect(args)
    with runner:
        handle = _handle(args, runner, connection, rebuild=args.rebuild)
    meta = store.describe(handle.root, args.method)
    if args.json:
        print(json.dumps(dict(meta, path=str(store.index_dir(handle.root, args.method)), built=handle.built), indent=2))
        return 0
    state = f"built in {handle.build_seconds:.1f} s" if handle.built else "already up to date"
    parameters = ", ".join(f"{k}={v}" for k, v in meta["parameters"].items())
    print(
        f"{args.method} index ({parameters}) of {meta['graph']['pages']:,} pages and "
        f"{meta['graph']['links']:,} links: {state}; {meta['bytes'] / 2**20:,.1f} MiB in "
        f"{store.index_dir(handle.root, args.method)}"
    )
    return 0


def _verify(args: argparse.Namespace) -> int:
    import time

    from linksim import store
    from linksim.cli.main import connection_from_args

    root = _root(args, connection_from_args(args))
    began = time.monotonic()
    meta = store.verify(root, args.method)
    seconds = time.monotonic() - began
    if args.json:
        print(json.dumps(dict(meta, path=str(store.index_dir(root, args.method)), verified=True), indent=2))
    else:
        print(f"{args.method} index in {store.index_dir(root, args.method)}: {len(meta['arrays'])} arrays, "
              f"{meta['bytes'] / 2**20:,.1f} MiB, every digest and value range checked in {seconds:.1f} s: sound.")
    return 0


def _similar(args: argparse.Namespace) -> int:
    from linksim.procedures.similarity import similar

    connection, runner = _connect(args)
    with runner:
        record = similar(
            runner, args.method, _root(args, connection), top_k=args.top_k, cutoff=args.similarity_cutoff,
            batch_size=args.batch_size, wait=args.wait, rebuild=args.rebuild, crawled_only=args.crawled_only,
            show_progress=not args.quiet, **_given(args),
        )
    if args.json:
        print(json.dumps(record.as_dict(), indent=2))
        return 0
    print(
        f"Wrote {record.written:,} SIMILAR_TO relationships ({args.method}, top {args.top_k}) for "
        f"{record.pages:,} pages in {record.millis / 1000:.1f} s (stream {record.stream_millis / 1000:.1f} s, "
        f"index and top-k {record.compute_millis / 1000:.1f} s, write {record.write_millis / 1000:.1f} s); "
        f"run {record.id} is now current."
    )
    return 0


def _related(args: argparse.Namespace) -> int:
    from linksim.procedures.similarity import related_pages

    connection, runner = _connect(args)
    with runner:
        handle = _handle(args, runner, connection, query=True)
        frame = related_pages(handle, runner, args.url, top_k=args.top_k, threshold=args.similarity_cutoff,
                              n_fingerprints=args.n_fingerprints)
    if args.json:
        records = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
        print(json.dumps(records, indent=2))  # exact floats, null for a missing title or rank
        return 0
    if frame.empty:
        print(f"No page is similar to {args.url} by {args.method} (e.g. it has no in-links).")
        return 0
    print(f"Pages most similar to {args.url} by {args.method}:")
    print(frame.to_string(index=False))
    sys.stdout.flush()
    return 0


def _sim(args: argparse.Namespace) -> int:
    from linksim.procedures.similarity import similarity

    connection, runner = _connect(args)
    with runner:
        handle = _handle(args, runner, connection, query=True)
        value = similarity(handle, args.url, args.other, n_fingerprints=args.n_fingerprints)
    if args.json:
        print(json.dumps({"method": args.method, "url": args.url, "other": args.other, "similarity": value}))
    else:
        print(repr(value))  # every digit: scripts compare it
    return 0
