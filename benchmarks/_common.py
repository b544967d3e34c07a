"""Helpers shared by the benchmark scripts (run as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

import os
import platform
import resource
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 free at the time of the call."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_mib() -> float:
    """Peak resident memory of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


CNR_LINKS = 3_216_152  # the data README's count, self-loops and all


def cnr_edges(data):
    """(path, edges, n) of cnr-2000 in ``data``: the edge list as a DataFrame (columns s, t) and
    the number of pages. Exits with a message when the file is not there."""
    import sys

    import pandas as pd

    path = data / "cnr-2000" / "cnr-2000.edges.tsv.gz"
    if not path.exists():
        sys.exit(f"{path} is missing: put the shared data set there or pass --data")
    edges = pd.read_csv(path, sep="\t", header=None, names=["s", "t"], comment="#")
    return path, edges, int(max(edges.s.max(), edges.t.max())) + 1


def bench_server(instance: str, gds: bool = False):
    """(server, connection) of the local benchmark instance, (re)started on free ports, with
    Graph Data Science installed if ``gds``."""
    from linksim.server import LocalServer, ServerSettings
    from linksim.server.connection import Connection

    settings = ServerSettings.from_env(instance=instance, bolt_port=free_port(), http_port=free_port())
    server = LocalServer(settings)
    server.stop()
    if gds:
        server.install_gds()
    server.start()
    return server, Connection(settings.uri, "neo4j", server.password(), "neo4j", "local")


def cli_env(instance: str) -> dict[str, str]:
    """The environment of a ``linksim`` child that talks to the local instance ``instance`` (its
    password file), whatever server the caller's environment names."""
    env = dict(os.environ, LINKSIM_INSTANCE=instance)
    for var in ("NEO4J_URI", "NEO4J_PASSWORD", "NEO4J_PASSWORD_FILE"):
        env.pop(var, None)
    return env


def ensure_cnr(runner, server, path) -> None:
    """Load cnr-2000 into the benchmark instance unless it already holds exactly that crawl."""
    from linksim.procedures.load import load
    from linksim.procedures.maintenance import clear_database

    if runner.run("MATCH ()-[r:LINKS_TO]->() RETURN count(r) AS n")[0]["n"] != CNR_LINKS:
        clear_database(runner)
        load([path], runner, mode="auto", local_server=server, show_progress=False)


def _name(process) -> str:
    import psutil

    try:
        return process.name()
    except psutil.Error:
        return ""


def _rollup(pid: int) -> tuple[int, int]:
    """(PSS, anonymous PSS) of a process in bytes, from /proc/PID/smaps_rollup: pages shared by
    forked workers counted once across them, file pages (a memory-mapped index) in proportion.
    Anonymous PSS, not RSS less file pages: a worker forked after its parent filled arrays maps
    those pages too (copy on write), and RSS would count them in every worker."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
        for line in handle:
            name, _, rest = line.partition(":")
            if name in ("Pss", "Pss_Anon", "Pss_Shmem"):
                fields[name] = int(rest.split()[0]) << 10
    return fields["Pss"], fields.get("Pss_Anon", 0) + fields.get("Pss_Shmem", 0)


class Peak:
    """Polls the RSS of a process and its children (every 0.2 s) while it runs; also (every 1 s, and
    at each new RSS peak) their PSS and anonymous PSS (:func:`_rollup`; the file pages of a mapped
    index are the difference), and the RSS of linksim's own processes (the tree less the JVMs it
    starts: the import tool of a bulk load). ``peak_file``: the file pages' PSS at the PSS peak."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.peak = 0
        self.peak_pss = 0
        self.peak_anon = 0
        self.peak_file = 0
        self.peak_anon_parts: list[dict] = []  # each process's PSS and anonymous PSS at the anonymous peak
        self.peak_own = 0
        self.peak_pss_at = 0.0  # time.monotonic() of the PSS peak: which stage it fell in
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        import psutil

        polls = 0
        while not self._stop.is_set():
            # RSS every 0.2 s (cheap); PSS reads the process's page tables, which costs a fifth of a
            # core on a process mapping a large index every 0.2 s: every 1 s, and at every new RSS
            # peak (a peak of a few seconds, such as the stream's merge, falls between two).
            polls += 1
            try:
                tree = [self.root, *self.root.children(recursive=True)]
                sizes = []
                for process in tree:
                    try:
                        sizes.append((process, process.memory_info().rss))
                    except psutil.Error:
                        pass
                total = sum(rss for _, rss in sizes)
                own = sum(rss for process, rss in sizes if "java" not in _name(process))
                if polls % 5 == 1 or total > self.peak:
                    pss = anon = 0
                    each = []
                    for process, _ in sizes:
                        try:
                            whole, anonymous = _rollup(process.pid)
                        except (OSError, KeyError, ValueError):
                            continue  # ended meanwhile
                        pss += whole
                        anon += anonymous
                        each.append({"pid": process.pid, "name": _name(process), "pss": whole, "anon": anonymous})
                    if pss > self.peak_pss:
                        self.peak_pss, self.peak_pss_at, self.peak_file = pss, time.monotonic(), pss - anon
                    if anon > self.peak_anon:
                        # whose the anonymous peak is: the parent's arrays, or what forked workers copied
                        self.peak_anon, self.peak_anon_parts = anon, each
                self.peak = max(self.peak, total)
                self.peak_own = max(self.peak_own, own)
            except psutil.Error:
                return
            self._stop.wait(0.2)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def generated_graph(links: str):
    """The generated crawl of ``links`` links (seed 1) as a :class:`linksim.graph.LinkGraph`, in memory."""
    import numpy as np

    from linksim.generate import generate_links
    from linksim.graph import LinkGraph
    from linksim.parameters import PARAMETERS

    count = PARAMETERS["links"].check(links)
    source = np.empty(count, np.int32)
    target = np.empty(count, np.int32)
    for _ in generate_links(count, seed=1, source=source, target=target):
        pass
    return LinkGraph.from_edges(source, target)


