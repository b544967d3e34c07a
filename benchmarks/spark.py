"""The Spark path beside the numpy one, in one run (local mode on this machine):

- cnr-2000 (325,557 pages, 3,216,152 links) and a generated crawl (the project's seeded copying
  model, default 30M links): SimRank fingerprint graphs on Spark ``local[2]`` and with numpy (one
  core), the ratio, and whether the arrays are equal bit for bit;
- time against partitions (cnr-2000);
- the throughput of a walk step: walks moved per second per core (Spark), from which it estimates
  the cluster for N = 100 fingerprints of a 1-billion-page crawl in 4 hours;
- PageRank on Spark beside numpy (float64): time and L1 distance (cnr-2000);
- the all-pages top-10 (PSimRank) of Spark tasks against the single machine's: share of identical lists.

    .venv/bin/pip install '.[spark]' && .venv/bin/python -u benchmarks/spark.py [--links 30M] [--fingerprints 10]

Results are printed and written to ``benchmarks/results/spark.json`` (``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import cnr_edges, results_header  # noqa: E402


def cnr_graph(data: Path):
    from linksim.graph import LinkGraph

    _, edges, n = cnr_edges(data)
    return LinkGraph.from_edges(edges.s.to_numpy(), edges.t.to_numpy(), n)


def generated_graph(links: int, seed: int):
    from linksim.generate import generate_links
    from linksim.graph import LinkGraph

    source = np.empty(links, dtype=np.int32)
    target = np.empty(links, dtype=np.int32)
    pages = 0
    for _, _, pages in generate_links(links, seed=seed, source=source, target=target):
        pass
    return LinkGraph.from_edges(source, target, pages)


def timed(function):
    began = time.perf_counter()
    value = function()
    return value, time.perf_counter() - began


def walks(spark, graph, label: str, fingerprints: int, partitions: int, cores: int) -> dict:
    from linksim import spark as jobs
    from linksim.fingerprints.walks import build_index

    edges = jobs.edges_frame(spark, graph, partitions).localCheckpoint(eager=True)
    stats: dict = {}
    (parent, lab), spark_seconds = timed(lambda: jobs.fingerprint_graphs(
        edges, graph.n, "simrank", fingerprints, 10, 0, partitions, stats=stats))
    index, numpy_seconds = timed(lambda: build_index(graph, "simrank", fingerprints, 10, seed=0))
    equal = bool(np.array_equal(parent, index.parent) and np.array_equal(lab, index.label))
    row = {"graph": label, "pages": graph.n, "links": graph.m, "fingerprints": fingerprints, "partitions": partitions,
           "spark_seconds": round(spark_seconds, 1), "numpy_seconds": round(numpy_seconds, 2),
           "ratio": round(spark_seconds / numpy_seconds, 1), "equal": equal, "walk_steps": stats["walk_steps"],
           "walk_steps_per_core_second": round(stats["walk_steps"] / spark_seconds / cores)}
    print(f"{label}: SimRank N={fingerprints} L=10, {partitions} partitions: Spark {spark_seconds:.1f} s, numpy "
          f"{numpy_seconds:.2f} s (x{row['ratio']}), arrays equal: {equal}; {stats['walk_steps']:,} walk steps, "
          f"{row['walk_steps_per_core_second']:,} per second per core", flush=True)
    return row


def pagerank(spark, graph, partitions: int) -> dict:
    from linksim import spark as jobs
    from linksim.pagerank import pagerank as numpy_pagerank

    edges = jobs.edges_frame(spark, graph, partitions).localCheckpoint(eager=True)
    result, spark_seconds = timed(lambda: jobs.pagerank(edges, graph.n, tol=1e-9, max_iter=200, partitions=partitions))
    reference, numpy_seconds = timed(lambda: numpy_pagerank(graph, tol=1e-9, max_iter=200, dtype=np.float64))
    l1 = float(np.abs(result.ranks - reference.ranks).sum())
    print(f"cnr-2000 PageRank tol 1e-9: Spark {spark_seconds:.1f} s ({result.iterations} iterations), numpy "
          f"{numpy_seconds:.2f} s ({reference.iterations}); L1 distance {l1:.2e}", flush=True)
    return {"graph": "cnr-2000", "spark_seconds": round(spark_seconds, 1), "numpy_seconds": round(numpy_seconds, 2),
            "iterations": [result.iterations, reference.iterations], "l1": l1}


def lists(spark, graph, fingerprints: int, partitions: int) -> dict:
    from linksim import spark as jobs
    from linksim import store
    from linksim.digest import graph_fingerprint
    from linksim.ranking.topk import top_k_all
    from linksim.fingerprints.walks import build_index

    index = build_index(graph, "psimrank", fingerprints, 10, seed=0)
    index.graph_fingerprint = graph_fingerprint(graph)
    with tempfile.TemporaryDirectory() as root:
        path = store.save(index, Path(root), "psimrank", graph.n, graph.m)
        frame, spark_seconds = timed(lambda: jobs.top_k_lists(spark, str(path), graph.n, 10, partitions=partitions)
                                     .toPandas())
    (source, target, score, _), numpy_seconds = timed(lambda: top_k_all(index, 10, show_progress=False))
    mine = frame.sort_values(["source", "rank"]).groupby("source")["target"].apply(tuple)
    theirs = {}
    for s, t in zip(source.tolist(), target.tolist()):
        theirs.setdefault(s, []).append(t)
    same = sum(1 for s, t in theirs.items() if mine.get(s) == tuple(t))
    share = same / max(len(theirs), 1)
    print(f"cnr-2000 PSimRank N={fingerprints} top-10 of every page: Spark tasks {spark_seconds:.1f} s, single machine "
          f"{numpy_seconds:.1f} s; identical lists {same:,} of {len(theirs):,} ({share:.1%})", flush=True)
    return {"graph": "cnr-2000", "spark_seconds": round(spark_seconds, 1), "numpy_seconds": round(numpy_seconds, 1),
            "identical": same, "lists": len(theirs), "share": share}


def cluster_estimate(row: dict, pages: float = 1e9, fingerprints: int = 100, hours: float = 4.0,
                     batches: int = 2) -> dict:
    """Cores for ``fingerprints`` walks of a ``pages``-page crawl in ``hours``, from a measured walk
    row: its walk steps a page and fingerprint (cnr-2000's walks stop or merge within a few steps),
    its rate per core halved for a real cluster (shuffles over the network, stragglers), and the
    in-link table read once more a batch (+25 % for two)."""
    steps_per = row["walk_steps"] / (row["pages"] * row["fingerprints"])
    steps = pages * fingerprints * steps_per
    rate = row["walk_steps_per_core_second"] / 2
    cores = steps / rate / (hours * 3600) * (1 + 0.25 * (batches - 1))
    return {"pages": pages, "fingerprints": fingerprints, "hours": hours, "batches": batches,
            "walkStepsPerPageFingerprint": steps_per, "walkSteps": steps, "clusterRatePerCore": rate,
            "cores": cores, "executorsOf8Cores": int(-(-cores // 8)), "from": row["graph"]}


def main() -> None:
    from linksim.parameters import _integer as parse_count
    from linksim import spark as jobs

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--fingerprints", type=int, default=10, help="N of the partition and list benchmarks (default 10)")
    parser.add_argument("--cnr-fingerprints", type=int, default=100,
                        help="N of the cnr-2000 walk the cluster estimate reads (default 100, the estimate's N)")
    parser.add_argument("--partitions", default="2,4,8", help="partition counts to time on cnr-2000")
    parser.add_argument("--links", type=parse_count, default=30_000_000, help="generated crawl (0: skip)")
    parser.add_argument("--generated-fingerprints", type=int, default=2)
    parser.add_argument("--skip", default="", help="comma list of: cnr, partitions, pagerank, lists, generated")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "spark.json")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    cores = int(args.master[6:-1]) if args.master.startswith("local[") else os.cpu_count()
    spark = jobs.session(args.master, 4, config={"spark.driver.memory": "12g"})
    results: dict = {"master": args.master, "spark": spark.version, "cores": cores}
    graph = cnr_graph(args.data)
    build = __import__("linksim.fingerprints.walks", fromlist=["build_index"]).build_index
    build(graph, "simrank", 1, 2)  # compile the kernels before timing
    if "cnr" not in skip:
        results["cnr"] = walks(spark, graph, "cnr-2000", args.cnr_fingerprints, 4, cores)
    if "partitions" not in skip:
        results["partitions"] = [walks(spark, graph, "cnr-2000", args.fingerprints, int(p), cores)
                                 for p in args.partitions.split(",")]
    if "pagerank" not in skip:
        results["pagerank"] = pagerank(spark, graph, 4)
    if "lists" not in skip:
        results["lists"] = lists(spark, graph, args.fingerprints, 4)
    if "generated" not in skip and args.links:
        big, seconds = timed(lambda: generated_graph(args.links, 0))
        print(f"generated {big.m:,} links, {big.n:,} pages in {seconds:.0f} s", flush=True)
        results["generated"] = walks(spark, big, f"generated {args.links:,}", args.generated_fingerprints, 8, cores)
    if "cnr" in results:
        results["clusterEstimate"] = cluster_estimate(results["cnr"])
        print("cluster estimate: {cores:,.0f} cores ({executorsOf8Cores} executors of 8) for N = {fingerprints} of "
              "{pages:,.0f} pages in {hours:g} h".format(**results["clusterEstimate"]))
    args.json.write_text(json.dumps({**results_header(sys.argv), **results}, indent=1))
    print(f"results written to {args.json}")

if __name__ == "__main__":
    main()
