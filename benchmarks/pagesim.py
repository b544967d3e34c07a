"""PageSim benchmark on cnr-2000 (325,557 pages, 3,216,152 links), in one run:

- in-process, for radius r = 1, 2, 3 (decay 0.5): the propagation (feature vectors of all pages),
  their sizes (mean, p99, max), memory, and related(u) top-10 latency over 1,000 random pages;
- anchor: the same propagation for r = 2 by plain scipy walk sums (P + P², which for r <= 2 equals
  the path sums), as the floor a sparse-matrix implementation can reach;
- in Neo4j (local instance "bench"): ``linksim similar pagesim --radius R --top-k 10`` for all
  pages, end to end (stream, PageRank, propagation, top-k, write);
- ``--wikispeedia``: instead, the all-pages top-10 of PageSim r = 3 on Wikispeedia (4,604 pages)
  with the workers linksim uses, beside a dense reference (every pair of feature vectors compared
  with numpy) timed on a sample of pages and extrapolated, whose lists must equal linksim's.

- ``--prune-sweep``: instead, PageSim r = 3 pruned at several shares (``--prune``) on Wikispeedia,
  WebKB and a generated labelled crawl with navigation hubs (every page reaches its site within a
  few links): entries a page, build time, related-pages rate (one core, a seeded sample), the
  sample's top-10 overlap with the exact lists, and P@10, hits@10, sibling Γ and coverage of every
  page's list against the labels, beside the anchors of ``benchmarks/quality.py`` on the same
  crawl; written to ``benchmarks/results/pagesim-prune.json``.

    .venv/bin/python benchmarks/pagesim.py [--radius 3] [--skip-neo4j] [--wikispeedia]
    .venv/bin/python benchmarks/pagesim.py --prune-sweep [--shares 0,1e-5,3e-5,1e-4,3e-4]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


from _common import bench_server, cnr_edges, ensure_cnr, peak_mib  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--radius", type=int, default=3, help="radius written to Neo4j (default 3)")
    parser.add_argument("--skip-neo4j", action="store_true")
    parser.add_argument("--instance", default="bench")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--skip-inprocess", action="store_true", help="only the Neo4j run")
    parser.add_argument("--wikispeedia", action="store_true", help="only the all-pages run on Wikispeedia")
    parser.add_argument("--prune-sweep", action="store_true", help="only the pruning sweep (see above)")
    parser.add_argument("--shares", default="0,1e-5,3e-5,1e-4,3e-4", help="the sweep's --prune shares")
    parser.add_argument("--hub-links", type=float, default=150_000, help="the sweep's labelled crawl (links)")
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks" / "results" / "pagesim-prune.json")
    args = parser.parse_args()
    if args.prune_sweep:
        prune_sweep(args)
        return
    if args.wikispeedia:
        return wikispeedia_all_pages(args.data, args.radius)

    import scipy.sparse as sp

    from linksim.graph import LinkGraph
    from linksim.pagerank import pagerank
    from linksim.pagesim import _transition, build_pagesim_index

    path, edges, n = cnr_edges(args.data)
    graph = LinkGraph.from_edges(edges.s.to_numpy(), edges.t.to_numpy(), n)
    ranks = pagerank(graph, tol=1e-10, max_iter=1000, dtype=np.float64).ranks
    queries = np.random.default_rng(2026).choice(n, size=args.queries, replace=False)
    print(f"cnr-2000: {n:,} pages, {graph.m:,} links without self-loops; decay 0.5\n")
    print(f"{'r':>2}{'propagate s':>13}{'index MiB':>11}{'FV mean':>9}{'FV p99':>9}{'FV max':>9}"
          f"{'related p50 ms':>16}{'p99 ms':>9}{'mean ms':>9}{'peak RSS MiB':>14}")
    for radius in () if args.skip_inprocess else (1, 2, 3):
        began = time.perf_counter()
        index = build_pagesim_index(graph, radius=radius, decay=0.5, ranks=ranks)
        seconds = time.perf_counter() - began
        sizes = index.feature_vector_sizes()
        times = []
        for u in queries:
            began = time.perf_counter()
            index.related(int(u), top_k=10)
            times.append(time.perf_counter() - began)
        ms = np.array(times) * 1000
        print(f"{radius:>2}{seconds:>13.1f}{index.nbytes / 2**20:>11,.0f}{sizes.mean():>9.1f}"
              f"{np.percentile(sizes, 99):>9,.0f}{sizes.max():>9,}{np.percentile(ms, 50):>16.2f}"
              f"{np.percentile(ms, 99):>9.1f}{ms.mean():>9.2f}{peak_mib():>14,.0f}")
        if radius == 2:
            P = _transition(graph)
            began = time.perf_counter()
            walks = sp.diags(ranks) @ (0.5 * P + 0.25 * (P @ P))
            walks = walks.tocsr()
            walks.setdiag(0)
            walks.eliminate_zeros()
            anchor = time.perf_counter() - began
            mine = index.by_source.copy()
            mine.setdiag(0)
            mine.eliminate_zeros()
            print(f"   anchor, plain scipy P + P² (r=2): {anchor:.1f} s; max |difference| "
                  f"{abs(walks - mine).max():.1e}")
        del index
    if args.skip_neo4j:
        return
    run_neo4j(args, path)


def prune_sweep(args) -> None:
    """PageSim r = 3 at each share of ``--shares`` beside the exact one (share 0), on each crawl."""
    import json
    import sys

    from _common import results_header
    from quality import generated_labelled, grade, labelled_crawl, line, linked_pages, rows_for

    from linksim.pagerank import pagerank
    from linksim.pagesim import build_pagesim_index
    from linksim.evaluation.experiments import lists_of

    shares = [float(x) for x in args.shares.split(",")]
    crawls = {"wikispeedia": lambda: labelled_crawl("wikispeedia", args.data),
              "webkb": lambda: labelled_crawl("webkb", args.data),
              f"labelled {int(args.hub_links):,}": lambda: generated_labelled(int(args.hub_links), 3)}
    report: dict = {"radius": args.radius, "shares": shares, "crawls": {}}
    for name, read in crawls.items():
        graph, classes = read()
        ranks = pagerank(graph, tol=1e-10, max_iter=1000, dtype=np.float64).ranks
        sample = np.sort(np.random.default_rng(0).choice(graph.n, min(300, graph.n), replace=False))
        rows, exact = [], None
        for share in shares:
            began = time.perf_counter()
            index = build_pagesim_index(graph, radius=args.radius, ranks=ranks, prune=share)
            built = time.perf_counter() - began
            index.related(int(sample[0]))  # compiled before the timing
            began = time.perf_counter()
            picked = {int(u): [v for v, _ in index.related(int(u))] for u in sample}
            rate = len(sample) / (time.perf_counter() - began)
            exact = picked if exact is None else exact
            overlap = float(np.mean([len(set(picked[u]) & set(exact[u])) / len(exact[u]) for u in exact if exact[u]]))
            began = time.perf_counter()
            lists = lists_of(index, 100)
            row = grade(f"pagesim prune {share:g}", "linksim", lists, classes, linked_pages(graph),
                        time.perf_counter() - began)
            row.update(share=share, entries_per_page=round(index.by_source.nnz / graph.n, 1),
                       build_seconds=round(built, 2), pages_per_second_one_core=round(rate, 1),
                       top10_overlap_with_exact=round(overlap, 4))
            rows.append(row)
            print(f"{name} ({graph.n:,} pages): prune {share:g}: {row['entries_per_page']:,} entries a page, build "
                  f"{built:.1f} s, {rate:,.0f} pages/s, top-10 overlap with the exact lists {overlap:.3f}", flush=True)
            print(line(row), flush=True)
            del index
        anchors = rows_for(graph, classes, exact=False, methods=[])  # the anchors only, in the same run
        report["crawls"][name] = {"pages": graph.n, "links": graph.m, "rows": rows, "anchors": anchors}
    args.json.write_text(json.dumps({**results_header(sys.argv), **report}, indent=1))
    print(f"results written to {args.json}")


def wikispeedia_all_pages(data: Path, radius: int, sample: int = 100) -> None:
    from gamma import wikispeedia

    from linksim.pagesim import _combine, build_pagesim_index
    from linksim.ranking.topk import top_k_all

    graph, _ = wikispeedia(data)
    began = time.perf_counter()
    index = build_pagesim_index(graph, radius=radius, decay=0.5)
    build = time.perf_counter() - began
    rows = np.diff(index.by_source.indptr).astype(float)
    print(f"Wikispeedia: {graph.n:,} pages, {graph.m:,} links; PageSim r = {radius}, decay 0.5, minmax")
    print(f"propagation {build:.1f} s, {index.by_source.nnz:,} feature entries, "
          f"{(rows ** 2).sum():.2e} (source, page, page) triples")
    began = time.perf_counter()
    source, target, score, _ = top_k_all(index, top_k=10, show_progress=False)
    seconds = time.perf_counter() - began
    print(f"linksim all-pages top-10: {seconds:.1f} s (target 120 s), {len(source):,} rows")
    # The anchor: every pair of feature vectors compared densely, for a sample of pages.
    dense = index.by_source.toarray()
    pages = np.random.default_rng(7).choice(graph.n, size=sample, replace=False)
    began = time.perf_counter()
    reference = {}
    for u in pages.tolist():
        scores = _combine(dense[:, [u]], dense, "minmax").sum(axis=0)
        scores[u] = 0.0
        best = np.lexsort((np.arange(graph.n), -np.round(scores, 12)))[:10]
        reference[u] = [int(v) for v in best if scores[v] > 0]
    anchor = (time.perf_counter() - began) / sample * graph.n
    same = sum(reference[u] == target[source == u].tolist() for u in reference)
    print(f"anchor, dense numpy over all pairs: {anchor:.0f} s for all pages (from {sample} pages); "
          f"ratio {anchor / seconds:.1f}x; lists equal on {same}/{sample} sampled pages")
    print(f"peak RSS of this process: {peak_mib():,.0f} MiB")


def run_neo4j(args, path: Path) -> None:
    import tempfile

    from linksim.procedures import QueryRunner
    from linksim.procedures.indexes import obtain_index
    from linksim.procedures.similarity import write_similar
    from linksim.parameters import Query

    server, connection = bench_server(args.instance)
    root = Path(tempfile.mkdtemp(prefix="linksim-bench-indexes-"))
    with QueryRunner.connect(connection) as runner:
        ensure_cnr(runner, server, path)
        began = time.perf_counter()
        handle = obtain_index(runner, "pagesim", root, radius=args.radius, show_progress=False)
        record = write_similar(runner, handle, query=Query(10), show_progress=False)
        total = time.perf_counter() - began
        print(f"\nlinksim similar pagesim --radius {args.radius} --top-k 10 (all {record.pages:,} pages): {total:.0f} s "
              f"(target 900 s): stream {record.stream_millis / 1000:.1f} s, PageRank + propagation "
              f"{handle.build_seconds:.1f} s, top-k {record.compute_millis / 1000 - handle.build_seconds:.1f} s, "
              f"write {record.write_millis / 1000:.1f} s for {record.written:,} relationships")
    print(f"peak RSS of this process: {peak_mib():,.0f} MiB")
    server.stop()


if __name__ == "__main__":
    main()
