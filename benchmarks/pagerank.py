"""PageRank benchmark on cnr-2000 (325,557 pages, 3,216,152 links), in one run:

- linksim compute (float32 power iteration, default tol 1e-6), and its float64 variant;
- networkx ``pagerank`` (scipy power iteration);
- igraph PRPACK (``Graph.pagerank``, the anchor for compute speed);
- inside Neo4j (a local instance with Graph Data Science 2.13 installed from Maven Central):
  linksim end to end (stream + compute + write), the streaming rate alone, and GDS
  ``gds.graph.project`` + ``gds.pageRank.write`` (with its defaults, and with 100 iterations).

    .venv/bin/pip install '.[bench]' && .venv/bin/python benchmarks/pagerank.py [--skip-neo4j]

Graph construction is excluded from every compute time (each library gets its own graph first).
Every vector is compared with one float64 reference (linksim float64, tol 1e-12) in L1 distance.
Self-loops are dropped for every library (PageRank as the papers define it).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _common import bench_server, cnr_edges, ensure_cnr, peak_mib

REPO = Path(__file__).resolve().parents[1]


def timed(function, repeat: int = 3):
    """Best wall time of ``repeat`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        began = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - began)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--skip-neo4j", action="store_true", help="compute comparisons only")
    parser.add_argument("--instance", default="bench")
    args = parser.parse_args()

    from linksim.graph import LinkGraph
    from linksim.pagerank import pagerank

    path, edges, n = cnr_edges(args.data)
    edges = edges[edges.s != edges.t].drop_duplicates()
    source, target = edges.s.to_numpy(), edges.t.to_numpy()
    print(f"cnr-2000: {n:,} pages, {len(edges):,} links without self-loops; damping 0.85\n")

    graph = LinkGraph.from_edges(source, target, n)
    reference = pagerank(graph, tol=1e-12, max_iter=1000, dtype=np.float64).ranks

    rows = []

    def report(name: str, seconds: float, ranks: np.ndarray, iterations: object, note: str = "") -> None:
        distance = float(np.abs(np.asarray(ranks, dtype=np.float64) - reference).sum())
        rows.append((name, seconds, iterations, distance, note))

    seconds, result = timed(lambda: pagerank(graph))
    report("linksim float32, tol 1e-6", seconds, result.ranks, result.iterations)
    linksim_seconds = seconds
    seconds, result = timed(lambda: pagerank(graph, dtype=np.float64, tol=1e-10, max_iter=1000))
    report("linksim float64, tol 1e-10", seconds, result.ranks, result.iterations)

    import igraph

    ig = igraph.Graph(n=n, edges=np.column_stack([source, target]).tolist(), directed=True)
    seconds, ranks = timed(lambda: ig.pagerank(damping=0.85, implementation="prpack"))
    report("igraph PRPACK", seconds, np.array(ranks), "-", "solver's own precision")
    prpack_seconds = seconds

    import networkx as nx

    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(n))
    nxg.add_edges_from(zip(source.tolist(), target.tolist()))
    seconds, ranks = timed(lambda: nx.pagerank(nxg, alpha=0.85, tol=1e-6 / n), repeat=1)
    report("networkx pagerank (scipy)", seconds, np.array([ranks[i] for i in range(n)]), "-", "tol 1e-6 (L1 over n)")

    print(f"{'computation':<30}{'seconds':>9}{'iterations':>12}{'L1 to float64 ref':>20}  note")
    for name, seconds, iterations, distance, note in rows:
        print(f"{name:<30}{seconds:>9.3f}{str(iterations):>12}{distance:>20.2e}  {note}")
    print(f"\nlinksim compute / igraph PRPACK: {linksim_seconds / prpack_seconds:.2f}x the time "
          "(graph construction excluded for both; best of 3)")
    print(f"peak RSS of this process: {peak_mib():,.0f} MiB")

    if args.skip_neo4j:
        return
    from linksim.procedures import QueryRunner
    from linksim.procedures.pagerank import run_pagerank
    from linksim.procedures.stream import stream_link_graph

    server, connection = bench_server(args.instance, gds=True)
    with QueryRunner.connect(connection) as runner:
        ensure_cnr(runner, server, path)
        streamed = stream_link_graph(runner, show_progress=False)
        print(f"\nstreaming from Neo4j: {streamed.graph.m:,} links in {streamed.seconds:.1f} s = "
              f"{streamed.links_per_second:,.0f} links/s (cold)")
        streamed = stream_link_graph(runner, show_progress=False)
        print(f"streaming from Neo4j: {streamed.graph.m:,} links in {streamed.seconds:.1f} s = "
              f"{streamed.links_per_second:,.0f} links/s (warm)")
        run_pagerank(runner, show_progress=False)  # first run warms the server's query plans
        run = run_pagerank(runner, show_progress=False)
        record = run.record
        # cnr-2000 pages are loaded under their integer ids, so page i of the stream is id int(url).
        ids = np.array([int(url) for url in streamed.urls])
        distance = float(np.abs(run.ranks.astype(np.float64) - reference[ids]).sum())
        print(f"linksim end to end in Neo4j (warm): {record.millis / 1000:.1f} s (stream {record.stream_millis / 1000:.1f}, "
              f"compute {record.compute_millis / 1000:.1f}, write {record.write_millis / 1000:.1f}); "
              f"{record.iterations} iterations; L1 to reference {distance:.2e}")
        gds_version = runner.run("RETURN gds.version() AS v")[0]["v"]
        id_of_url = {url: int(url) for url in streamed.urls}
        for label, config in (
            ("GDS defaults (20 iterations max)", {"writeProperty": "gds_pr"}),
            ("GDS 100 iterations max", {"writeProperty": "gds_pr", "maxIterations": 100}),
        ):
            timings = []
            for _ in range(2):  # the second run is warm
                runner.run("CALL gds.graph.drop('linksim_bench', false) YIELD graphName RETURN graphName")
                began = time.perf_counter()
                runner.run("CALL gds.graph.project('linksim_bench', 'Page', 'LINKS_TO') YIELD nodeCount RETURN nodeCount")
                projected = time.perf_counter() - began
                began = time.perf_counter()
                out = runner.run(
                    "CALL gds.pageRank.write('linksim_bench', $config) "
                    "YIELD ranIterations, didConverge, computeMillis, writeMillis RETURN *",
                    {"config": dict(config, dampingFactor=0.85)},
                )[0]
                timings.append((projected, time.perf_counter() - began, out))
            projected, written, out = timings[-1]
            scores = runner.run("MATCH (p:Page) RETURN p.url AS url, p.gds_pr AS s")
            vector = np.zeros(n)
            for row in scores:
                vector[id_of_url[row["url"]]] = row["s"]
            vector /= vector.sum()
            gds_total = projected + written
            print(f"{label} {gds_version}: {gds_total:.1f} s (project {projected:.1f}, pageRank.write "
                  f"{written:.1f}: compute {out['computeMillis'] / 1000:.1f}, write {out['writeMillis'] / 1000:.1f}); "
                  f"{out['ranIterations']} iterations, converged {out['didConverge']}; "
                  f"L1 to reference {np.abs(vector - reference).sum():.2e} (normalised; the native "
                  f"projection keeps self-loops and GDS does not redistribute dangling rank); "
                  f"linksim end to end / GDS = {record.millis / 1000 / gds_total:.2f}x")
        runner.run("CALL gds.graph.drop('linksim_bench', false) YIELD graphName RETURN graphName")
    server.stop()


if __name__ == "__main__":
    main()
