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
import time

import numpy as np


def recrawl(graph, share: float, rng: np.random.Generator):
    """The graph after a recrawl of ``share`` of its pages with out-links."""
    from linksim.graph import LinkGraph

    source, target = graph.edges()
    crawled = np.flatnonzero(graph.out_degree > 0)
    chosen = rng.choice(crawled, size=max(1, int(round(share * len(crawled)))), replace=False)
    lost = np.isin(source, chosen) & (rng.random(len(source)) < 0.3)
    gained = target[rng.integers(0, len(target), int(lost.sum()))]
    return LinkGraph.from_edges(np.concatenate([source[~lost], source[lost]]), np.concatenate([target[~lost], gained]),
                                graph.n)


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
    from linksim.generate import generate_links
    from linksim.graph import LinkGraph
    from linksim.methods import method as registered
    from linksim.parameters import PARAMETERS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", default="1M")
    parser.add_argument("--shares", type=float, nargs="+", default=[0.001, 0.01, 0.1])
    parser.add_argument("--methods", nargs="+", default=["simrank", "psimrank"])
    parser.add_argument("--pages", type=int, default=20_000, help="pages whose lists are compared (a seeded sample)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    links = PARAMETERS["links"].check(args.links)
    source = np.empty(links, np.int32)
    target = np.empty(links, np.int32)
    for _ in generate_links(links, seed=1, source=source, target=target):
        pass
    first = LinkGraph.from_edges(source, target)
    del source, target
    rng = np.random.default_rng(args.seed)
    pages = np.sort(rng.choice(first.n, size=min(args.pages, first.n), replace=False))
    graphs = [first]
    for share in args.shares:
        graphs.append(recrawl(graphs[-1], share, rng))
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
