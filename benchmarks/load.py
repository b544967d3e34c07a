"""Loader benchmark: cnr-2000 (325,557 pages, 3,216,152 links) online, in bulk mode, and through
Neo4j's import tool run directly on the same CSV files, in one run.

    .venv/bin/python benchmarks/load.py [--data ../shared/data] [--instance bench]

Runs on its own local instance (default ``bench``, free ports), so it never touches your data.
Each linksim load runs as a child process (``linksim load --json``) so that its peak memory is its
own (``wait4`` rusage). Prints, per path: wall time, write time, links/s on both, peak memory of
the loader process, and the ratio of linksim's bulk mode to the import tool alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_child(command: list[str], env: dict[str, str], out: Path) -> tuple[dict, float, int]:
    """Run a command; return its JSON output, wall seconds and its own peak RSS in MiB."""
    began = time.monotonic()
    with open(out, "w") as stdout:
        process = subprocess.Popen(command, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)
        stderr = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)  # rusage of this child alone
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - began
    if process.returncode != 0:
        sys.exit(f"command failed ({process.returncode}): {' '.join(command)}\n{stderr[-2000:]}")
    return json.loads(out.read_text()), wall, usage.ru_maxrss // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--instance", default="bench")
    parser.add_argument("--heap", default="4g")
    parser.add_argument("--pagecache", default="2g")
    parser.add_argument("--skip-bulk", action="store_true", help="online loads only")
    args = parser.parse_args()

    from linksim.loader.bulk import bulk_import_command, needs_multiline, write_csv_files
    from linksim.loader import read_files
    from linksim.procedures import QueryRunner
    from linksim.procedures.maintenance import clear_database
    from linksim.server import LocalServer, ServerSettings
    from linksim.server.connection import Connection

    crawl = args.data / "cnr-2000" / "cnr-2000.edges.tsv.gz"
    if not crawl.exists():
        sys.exit(f"{crawl} is missing: put the shared data set there or pass --data")
    settings = ServerSettings.from_env(
        instance=args.instance, bolt_port=free_port(), http_port=free_port(), heap=args.heap,
        pagecache=args.pagecache,
    )
    server = LocalServer(settings)
    server.stop()
    server.start()
    env = dict(os.environ, LINKSIM_INSTANCE=args.instance)
    for var in ("NEO4J_URI", "NEO4J_PASSWORD", "NEO4J_PASSWORD_FILE"):
        env.pop(var, None)
    connection = Connection(settings.uri, "neo4j", server.password(), "neo4j", "local")

    def wipe() -> None:
        with QueryRunner.connect(connection) as runner:
            clear_database(runner)

    print(f"cnr-2000 load benchmark on Neo4j {settings.neo4j_version} (instance {args.instance}, "
          f"heap {settings.heap}, page cache {settings.pagecache}, {os.cpu_count()} cores)\n")
    results = {}
    # Online twice: on the freshly started server, then again on a server whose JIT has warmed up
    # (the first Cypher batches of a fresh JVM run interpreted code).
    paths = (("online, cold server", "online"), ("online, warm server", "online"), ("bulk", "bulk"))
    for label, mode in paths[:2] if args.skip_bulk else paths:
        wipe()
        command = [str(Path(sys.executable).parent / "linksim"), "-q", "load", "--mode", mode, "--json", str(crawl)]
        summary, wall, peak = run_child(command, env, settings.instance_dir / "bench-load.json")
        results[label] = (summary, wall, peak)
    if args.skip_bulk:
        for label, (summary, wall, peak) in results.items():
            n = summary["links_created"]
            print(f"{label}: wall {wall:.1f} s, write {summary['write_seconds']:.1f} s, "
                  f"{n / summary['write_seconds']:,.0f} links/s (write), {n / wall:,.0f} links/s (wall), {peak} MiB")
        server.stop()
        return

    # Neo4j's import tool alone, on the same CSV files linksim's bulk mode writes.
    graph, _ = read_files([crawl])
    links = graph.links()
    folder = settings.import_dir / "bench-direct"
    pages_csv, links_csv = write_csv_files(graph, links, folder)
    server.stop()
    began = time.monotonic()
    result = subprocess.run(bulk_import_command(server, "neo4j", pages_csv, links_csv, folder / "report",
                                                needs_multiline(graph)),
                            env=server.env(), capture_output=True, text=True)
    direct = time.monotonic() - began
    shutil.rmtree(folder, ignore_errors=True)
    server.start()
    if result.returncode != 0:
        sys.exit(f"import tool failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")

    n = len(links)
    print(f"{'path':<36}{'wall s':>8}{'write s':>9}{'links/s wall':>14}{'links/s write':>15}{'peak MiB':>10}")
    for mode, (summary, wall, peak) in results.items():
        write = summary["write_seconds"]
        print(f"{'linksim load, ' + mode:<36}{wall:>8.1f}{write:>9.1f}{n / wall:>14,.0f}"
              f"{n / write:>15,.0f}{peak:>10}")
    print(f"{'neo4j-admin import (direct)':<36}{direct:>8.1f}{direct:>9.1f}{n / direct:>14,.0f}{n / direct:>15,.0f}{'-':>10}")
    bulk_summary = results["bulk"][0]
    print(f"\nbulk-mode phases (s): {json.dumps({k: round(v, 1) for k, v in bulk_summary['timings'].items()})}, "
          f"read {bulk_summary['read_seconds']:.1f}")
    print(f"ratio linksim bulk write / import tool alone: {bulk_summary['write_seconds'] / direct:.2f}x the time "
          f"({n / bulk_summary['write_seconds']:,.0f} vs {n / direct:,.0f} links/s)")
    print(f"counts: {n:,} links, {len(graph):,} pages; online created {results['online, warm server'][0]['links_created']:,}, "
          f"bulk created {bulk_summary['links_created']:,}")
    server.stop()


if __name__ == "__main__":
    main()