def recrawled_graph(graph, share: float, rng):
    """``graph`` after a recrawl of ``share`` of its pages with out-links: each loses each of its
    links with probability 0.3 and gains as many, to targets of links drawn at random (pages in
    proportion to their in-degree, as the copying model links); the same pages."""
    import numpy as np

    from linksim.graph import LinkGraph

    source, target = graph.edges()
    crawled = np.flatnonzero(graph.out_degree > 0)
    chosen = rng.choice(crawled, size=max(1, int(round(share * len(crawled)))), replace=False)
    lost = np.isin(source, chosen) & (rng.random(len(source)) < 0.3)
    gained = target[rng.integers(0, len(target), int(lost.sum()))]
    return LinkGraph.from_edges(np.concatenate([source[~lost], source[lost]]), np.concatenate([target[~lost], gained]),
                                graph.n)


def gds_anchor(runner, label: str = "", every: int = 1) -> float:
    """GDS writing top-10 lists with its own writer: gds.knn.write on one node property; its
    relationships/s. ``every`` > 1: the lists of the pages whose id is a multiple of it (their
    stored ``pagerank``, projected by Cypher aggregation), among themselves, written into the same
    store: the writer's rate where the whole graph's kNN would take hours."""
    runner.run("CALL gds.graph.drop('linksim_write', false) YIELD graphName RETURN graphName")
    if every > 1:
        runner.run("MATCH (p:Page) WHERE id(p) % $every = 0 "
                   "WITH gds.graph.project('linksim_write', p, null, "
                   "{sourceNodeProperties: p {pr: coalesce(p.pagerank, 0.0)}, targetNodeProperties: null}) AS graph "
                   "RETURN graph.nodeCount",
                   {"every": every})
    else:
        runner.run("CALL gds.graph.project('linksim_write', 'Page', 'LINKS_TO') YIELD nodeCount RETURN nodeCount")
        runner.run("CALL gds.pageRank.mutate('linksim_write', {mutateProperty: 'pr'}) YIELD nodePropertiesWritten "
                   "RETURN nodePropertiesWritten")
    rows = runner.run("CALL gds.knn.write('linksim_write', {nodeProperties: ['pr'], topK: 10, concurrency: 2, "
                      "writeRelationshipType: 'GDS_SIMILAR', writeProperty: 'score', writeConcurrency: 2}) "
                      "YIELD relationshipsWritten, writeMillis, computeMillis "
                      "RETURN relationshipsWritten, writeMillis, computeMillis")
    written, millis = rows[0]["relationshipsWritten"], rows[0]["writeMillis"]
    print(f"anchor, GDS's writer{label} (gds.knn.write top 10, one property): {written:,} relationships in "
          f"{millis / 1000:.1f} s, {written / (millis / 1000):,.0f}/s (compute {rows[0]['computeMillis'] / 1000:.1f} s)")
    runner.run("CALL gds.graph.drop('linksim_write', false) YIELD graphName RETURN graphName")
    runner.write_autocommit("MATCH ()-[s:GDS_SIMILAR]->() CALL (s) { DELETE s } IN TRANSACTIONS OF 50000 ROWS")
    return written / (millis / 1000)


