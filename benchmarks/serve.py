"""Related pages served to concurrent clients through Bolt, as a search engine or an archive's page
would ask for them: 8, 32 and 128 clients, each asking for the related pages of random pages in a
loop, on a crawl the scale benchmark loaded (``benchmarks/scale.py``, its ``scale-<size>`` instance).

Forms, one run each, the same pages:
- ``short``: the shipped short query (``CALL linksim.related``, the procedure the server installs);
- ``protocol``: the shipped plain-Cypher query of the run protocol (``related_pages``);
- ``plain``: the bare pattern ``(p:Page {url})-[s:SIMILAR_TO {method}]->(q)``, right only at rest;
- ``floor``: ``RETURN $url ...``, a query that reads nothing: the latency of a Bolt round trip with
  these clients on this machine, which no query can beat;
- ``gds``: GDS's ``nodeSimilarity.filtered.stream`` for one page (``sourceNodeFilter``) on a projection of
  the links, where the server has GDS (the anchor: what a GDS user asks instead of stored lists).

The clients are threads shared out over ``--processes`` client processes on the same machine as the
server (their CPU is the server's too). Then ``short`` at 32 clients again while ``linksim similar
METHOD --rewrite`` writes a new run beside the current one (the window from its first new
relationship to its switch).

Prints and writes (``--json``, default ``benchmarks/results/serve.json``) queries/s, p50 and p99
latency per form and client count, the answers' row counts, and the rate during the rewrite
against the rate at rest.

    python benchmarks/scale.py --sizes 10M --keep-server ...   # the crawl, its lists
    python benchmarks/serve.py --size 10M
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bench_server, cli_env, results_header  # noqa: E402

PLAIN = """
MATCH (p:Page {url: $url})-[s:SIMILAR_TO {method: $method}]->(q:Page)
WHERE s.rank <= $limit
RETURN s.rank AS rank, q.url AS url, q.title AS title, s.score AS score, q.pagerank AS pagerank
ORDER BY s.rank
"""
# The floor: a query that reads nothing, one Bolt round trip. No related-pages query is served
# faster than this on the same machine with the same clients.
FLOOR = "RETURN $url AS url, $method AS method, $limit AS limit"
GDS = """
MATCH (p:Page {url: $url})
CALL gds.nodeSimilarity.filtered.stream('linksim_serve', {sourceNodeFilter: p, topK: $limit, concurrency: 1})
YIELD node2, similarity
RETURN gds.util.asNode(node2).url AS url, similarity AS score
ORDER BY score DESC
"""


def sample_urls(session, method: str, count: int, seed: int) -> list[str]:
    """``count`` random pages that have a current list of ``method`` (node ids are dense after a
    bulk import: drawn by id, kept where they have a list)."""
    pages = session.run("MATCH (p:Page) RETURN count(p) AS n").single()["n"]
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, pages, count * 3).tolist()
    rows = session.run("MATCH (p:Page) WHERE id(p) IN $ids AND EXISTS { (p)-[:SIMILAR_TO {method: $m}]->() } "
                       "RETURN p.url AS url", ids=ids, m=method).data()
    urls = [row["url"] for row in rows]
    random.Random(seed).shuffle(urls)
    return urls[:count]


def _clients(connection, database: str, query: str, urls: list[str], method: str, first: int, clients: int,
             seconds: float, limit: int) -> tuple[list[float], int, int]:
    """``clients`` threads of one process (numbered from ``first``) asking ``query`` for random
    ``urls`` for ``seconds`` through a driver of their own: (latencies in ms, rows, errors)."""
    from neo4j import GraphDatabase

    driver = GraphDatabase.driver(connection.uri, auth=(connection.user, connection.password),
                                  max_connection_pool_size=clients + 4,
                                  notifications_min_severity="OFF")  # a crawl without titles warns a query
    stop = threading.Event()
    latencies: list[list[float]] = [[] for _ in range(clients)]
    rows = [0] * clients
    errors = [0] * clients

    def client(index: int) -> None:
        pick = random.Random(first + index)
        with driver.session(database=database) as session:
            while not stop.is_set():
                url = pick.choice(urls)
                began = time.perf_counter()
                try:
                    rows[index] += len(session.run(query, url=url, method=method, limit=limit).data())
                except Exception:  # noqa: BLE001 - counted: a server that refuses is a result here
                    errors[index] += 1
                    continue
                latencies[index].append((time.perf_counter() - began) * 1000)

    try:
        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
        for thread in threads:
            thread.start()
        time.sleep(seconds)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        driver.close()
    return [x for one in latencies for x in one], sum(rows), sum(errors)


def load(connection, database: str, query: str, urls: list[str], method: str, clients: int, seconds: float,
         limit: int = 10, processes: int = 1) -> dict:
    """``clients`` clients asking ``query`` for random ``urls`` for ``seconds``, as threads shared out
    over ``processes`` client processes (forked: one Python interpreter's lock does not hold them
    all); queries/s, p50, p99 and mean latency (ms), rows a query, errors."""
    import multiprocessing

    processes = max(1, min(processes, clients))
    shares = [clients // processes + (1 if k < clients % processes else 0) for k in range(processes)]
    firsts = np.cumsum([0, *shares[:-1]]).tolist()
    tasks = [(connection, database, query, urls, method, first, share, seconds, limit)
             for first, share in zip(firsts, shares)]
    began = time.perf_counter()
    if processes == 1:
        parts = [_clients(*tasks[0])]
    else:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            parts = pool.starmap(_clients, tasks)
    elapsed = time.perf_counter() - began
    every = np.asarray([x for part in parts for x in part[0]])
    done = len(every)
    rows, errors = sum(part[1] for part in parts), sum(part[2] for part in parts)
    return {"clients": clients, "processes": processes, "seconds": round(elapsed, 1), "queries": done,
            "queriesPerSecond": round(done / elapsed, 1),
            "p50Ms": round(float(np.percentile(every, 50)), 2) if done else None,
            "p99Ms": round(float(np.percentile(every, 99)), 2) if done else None,
            "meanMs": round(float(every.mean()), 2) if done else None,
            "rowsPerQuery": round(rows / done, 2) if done else None, "errors": errors}


def show(form: str, row: dict) -> None:
    print(f"{form:<9} {row['clients']:>4} clients: {row['queriesPerSecond']:>8,.0f} queries/s, "
          f"p50 {row['p50Ms']} ms, p99 {row['p99Ms']} ms, {row['rowsPerQuery']} rows a query, "
          f"{row['errors']} errors", flush=True)


def rewrite_window(driver, connection, database: str, method: str, env: dict, urls: list[str], clients: int,
                   seconds: float, processes: int) -> dict:
    """``short`` at ``clients`` while ``linksim similar METHOD --rewrite`` writes: measured from the
    new run's first relationships, for ``seconds`` or until the switch."""
    from linksim import cypher

    with driver.session(database=database) as session:
        before = session.run("MATCH (c:LinksimCurrent {algorithm: $m}) RETURN c.run AS run", m=method).single()["run"]
    linksim = str(Path(sys.executable).parent / "linksim")
    writer = subprocess.Popen([linksim, "-q", "similar", method, "--rewrite"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with driver.session(database=database) as session:
            while writer.poll() is None:
                new = session.run("MATCH (c:LinksimCurrent {algorithm: $m}) WITH c "
                                  "MATCH (:Page)-[s:SIMILAR_TO {method: $m}]->() WHERE s.run > c.run "
                                  "RETURN count(*) > 0 AS writing LIMIT 1", m=method).single()["writing"]
                if new:
                    break
                time.sleep(1.0)
        if writer.poll() is not None:
            raise SystemExit(f"the rewrite ended before its write could be measured:\n{writer.stderr.read()}")
        row = load(connection, database, cypher.query("related_pages", "related_pages_procedure"), urls, method,
                   clients, seconds, processes=processes)
        with driver.session(database=database) as session:
            row["switchedWithin"] = session.run("MATCH (c:LinksimCurrent {algorithm: $m}) RETURN c.run AS run",
                                                m=method).single()["run"] != before
    finally:
        out, err = writer.communicate(timeout=6 * 3600)
    if writer.returncode != 0:
        raise SystemExit(f"linksim similar --rewrite exited {writer.returncode}:\n{err}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="10M", help="the scale instance to serve from (default 10M)")
    parser.add_argument("--instance", help="another local instance to serve from (default scale-SIZE)")
    parser.add_argument("--method", default="spectral")
    parser.add_argument("--clients", default="8,32,128", help="client counts (default 8,32,128)")
    parser.add_argument("--seconds", type=float, default=20.0, help="each measurement's length (default 20)")
    parser.add_argument("--pages", type=int, default=5000, help="random pages asked for (default 5000)")
    parser.add_argument("--forms", default="floor,short,protocol,plain,gds",
                        help="floor, short, protocol, plain, gds (default all)")
    parser.add_argument("--processes", type=int, default=2,
                        help="client processes the clients are shared out over (default 2: this machine's cores)")
    parser.add_argument("--gds-clients", default="8", help="client counts of the GDS anchor (default 8)")
    parser.add_argument("--no-rewrite", action="store_true", help="skip the measurement during a rewrite")
    parser.add_argument("--heap", default="4g", help="Neo4j heap (default 4g, as scale.py's instances)")
    parser.add_argument("--pagecache", default="6g", help="Neo4j page cache (default 6g, as scale.py's)")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "serve.json")
    args = parser.parse_args()

    from neo4j import GraphDatabase

    from linksim import cypher

    from linksim.home import linksim_home

    instance = args.instance or f"scale-{args.size}"
    forms = args.forms.split(",")
    # the scale instance as scale.py runs it: its memory, its index store (the rewrite reuses the
    # index); another instance keeps $LINKSIM_INDEX_DIR, lest its rewrite replace a scale index
    os.environ.update(LINKSIM_HEAP=args.heap, LINKSIM_PAGECACHE=args.pagecache)
    if args.instance is None:
        os.environ["LINKSIM_INDEX_DIR"] = str(linksim_home() / "scale" / f"indexes-{args.size}")
    server, connection = bench_server(instance, gds="gds" in forms)
    env = cli_env(instance)
    driver = GraphDatabase.driver(connection.uri, auth=(connection.user, connection.password),
                                  max_connection_pool_size=8,
                                  notifications_min_severity="OFF")  # a crawl without titles warns a query
    database = connection.database
    results = dict(size=args.size, method=args.method, rows=[])
    try:
        with driver.session(database=database) as session:
            urls = sample_urls(session, args.method, args.pages, seed=0)
            pages = session.run("MATCH (p:Page) RETURN count(p) AS n").single()["n"]
            if "gds" in forms:
                session.run("CALL gds.graph.drop('linksim_serve', false) YIELD graphName RETURN graphName").consume()
                session.run("CALL gds.graph.project('linksim_serve', 'Page', {LINKS_TO: {orientation: 'UNDIRECTED'}}) "
                            "YIELD nodeCount RETURN nodeCount").consume()
        results["pages"] = pages
        print(f"{instance}: {pages:,} pages; {len(urls):,} pages with a {args.method} list asked for", flush=True)
        queries = {"short": cypher.query("related_pages", "related_pages_procedure"),
                   "protocol": cypher.query("related_pages", "related_pages"), "plain": PLAIN, "gds": GDS,
                   "floor": FLOOR}
        for form in forms:
            counts = args.gds_clients if form == "gds" else args.clients
            load(connection, database, queries[form], urls, args.method, 4, 3.0)  # warm the page cache and plans
            for clients in (int(c) for c in counts.split(",")):
                row = load(connection, database, queries[form], urls, args.method, clients, args.seconds,
                           processes=args.processes)
                results["rows"].append(dict(row, form=form, during="rest"))
                show(form, row)
        if not args.no_rewrite:
            row = rewrite_window(driver, connection, database, args.method, env, urls, 32, args.seconds,
                                 args.processes)
            results["rows"].append(dict(row, form="short", during="rewrite"))
            show("rewrite", row)
            rest = [r for r in results["rows"] if r["form"] == "short" and r["clients"] == 32 and r["during"] == "rest"]
            if rest:
                results["rewriteRateShare"] = round(row["queriesPerSecond"] / rest[0]["queriesPerSecond"], 3)
                print(f"during the rewrite: {results['rewriteRateShare']:.2f} of the rate at rest (32 clients)")
    finally:
        if "gds" in forms:
            with driver.session(database=database) as session:
                session.run("CALL gds.graph.drop('linksim_serve', false) YIELD graphName RETURN graphName").consume()
        driver.close()
        if os.environ.get("LINKSIM_SERVE_KEEP") != "1":
            server.stop()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(dict(results_header(sys.argv), **results), indent=1) + "\n")  # finished: now
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
