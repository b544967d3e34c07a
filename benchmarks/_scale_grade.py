"""Helper of scale.py: P@10 and hits@10 of a method's SIMILAR_TO lists against the planted labels of
a generated labelled crawl (`linksim generate --labels`), on a seeded sample of its labelled pages
with a link, beside anchors on the same pages computed from the crawl file (their rows of the
products only: :func:`linksim.evaluation.anchors.anchor_lists`); prints JSON."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def first_ten(ranked, mine, classes) -> int:
    return sum(1 for v, _ in ranked[:10] if classes.get(v, frozenset()) & mine)


def graded(lists: dict, sample: list[int], classes: dict) -> dict:
    """P@10 over the sampled pages with a list, hits@10 over all of them, the share with a list."""
    found = [first_ten(lists.get(u, []), classes[u], classes) for u in sample]
    answered = [f for u, f in zip(sample, found) if lists.get(u)]
    return {"precision_at_10": float(np.mean(answered)) / 10 if answered else float("nan"),
            "hits_at_10": float(np.sum(found)) / (10 * len(sample)), "coverage": len(answered) / len(sample)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--crawl", type=Path, required=True)
    parser.add_argument("--categories", type=Path, required=True)
    parser.add_argument("--method", required=True)
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--anchors", nargs="*", default=["jaccard-both", "hub-cosine"])
    args = parser.parse_args()

    from linksim import cypher
    from linksim.evaluation import classes_of
    from linksim.evaluation.anchors import anchor_lists
    from linksim.graph import LinkGraph
    from linksim.loader.categories import read_categories
    from linksim.loader.load import read_files
    from linksim.procedures import QueryRunner
    from linksim.server.connection import resolve_connection

    began = time.monotonic()
    crawl, _ = read_files([args.crawl])
    links = crawl.links()
    graph = LinkGraph.from_edges(links.source, links.target, len(crawl))
    del links
    classes = {crawl.index[url]: classes_of(paths, 2) for url, paths in read_categories(args.categories).items()
               if url in crawl.index}
    pool = np.array(sorted(u for u, c in classes.items() if c), dtype=np.int64)
    pool = pool[graph.linked()[pool]]
    sample = np.sort(np.random.default_rng(0).choice(pool, size=min(args.sample, len(pool)), replace=False)).tolist()
    read_seconds = time.monotonic() - began

    query = cypher.query("related_pages", "related_pages")
    lists = {}
    with QueryRunner.connect(resolve_connection()) as runner:
        for u in sample:
            rows = runner.run(query, {"url": crawl.urls[u], "method": args.method, "limit": 10})
            lists[u] = [(crawl.index[row["url"]], row["score"]) for row in rows]
    rows = {args.method: graded(lists, sample, classes)}
    for name in args.anchors:
        started = time.monotonic()
        rows[name] = dict(graded(anchor_lists(graph, name, 10, pages=sample), sample, classes),
                          seconds=round(time.monotonic() - started, 1))
    print(json.dumps({"sample": len(sample), "labelled": len(pool), "pages": graph.n, "readSeconds": round(read_seconds, 1),
                      "rows": rows}))


if __name__ == "__main__":
    main()
