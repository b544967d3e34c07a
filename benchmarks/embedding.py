"""The default's link embedding at a size: linksim's randomized subspace iteration against scipy's
ARPACK (``svds`` of the sparse features, what linksim used before), the same graph and rank, in
one run.

Each solver runs in a child process of its own on the generated crawl (seed 1) of each size; the
script prints and records the wall time, the peak PSS of the child (the graph, read in the child,
counted in both), the ratios, and how far the two embeddings' cosines are apart on 20,000 random
pairs of pages. A size whose ARPACK would need more memory than ``--arpack-limit`` (its 2k + 1
Lanczos vectors of n doubles plus the features, arithmetic) is run by linksim alone.

    .venv/bin/python benchmarks/embedding.py [--sizes 1M,10M] [--rank 100] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Peak, generated_graph, results_header  # noqa: E402


def _solve(solver: str, links: str, rank: int, out: str, queue) -> None:
    from linksim.allocator import return_freed_memory

    return_freed_memory()
    graph = generated_graph(links)
    began = time.monotonic()
    if solver == "arpack":
        from scipy.sparse.linalg import svds

        from linksim.embedding import FLOOR, link_features

        features = link_features(graph)
        start = np.random.default_rng(0).standard_normal(min(features.shape))
        left, values, _ = svds(features, k=rank, v0=start)
        embedding = left * values
        norms = np.linalg.norm(embedding, axis=1, keepdims=True)
        embedding = np.divide(embedding, norms, out=np.zeros_like(embedding), where=norms >= FLOOR).astype(np.float32)
    else:
        from linksim.embedding import link_embedding

        embedding = link_embedding(graph, rank, seed=0)
    seconds = time.monotonic() - began
    np.save(out, embedding)
    queue.put({"pages": graph.n, "links": graph.m, "seconds": round(seconds, 1), "rank": int(embedding.shape[1])})


def run(solver: str, links: str, rank: int, folder: Path) -> dict:
    context = multiprocessing.get_context("spawn")  # nothing of the parent's memory in the child
    queue = context.Queue()
    out = folder / f"{solver}-{links}.npy"
    child = context.Process(target=_solve, args=(solver, links, rank, str(out), queue))
    child.start()
    peak = Peak(child.pid)
    child.join()
    peak.stop()
    if child.exitcode != 0:
        raise SystemExit(f"{solver} at {links} links failed (exit {child.exitcode})")
    return dict(queue.get(), peak_pss_mib=round(peak.peak_pss / 2**20), path=str(out))


def cosine_gap(first: Path, second: Path, pages: int) -> dict:
    a, b = np.load(first, mmap_mode="r"), np.load(second, mmap_mode="r")
    rng = np.random.default_rng(1)
    u, v = np.sort(rng.integers(0, pages, 20_000)), np.sort(rng.integers(0, pages, 20_000))
    gap = np.abs((np.asarray(a[u], float) * np.asarray(a[v], float)).sum(1)
                 - (np.asarray(b[u], float) * np.asarray(b[v], float)).sum(1))
    return {"mean": round(float(gap.mean()), 4), "p99": round(float(np.quantile(gap, 0.99)), 4)}


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,10M", help="links of each generated crawl, comma-separated")
    parser.add_argument("--rank", type=int, default=100)
    parser.add_argument("--arpack-limit", type=float, default=16.0, help="GiB: above it, ARPACK is not run")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    rows = []
    print(f"{'links':>7}{'pages':>12}{'solver':>9}{'s':>8}{'peak MiB':>10}{'x time':>8}{'x peak':>8}{'cos gap':>9}")
    with tempfile.TemporaryDirectory() as scratch:
        for links in args.sizes.split(","):
            mine = run("linksim", links, args.rank, Path(scratch))
            row = {"links": links, "linksim": mine}
            need = (8 * (2 * args.rank + 1) * 2 * mine["pages"] + 24 * mine["links"] * 2) / 2**30
            if need <= args.arpack_limit:
                theirs = run("arpack", links, args.rank, Path(scratch))
                row["arpack"] = theirs
                row["time_ratio"] = round(theirs["seconds"] / max(mine["seconds"], 0.1), 2)
                row["peak_ratio"] = round(theirs["peak_pss_mib"] / mine["peak_pss_mib"], 2)
                row["cosine_gap"] = cosine_gap(Path(mine["path"]), Path(theirs["path"]), mine["pages"])
            else:
                row["arpack"] = {"skipped": f"needs about {need:.1f} GiB"}
            for solver in ("linksim", "arpack"):
                entry = row[solver]
                if "seconds" in entry:
                    extra = (f"{row['time_ratio']:>8.2f}{row['peak_ratio']:>8.2f}{row['cosine_gap']['mean']:>9.4f}"
                             if solver == "arpack" else "")
                    print(f"{links:>7}{entry['pages']:>12,}{solver:>9}{entry['seconds']:>8.1f}"
                          f"{entry['peak_pss_mib']:>10,}{extra}", flush=True)
                else:
                    print(f"{links:>7}{'':>12}{solver:>9}  {entry['skipped']}", flush=True)
            for solver in ("linksim", "arpack"):
                row[solver].pop("path", None)
            rows.append(row)
    if args.json:
        args.json.write_text(json.dumps({**results_header(sys.argv), "rank": args.rank, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
