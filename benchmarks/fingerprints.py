"""Monte Carlo similarity benchmark on cnr-2000 (325,557 pages, 3,216,152 links), in one run:

- in-process: SimRank and PSimRank index builds (N=100, L=10, one core), extended Jaccard
  (N=100, L=4); index size against 2·N·V·4 bytes; fingerprint tree sizes (mean, max) for
  L = 1..10 as in the 2005 paper's Fig. 5; related(u) top-100 latency over 1,000 random pages;
- anchor on a 400-page sample: networkx ``simrank_similarity`` (exact iteration to convergence,
  c=0.6) against linksim's exact reference and its Monte Carlo index (time, max error);
- in Neo4j (local instance "bench", GDS installed): ``linksim similar simrank`` top-10 for all
  pages, end to end; the Cypher related-pages query latency over 1,000 random pages; and the GDS
  anchor ``gds.nodeSimilarity.write`` top-10 (Jaccard of in-neighbours, the nearest thing GDS
  ships) on the same graph.

    .venv/bin/pip install '.[bench]' && .venv/bin/python benchmarks/fingerprints.py [--skip-neo4j]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # builds are measured on one core
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


from _common import bench_server, cnr_edges, ensure_cnr, peak_mib  # noqa: E402


def latency(function, items) -> tuple[float, float, float]:
    times = []
    for item in items:
        began = time.perf_counter()
        function(item)
        times.append(time.perf_counter() - began)
    ms = np.array(times) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99)), float(ms.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--skip-neo4j", action="store_true", help="in-process measurements only")
    parser.add_argument("--instance", default="bench")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--skip-inprocess", action="store_true", help="skip the in-process builds and queries")
    parser.add_argument("--gds", action="store_true",
                        help="also run the GDS anchor gds.nodeSimilarity.write (slow on cnr-2000's hubs)")
    args = parser.parse_args()

    from linksim.graph import LinkGraph

    path, edges, n = cnr_edges(args.data)
    graph = LinkGraph.from_edges(edges.s.to_numpy(), edges.t.to_numpy(), n)
    print(f"cnr-2000: {graph.n:,} pages, {graph.m:,} links without self-loops\n")
    rng = np.random.default_rng(2026)
    queries = rng.choice(graph.n, size=args.queries, replace=False)
    paper_bytes = 2 * 100 * graph.n * 4

    if not args.skip_inprocess:
        inprocess(graph, queries, paper_bytes)
    anchor(graph)
    if args.skip_neo4j:
        return
    run_neo4j(args, path, n, queries)


def inprocess(graph, queries, paper_bytes) -> None:
    from linksim.fingerprints.index import tree_sizes_by_length
    from linksim.fingerprints.minhash import build_minhash_index
    from linksim.methods import fingerprint_index

    print(f"{'method':<9}{'build s':>9}{'target':>8}{'index MiB':>11}{'2NV4 MiB':>10}{'+layout MiB':>13}"
          f"{'related p50 ms':>16}{'p99 ms':>8}{'mean ms':>9}")
    indexes = {}
    for method, target in (("simrank", 30), ("psimrank", 60)):
        began = time.perf_counter()
        index = fingerprint_index(graph, method, 100, 10, seed=0)
        build = time.perf_counter() - began
        layout = index.layout()
        index.related(int(queries[0]), top_k=100)
        p50, p99, mean = latency(lambda u: index.related(int(u), top_k=100), queries)
        print(f"{method:<9}{build:>9.1f}{target:>8}{index.nbytes / 2**20:>11.0f}{paper_bytes / 2**20:>10.0f}"
              f"{layout.nbytes / 2**20:>13.0f}{p50:>16.2f}{p99:>8.1f}{mean:>9.2f}")
        indexes[method] = index
    began = time.perf_counter()
    minhash = build_minhash_index(graph, 100, 4, seed=0)
    build = time.perf_counter() - began
    minhash.inverted()
    p50, p99, mean = latency(lambda u: minhash.related(int(u), top_k=100), queries[:200])
    print(f"{'xjaccard':<9}{build:>9.1f}{'-':>8}{minhash.nbytes / 2**20:>11.0f}{'-':>10}"
          f"{(minhash.order.nbytes + minhash.indptr.nbytes) / 2**20:>13.0f}{p50:>16.2f}{p99:>8.1f}{mean:>9.2f}"
          "  (200 queries)")
    print("related(u): top-100, u's trees of all 100 fingerprints, in-process, one thread.\n")

    print("Fingerprint tree sizes against the walk length (2005 paper, Fig. 5): mean / max")
    print(f"{'L':>3}" + "".join(f"{m:>22}" for m in indexes))
    by_method = {m: tree_sizes_by_length(index) for m, index in indexes.items()}
    for length in range(1, 11):
        print(f"{length:>3}" + "".join(f"{by_method[m][length][0]:>12.2f} / {by_method[m][length][1]:>7,}" for m in indexes))
    print(f"peak RSS so far: {peak_mib():,.0f} MiB\n")


def anchor(graph) -> None:
    from linksim.fingerprints.exact import simrank_exact
    from linksim.methods import fingerprint_index

    # Anchor: networkx SimRank on a sample (networkx is exact and quadratic: small graphs only).
    import networkx as nx

    keep = np.zeros(graph.n, dtype=bool)
    keep[:400] = True  # cnr-2000 ids follow the crawl: the first pages are one neighbourhood
    sample, _ = graph.subgraph(keep)
    source, target = sample.edges()
    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(sample.n))
    nxg.add_edges_from(zip(source.tolist(), target.tolist()))
    began = time.perf_counter()
    # networkx's SimRank follows in-links (predecessors) like Jeh & Widom; it iterates to a
    # tolerance (it raises rather than stop at a fixed count), so both run to convergence here.
    reference = nx.simrank_similarity(nxg, importance_factor=0.6, max_iterations=200, tolerance=1e-10)
    nx_seconds = time.perf_counter() - began
    nx_matrix = np.array([[reference[u][v] for v in range(sample.n)] for u in range(sample.n)])
    began = time.perf_counter()
    exact = simrank_exact(sample, 0.6, 60)  # 0.6^60 < 1e-13: converged
    exact_seconds = time.perf_counter() - began
    mc = fingerprint_index(sample, "simrank", 10_000, 10, seed=1)
    mc_scores = np.array([[mc.sim(u, v) if u != v else 1.0 for v in range(0, sample.n, 20)] for u in range(0, sample.n, 20)])
    print(f"400-page sample ({sample.m:,} links), SimRank to convergence: networkx simrank_similarity "
          f"{nx_seconds:.2f} s, linksim simrank_exact {exact_seconds:.3f} s ({nx_seconds / exact_seconds:,.0f}x faster); max |networkx - "
          f"linksim exact| = {np.abs(nx_matrix - exact).max():.2e}; linksim Monte Carlo (N=10,000, L=10) max "
          f"error on a 20x20 grid {np.abs(mc_scores - simrank_exact(sample, 0.6, 10)[::20, ::20]).max():.3f}\n")


def run_neo4j(args, path: Path, n: int, queries: np.ndarray) -> None:
    import tempfile

    from linksim import cypher
    from linksim.procedures import QueryRunner
    from linksim.procedures.indexes import obtain_index
    from linksim.procedures.similarity import write_similar
    from linksim.parameters import Query

    server, connection = bench_server(args.instance, gds=True)
    root = Path(tempfile.mkdtemp(prefix="linksim-bench-indexes-"))
    with QueryRunner.connect(connection) as runner:
        ensure_cnr(runner, server, path)
        runner.run("MATCH ()-[s:SIMILAR_TO]->() WITH s LIMIT 1 RETURN count(s)")  # warm the store
        began = time.perf_counter()
        handle = obtain_index(runner, "simrank", root, show_progress=False)
        record = write_similar(runner, handle, query=Query(10), show_progress=False)
        total = time.perf_counter() - began
        print(f"linksim similar simrank --top-k 10 (all {record.pages:,} pages, index built): {total:.0f} s "
              f"(target 300 s): stream {record.stream_millis / 1000:.1f} s, build {handle.build_seconds:.1f} s, "
              f"top-k {(record.compute_millis / 1000 - handle.build_seconds):.1f} s, write "
              f"{record.write_millis / 1000:.1f} s for {record.written:,} relationships, the rest (index save, "
              f"schema, retiring the previous run's relationships) "
              f"{total - (record.stream_millis + record.compute_millis + record.write_millis) / 1000:.1f} s")

        query = cypher.query("related_pages", "related_pages")
        urls = [handle.streamed.urls[int(u)] for u in queries]
        for url in urls[:20]:
            runner.run(query, {"url": url, "method": "simrank", "limit": 10})
        p50, p99, mean = latency(lambda url: runner.run(query, {"url": url, "method": "simrank", "limit": 10}), urls)
        print(f"Cypher related_pages (top 10, driver round trip included) over {len(urls):,} pages: "
              f"p50 {p50:.2f} ms, p99 {p99:.2f} ms (target p50 10 ms)")

        if not args.gds:
            print(f"peak RSS of this process: {peak_mib():,.0f} MiB")
            server.stop()
            return
        runner.run("CALL gds.graph.drop('linksim_bench', false) YIELD graphName RETURN graphName")
        began = time.perf_counter()
        runner.run("CALL gds.graph.project('linksim_bench', 'Page', {LINKS_TO: {orientation: 'REVERSE'}}) "
                   "YIELD nodeCount RETURN nodeCount")
        projected = time.perf_counter() - began
        began = time.perf_counter()
        out = runner.run(
            "CALL gds.nodeSimilarity.write('linksim_bench', {topK: 10, writeRelationshipType: 'GDS_SIMILAR', "
            "writeProperty: 'score'}) YIELD relationshipsWritten, computeMillis, writeMillis RETURN *"
        )[0]
        gds_seconds = time.perf_counter() - began
        print(f"GDS anchor gds.nodeSimilarity.write top 10 (Jaccard of in-neighbours): {projected + gds_seconds:.0f} s "
              f"(project {projected:.1f}, compute {out['computeMillis'] / 1000:.1f}, write "
              f"{out['writeMillis'] / 1000:.1f}) for {out['relationshipsWritten']:,} relationships; "
              f"linksim / GDS = {total / (projected + gds_seconds):.2f}x")
        runner.run("CALL gds.graph.drop('linksim_bench', false) YIELD graphName RETURN graphName")
        while runner.write_returning("MATCH ()-[r:GDS_SIMILAR]->() WITH r LIMIT 100000 DELETE r RETURN count(*)")[0][0][0]:
            pass
    print(f"peak RSS of this process: {peak_mib():,.0f} MiB")
    server.stop()


if __name__ == "__main__":
    main()
