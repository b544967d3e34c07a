"""Related pages from the Python API and the command line, on cnr-2000 (325,557 pages) in Neo4j, with
a stored SimRank index; the figures of the registry / API issue, in one run:

- ``ls.related(url)``: the first call after ``linksim.connect()`` (opens the stored index), then
  p50 / p99 over 1,000 random pages; every query sent is recorded, and none may read LINKS_TO
  (only the constant-time count of the graph state);
- ``linksim related URL`` in a new process: wall time, against the 3 s target;
- the anchor: what the same answer cost before reads stopped streaming (stream the graph and
  digest it, as ``related`` did), measured here in the same run;
- ``ls.related(url, method="spectral")``: the default method's p50 / p99 over the same pages;
- ``ls.related([url, ...])``: pages related to a set of ``--set-size`` random pages together, p50 /
  p99 over ``--sets`` sets, with SimRank and with the default method (its index built if need be),
  against the 20 ms target of the related-to-a-set issue.

    .venv/bin/python benchmarks/api.py [--queries 1000] [--sets 200] [--set-size 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

from _common import bench_server, cnr_edges, ensure_cnr  # noqa: E402


class Recording:
    """The real runner, recording the text of every query sent."""

    def __init__(self, runner) -> None:
        self.runner, self.sent = runner, []

    def __getattr__(self, name):
        attribute = getattr(self.runner, name)
        if name in ("run", "write", "write_returning", "write_autocommit", "read_one", "stream"):
            def recorded(query, *args, **kwargs):
                self.sent.append(query)
                return attribute(query, *args, **kwargs)
            return recorded
        return attribute


def timed(ls, queries, method: str) -> list[float]:
    """Seconds of ``ls.related(query, method=method)`` for each query (a page or a set of pages)."""
    spent = []
    for query in queries:
        began = time.perf_counter()
        ls.related(query, method=method)
        spent.append(time.perf_counter() - began)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--instance", default="bench")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--sets", type=int, default=200)
    parser.add_argument("--set-size", type=int, default=10)
    args = parser.parse_args()

    from linksim.digest import graph_fingerprint
    from linksim.methods import DEFAULT_METHOD
    from linksim.procedures import QueryRunner
    from linksim.procedures.api import Linksim
    from linksim.procedures.stream import stream_link_graph

    path, _, _ = cnr_edges(args.data)
    server, connection = bench_server(args.instance)
    root = Path(server.settings.instance_dir) / "api-indexes"
    with QueryRunner.connect(connection) as runner:
        ensure_cnr(runner, server, path)
        built = Linksim(runner, root, show_progress=False).similar("simrank").index()
        print(f"cnr-2000 in Neo4j; SimRank index {'built' if built.built else 'reused'} in {built.path}")
        default = Linksim(runner, root, show_progress=False).similar(DEFAULT_METHOD).index()
        print(f"{DEFAULT_METHOD} index {'built' if default.built else 'reused'} in {default.path}")

        began = time.perf_counter()
        streamed = stream_link_graph(runner, show_progress=False)
        graph_fingerprint(streamed.graph)
        anchor = time.perf_counter() - began
        urls = np.asarray(streamed.urls, dtype=object)

    rng = np.random.default_rng(2026)
    sample = urls[rng.choice(len(urls), size=args.queries, replace=False)]
    with QueryRunner.connect(connection) as runner:
        recording = Recording(runner)
        ls = Linksim(recording, root, show_progress=False)
        began = time.perf_counter()
        ls.related(sample[0], method="simrank")
        first = time.perf_counter() - began
        times = timed(ls, sample, "simrank")
        sent = len(recording.sent)  # by the SimRank calls
        ls.related(sample[0], method=DEFAULT_METHOD)  # the index opened
        default_times = timed(ls, sample, DEFAULT_METHOD)
        sets = {}
        for method in ("simrank", DEFAULT_METHOD):
            chosen = [urls[rng.choice(len(urls), size=args.set_size, replace=False)].tolist() for _ in range(args.sets)]
            ls.related(chosen[0], method=method)  # the index opened
            sets[method] = np.array(timed(ls, chosen, method)) * 1000
    ms = np.array(times) * 1000
    reading_links = [q for q in recording.sent if "LINKS_TO" in q and "count(r)" not in q]
    env = dict(os.environ, NEO4J_URI=connection.uri, NEO4J_USER=connection.user, NEO4J_PASSWORD=connection.password,
               LINKSIM_INDEX_DIR=str(root))
    began = time.perf_counter()
    result = subprocess.run([str(Path(sys.executable).parent / "linksim"), "-q", "related", str(sample[1]),
                             "--method", "simrank"], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began

    print(f"\n{'':<52}{'measured':>12}{'target':>10}")
    print(f"{'ls.related(url): first call after connect()':<52}{first * 1000:>10.0f} ms{'<= 2 s':>10}")
    print(f"{'ls.related(url): p50 over %d random pages' % args.queries:<52}{np.percentile(ms, 50):>10.1f} ms"
          f"{'<= 20 ms':>10}")
    print(f"{'ls.related(url): p99':<52}{np.percentile(ms, 99):>10.1f} ms")
    default_ms = np.array(default_times) * 1000
    print(f"{'ls.related(url), %s: p50' % DEFAULT_METHOD:<52}{np.percentile(default_ms, 50):>10.1f} ms{'<= 20 ms':>10}")
    print(f"{'ls.related(url), %s: p99' % DEFAULT_METHOD:<52}{np.percentile(default_ms, 99):>10.1f} ms")
    print(f"{'queries sent that read LINKS_TO':<52}{len(reading_links):>12}{'0':>10}")
    print(f"{'queries sent in all (%d calls)' % (args.queries + 1):<52}{sent:>12}")
    for method, spent in sets.items():
        print(f"{'ls.related(%d urls), %s: p50 over %d sets' % (args.set_size, method, args.sets):<52}"
              f"{np.percentile(spent, 50):>10.1f} ms{'<= 20 ms':>10}")
        print(f"{'ls.related(%d urls), %s: p99' % (args.set_size, method):<52}{np.percentile(spent, 99):>10.1f} ms")
    print(f"{'`linksim related URL`, a new process, wall':<52}{wall:>10.2f} s {'<= 3 s':>9}  (exit {result.returncode})")
    print(f"{'anchor: stream + digest the graph (reads before)':<52}{anchor:>10.2f} s")
    if result.returncode != 0:
        print(result.stderr)
    server.stop()


if __name__ == "__main__":
    main()