def resumable_state(name: str, fresh: bool = False) -> tuple[Path, dict, Callable[[], object]]:
    """(folder, state, save) of a benchmark resumable stage by stage: ``<home>/<name>/state.json``
    read back (unless ``fresh``), and ``save()`` writing it again after a stage."""
    import json

    from linksim.home import linksim_home

    folder = linksim_home() / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "state.json"
    state = {} if fresh or not path.exists() else json.loads(path.read_text())
    return folder, state, lambda: path.write_text(json.dumps(state, indent=1))


def results_header(argv: list[str]) -> dict:
    """What a results file says of itself: the commit (and whether the tree had changes), the
    machine, the command, when."""
    root = Path(__file__).resolve().parents[1]

    def git(*words: str) -> str:
        return subprocess.run(["git", *words], cwd=root, capture_output=True, text=True).stdout.strip()

    cores = len(os.sched_getaffinity(0))
    memory = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), "?")
    return {"commit": git("rev-parse", "HEAD"), "tree_changed": bool(git("status", "--porcelain", "--", "linksim",
                                                                          "loader", "procedures", "cypher")),
            "machine": f"{platform.node()}: {cores} cores, {int(memory) // 2**20} GiB, {platform.platform()}",
            "command": " ".join(["python", *argv]), "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}


class MemoryCap:
    """A memory cgroup of ``limit`` bytes for a stage's process tree (cgroup v2, or v1's memory
    controller): the kernel charges it the stage's anonymous memory and the page cache it reads in
    (the index files it maps) and reclaims that cache, not the other processes', at the limit; a
    stage that needs more anonymous memory than the limit is killed. What it shows is that linksim
    runs in the budget, and at what speed, not only what it held where memory was free.

    Page cache read in before the stage (by the stage that wrote the index) is charged to whoever
    read it, so :meth:`start` drops the clean page cache first. ``peak()``: the cgroup's own peak
    (anonymous memory and page cache), ``failures()``: how often it hit the limit."""

    V2, V1 = Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/memory")

    def __init__(self, limit: int, name: str) -> None:
        self.limit = limit
        if (self.V2 / "cgroup.controllers").exists():
            self.folder, self.files = self.V2 / name, ("memory.max", "memory.peak", "memory.events")
        elif self.V1.is_dir():
            self.folder, self.files = self.V1 / name, ("memory.limit_in_bytes", "memory.max_usage_in_bytes",
                                                       "memory.failcnt")
        else:
            raise SystemExit("--memory-cap needs a memory cgroup (v2, or v1's memory controller) this user may create")

    def start(self) -> None:
        if self.folder.exists():
            self.folder.rmdir()  # a stage killed before it was removed: empty, its charges gone to the parent
        self.folder.mkdir()
        (self.folder / self.files[0]).write_text(str(self.limit))
        try:
            subprocess.run(["sync"], check=True)
            Path("/proc/sys/vm/drop_caches").write_text("1")
        except OSError as error:
            raise SystemExit(f"--memory-cap drops the page cache before a stage (else the index files cached "
                             f"before it are not charged to it): {error}") from None

    def join(self) -> None:
        """Move the calling process (a child before it executes: ``preexec_fn``) into the cgroup."""
        (self.folder / "cgroup.procs").write_text(str(os.getpid()))

    def peak(self) -> int:
        return int((self.folder / self.files[1]).read_text())

    def failures(self) -> int:
        text = (self.folder / self.files[2]).read_text()
        if self.files[2] == "memory.failcnt":
            return int(text)
        return sum(int(line.split()[1]) for line in text.splitlines() if line.split()[0] in ("max", "oom"))

    def stop(self) -> None:
        try:
            self.folder.rmdir()
        except OSError:
            pass
