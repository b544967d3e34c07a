"""Sibling Γ on Wikispeedia, Monte Carlo index against the exact reference, from the files.

For each of SimRank, PSimRank and extended Jaccard (the papers' defaults: c = 0.6, L = 10, L = 4
for extended Jaccard), prints Γ, pooled Γ, queries and comparable pairs of the exact top-100 lists
and of the Monte Carlo index at N = 100 over several seeds. Then, for SimRank, Γ against N, and two
diagnostics of where the Monte Carlo and exact figures part: the Monte Carlo lists re-ranked by
their exact scores, and how many of the exact top-100 pages the Monte Carlo top-100 holds.

    .venv/bin/python benchmarks/gamma.py [--data ../shared/data] [--seeds 5]

Everything is computed in-process (the lists `linksim similar METHOD --top-k 100` writes, and
`linksim evaluate --exact` grades in Neo4j, are the same).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def wikispeedia(data: Path):
    """(LinkGraph keyed by URL, page -> classes) of the Wikispeedia crawl, as linksim loads it."""
    import sys

    from linksim.evaluation import classes_of
    from linksim.graph import LinkGraph
    from linksim.loader.categories import read_categories
    from linksim.loader.load import read_files

    folder = data / "wikispeedia"
    if not folder.exists():
        sys.exit(f"{folder} is missing: put the shared data set there or pass --data")
    crawl, _ = read_files([folder])
    links = crawl.links()
    graph = LinkGraph.from_edges(links.source, links.target, len(crawl), crawl.urls)
    classes = {crawl.index[url]: classes_of(paths) for url, paths in read_categories(folder).items()
               if url in crawl.index}
    return graph, classes


def row(name: str, report) -> str:
    return (f"{name:<34}{report.gamma:>8.4f}{report.pooled:>8.4f}{report.queries:>9,}{report.pairs:>12,}"
            f"{report.precision_at_10:>8.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--seeds", type=int, default=5, help="Monte Carlo seeds at N = 100 (default 5)")
    parser.add_argument("--counts", default="10,30,100,300,1000,3000", help="N values of the SimRank curve")
    args = parser.parse_args()

    from linksim.evaluation import sibling_gamma, top_lists_from_matrix
    from linksim.evaluation.experiments import exact_matrix, lists_of, monte_carlo_index
    from linksim.methods import METHODS

    graph, classes = wikispeedia(args.data)
    print(f"Wikispeedia: {graph.n:,} pages, {graph.m:,} links without self-loops, "
          f"{len(classes):,} pages with a class (category paths cut to two components)\n")
    header = f"{'':<34}{'Γ':>8}{'pooled':>8}{'queries':>9}{'pairs':>12}{'P@10':>8}"
    exact_of = {}
    for method in [name for name, entry in METHODS.items() if entry.samples]:
        params = METHODS[method].defaults
        began = time.perf_counter()
        exact = exact_matrix(graph, method, int(params["length"]), float(params["decay"]))
        exact_of[method] = exact
        reference = sibling_gamma(top_lists_from_matrix(exact, 100), classes)
        print(f"{method} (c = {params['decay']}, L = {params['length']}), top-100 lists; "
              f"exact in {time.perf_counter() - began:.1f} s")
        print(header)
        print(row("exact", reference))
        gammas = []
        for seed in range(args.seeds):
            index = monte_carlo_index(graph, method, seed=seed)
            report = sibling_gamma(lists_of(index, 100), classes)
            gammas.append(report.gamma)
            print(row(f"Monte Carlo N = 100, seed {seed}", report))
        gaps = np.array(gammas) - reference.gamma
        print(f"Γ_MC − Γ_exact over {args.seeds} seeds: mean {gaps.mean():+.4f}, "
              f"from {gaps.min():+.4f} to {gaps.max():+.4f} (target within ±0.02)\n")

    exact = exact_of["simrank"]
    exact_lists = top_lists_from_matrix(exact, 100)
    print("SimRank against N (seed 0): Γ of the Monte Carlo lists; the same lists re-ranked by their exact "
          "scores;\nthe share of each exact top-100 list the Monte Carlo top-100 holds")
    print(f"{'N':>6}{'Γ MC':>9}{'Γ re-ranked':>13}{'pairs MC':>12}{'overlap':>9}")
    for count in (int(c) for c in args.counts.split(",")):
        index = monte_carlo_index(graph, "simrank", n_fingerprints=count)
        lists = lists_of(index, 100)
        report = sibling_gamma(lists, classes)
        reranked = sibling_gamma({u: [(v, exact[u, v]) for v, _ in ranked] for u, ranked in lists.items()}, classes)
        overlap = [len({v for v, _ in lists.get(u, [])} & {v for v, _ in ranked}) / len(ranked)
                   for u, ranked in exact_lists.items() if ranked]
        print(f"{count:>6}{report.gamma:>9.4f}{reranked.gamma:>13.4f}{report.pairs:>12,}{np.mean(overlap):>9.3f}")


if __name__ == "__main__":
    main()
