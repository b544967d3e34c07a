"""``linksim index``, ``linksim similar``, ``linksim related`` and ``linksim sim``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from linksim.cli.options import (add_graph, add_list_options, add_memory, add_sampling, checked, command, urls_file,
                                 print_estimate, table)

from linksim.methods import DEFAULT_METHOD, METHODS, sample_methods
from linksim.parameters import SIMILAR_WRITE_BATCH

METHOD_HELP = "; ".join(f"{m.name}: {m.summary}" for m in METHODS.values())


TARGETS_HELP = ("only these pages in the lists, chosen while they are ranked (a list is still --top-k long where "
                "that many pass): other-hosts (pages on another host than the page's), same-host, crawled, "
                "label:NAME (pages with that label) or @FILE (URLs, one a line)")


def _methods() -> tuple[str, ...]:
    return tuple(METHODS)


def _defaults_text() -> str:
    return "; ".join(f"{m.name} " + ", ".join(f"{k}={v}" for k, v in m.defaults.items()) for m in METHODS.values())


def _index_options(parser: argparse.ArgumentParser, build: bool, graphs: bool = True) -> None:
    group = parser.add_argument_group(
        "index",
        ("Where the index lives and how it is built. Unset parameters take the papers' defaults: "
         + _defaults_text() + ". Indexes of other parameters are kept beside each other.") if build else
        "Which stored index answers: the newest that fits these options and the graph as it is now "
        "(checked in one query; nothing is built or streamed).",
    )
    group.add_argument("--index-dir", type=Path, metavar="DIR",
                       help="index store (env LINKSIM_INDEX_DIR; default "
                       "$LINKSIM_HOME/indexes/<server>-<database>-<hash>)")
    if build:
        add_sampling(group, "number of fingerprints N to build, 1..100000",
                     "random seed >= 0 (same seed, same graph: same index)")
        group.add_argument("--radius", type=checked("radius"), help="PageSim: propagation radius r, 1..20 (default 3)")
        group.add_argument("--prune", type=checked("prune"), metavar="SHARE",
                           help="PageSim: leave out the walks that carry less than SHARE of their page's score, "
                           "0..1 (default 0: every walk, the paper's scores); on crawls where every page reaches its "
                           "site within a few links, 1e-4 keeps the index and its queries small (radius <= 3)")
        group.add_argument("--formula", choices=("minmax", "sum"),
                           help="PageSim: minmax = sum of min^2/max (2006 paper, default); sum = sum of min")
    else:
        group.add_argument("--fingerprints", type=checked("n_fingerprints"), metavar="N", dest="n_fingerprints",
                           help="use the first N fingerprints of the stored index, 1..as many as it has (default all)")
    group.add_argument("--crawled-only", action="store_true",
                       help="only crawled pages and the links between them")
    if graphs:
        add_graph(group, detected=not build)


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    methods = _methods()
    index = commands.add_parser(
        "index", parents=[connection], help="build (or check) the similarity index of a method",
        description=(
            "Stream the link graph out of Neo4j and build the similarity index of METHOD "
            f"({METHOD_HELP}). The index is stored with its parameters, seed and a fingerprint of "
            "the graph; it answers only for that graph. An index that already matches is reused "
            "unless --rebuild. After the graph changed (a recrawl), the stored SimRank, PSimRank, "
            "P-PSimRank or extended Jaccard index of the same parameters is updated instead of built "
            "again (the same arrays as a rebuild, bit for bit) unless more than a quarter of the "
            "pages' links changed; the default's (spectral) is updated within the noise of a rebuild "
            "(its walks bit for bit, the changed pages folded into its embedding) until its embedding "
            "has drifted; the log says which it did."
        ),
    )
    index.add_argument("method", metavar="METHOD", nargs="?", choices=methods, default=DEFAULT_METHOD,
                       help=" | ".join(methods) + f" (default {DEFAULT_METHOD})")
    _index_options(index, build=True)
    index.add_argument("--rebuild", action="store_true", help="build even if a matching index exists")
    index.add_argument("--verify", action="store_true",
                       help="check the stored index without building: every array's digest and value "
                       "ranges (exit 6 if it is corrupt); reads no graph")
    add_memory(index)
    index.add_argument("--json", action="store_true", help="print the index description as JSON")
    index.set_defaults(handler=_index)

    similar = command(
        commands, "similar", _similar, parents=[connection],
        help="write every page's related pages as SIMILAR_TO",
    )
    similar.add_argument("method", metavar="METHOD", nargs="?", choices=methods, default=DEFAULT_METHOD,
                         help=" | ".join(methods) + f" (default {DEFAULT_METHOD}, as `related`)")
    add_list_options(
        similar,
        sample_help=f"{', '.join(sample_methods())}: a page whose trees hold over 20,000 members reads S "
        "members of each large range of them (S · c^(t-1) for the pages met at step t), a systematic sample, "
        "and scores its 256 best candidates exactly (PSimRank: and the 128 sharing most first-step buckets); "
        "the summary counts the lists that sampled. Default 16, PSimRank 8 (hundreds of lists a second per core on a "
        "10M-link crawl; docs/explanation/methods.md gives their judged quality); xjaccard: a page whose min-hash buckets hold "
        "over 20,000 members reads S of each bucket over 1,024 and scores its 256 best candidates exactly (default 16); "
        "0: every member read, the exact lists",
        retire_help="the previous run's relationships: delete them before returning (wait, the "
        "default) or in a process of its own after the new run is current (background: "
        "the command returns at once; readers see the new run either way)")
    _index_options(similar, build=True)
    similar.add_argument("--batch-size", type=checked("batch_size"), default=None,
                         help=f"relationships per write transaction (default {SIMILAR_WRITE_BATCH:,}, two "
                         "committed at once) and, when given, per retirement transaction (default 50,000)")
    add_memory(similar)
    similar.add_argument("--source-pages", metavar="SPEC",
                         help="write lists only for these pages (all pages remain candidates): crawled, "
                         "pagerank>=Q (PageRank at or above the quantile Q in [0, 1) of all pages' ranks; "
                         "run `linksim pagerank` first) or @FILE (URLs, one a line)")
    similar.add_argument("--targets", metavar="SPEC",
                         help=TARGETS_HELP + "; the run is current under METHOD@FILTER "
                         "(spectral@other-hosts) beside the unfiltered one, the name the related-pages "
                         "queries take as their method")
    similar.add_argument("--rewrite", action="store_true",
                         help="write every list again; by default a method whose current lists linksim kept "
                         "writes only the lists that changed since (an update: the same lists as a full run; "
                         f"after an update of the {DEFAULT_METHOD} index, only the lists the change can reach are "
                         "made again, the others kept)")
    similar.add_argument("--json", action="store_true", help="print the run summary as JSON")

    related = commands.add_parser(
        "related", parents=[connection], help="the pages most similar to a page, or to several together",
        description="Print the pages most similar to URL, from the stored index of --method. Given "
        "several URLs, the pages most similar to them together: a page's score is the mean of its "
        "scores in the given pages' lists of --pool pages (0 where a list lacks it), the given pages "
        "left out; the column `lists` says how many of those lists hold it. The "
        "index must fit the graph as it is now (one constant-time check, nothing streamed); if there "
        "is none, or the graph changed since it was built, the message names the `linksim index` "
        "command that builds it (exit code 6). Given host names (www.example.org), the hosts most similar "
        "on the host graph (`linksim hosts`, then `linksim similar METHOD --graph hosts` or `linksim index "
        "METHOD --graph hosts`). The default method is the one the evaluation ranks "
        f"best (precision@10 and sibling Gamma on Wikispeedia): {DEFAULT_METHOD}.",
    )
    related.add_argument("url", metavar="URL", nargs="+",
                         help="the page, as stored (normalised URL), or a HOST (www.example.org: the hosts most "
                         "similar to it on the host graph); several: a set")
    related.add_argument("--method", choices=methods, default=DEFAULT_METHOD, help=f"default {DEFAULT_METHOD}")
    related.add_argument("--top-k", type=checked("top_k"), default=10, help="how many (default 10)")
    related.add_argument("--similarity-cutoff", type=checked("similarity_cutoff"), default=0.0,
                         help="only scores above this, in [0, 1)")
    related.add_argument("--pool", type=checked("pool"), default=None,
                         help="for a set: how many of each given page's related pages are combined "
                         "(default 100, or --top-k if more)")
    related.add_argument("--targets", metavar="SPEC", help=TARGETS_HELP + "; for several URLs, other hosts "
                         "than all of theirs (same-host: one of theirs)")
    _index_options(related, build=False)
    related.add_argument("--json", action="store_true", help="print JSON records")
    related.set_defaults(handler=_related)

    sim = command(commands, "sim", _sim, parents=[connection], help="the similarity of two pages (or hosts)")
    sim.add_argument("url", metavar="URL", help="a page, as stored, or a HOST")
    sim.add_argument("other", metavar="URL", help="another page, or HOST")
    sim.add_argument("--method", choices=methods, default=DEFAULT_METHOD, help=f"default {DEFAULT_METHOD}")
    _index_options(sim, build=False)
    sim.add_argument("--json", action="store_true")

    explain = command(commands, "explain", _explain, parents=[connection],
                      help="why two pages are related: the terms of their similarity")
    explain.add_argument("url", metavar="URL", help="the first page, as stored (normalised URL)")
    explain.add_argument("other", metavar="URL", help="the second page")
    explain.add_argument("--method", choices=methods, default=DEFAULT_METHOD, help=f"default {DEFAULT_METHOD}")
    _index_options(explain, build=False, graphs=False)
    explain.add_argument("--json", action="store_true", help="print JSON: the score and its terms")
    explain.add_argument("--browser", action="store_true",
                         help="also print the :param line for Neo4j Browser's saved query \"why two pages are "
                         "related\" (cypher/browser/favorites.cypher), which draws the pages and paths of "
                         "the 5 largest terms")


def _given(args: argparse.Namespace) -> dict:
    """The build parameters given on the command line that the method takes."""
    takes = METHODS[args.method].parameter_names
    return {name: getattr(args, name) for name in takes if getattr(args, name, None) is not None}


def _connect(args: argparse.Namespace):
    from linksim.cli.main import open_facade

    return open_facade(args)


def _index(args: argparse.Namespace) -> int:
    if args.verify:
        return _verify(args)
    with _connect(args) as ls:
        if args.estimate:
            return print_estimate(ls.similar(args.method, args.graph).estimate(
                top_k=None, memory_budget=args.memory_budget, **_given(args)), args.json)
        meta = ls.similar(args.method, args.graph).index(rebuild=args.rebuild, crawled_only=args.crawled_only,
                                                         memory_budget=args.memory_budget, **_given(args)).as_dict()
    if args.json:
        print(json.dumps(meta, indent=2))
        return 0
    state = f"built in {meta['build_seconds']:.1f} s" if meta["built"] else "already up to date"
    parameters = ", ".join(f"{k}={v}" for k, v in meta["parameters"].items())
    nodes = args.graph  # a graph is named by its nodes: pages, hosts
    print(
        f"{args.method} index ({parameters}) of {meta['graph']['pages']:,} {nodes} and "
        f"{meta['graph']['links']:,} links: {state}; {meta['bytes'] / 2**20:,.1f} MiB in {meta['path']}"
    )
    return 0


def _verify(args: argparse.Namespace) -> int:
    import time

    from linksim import store
    from linksim.cli.main import connection_from_args
    from linksim.procedures.api import index_root
    from linksim.procedures.graphs import index_root_of

    connection = connection_from_args(args)
    root = index_root_of(index_root(connection.uri, connection.database, args.index_dir), args.graph)
    began = time.monotonic()
    metas = store.verify(root, args.method)
    seconds = time.monotonic() - began
    if args.json:
        print(json.dumps([dict(meta, verified=True) for meta in metas], indent=2))
    else:
        for meta in metas:
            parameters = ", ".join(f"{k}={v}" for k, v in meta["parameters"].items())
            print(f"{args.method} index ({parameters}) in {meta['path']}: {len(meta['arrays'])} arrays, "
                  f"{meta['bytes'] / 2**20:,.1f} MiB: sound.")
        print(f"Every digest and value range checked in {seconds:.1f} s.")
    return 0


def _similar(args: argparse.Namespace) -> int:
    """Write the top-k related pages of every page by METHOD as (:Page)-[:SIMILAR_TO {score, method,
    rank, run}]->(:Page), building the index first when no matching one is stored (or updating the
    stored one after a recrawl). A rerun replaces the method's relationships: the new run is written
    beside the old one, made current in one transaction, then the old one is deleted, so a reader
    of the current run never sees a mix or nothing. Where linksim kept the current run's lists, a
    rerun writes only the lists that changed (an update, the same lists as a full run; --rewrite
    writes every list). Other methods are untouched. One run of a method at a time: a second one waits (--wait)
    or is refused. With --graph hosts, the same on the host graph (`linksim hosts`): every host's
    related hosts as (:Host)-[:SIMILAR_TO]->(:Host), a run of its own beside the pages'."""

    with _connect(args) as ls:
        if args.estimate:
            return print_estimate(ls.similar(args.method, args.graph).estimate(
                top_k=args.top_k, memory_budget=args.memory_budget, **_given(args)), args.json)
        record = ls.similar(args.method, args.graph).write(
            top_k=args.top_k, similarity_cutoff=args.similarity_cutoff, batch_size=args.batch_size, wait=args.wait,
            rebuild=args.rebuild, crawled_only=args.crawled_only, memory_budget=args.memory_budget,
            retire=args.retire, source_pages=urls_file(args.source_pages, "--source-pages"), sample=args.sample,
            rewrite=args.rewrite, targets=urls_file(args.targets, "--targets"), **_given(args),
        ).record
    if args.json:
        print(json.dumps(record.as_dict(), indent=2))
        return 0
    nodes = args.graph  # a graph is named by its nodes: pages, hosts
    wrote = (f"Wrote {record.written:,} SIMILAR_TO relationships ({record.key or args.method}, top {args.top_k}) for "
             f"{record.pages:,} {nodes}" if record.lists_rewritten is None else
             f"Updated the SIMILAR_TO lists ({record.key or args.method}, top {args.top_k}): {record.lists_rewritten:,} of "
             f"{record.pages:,} {nodes}' lists changed and were written again; the lists hold "
             f"{record.written:,} relationships")
    print(
        f"{wrote} in {record.millis / 1000:.1f} s (stream {record.stream_millis / 1000:.1f} s, "
        f"index and top-k {record.compute_millis / 1000:.1f} s, write {record.write_millis / 1000:.1f} s); "
        f"run {record.id} is now current."
        + (f" Coverage: {record.answered:,} of the {record.linked:,} {nodes} with a link got a list "
           f"({record.coverage:.1%})." if record.coverage is not None else "")
        + (f" {record.lists_sampled:,} lists were read from a sample of large fingerprint trees or buckets (exact "
           "scores; --sample 0 for exact lists)." if record.lists_sampled else "")
        + (f" {record.lists_resumed:,} lists were read back from the run of the same lists cut short before, "
           "not computed again." if record.lists_resumed else "")
    )
    return 0


