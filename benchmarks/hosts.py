"""Related sites: every method on the host graph of the najdisi.si crawl (14,654 hosts) in Neo4j,
beside the Marginalia-style in-link cosine, in one run.

1. the crawl loaded into the benchmark instance (unless it holds it already) and ``ls.hosts()``;
2. PageRank on the host graph; for each method, ``ls.similar(METHOD, graph="hosts").write(top_k=10)``:
   the time (index, top-k, write) and the coverage (the hosts with a link that got a list);
3. every method's top-100 lists (``.stream``) and the anchors' over the same host graph
   (``cosine-in``: the cosine of the in-link sets, Marginalia's website similarity; ``hub-cosine``;
   ``jaccard-in``, GDS nodeSimilarity), graded as pages are (precision@10, hits@10, sibling Γ,
   coverage) against the only labels a crawl of hosts carries: a host's organisation, its domain
   without the subdomains (``www.fri.uni-lj.si`` -> ``uni-lj.si``), for the organisations with two
   hosts or more; sibling organisations share the top-level domain. A proxy: hosts of one
   organisation are related, and link to each other, which the link methods see;
4. the share of each list's first ten that the in-link cosine's list holds too (overlap@10);
5. ``ls.related(HOST, graph="hosts")`` with the default method: p50 / p99 over ``--queries``
   random hosts, and ``linksim related HOST`` in a new process (wall);
6. the lists of a few hosts, side by side with the in-link cosine's.

    .venv/bin/python benchmarks/hosts.py [--methods spectral simrank psimrank ppsimrank]
                                         [--queries 500] [--examples www.uni-lj.si www.rtvslo.si]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bench_server, results_header  # noqa: E402

NAJDISI_HOSTS = 14_654  # the data README's count
ANCHORS = ("cosine-in", "hub-cosine", "jaccard-in")


def organisation(host: str) -> str | None:
    """``si.uni-lj`` for ``www.fri.uni-lj.si`` (None for an address)."""
    labels = host.lower().strip(".").split(".")
    if len(labels) < 2 or labels[-1].isdigit():
        return None
    return ".".join(reversed(labels[-2:]))


def host_classes(hosts: list[str]) -> dict[int, frozenset[str]]:
    """Host number -> its organisation, for the organisations with two hosts or more."""
    from collections import Counter

    orgs = [organisation(h) for h in hosts]
    sizes = Counter(o for o in orgs if o)
    return {i: frozenset([o]) for i, o in enumerate(orgs) if o and sizes[o] >= 2}


def lists_of(frame, at: dict[str, int]) -> dict[int, list[tuple[int, float]]]:
    lists: dict[int, list[tuple[int, float]]] = {}
    for source, target, score in zip(frame["source"], frame["target"], frame["score"]):
        lists.setdefault(at[source], []).append((at[target], float(score)))
    return lists


def main() -> None:
    from linksim.methods import DEFAULT_METHOD

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--instance", default="bench-hosts")
    parser.add_argument("--methods", nargs="+", default=[DEFAULT_METHOD, "simrank", "psimrank", "ppsimrank"],
                        help="methods to run (xjaccard and pagesim take minutes to tens of minutes here: their "
                        "neighbourhoods reach most hosts)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--examples", nargs="*", default=["www.uni-lj.si", "www.rtvslo.si", "www.arnes.si"])
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks" / "results" / "quality-hosts.json",
                        help="results file, in the quality benchmark's form (default %(default)s)")
    args = parser.parse_args()

    from linksim.evaluation import sibling_gamma
    from linksim.evaluation.anchors import anchor_lists
    from linksim.procedures import QueryRunner
    from linksim.procedures.api import Linksim
    from linksim.procedures.load import load
    from linksim.procedures.maintenance import clear_database
    from linksim.procedures.stream import stream_link_graph

    crawl = args.data / "najdisi-si-2003" / "core2.net.gz"
    if not crawl.exists():
        sys.exit(f"{crawl} is missing: put the shared data set there or pass --data")
    server, connection = bench_server(args.instance)
    root = Path(server.settings.instance_dir) / "hosts-indexes"
    with QueryRunner.connect(connection) as runner:
        ls = Linksim(runner, root, show_progress=False)
        if runner.run("MATCH (p:Page) RETURN count(p) AS n")[0]["n"] != 115_148:
            clear_database(runner)
            began = time.monotonic()
            load([crawl], runner, normalize=False, show_progress=False)
            print(f"najdisi.si loaded in {time.monotonic() - began:.1f} s")
        built = ls.hosts()
        print(f"host graph: {built.hosts:,} hosts, {built.host_links:,} host links counting {built.links:,} page "
              f"links ({built.seconds:.1f} s)")
        assert built.hosts == NAJDISI_HOSTS
        ranks = ls.pagerank.write(graph="hosts")
        print(f"PageRank of the hosts: {ranks.ran_iterations} iterations, {ranks.record.millis / 1000:.1f} s; top: "
              + ", ".join(ranks.top["host"].head(5)))

        streamed = stream_link_graph(runner, graph="hosts", show_progress=False)
        graph, hosts = streamed.graph, streamed.urls
        at = {h: i for i, h in enumerate(hosts)}
        linked = np.flatnonzero(graph.linked())
        classes = host_classes(hosts)

        rows, lists = [], {}
        for method in args.methods:
            similar = ls.similar(method, graph="hosts")
            began = time.monotonic()
            record = similar.write(top_k=10, rebuild=True).record
            write_seconds = time.monotonic() - began
            frame = similar.stream(top_k=100)
            lists[method] = lists_of(frame, at)
            report = sibling_gamma(lists[method], classes, linked=linked.tolist())
            rows.append((method, "linksim", report, write_seconds, record.answered, record.linked))
        for name in ANCHORS:
            began = time.monotonic()
            lists[name] = anchor_lists(graph, name, top=100)
            seconds = time.monotonic() - began
            report = sibling_gamma(lists[name], classes, linked=linked.tolist())
            answered = sum(1 for u in linked if lists[name].get(int(u)))
            rows.append((name, "anchor", report, seconds, answered, len(linked)))

        print(f"\n{len(hosts):,} hosts, {graph.m:,} host links, {len(linked):,} with a link; {len(classes):,} hosts in "
              f"{len({c for cs in classes.values() for c in cs}):,} organisations of 2+ hosts (the labels)")
        print(f"{'method':<12}{'source':<9}{'P@10':>7}{'hits@10':>8}{'Gamma':>8}{'pooled':>8}{'queries':>8}"
              f"{'coverage':>9}{'overlap@10':>11}{'s':>7}")
        reference = lists["cosine-in"]
        table = []
        for name, source, report, seconds, answered, with_link in rows:
            shared = [len({v for v, _ in lists[name].get(u, [])[:10]} & {v for v, _ in reference.get(u, [])[:10]}) / 10
                      for u in linked.tolist() if lists[name].get(u) and reference.get(u)]
            print(f"{name:<12}{source:<9}{report.precision_at_10:>7.3f}{report.hits_at_10:>8.3f}{report.gamma:>8.3f}"
                  f"{report.pooled:>8.3f}{report.queries:>8,}{answered / with_link:>9.4f}"
                  f"{np.mean(shared):>11.3f}{seconds:>7.1f}")
            table.append({"name": name, "source": source, "precision_at_10": report.precision_at_10,
                          "hits_at_10": report.hits_at_10, "gamma": report.gamma, "pooled": report.pooled,
                          "queries": report.queries, "coverage": answered / with_link,
                          "overlap_at_10": float(np.mean(shared)), "seconds": round(seconds, 1)})
        args.json.write_text(json.dumps({**results_header(sys.argv), "labels": "organisations (a host's domain)",
                                         "datasets": {"najdisi.si hosts": table}}, indent=1))
        print(f"results written to {args.json}")

        # Queries for a host, from the stored index, as for a page.
        rng = np.random.default_rng(29)
        sample = [hosts[u] for u in rng.choice(linked, size=min(args.queries, len(linked)), replace=False)]
        ls.related(sample[0], graph="hosts")  # the index opened
        spent = []
        for host in sample:
            began = time.perf_counter()
            ls.related(host, graph="hosts")
            spent.append((time.perf_counter() - began) * 1000)
        print(f"\nls.related(HOST, graph='hosts'), {DEFAULT_METHOD}: p50 {np.percentile(spent, 50):.1f} ms, "
              f"p99 {np.percentile(spent, 99):.1f} ms over {len(sample)} hosts")
        env = dict(os.environ, NEO4J_URI=connection.uri, NEO4J_USER=connection.user,
                   NEO4J_PASSWORD=connection.password, LINKSIM_INDEX_DIR=str(root))
        began = time.perf_counter()
        done = subprocess.run([str(Path(sys.executable).parent / "linksim"), "-q", "related", sample[1]], env=env,
                              capture_output=True, text=True, check=False)
        print(f"`linksim related {sample[1]}` in a new process: {time.perf_counter() - began:.2f} s "
              f"(exit {done.returncode})")

        for host in args.examples:
            if host not in at:
                continue
            mine = ls.related(host, graph="hosts")["host"].tolist()
            theirs = [hosts[v] for v, _ in reference.get(at[host], [])[:10]]
            print(f"\n{host}: {DEFAULT_METHOD} | cosine-in")
            for i in range(max(len(mine), len(theirs))):
                left = mine[i] if i < len(mine) else ""
                right = theirs[i] if i < len(theirs) else ""
                print(f"  {i + 1:>2}. {left:<34} {right}")
    server.stop()


if __name__ == "__main__":
    main()
