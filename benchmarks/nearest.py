"""Every page's nearest pages of the default's link embedding, as the index finds them (clusters of
the embedding, ``linksim.spectral.nearest_pages``) and from an HNSW graph (faiss, the anchor),
beside the exact nearest pages of a seeded sample (a scan of every page): seconds for all pages
and recall at 10.

The embedding is linksim's (``linksim.spectral.embedding_and_share``) of the labelled generated
crawl of ``--links`` links (seed 1, as ``benchmarks/scale.py`` makes it). The HNSW graph is built
on one thread in blocks (so that the same embedding gives the same graph) and searched on every
core; both rank what they find by exact cosine the same way. Results go to
``benchmarks/results/nearest.json``.

    .venv/bin/python benchmarks/nearest.py [--links 10M] [--build 40] [--search 128]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import results_header  # noqa: E402

HNSW_LINKS = 32  #: faiss's M for the anchor
BLOCK = 65_536  #: pages searched in the HNSW graph at once


def _labelled_graph(links: str):
    from linksim.generate import generate_labelled
    from linksim.graph import LinkGraph
    from linksim.parameters import PARAMETERS

    crawl = generate_labelled(PARAMETERS["links"].check(links), seed=1)
    return LinkGraph.from_edges(crawl.source, crawl.target)


def _hnsw_nearest(embedding: np.ndarray, build: int, search: int) -> tuple[np.ndarray, float, float]:
    """(the table of nearest pages from an HNSW graph, build seconds, search seconds)."""
    import faiss

    from linksim import spectral
    from linksim.ranking.combined import nearest_rows

    pages = np.flatnonzero(embedding.any(axis=1))
    began = time.perf_counter()
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    graph = faiss.IndexHNSWFlat(embedding.shape[1], HNSW_LINKS, faiss.METRIC_L2)
    graph.hnsw.efConstruction = build
    for start in range(0, len(pages), BLOCK):
        graph.add(np.ascontiguousarray(embedding[pages[start : start + BLOCK]]))
    faiss.omp_set_num_threads(threads)
    built = time.perf_counter() - began
    graph.hnsw.efSearch = search
    table = np.full((len(embedding), spectral.NEAREST), -1, dtype=np.int32)
    began = time.perf_counter()
    for start in range(0, len(pages), BLOCK):
        block = pages[start : start + BLOCK]
        _, found = graph.search(np.ascontiguousarray(embedding[block]), 2 * spectral.NEAREST + 1)
        found = np.where(found >= 0, pages[np.maximum(found, 0)], -1)
        nearest_rows(embedding, block, found, spectral.NEAREST, spectral.NEAR_COSINE, table)
    return table, built, time.perf_counter() - began


def main() -> None:
    from linksim import spectral

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--links", default="10M")
    parser.add_argument("--build", type=int, nargs="*", default=[40], help="the anchor's efConstruction values")
    parser.add_argument("--search", type=int, nargs="*", default=[128], help="the anchor's efSearch values")
    parser.add_argument("--sample", type=int, default=1000, help="pages whose exact nearest pages are scanned")
    parser.add_argument("--one-level", action="store_true",
                        help="also the clusters of one k-means level at any size (sqrt(PROBES n) clusters)")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "nearest.json")
    args = parser.parse_args()

    graph = _labelled_graph(args.links)
    began = time.perf_counter()
    embedding, _ = spectral.embedding_and_share(graph, spectral.RANK, 0)
    print(f"{graph.n:,} pages, {graph.m:,} links; embedding in {time.perf_counter() - began:.0f} s", flush=True)
    pages = np.flatnonzero(embedding.any(axis=1))
    sample = np.random.default_rng(0).choice(pages, min(args.sample, len(pages)), replace=False)
    exact = [set(spectral.nearest(embedding, int(u)).tolist()) for u in sample]

    def recall(table: np.ndarray) -> float:
        return float(np.mean([len(set(table[u][table[u] >= 0].tolist()) & exact[row]) / max(len(exact[row]), 1)
                              for row, u in enumerate(sample.tolist())]))

    rows = []
    began = time.perf_counter()
    table = spectral.nearest_pages(embedding, seed=0)
    row = {"method": "linksim clusters", "probes": spectral.PROBES,
           "clusters": spectral.cluster_count(len(pages)), "seconds": round(time.perf_counter() - began, 1),
           "recallAt10": recall(table)}
    rows.append(row)
    print(row, flush=True)
    if args.one_level:
        flat = int(round(np.sqrt(spectral.PROBES * len(pages))))
        saved = spectral.CLUSTER_PAGES, spectral.FLAT_CLUSTERS
        spectral.CLUSTER_PAGES, spectral.FLAT_CLUSTERS = len(pages), max(flat, 1)  # sqrt(PROBES n), one level
        began = time.perf_counter()
        table = spectral.nearest_pages(embedding, seed=0)
        spectral.CLUSTER_PAGES, spectral.FLAT_CLUSTERS = saved
        row = {"method": "linksim clusters, one level", "probes": spectral.PROBES, "clusters": flat,
               "seconds": round(time.perf_counter() - began, 1), "recallAt10": recall(table)}
        rows.append(row)
        print(row, flush=True)
    for build in args.build:
        for search in args.search:
            table, built, searched = _hnsw_nearest(embedding, build, search)
            row = {"method": "faiss HNSW", "efConstruction": build, "efSearch": search,
                   "buildSeconds": round(built, 1), "searchSeconds": round(searched, 1),
                   "seconds": round(built + searched, 1), "recallAt10": recall(table)}
            rows.append(row)
            print(row, flush=True)
    anchor = min((r for r in rows if r["method"] == "faiss HNSW"), key=lambda r: r["seconds"], default=None)
    if anchor:
        print(f"linksim's clusters take {rows[0]['seconds'] / anchor['seconds']:.2f}x the time of the fastest HNSW "
              f"anchor, recall {rows[0]['recallAt10']:.3f} against {anchor['recallAt10']:.3f}")
    args.json.write_text(json.dumps({**results_header(sys.argv), "links": args.links, "pages": int(graph.n),
                                     "directed": int(len(pages)), "sample": int(len(sample)),
                                     "links_per_vector": HNSW_LINKS, "rows": rows}, indent=1))
    print(f"results written to {args.json}")


if __name__ == "__main__":
    main()
