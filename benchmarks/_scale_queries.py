"""Helper of scale.py: 1,000 related-pages Cypher queries (the shipped query) for random pages
with SIMILAR_TO, against the local server of $LINKSIM_INSTANCE; prints JSON latencies."""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--method", default="simrank")
    args = parser.parse_args()

    from linksim import cypher
    from linksim.procedures import QueryRunner
    from linksim.server.connection import resolve_connection

    query = cypher.query("related_pages", "related_pages")
    with QueryRunner.connect(resolve_connection()) as runner:
        pages = runner.run("MATCH (p:Page) RETURN count(p) AS n")[0]["n"]
        rng = np.random.default_rng(0)
        ids = rng.integers(0, pages, args.count * 3).tolist()  # node ids are dense after a bulk import
        urls = [row["url"] for row in runner.run("MATCH (p:Page) WHERE id(p) IN $ids RETURN p.url AS url", {"ids": ids})]
        urls = [urls[i] for i in rng.permutation(len(urls))[: args.count]]
        times, rows = [], 0
        for url in urls:
            began = time.perf_counter()
            rows += len(runner.run(query, {"url": url, "method": args.method, "limit": 10}))
            times.append((time.perf_counter() - began) * 1000)
    print(json.dumps({"queries": len(times), "rows": rows, "p50Ms": float(np.percentile(times, 50)),
                      "p99Ms": float(np.percentile(times, 99)), "meanMs": float(np.mean(times))}))


if __name__ == "__main__":
    main()
