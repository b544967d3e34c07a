"""The Spark path beside the numpy one, in one run (local mode on this machine):

- cnr-2000 (325,557 pages, 3,216,152 links) and a generated crawl (the project's seeded copying
  model, default 30M links): SimRank fingerprint graphs on Spark ``local[2]`` and with numpy (one
  core), the ratio, and whether the arrays are equal bit for bit;
- time against partitions (cnr-2000);
- the throughput of a walk step: walks moved per second per core (Spark), from which it estimates
  the cluster for N = 100 fingerprints of a 1-billion-page crawl in 4 hours;
- PageRank on Spark beside numpy (float64): time and L1 distance (cnr-2000);
- the all-pages top-10 (PSimRank) of Spark tasks against the single machine's: share of identical lists;
- the default (spectral P-PSimRank) on a generated crawl (default 3M links): its link
  embedding solved on the executors against numpy (time, equal bit for bit), its P-PSimRank walks,
  the nearest pages (in the driver) and every page's list from Spark tasks over the stored index;
  from the measured per-core rates, the cluster for the default's build of a 1-billion-page crawl.

    .venv/bin/pip install '.[spark]' && .venv/bin/python -u benchmarks/spark.py [--links 30M] [--fingerprints 10]
    .venv/bin/python -u benchmarks/spark.py --extract FILES   # spark extract of web archives, and the
                                                              # cluster for Common Crawl's host graph

``--extract FILES`` runs only ``linksim spark extract`` of the files (local mode), checks that the
link table loads as the local load of the files does, and estimates the cluster for Common Crawl's
host graph (262M hosts, 8.1B links, the figures of its release): the extract's links a core-second
halved for a real cluster, and the default's build from the ``default`` row of ``spark.json``
(:func:`spectral_estimate` at those pages and links). Written to ``spark-extract.json``.

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
    from linksim.methods import METHODS, fingerprint_index

    edges = jobs.edges_frame(spark, graph, partitions).localCheckpoint(eager=True)
    stats: dict = {}
    (parent, lab), spark_seconds = timed(lambda: jobs.fingerprint_graphs(
        edges, graph.n, METHODS["simrank"].walk, fingerprints, 10, 0, partitions, stats=stats))
    index, numpy_seconds = timed(lambda: fingerprint_index(graph, "simrank", fingerprints, 10, seed=0))
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
    from linksim.methods import fingerprint_index

    index = fingerprint_index(graph, "psimrank", fingerprints, 10, seed=0)
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


def spectral(spark, links: int, partitions: int, cores: int) -> dict:
    """The default's build on Spark, stage by stage, beside the one-machine build of the same
    crawl (a generated crawl of ``links`` links); per-core rates for
    :func:`spectral_estimate`."""
    from linksim import spark as jobs
    from linksim import store
    from linksim.digest import graph_fingerprint
    from linksim.embedding import embedding_and_share
    from linksim.fingerprints.walks import build_index
    from linksim.lowrank import CHUNK
    from linksim.evaluation.experiments import lists_of
    from linksim.methods import DEFAULT_METHOD, method as registered
    from linksim.spark_lowrank import embedding_and_share as spark_embedding
    from linksim.spectral import RANK, WALK, WALK_METHOD, SpectralIndex, cosine_share, nearest_pages, neighbour_lists

    graph = generated_graph(links, 0)
    p = registered(DEFAULT_METHOD).parameters_for()
    n_fp, length, seed = int(p["n_fingerprints"]), int(p["length"]), int(p["seed"])
    edges = jobs.edges_frame(spark, graph, partitions).localCheckpoint(eager=True)
    row: dict = {"graph": f"generated {links:,}", "pages": graph.n, "links": graph.m, "partitions": partitions,
                 "cores": cores, "fingerprints": n_fp, "length": length}
    (vectors, held), row["embedding_numpy_seconds"] = timed(lambda: embedding_and_share(graph, RANK, seed))
    (chunks, spark_held), row["embedding_spark_seconds"] = timed(lambda: spark_embedding(edges, graph.n, RANK, seed,
                                                                                       partitions=partitions))
    gathered = np.zeros_like(vectors)
    for c, rows in chunks.collect():
        gathered[c * CHUNK : c * CHUNK + len(rows), : rows.shape[1]] = rows
    row["embedding_equal"] = bool(np.array_equal(gathered, vectors) and spark_held == held)
    del gathered, chunks
    stats: dict = {}
    (parent, label), row["walks_spark_seconds"] = timed(lambda: jobs.fingerprint_graphs(
        edges, graph.n, WALK, n_fp, length, seed, partitions, stats=stats))
    walks, row["walks_numpy_seconds"] = timed(lambda: build_index(graph, WALK, n_fp, length, seed,
                                                                  float(p["decay"]), method=WALK_METHOD))
    row["walks_equal"] = bool(np.array_equal(parent, walks.parent) and np.array_equal(label, walks.label))
    row["walk_steps"] = stats["walk_steps"]
    near, row["nearest_seconds"] = timed(lambda: nearest_pages(vectors, seed=seed))
    indptr, indices = neighbour_lists(graph)
    index = SpectralIndex(walks, vectors, indptr, indices, near, share=cosine_share(held))
    index.fingerprints.graph_fingerprint = graph_fingerprint(graph)
    with tempfile.TemporaryDirectory() as root:
        path = store.save(index, Path(root), DEFAULT_METHOD, graph.n, graph.m)
        frame, row["lists_spark_seconds"] = timed(lambda: jobs.top_k_lists(spark, str(path), graph.n, 10,
                                                                            partitions=partitions).toPandas())
        stored = store.open_path(path)
        theirs, row["lists_numpy_seconds"] = timed(lambda: lists_of(stored, 10))
    mine = frame.sort_values(["source", "rank"]).groupby("source")["target"].apply(tuple)
    row["lists"] = len(theirs)
    row["lists_identical"] = sum(1 for s, pairs in theirs.items() if mine.get(s) == tuple(t for t, _ in pairs))
    for key in [k for k in row if k.endswith("_seconds")]:
        row[key] = round(row[key], 1)
    print(f"{row['graph']} ({graph.n:,} pages), the default on Spark ({partitions} partitions, {cores} cores) against "
          f"numpy: embedding {row['embedding_spark_seconds']} s / {row['embedding_numpy_seconds']} s, equal: "
          f"{row['embedding_equal']}; P-PSimRank walks {row['walks_spark_seconds']} s / {row['walks_numpy_seconds']} s, "
          f"equal: {row['walks_equal']}; nearest pages (driver) {row['nearest_seconds']} s; lists "
          f"{row['lists_spark_seconds']} s / {row['lists_numpy_seconds']} s, identical {row['lists_identical']:,} of "
          f"{row['lists']:,}", flush=True)
    return row


def spectral_estimate(row: dict, pages: float = 1e9, hours: float = 4.0, links: float | None = None) -> dict:
    """Cores for the default's build of a ``pages``-page crawl in ``hours``, from a measured
    :func:`spectral` row: each stage's core-seconds a link (embedding: its passes over the links
    are as many at any size; walks) or a page (nearest pages, lists) scaled to the crawl's links
    at the measured links a page, the Spark rates halved for a real cluster (shuffles over the
    network, stragglers) as :func:`cluster_estimate` does. The nearest pages run in the driver
    today: their figure is the cores a distribution of the clusters' search would need, marked
    ``inDriver``."""
    cores = row["cores"]
    links = pages * row["links"] / row["pages"] if links is None else links
    per = {
        "embedding": 2 * row["embedding_spark_seconds"] * cores / row["links"] * links,
        "walks": 2 * row["walks_spark_seconds"] * cores / row["links"] * links,
        "nearest pages": 2 * row["nearest_seconds"] * cores / row["pages"] * pages,
        "lists": 2 * row["lists_spark_seconds"] * cores / row["pages"] * pages,
    }
    core_seconds = sum(per.values())
    need = core_seconds / (hours * 3600)
    return {"pages": pages, "links": links, "hours": hours, "from": row["graph"],
            "coreHours": {stage: round(value / 3600, 1) for stage, value in per.items()},
            "cores": need, "executorsOf8Cores": int(-(-need // 8)), "inDriver": ["nearest pages"]}


#: Common Crawl's host graph as the issue gives it (its latest release): hosts and links.
CC_HOSTS, CC_HOST_LINKS = 262e6, 8.1e9


def extract_run(files: list[Path], master: str, out: Path, hours: float = 4.0) -> None:
    """``spark extract`` of ``files`` timed, its table checked against a local load, and the cluster
    for Common Crawl's host graph estimated from it and from ``spark.json``'s default row."""
    import shutil

    from linksim import spark as jobs
    from linksim.loader import read_files
    from linksim.loader.extract import extract

    cores = int(master[6:-1]) if master.startswith("local[") else os.cpu_count()
    spark = jobs.session(master, 2 * cores)
    scratch = Path(tempfile.mkdtemp(prefix="extract-"))
    began = time.perf_counter()
    described = extract(spark, files, scratch / "table", on_error="skip", partitions=2 * cores)
    seconds = time.perf_counter() - began
    table_bytes = sum(f.stat().st_size for f in (scratch / "table").rglob("*") if f.is_file())
    local, _ = read_files(files, on_error="skip")
    loaded, _ = read_files([scratch / "table"])
    with local, loaded:
        same = (local.urls == loaded.urls and local.titles == loaded.titles and local.anchors == loaded.anchors
                and local.crawled == loaded.crawled and local.complete == loaded.complete
                and all(np.array_equal(a, b) for a, b in zip(local.links().chunks(1 << 30), loaded.links().chunks(1 << 30))))
    shutil.rmtree(scratch)
    rate = described["links_seen"] / seconds / cores
    row = {"files": [str(f) for f in files], "master": master, "cores": cores, "seconds": round(seconds, 1),
           "pages": described["pages"], "links": described["links"], "links_seen": described["links_seen"],
           "table_bytes": table_bytes, "equal_to_local_load": bool(same),
           "links_seen_per_core_second": round(rate), "pages_per_core_second": round(described["pages"] / seconds / cores)}
    print(f"spark extract ({master}) of {len(files)} files: {described['pages']:,} pages, {described['links_seen']:,} "
          f"links read in {seconds:.1f} s ({rate:,.0f} links a core-second); table {table_bytes / 2**20:,.1f} MiB; "
          f"equal to the local load: {same}", flush=True)
    estimate = {"hosts": CC_HOSTS, "links": CC_HOST_LINKS, "hours": hours,
                "extractCores": CC_HOST_LINKS / (rate / 2) / (hours * 3600),
                "extractNote": "cores to read archives that give this many links in the hours, at the measured "
                               "links a core-second halved; a page-level crawl reads more links than its host graph keeps",
                "linkTableBytes": CC_HOST_LINKS * table_bytes / described["links"]}
    spark_results = out.with_name("spark.json")
    if spark_results.is_file():
        measured = json.loads(spark_results.read_text())
        if "default" in measured:
            estimate["default"] = spectral_estimate(measured["default"], pages=CC_HOSTS, hours=hours, links=CC_HOST_LINKS)
            estimate["defaultFrom"] = {"file": spark_results.name, "commit": measured.get("commit")}
    estimate["extractExecutorsOf8Cores"] = int(-(-estimate["extractCores"] // 8))
    print("Common Crawl's host graph ({hosts:,.0f} hosts, {links:,.0f} links) in {hours:g} h: extract "
          "{extractCores:,.0f} cores ({extractExecutorsOf8Cores} executors of 8), link table "
          "{linkTableBytes:,.0f} bytes".format(**estimate), flush=True)
    if "default" in estimate:
        print("  the default's build: {cores:,.0f} cores ({executorsOf8Cores} executors of 8); core-hours by stage "
              "{coreHours}".format(**estimate["default"]), flush=True)
    out.write_text(json.dumps({**results_header(sys.argv), "extract": row, "ccHostGraph": estimate}, indent=1))
    print(f"results written to {out}")


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
    parser.add_argument("--spectral-links", type=parse_count, default=3_000_000,
                        help="the generated crawl of the default's Spark build (default 3M links; 0: skip)")
    parser.add_argument("--skip", default="", help="comma list of: cnr, partitions, pagerank, lists, generated, "
                        "default")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "spark.json")
    parser.add_argument("--extract", nargs="+", type=Path, metavar="FILE",
                        help="only spark extract of these web archives, and the cluster for Common Crawl's host graph")
    args = parser.parse_args()
    if args.extract:
        return extract_run(args.extract, args.master, args.json.with_name("spark-extract.json"))
    skip = set(filter(None, args.skip.split(",")))
    cores = int(args.master[6:-1]) if args.master.startswith("local[") else os.cpu_count()
    spark = jobs.session(args.master, 4, config={"spark.driver.memory": "12g"})
    results: dict = {"master": args.master, "spark": spark.version, "cores": cores}
    graph = cnr_graph(args.data)
    from linksim.methods import fingerprint_index

    fingerprint_index(graph, "simrank", 1, 2)  # compile the kernels before timing
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
    if "default" not in skip and args.spectral_links:
        results["default"] = spectral(spark, args.spectral_links, 4, cores)
        results["defaultEstimate"] = spectral_estimate(results["default"])
        print("the default's cluster estimate: {cores:,.0f} cores ({executorsOf8Cores} executors of 8) for "
              "{pages:,.0f} pages ({links:,.0f} links) in {hours:g} h; core-hours by stage: {coreHours} (nearest "
              "pages in the driver today)".format(**results["defaultEstimate"]))
    if "cnr" in results:
        results["clusterEstimate"] = cluster_estimate(results["cnr"])
        print("cluster estimate: {cores:,.0f} cores ({executorsOf8Cores} executors of 8) for N = {fingerprints} of "
              "{pages:,.0f} pages in {hours:g} h".format(**results["clusterEstimate"]))
    args.json.write_text(json.dumps({**results_header(sys.argv), **results}, indent=1))
    print(f"results written to {args.json}")

if __name__ == "__main__":
    main()
