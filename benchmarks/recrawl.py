"""Recrawls: the time of an update against a full run, on cnr-2000 and a generated crawl.

The crawl is loaded into an empty benchmark instance (the full load). Then, for each share (0.1 %,
1 %, 10 % of the crawled pages, one after the other on the graph as the previous left it), a
recrawl is drawn with the seed from the graph as it is: each recrawled page loses each of its links
with probability 0.3 (one at least) and gains as many, to targets of links drawn at random (pages
in proportion to their in-degree, as the copying model links). It is written as JSON lines (a page
record gives all of its page's links) and loaded with ``--recrawl``. Printed for each share:

- load: the recrawl load against the full load of the crawl;
- PageRank: ``--warm-start`` from the ranks before the recrawl against a cold run on the same
  graph (both in stats mode, then the warm ranks written for the next round): iterations, compute
  time, and the L1 distance between the two rank vectors;
- what the load recorded (pages with links changed, links added and removed, pages deleted).

- index: for each of ``--methods``, ``linksim index``'s update of the stored index (built once
  after the full load, then updated after each recrawl) against a build of the same index from
  nothing on the same graph, both through Neo4j (stream, build or update, store), and whether
  the two stored indexes hold the same arrays.

- similar: for each of ``--similar`` (written once in full after the full load, top 10),
  ``linksim similar``'s update of the current lists (only the lists that changed are written)
  against a full run (``--rewrite``) on the same graph and stored index, both through Neo4j
  (stream, top-k, write); how many lists changed; and whether the two runs' lists are the same.

``--default``: the default's incremental update against a rebuild on the labelled generated crawl,
judged (``_recrawl_default.py``; ``benchmarks/results/recrawl-default-<links>.json``).

    .venv/bin/python benchmarks/recrawl.py --crawl cnr-2000 [--shares 0.001 0.01 0.1]
    .venv/bin/python benchmarks/recrawl.py --links 10M [--similar simrank]
    .venv/bin/python benchmarks/recrawl.py --default --links 10M [--shares 0.001 0.01 0.1] [--chain 10]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bench_server, peak_mib  # noqa: E402


def draw_recrawl(streamed, share: float, rng: np.random.Generator, path: Path) -> int:
    """Write a recrawl of ``share`` of the pages with out-links to ``path``; the pages recrawled."""
    graph = streamed.graph
    urls = streamed.urls
    crawled = np.flatnonzero(graph.out_degree > 0)
    chosen = rng.choice(crawled, size=max(1, int(round(share * len(crawled)))), replace=False)
    _, all_targets = graph.edges()
    with open(path, "w", encoding="utf-8") as handle:
        for page in chosen.tolist():
            targets = graph.out_indices[graph.out_indptr[page] : graph.out_indptr[page + 1]]
            lost = rng.random(len(targets)) < 0.3
            if not lost.any():
                lost[rng.integers(len(targets))] = True
            gained = all_targets[rng.integers(0, len(all_targets), int(lost.sum()))]
            links = [urls[t] for t in np.concatenate([targets[~lost], gained]).tolist()]
            handle.write(json.dumps({"url": urls[page], "links": links}) + "\n")
    return len(chosen)


def index_update(runner, obtain_index, method: str, work: Path, share: float):
    """The stored index of ``method`` brought up to date with the graph (an update, or a build
    where the update does not pay), against a build from nothing into another store: ``(how,
    seconds, build seconds, update or build part, build part, changed pages, same arrays)``."""
    began = time.perf_counter()
    handle = obtain_index(runner, method, work / "indexes", show_progress=False)
    whole = time.perf_counter() - began
    began = time.perf_counter()
    fresh = obtain_index(runner, method, work / f"rebuilt-{share:g}", show_progress=False)
    built_whole = time.perf_counter() - began
    changed = getattr(handle.index, "changed_pages", 0)
    how = "update" if changed else "build"
    same = all(np.array_equal(a, b) for a, b in zip(handle.index.store_arrays().values(),
                                                    fresh.index.store_arrays().values()))
    shutil.rmtree(work / f"rebuilt-{share:g}", ignore_errors=True)
    return how, whole, built_whole, handle.build_seconds, fresh.build_seconds, changed, same


def similar_update(runner, similar, method: str, work: Path):
    """``linksim similar`` after a recrawl (an update of the current lists) against a full run on
    the same graph and stored index: ``(update seconds, full seconds, lists rewritten, pages,
    relationships, same lists, lists changed, lists whose pages changed)``: how many lists differ
    from those before the recrawl (an update writes these, where they are at most half of the
    pages), and how many of them differ in their pages, not only in their scores."""
    from dataclasses import replace

    from linksim.parameters import Query
    from linksim.ranking.lists import changed_lists
    from linksim.store.lists import open_lists

    before, _ = open_lists(work / "indexes", method)
    began = time.perf_counter()
    update = similar(runner, method, work / "indexes", query=Query(10), show_progress=False)
    update_seconds = time.perf_counter() - began
    updated, _ = open_lists(work / "indexes", method)
    began = time.perf_counter()
    full = similar(runner, method, work / "indexes", query=Query(10), show_progress=False, rewrite=True)
    full_seconds = time.perf_counter() - began
    rewritten, _ = open_lists(work / "indexes", method)
    same = all(np.array_equal(getattr(updated, name), getattr(rewritten, name))
               for name in ("sources", "indptr", "targets", "scores")) and update.written == full.written
    codes = np.union1d(before.sources, updated.sources)
    changed, _ = changed_lists(before, updated, codes)
    unscored = [replace(lists, scores=np.zeros_like(lists.scores)) for lists in (before, updated)]
    moved, _ = changed_lists(*unscored, codes)
    return (update_seconds, full_seconds, update.lists_rewritten, update.pages, full.written, same, len(changed),
            len(moved))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--crawl", default="cnr-2000", help="a crawl of --data (default cnr-2000)")
    source.add_argument("--links", help="a generated crawl of this many links (seed 1), e.g. 10M")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--shares", type=float, nargs="+", default=[0.001, 0.01, 0.1])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--instance", default="bench-recrawl")
    parser.add_argument("--methods", nargs="*", default=["psimrank", "simrank"],
                        help="indexes updated after each recrawl (default psimrank simrank)")
    parser.add_argument("--similar", nargs="*", default=["simrank"],
                        help="methods whose SIMILAR_TO lists are updated after each recrawl (default simrank)")
    parser.add_argument("--default", action="store_true",
                        help="the default's update against a rebuild, judged, on the labelled generated crawl of --links")
    parser.add_argument("--chain", type=int, default=10, help="--default: recrawls of 1 %% in a row (0: none)")
    parser.add_argument("--judge-pages", type=int, default=2000, help="--default: pages judged")
    parser.add_argument("--label-pages", type=int, default=2000, help="--default: labelled pages for P@10")
    parser.add_argument("--judge-fingerprints", type=int, default=400, help="--default: the judge's fingerprints")
    parser.add_argument("--judge-steps", action="store_true",
                        help="--default: judge the chain's lists after every step, not only at its end")
    parser.add_argument("--fold-limit", type=float,
                        help="--default: the share of pages folded in since the build beyond which the index is "
                             "built again, in place of linksim's (a calibration: results in recrawl-default-LINKS-"
                             "fold-limit-X.json)")
    args = parser.parse_args()
    if args.default:
        if not args.links:
            parser.error("--default needs --links (the labelled generated crawl's size)")
        import _recrawl_default
        from _common import results_header

        _recrawl_default.run(args, lambda: results_header(sys.argv))
        return

    from linksim.procedures import QueryRunner
    from linksim.procedures.indexes import obtain_index
    from linksim.procedures.load import load
    from linksim.procedures.maintenance import clear_database
    from linksim.procedures.pagerank import run_pagerank
    from linksim.procedures.similarity import similar
    from linksim.parameters import Query
    from linksim.procedures.stream import stream_link_graph

    from linksim.fingerprints.update import warm_up

    warm_up()  # the update kernels compiled (or loaded from numba's cache) before anything is timed
    work = Path(tempfile.mkdtemp(prefix="linksim-bench-recrawl-"))
    if args.links:
        from linksim.loader.synthetic import write_synthetic_crawl
        from linksim.parameters import PARAMETERS

        crawl = work / f"crawl-{args.links}.tsv.gz"
        write_synthetic_crawl(crawl, PARAMETERS["links"].check(args.links), seed=1, show_progress=False)
        label = f"generated {args.links}-link crawl"
    else:
        crawl = args.data / args.crawl / f"{args.crawl}.edges.tsv.gz"
        if not crawl.exists():
            sys.exit(f"{crawl} is missing: put the shared data set there or pass --data")
        label = args.crawl
    server, connection = bench_server(args.instance)
    rng = np.random.default_rng(args.seed)
    rows = []
    try:
        with QueryRunner.connect(connection) as runner:
            clear_database(runner)
            began = time.perf_counter()
            full = load([crawl], runner, mode="auto", local_server=server, show_progress=False)
            full_load = time.perf_counter() - began
            print(f"{label}: full load ({full.mode}) {full_load:.1f} s, {full.pages:,} pages, {full.links:,} links",
                  flush=True)
            run_pagerank(runner, "write", show_progress=False)
            for method in args.methods:
                began = time.perf_counter()
                obtain_index(runner, method, work / "indexes", show_progress=False)
                print(f"  {method} index built in {time.perf_counter() - began:.1f} s", flush=True)
            for method in args.similar:
                began = time.perf_counter()
                first = similar(runner, method, work / "indexes", query=Query(10), show_progress=False)
                print(f"  {method} SIMILAR_TO written in {time.perf_counter() - began:.1f} s "
                      f"({first.written:,} relationships)", flush=True)
            for share in args.shares:
                streamed = stream_link_graph(runner, self_loops=True, show_progress=False)
                path = work / f"recrawl-{share:g}.jsonl"
                recrawled = draw_recrawl(streamed, share, rng, path)
                began = time.perf_counter()
                summary = load([path], runner, show_progress=False, recrawl=True)
                update_load = time.perf_counter() - began
                began = time.perf_counter()
                warm = run_pagerank(runner, "stats", warm_start=True, show_progress=False)
                warm_seconds = time.perf_counter() - began
                began = time.perf_counter()
                cold = run_pagerank(runner, "stats", show_progress=False)
                cold_seconds = time.perf_counter() - began
                distance = float(np.abs(warm.ranks.astype(np.float64) - cold.ranks).sum())
                run_pagerank(runner, "write", warm_start=True, show_progress=False)
                indexes = {method: index_update(runner, obtain_index, method, work, share) for method in args.methods}
                lists = {method: similar_update(runner, similar, method, work) for method in args.similar}
                rows.append((share, recrawled, summary, update_load, warm, warm_seconds, cold, cold_seconds, distance,
                             indexes, lists))
                print(f"  {share:.1%}: {recrawled:,} pages recrawled ({summary.changed_pages:,} changed, "
                      f"+{summary.links_created:,} / -{summary.links_removed:,} links, "
                      f"{summary.pages_deleted:,} pages deleted, {summary.pages_created:,} created) in "
                      f"{update_load:.1f} s; PageRank warm {warm.record.iterations} iterations "
                      f"({warm.record.compute_millis / 1000:.2f} s), cold {cold.record.iterations} "
                      f"({cold.record.compute_millis / 1000:.2f} s), L1 between them {distance:.2e}", flush=True)
    finally:
        server.stop()
    print(f"\n{label}: update against full run (time ratio; PageRank: iterations and compute time)")
    print(f"{'recrawled':>10} {'pages':>8} {'load':>18} {'PageRank iterations':>20} {'PageRank compute':>18}")
    for share, recrawled, summary, update_load, warm, warm_s, cold, cold_s, distance, *_ in rows:
        print(f"{share:>10.1%} {recrawled:>8,} {update_load:>6.1f}/{full_load:<6.1f} s {update_load / full_load:>4.2f} "
              f"{warm.record.iterations:>8}/{cold.record.iterations:<3} {warm.record.iterations / cold.record.iterations:>6.2f} "
              f"{warm.record.compute_millis / max(cold.record.compute_millis, 1):>18.2f}")
    if args.similar:
        print("\nsimilar: update of the current lists against a full run, each through Neo4j (stream + top-k + write)")
        print(f"{'recrawled':>10} {'method':>10} {'update/full':>18} {'ratio':>6} {'written':>8} "
              f"{'lists changed':>16} {'their pages':>14} {'relationships':>14} {'same lists':>11}")
        for share, *_, lists in rows:
            for method, (update_s, full_s, rewritten, pages, written, same, changed, moved) in lists.items():
                print(f"{share:>10.1%} {method:>10} {update_s:>7.1f}/{full_s:<7.1f} s {update_s / full_s:>6.2f} "
                      f"{'all' if rewritten is None else f'{rewritten:,}':>8} {changed:>8,} ({changed / pages:>4.0%}) "
                      f"{moved:>7,} ({moved / pages:>3.0%}) {written:>14,} {'yes' if same else 'NO':>11}")
        print("(written: the lists the update wrote, all where more than half changed; lists changed: those that "
              "differ from the lists before the recrawl; their pages: of those, the lists whose pages differ, not "
              "only their scores)")
    print("\nindex: update against a build from nothing, each through Neo4j (stream + update or build + store)")
    print(f"{'recrawled':>10} {'method':>10} {'how':>8} {'whole run':>18} {'ratio':>6} {'update/build':>16} "
          f"{'changed pages':>14} {'same arrays':>12}")
    for share, *_, indexes, _ in rows:
        for method, (how, whole, built_whole, part, built_part, changed, same) in indexes.items():
            print(f"{share:>10.1%} {method:>10} {how:>8} {whole:>7.1f}/{built_whole:<7.1f} s "
                  f"{whole / built_whole:>6.2f} {part:>6.1f}/{built_part:<6.1f} s {changed:>14,} "
                  f"{'yes' if same else 'NO':>12}")
    print(f"peak RSS of this process: {peak_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
