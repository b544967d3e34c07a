"""How far a PageRank warm start can go after a recrawl: cold, warm, and warm after pushing the
residual out from the pages that changed first (Gauss-Southwell), in memory.

A generated crawl (seed 1) is recrawled: ``--share`` of the pages with out-links each lose 30 % of
their links and gain as many (targets drawn from the links' targets, as the copying model
links). Printed: the iterations and compute time of a cold run and a warm start on the new graph
(float64, tolerance 1e-6), the warm start's first residual r0 beside the L1 distance between the
old and new ranks, the graph's rate of convergence, the lower bound log(tol / r0) / log(rate) that
rate puts on any warm start, and, for push thresholds theta, the pushes, the links they touched
(in units of one iteration's links), their time and the iterations still needed after them.

    .venv/bin/python benchmarks/warm_start.py [--links 1M] [--share 0.01]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import generated_graph, recrawled_graph  # noqa: E402


@numba.njit(cache=True)
def push_residual(out_indptr, out_indices, ranks, residual, damping, theta):
    """Gauss-Southwell: while a page holds more than ``theta`` of residual, add it to its rank and
    pass ``damping`` of it on to its out-links (a page without out-links: to every page, summed
    in the returned share). Returns (that share, pushes, links touched)."""
    n = len(ranks)
    queue = np.empty(n, np.int64)
    queued = np.zeros(n, np.bool_)
    head = tail = size = 0
    for u in range(n):
        if abs(residual[u]) > theta:
            queue[tail] = u
            tail = (tail + 1) % n
            size += 1
            queued[u] = True
    spread = 0.0
    pushes = links = 0
    while size > 0:
        u = queue[head]
        head = (head + 1) % n
        size -= 1
        queued[u] = False
        value = residual[u]
        if abs(value) <= theta:
            continue
        ranks[u] += value
        residual[u] = 0.0
        pushes += 1
        first, last = out_indptr[u], out_indptr[u + 1]
        if last == first:
            spread += damping * value
            continue
        share = damping * value / (last - first)
        links += last - first
        for k in range(first, last):
            v = out_indices[k]
            residual[v] += share
            if not queued[v] and abs(residual[v]) > theta:
                queue[tail] = v
                tail = (tail + 1) % n
                size += 1
                queued[v] = True
    return spread, pushes, links


def main() -> None:
    from linksim.pagerank import pagerank

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", default="1M")
    parser.add_argument("--share", type=float, default=0.01)
    args = parser.parse_args()
    graph = generated_graph(args.links)
    before = pagerank(graph, dtype=np.float64).ranks
    after = recrawled_graph(graph, args.share, np.random.default_rng(1))
    assert after.n == graph.n
    began = time.perf_counter()
    cold = pagerank(after, dtype=np.float64)
    cold_s = time.perf_counter() - began
    began = time.perf_counter()
    warm = pagerank(after, start=before, dtype=np.float64)
    warm_s = time.perf_counter() - began
    residuals = [r for _, r in cold.residuals]
    rate = (residuals[-1] / residuals[2]) ** (1 / (len(residuals) - 3))
    r0 = warm.residuals[0][1]
    print(f"generated {args.links}-link crawl: {graph.n:,} pages, {graph.m:,} links; {args.share:.1%} recrawled")
    print(f"cold: {cold.iterations} iterations, {cold_s:.3f} s; warm: {warm.iterations} iterations, {warm_s:.3f} s")
    print(f"warm start's first residual r0 {r0:.2e}; L1 between the old and new ranks "
          f"{np.abs(before - cold.ranks).sum():.2e}; rate of convergence {rate:.2f} an iteration")
    print(f"any warm start from the old ranks: at least log(1e-6 / r0) / log(rate) = "
          f"{math.log(1e-6 / r0) / math.log(rate):.1f} iterations (half of cold: {cold.iterations / 2:.1f})")
    one = pagerank(after, start=before, max_iter=1, tol=1e-300, dtype=np.float64)
    start = before / before.sum()
    residual = one.ranks - start
    push_residual(after.out_indptr, after.out_indices, start.copy(), residual.copy(), 0.85, 1.0)  # compiled
    print(f"{'theta':>8} {'pushes':>10} {'links touched':>20} {'push s':>8} {'then iterations':>16} {'s':>7} "
          f"{'total s':>8} {'L1 to cold':>11}")
    for theta in (1e-8, 1e-9, 1e-10, 1e-11):
        ranks, left = start.copy(), residual.copy()
        began = time.perf_counter()
        spread, pushes, touched = push_residual(after.out_indptr, after.out_indices, ranks, left, 0.85, theta)
        push_s = time.perf_counter() - began
        ranks += spread / graph.n
        began = time.perf_counter()
        then = pagerank(after, start=ranks / ranks.sum(), dtype=np.float64)
        then_s = time.perf_counter() - began
        print(f"{theta:>8.0e} {pushes:>10,} {touched:>12,} ({touched / after.m:>4.1f} m) {push_s:>8.3f} "
              f"{then.iterations:>16} {then_s:>7.3f} {push_s + then_s:>8.3f} "
              f"{np.abs(then.ranks - cold.ranks).sum():>11.1e}")


if __name__ == "__main__":
    main()