def _related(args: argparse.Namespace) -> int:
    from linksim.procedures.graphs import graph_of_names

    together = len(args.url) > 1 or args.pool is not None
    with _connect(args) as ls:
        graph = graph_of_names(ls.runner, args.graph, args.url)
        frame = ls.related(args.url if together else args.url[0], method=args.method, top_k=args.top_k,
                           similarity_cutoff=args.similarity_cutoff, n_fingerprints=args.n_fingerprints,
                           crawled_only=args.crawled_only, graph=graph, targets=urls_file(args.targets, "--targets"),
                           **({"pool": args.pool} if together else {}))
    if args.json:
        records = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
        print(json.dumps(records, indent=2))  # exact floats, null for a missing title or rank
        return 0
    nodes = graph  # a graph is named by its nodes: pages, hosts
    given = f"the {len(set(args.url))} {nodes} together" if together else args.url[0]
    if frame.empty:
        print(f"No {nodes[:-1]} is similar to {given} by {args.method} (e.g. no in-links).")
        return 0
    print(f"{nodes.capitalize()} most similar to {given} by {args.method}:")
    print(table(frame))
    sys.stdout.flush()
    return 0


def _explain(args: argparse.Namespace) -> int:
    """Take the similarity of two pages by --method apart into its terms, largest first; they add
    up to the score `linksim sim` prints. SimRank, PSimRank, P-PSimRank: the fingerprints whose
    walks met, the step and the meeting page, and each page's walk to it (each step a link followed
    backwards; P-PSimRank's either way, or staying put), each c^step / N. The default method: the
    link embedding's share, then P-PSimRank's meetings. Extended Jaccard: the fingerprints and
    radii k where the min-hashes of the k-step in-neighbourhoods agree, the shared page and the
    shortest link paths from it to each page. PageSim: the sources whose PageRank both pages
    received, and how much. Reads the stored index (as `related` does) and the links of the pages
    on the way."""
    with _connect(args) as ls:
        frame = ls.explain(args.url, args.other, method=args.method, n_fingerprints=args.n_fingerprints,
                           crawled_only=args.crawled_only)
        score = ls.sim(args.url, args.other, method=args.method, n_fingerprints=args.n_fingerprints,
                       crawled_only=args.crawled_only)
    terms = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    if args.json:
        print(json.dumps({"method": args.method, "url": args.url, "other": args.other, "similarity": score,
                          "terms": terms}, indent=2))
        return 0
    print(f"{args.method} similarity of {args.url} and {args.other}: {score:.6g}, in {len(terms)} terms "
          f"(adding up to {float(frame['share'].sum()):.6g})")
    for term in terms:
        where = f"fingerprint {term['fingerprint']}, step {term['step']}: " if term["fingerprint"] is not None else ""
        print(f"  {term['share']:.6g}  {term['kind']}: {where}{term['page'] or ''}")
        if term["kind"] == "meeting":  # "<-": a link followed backwards; "~": a link either way, or staying
            walk = METHODS[args.method].walk  # spectral's meetings are of P-PSimRank's walks, either way
            step = " <- " if walk is not None and not walk.closed else " ~ "
            print(f"      walk from the first page:  {step.join(term['path_a'])}")
            print(f"      walk from the second page: {step.join(term['path_b'])}")
        elif term["kind"] == "shared in-neighbourhood":
            for label, path in (("first", term["path_a"]), ("second", term["path_b"])):
                print(f"      links to the {label} page: {' -> '.join(path) if path else '(not found within the search limit)'}")
        elif term["kind"] == "source":
            print(f"      received {term['received_a']:.6g} and {term['received_b']:.6g}")
    if args.browser:
        from linksim.loader.urls import stored_key
        from linksim.procedures.explain import browser_paths

        print("\nIn Neo4j Browser, set this and run the saved query \"why two pages are related\":")
        print(f":param paths => {json.dumps(browser_paths(frame, stored_key(args.url), stored_key(args.other)))}")
    sys.stdout.flush()
    return 0


def _sim(args: argparse.Namespace) -> int:
    """Print the similarity of two pages by --method, from its stored index (which must fit the graph
    as it is now, as for `related`)."""

    from linksim.procedures.graphs import graph_of_names

    with _connect(args) as ls:
        value = ls.sim(args.url, args.other, method=args.method, n_fingerprints=args.n_fingerprints,
                       crawled_only=args.crawled_only,
                       graph=graph_of_names(ls.runner, args.graph, [args.url, args.other]))
    if args.json:
        print(json.dumps({"method": args.method, "url": args.url, "other": args.other, "similarity": value}))
    else:
        print(repr(value))  # every digit: scripts compare it
    return 0
