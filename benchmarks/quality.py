"""Related-pages quality of every linksim method beside the anchors, in one run, from the files.

For Wikispeedia (categories cut to 2 components) and the four WebKB sites together (their five
classes of pages), prints for each linksim method, Monte Carlo at its defaults (seed 0) and its
exact reference where it has one, and for each anchor of `linksim evaluate --anchors`
(:mod:`linksim.evaluation.anchors`: 1-step Jaccard of in-links, out-links and both, co-citation,
Adamic-Adar, the hub-weighted cosine of Marginalia, Dean & Henzinger's Cocitation algorithm):
precision@10, hits@10 (every labelled page, missing places are misses), sibling Γ (mean and
pooled, top 100), the queries with comparable pairs, and the coverage (pages with a link that get
a list). The best anchor of each column is printed last, and where linksim's default stands.

    .venv/bin/python benchmarks/quality.py [--data ../shared/data] [--datasets wikispeedia webkb labelled]
                                           [--labelled-links 3e5] [--no-exact] [--json results.json] [--cost]
                                           [--gds]

``--gds``: also GDS FastRP + exact kNN (`linksim evaluate --anchors fastrp`), each crawl loaded into
a benchmark server with Graph Data Science.

``--cost``: what the default costs beside P-PSimRank and SimRank on cnr-2000 (325,557 pages):
the index build, the process's peak memory after it, and the mean time of a top-10 list over 200
random pages (one core).

Everything is computed in-process; `linksim similar METHOD --top-k 100` followed by
`linksim evaluate --anchors --exact` grades the same lists in Neo4j.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
COLUMNS = ("precision_at_10", "hits_at_10", "gamma", "pooled", "queries", "coverage")


def labelled_crawl(name: str, data: Path, labelled_links: int = 300_000):
    """(LinkGraph keyed by URL, page -> classes) of a labelled crawl, as linksim loads it."""
    from linksim.evaluation import classes_of
    from linksim.graph import LinkGraph
    from linksim.loader.categories import read_categories
    from linksim.loader.load import read_files

    if name == "labelled":
        return generated_labelled(labelled_links, LABELLED_SEED)
    folder = data / name
    if not folder.exists():
        sys.exit(f"{folder} is missing: put the shared data set there or pass --data")
    inputs = [folder] if name == "wikispeedia" else sorted(folder.glob("*.cites"))
    crawl, _ = read_files(inputs)
    links = crawl.links()
    graph = LinkGraph.from_edges(links.source, links.target, len(crawl), crawl.urls)
    depth = 2 if name == "wikispeedia" else 1
    classes = {crawl.index[url]: classes_of(paths, depth) for url, paths in read_categories(folder).items()
               if url in crawl.index}
    return graph, classes


LABELLED_SEED = 1


def generated_labelled(links: int, seed: int):
    """The same for `linksim generate --labels` (written to a scratch folder and read back as the
    loader reads it; its classes are topic.subtopic)."""
    import tempfile

    from linksim.evaluation import classes_of
    from linksim.generate import LabelledModel
    from linksim.graph import LinkGraph
    from linksim.loader.categories import read_categories
    from linksim.loader.load import read_files
    from linksim.loader.synthetic import write_synthetic_crawl

    with tempfile.TemporaryDirectory() as folder:
        written = write_synthetic_crawl(Path(folder) / "labelled.tsv.gz", links, seed, labels=LabelledModel(),
                                        show_progress=False)
        crawl, _ = read_files([written.path])
        categories = read_categories(written.categories)
    links_ = crawl.links()
    graph = LinkGraph.from_edges(links_.source, links_.target, len(crawl), crawl.urls)
    classes = {crawl.index[url]: classes_of(paths, 2) for url, paths in categories.items() if url in crawl.index}
    return graph, classes


def crawl_inputs(name: str, data: Path, labelled_links: int, scratch: Path) -> list[Path]:
    """The files `linksim load` reads for crawl ``name`` (the labelled one written again to
    ``scratch``: the same seed and size, the same file)."""
    from linksim.generate import LabelledModel
    from linksim.loader.synthetic import write_synthetic_crawl

    if name == "labelled":
        return [write_synthetic_crawl(scratch / "labelled.tsv.gz", labelled_links, LABELLED_SEED,
                                      labels=LabelledModel(), show_progress=False).path]
    folder = data / name
    return [folder] if name == "wikispeedia" else sorted(folder.glob("*.cites"))


def gds_row(name: str, data: Path, labelled_links: int, graph, classes, runner, server) -> dict:
    """GDS FastRP + exact kNN (`linksim evaluate --anchors fastrp`) graded as the anchors are: the
    crawl loaded into the benchmark server, the lists mapped back to the pages of ``graph``."""
    import tempfile

    from linksim.procedures.evaluation import gds_anchor_lists
    from linksim.procedures.load import load
    from linksim.procedures.maintenance import clear_database

    with tempfile.TemporaryDirectory() as scratch:
        clear_database(runner)
        load(crawl_inputs(name, data, labelled_links, Path(scratch)), runner, mode="auto", local_server=server,
             show_progress=False)
    began = time.monotonic()
    by_url = gds_anchor_lists(runner, "fastrp", 100)
    page = {key: u for u, key in enumerate(graph.keys)}
    lists = {page[u]: [(page[v], score) for v, score in ranked] for u, ranked in by_url.items()}
    return grade("fastrp", "anchor", lists, classes, linked_pages(graph), time.monotonic() - began)


def linked_pages(graph) -> np.ndarray:
    """The pages with a link other than to themselves: those a list is owed to (the coverage)."""
    return np.flatnonzero(graph.linked())


def grade(name: str, source: str, lists, classes, linked, seconds: float) -> dict:
    from linksim.evaluation import sibling_gamma

    report = sibling_gamma(lists, classes, top=100, linked=linked.tolist())
    return {"name": name, "source": source, **report.as_dict(), "seconds": round(seconds, 1)}


def host_filter(graph, kind: str | None):
    """The target filter ``kind`` (other-hosts, same-host) of the crawl's pages, by their URLs' hosts."""
    if kind is None:
        return None
    from linksim.loader.urls import hosts_of
    from linksim.ranking.targets import Targets, host_numbers

    return Targets.of_hosts(kind, host_numbers(hosts_of(list(graph.keys))), same=kind == "same-host")


def filtered_ranking(lists, targets, top: int):
    """Whole rankings cut to the ``top`` pages that pass ``targets`` (none: as they are)."""
    from linksim.ranking.targets import filtered_lists

    return lists if targets is None else filtered_lists(targets, lists, top)


def rows_for(graph, classes, exact: bool, methods: list[str] | None = None, targets=None) -> list[dict]:
    from linksim.evaluation import top_lists_from_matrix
    from linksim.evaluation.anchors import ANCHORS, anchor_lists
    from linksim.evaluation.experiments import lists_of
    from linksim.methods import DEFAULT_METHOD, METHODS

    linked = linked_pages(graph)
    depth = 100 if targets is None else graph.n  # a filtered reference: its whole ranking, filtered
    rows = []
    order = [DEFAULT_METHOD] + [m for m in METHODS if m != DEFAULT_METHOD]
    order = [m for m in order if methods is None or m in methods]
    for method in order:
        entry = METHODS[method]
        began = time.monotonic()
        lists = lists_of(entry.build_index(graph), 100, targets=targets)
        source = "monte carlo" if entry.samples else "index"
        rows.append(grade(method, source, lists, classes, linked, time.monotonic() - began))
        print(line(rows[-1]), flush=True)
        if exact and entry.exact is not None:
            began = time.monotonic()
            p = entry.defaults
            matrix = entry.exact(graph, float(p["decay"]), int(p["length"]))
            rows.append(grade(method, "exact", filtered_ranking(top_lists_from_matrix(matrix, depth), targets, 100),
                              classes, linked, time.monotonic() - began))
            print(line(rows[-1]), flush=True)
    for anchor in ANCHORS:
        began = time.monotonic()
        rows.append(grade(anchor, "anchor", filtered_ranking(anchor_lists(graph, anchor, depth), targets, 100),
                          classes, linked, time.monotonic() - began))
        print(line(rows[-1]), flush=True)
    return rows


def header() -> str:
    return (f"{'method':<14}{'source':<12}{'P@10':>7}{'hits@10':>8}{'Gamma':>8}{'pooled':>8}{'queries':>9}"
            f"{'coverage':>9}{'s':>7}")


def line(row: dict) -> str:
    def fixed(value, width, digits=3):
        return f"{'-':>{width}}" if value is None or (isinstance(value, float) and math.isnan(value)) \
            else f"{value:>{width}.{digits}f}"

    return (f"{row['name']:<14}{row['source']:<12}{fixed(row['precision_at_10'], 7)}{fixed(row['hits_at_10'], 8)}"
            f"{fixed(row['gamma'], 8)}{fixed(row['pooled'], 8)}{row['queries']:>9,}{fixed(row['coverage'], 9)}"
            f"{row['seconds']:>7.1f}")


def verdict(rows: list[dict]) -> None:
    from linksim.methods import DEFAULT_METHOD

    default = next(r for r in rows if r["name"] == DEFAULT_METHOD and r["source"] in ("monte carlo", "index"))
    anchors = [r for r in rows if r["source"] == "anchor"]
    for column in COLUMNS:
        best = max(anchors, key=lambda r: r[column])
        mark = "above" if default[column] > best[column] else "level" if default[column] == best[column] else "BELOW"
        print(f"  {column:<16} default {DEFAULT_METHOD} {default[column]:.3f}  best anchor {best['name']} "
              f"{best[column]:.3f}  -> {mark}")


def cost(data: Path) -> None:
    import resource

    from _common import cnr_edges
    from linksim.graph import LinkGraph
    from linksim.methods import DEFAULT_METHOD, METHODS

    _, edges, n = cnr_edges(data)
    graph = LinkGraph.from_edges(edges.s.to_numpy(), edges.t.to_numpy(), n)
    pages = np.random.default_rng(0).choice(n, 200, replace=False)
    print(f"\ncnr-2000: {graph.n:,} pages, {graph.m:,} links; a top-10 list over 200 random pages, one core")
    print(f"{'method':<14}{'build s':>9}{'peak GiB':>10}{'ms a list':>11}")
    for method in dict.fromkeys([DEFAULT_METHOD, "ppsimrank", "simrank"]):
        began = time.monotonic()
        index = METHODS[method].build_index(graph)
        built = time.monotonic() - began
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        index.related(int(pages[0]), top_k=10)  # compiled once
        began = time.monotonic()
        for u in pages.tolist():
            index.related(u, top_k=10)
        each = (time.monotonic() - began) / len(pages) * 1000
        print(f"{method:<14}{built:>9.1f}{peak:>10.2f}{each:>11.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--datasets", nargs="+", default=["wikispeedia", "webkb"],
                        choices=["wikispeedia", "webkb", "labelled"],
                        help="labelled: `linksim generate --labels` of --labelled-links links, seed 1")
    parser.add_argument("--labelled-links", type=float, default=300_000)
    parser.add_argument("--methods", nargs="+", help="linksim's methods to grade (default: every one)")
    parser.add_argument("--no-exact", dest="exact", action="store_false",
                        help="skip the exact references (dense matrices, tens of seconds each on Wikispeedia)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--targets", choices=["other-hosts", "same-host"],
                        help="grade lists of only other hosts' pages (or the page's own host's), every method's "
                        "filtered while ranked and every anchor's whole ranking filtered (crawls of URLs: webkb)")
    parser.add_argument("--cost", action="store_true", help="also time the default, P-PSimRank and SimRank on cnr-2000")
    parser.add_argument("--gds", action="store_true",
                        help="also grade GDS FastRP + exact kNN (linksim evaluate's fastrp anchor): each crawl loaded "
                        "into a benchmark server with Graph Data Science (instance `quality`)")
    args = parser.parse_args()
    if args.gds and args.targets:
        parser.error("--gds grades GDS's unfiltered lists: not with --targets")

    results = {}
    runner = server = None
    if args.gds:
        sys.path.insert(0, str(REPO / "benchmarks"))
        from _common import bench_server

        from linksim.procedures import QueryRunner

        server, connection = bench_server("quality", gds=True)
        runner = QueryRunner.connect(connection)
    for name in args.datasets:
        graph, classes = labelled_crawl(name, args.data, int(args.labelled_links))
        print(f"\n{name}: {graph.n:,} pages, {graph.m:,} links, {sum(1 for c in classes.values() if c):,} "
              f"labelled, {len(linked_pages(graph)):,} with a link (top 100 graded)")
        print(header())
        rows = rows_for(graph, classes, args.exact, args.methods, host_filter(graph, args.targets))
        if runner is not None:
            rows.append(gds_row(name, args.data, int(args.labelled_links), graph, classes, runner, server))
            print(line(rows[-1]), flush=True)
        verdict(rows)
        results[name] = rows
    if runner is not None:
        runner.close()
        server.stop()
    if args.cost:
        cost(args.data)
    if args.json:
        sys.path.insert(0, str(REPO / "benchmarks"))
        from _common import results_header

        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**results_header(sys.argv), "datasets": results}, indent=1,
                                        default=lambda v: None))


if __name__ == "__main__":
    main()
