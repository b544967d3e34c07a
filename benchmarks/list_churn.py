"""How many top-k lists a recrawl changes: the least a SIMILAR_TO update has to compute and write.

An update of the current lists (``linksim similar`` after a recrawl) writes the lists that differ
from the current ones; no list is known to be unchanged without computing it. This measures, in
memory and for a seeded sample of pages, how many lists differ after recrawls of a generated
crawl (one after the other, each recrawled page losing 30 % of its links and gaining as many, as
``benchmarks/recrawl.py`` draws them): in their pages or scores (what an update writes), and in
their pages alone. The index after each recrawl is the method's update of the previous one (the
rebuild's arrays, bit for bit); the lists are ``top_k_all``'s, as ``linksim similar`` writes them.

    .venv/bin/python benchmarks/list_churn.py --links 10M [--methods simrank psimrank] [--pages 20000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import generated_graph, recrawled_graph  # noqa: E402


def lists_of(index, pages: np.ndarray) -> dict[int, tuple[tuple, tuple]]:
    from linksim.ranking.topk import top_k_all

    source, target, score, _ = top_k_all(index, top_k=10, pages=pages, show_progress=False)
    score = np.round(score, 12)
    lists: dict[int, tuple[list, list]] = {int(page): ([], []) for page in pages}
    for s, t, value in zip(source.tolist(), target.tolist(), score.tolist()):
        lists[s][0].append(t)
        lists[s][1].append(value)
    return {page: (tuple(t), tuple(v)) for page, (t, v) in lists.items()}


def main() -> None:
    from linksim.methods import method as registered

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", default="1M")
    parser.add_argument("--shares", type=float, nargs="+", default=[0.001, 0.01, 0.1])
    parser.add_argument("--methods", nargs="+", default=["simrank", "psimrank"])
    parser.add_argument("--pages", type=int, default=20_000, help="pages whose lists are compared (a seeded sample)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    first = generated_graph(args.links)
    rng = np.random.default_rng(args.seed)
    pages = np.sort(rng.choice(first.n, size=min(args.pages, first.n), replace=False))
    graphs = [first]
    for share in args.shares:
        graphs.append(recrawled_graph(graphs[-1], share, rng))
    print(f"generated {args.links}-link crawl: {first.n:,} pages, {first.m:,} links; the lists of {len(pages):,} "
          f"pages compared, top 10")
    rows = []
    for name in args.methods:
        entry = registered(name)
        parameters = entry.parameters_for()
        began = time.perf_counter()
        index = entry.build(first, parameters, show_progress=False, keep_walks=True)
        before = lists_of(index, pages)
        print(f"  {name}: built and listed in {time.perf_counter() - began:.1f} s", flush=True)
        for share, old, new in zip(args.shares, graphs, graphs[1:]):
            began = time.perf_counter()
            index = entry.update(old, index, new, show_progress=False, max_share=1.0, check_graph=False)
            after = lists_of(index, pages)
            changed = sum(before[page] != after[page] for page in before)
            moved = sum(before[page][0] != after[page][0] for page in before)
            rows.append((name, share, changed, moved))
            print(f"  {name} {share:.1%}: {changed / len(pages):.0%} of the lists changed, "
                  f"{moved / len(pages):.0%} in their pages ({time.perf_counter() - began:.1f} s)", flush=True)
            before = after
    print(f"\nlists changed by each recrawl (one after the other), of {len(pages):,} pages' top 10")
    print(f"{'method':>10} {'recrawled':>10} {'lists changed':>14} {'in their pages':>15}")
    for name, share, changed, moved in rows:
        print(f"{name:>10} {share:>10.1%} {changed / len(pages):>14.1%} {moved / len(pages):>15.1%}")


if __name__ == "__main__":
    main()
