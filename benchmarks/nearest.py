"""Each page's nearest pages of the default's link embedding from an HNSW graph (faiss), built at
several efConstruction values and searched at several efSearch values, beside the exact nearest
pages of a seeded sample (a scan of every page): build time, search time a page, recall at 10.

The embedding is linksim's (``linksim.spectral.embedding_and_share``) of the generated crawl of
``--links`` links (seed 1); the graph is built on one thread in blocks, as ``linksim.spectral``
builds it, and searched on every core. Results go to ``benchmarks/results/nearest.json``.

    .venv/bin/python benchmarks/nearest.py [--links 3M] [--build 128 40] [--search 128 64 32]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import generated_graph, results_header  # noqa: E402


def main() -> None:
    from linksim import spectral

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--links", default="3M")
    parser.add_argument("--build", type=int, nargs="+", default=[128, 40], help="efConstruction values")
    parser.add_argument("--search", type=int, nargs="+", default=[128, 64, 32], help="efSearch values")
    parser.add_argument("--sample", type=int, default=1000, help="pages whose exact nearest pages are scanned")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "nearest.json")
    args = parser.parse_args()

    graph = generated_graph(args.links)
    began = time.perf_counter()
    embedding, _ = spectral.embedding_and_share(graph, spectral.RANK, 0)
    print(f"{graph.n:,} pages, {graph.m:,} links; embedding in {time.perf_counter() - began:.0f} s", flush=True)
    pages = np.flatnonzero(embedding.any(axis=1))
    sample = np.random.default_rng(0).choice(pages, min(args.sample, len(pages)), replace=False)
    exact = [set(spectral.nearest(embedding, int(u)).tolist()) for u in sample]
    rows = []
    for build in args.build:
        spectral.HNSW_BUILD = build
        began = time.perf_counter()
        graph_ = spectral.HnswGraph(embedding)  # one thread, as the index builds it; searches on every core
        seconds = time.perf_counter() - began
        for search in args.search:
            graph_.graph.hnsw.efSearch = search
            probe = pages[: min(len(pages), 32_768)]
            began = time.perf_counter()
            graph_.search(embedding[probe], 2 * spectral.NEAREST + 1)
            per_page = (time.perf_counter() - began) / len(probe)
            found = graph_.search(embedding[sample], 2 * spectral.NEAREST + 1)
            recall = float(np.mean([len(set(spectral._nearest_of_found(embedding, int(u), found[row], spectral.NEAREST)
                                            .tolist()) & exact[row]) / max(len(exact[row]), 1)
                                    for row, u in enumerate(sample)]))
            row = {"efConstruction": build, "efSearch": search, "buildSeconds": round(seconds, 1),
                   "searchMicroseconds": round(per_page * 1e6, 1), "recallAt10": recall}
            rows.append(row)
            print(row, flush=True)
        del graph_
    args.json.write_text(json.dumps({**results_header(sys.argv), "links": args.links, "pages": int(graph.n),
                                     "directed": int(len(pages)), "sample": int(len(sample)),
                                     "links_per_vector": spectral.HNSW_LINKS, "rows": rows}, indent=1))
    print(f"results written to {args.json}")


if __name__ == "__main__":
    main()
