"""Loader benchmark: cnr-2000 (325,557 pages, 3,216,152 links) online, in bulk mode, and through
Neo4j's import tool run directly on the same CSV files, in one run; or, with ``--links``, a
generated crawl of that many links in bulk mode beside the import tool alone.

    .venv/bin/python benchmarks/load.py [--data ../shared/data] [--instance bench]
    .venv/bin/python benchmarks/load.py --links 100M      # the crawl of benchmarks/scale.py, reused
    .venv/bin/python benchmarks/load.py --warc FILES      # the WARC reader beside FastWARC + Lexbor
    .venv/bin/python benchmarks/load.py --webgraph        # cnr-2000 as a BV graph beside its edge list

``--warc FILES``: no Neo4j. linksim's WARC reader (the pages and links a load gets: framed and
checked records, HTML parsed, links resolved and normalised, titles and anchor texts) beside
FastWARC + Lexbor's bare link extraction (the <a href> values of every HTML response), warcio +
Lexbor's, and the floor of any reader that keeps linksim's graph (FastWARC + Lexbor, the hrefs
with their anchor texts and a look-up each, nothing checked, resolved or recorded), on one core
each, each reading in a process of its own, the readers alternating over ``--rounds`` rounds; the
ratios of linksim's pages/s and the floor's to FastWARC's. Then a load's whole read of the files
(``read_files``) with one worker and with two, beside FastWARC + Lexbor in one process and in two
at once (the machine's own scaling), alternating (``--split N`` first cuts each file into N files
at record boundaries, gzip member by member, for a crawl of one file).
Written to ``benchmarks/results/warc-read.json``.

``--webgraph``: no Neo4j. cnr-2000's edge list made into a WebGraph BV graph with the WebGraph
tools (``webgraph from arcs``, ``webgraph build ef``: ``cargo install webgraph-cli``; found on the
PATH or in linksim's cache, ``<home>/cargo/bin``), then both read as a load reads them, in
alternating rounds: the two graphs must be equal (pages and links), and the read times and
their ratio are written to ``benchmarks/results/webgraph-read.json``.

Runs on its own local instance (default ``bench``, free ports), so it never touches your data.
Each linksim load runs as a child process (``linksim load --json``); its memory is polled: the
peak RSS of linksim's own processes (the import tool's JVM, which the bulk mode starts, apart) and
of the whole tree. Prints, per path: wall time, write time, links/s on both, peak memory, and the
ratio of linksim's bulk mode to the import tool alone (link rates over the whole load and over the
write, which is the CSV files, the server's stop and start and the import).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Peak, cli_env, free_port  # noqa: E402


def run_child(command: list[str], env: dict[str, str], out: Path) -> tuple[dict, float, int, int]:
    """Run a command; return its JSON output, wall seconds and the peak RSS in MiB of linksim's own
    processes and of the whole process tree (the import tool's JVM included)."""
    began = time.monotonic()
    with open(out, "w") as stdout:
        process = subprocess.Popen(command, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)
        peak = Peak(process.pid)
        stderr = process.stderr.read()
        process.wait()
        peak.stop()
    wall = time.monotonic() - began
    if process.returncode != 0:
        sys.exit(f"command failed ({process.returncode}): {' '.join(command)}\n{stderr[-2000:]}")
    return json.loads(out.read_text()), wall, peak.peak_own >> 20, peak.peak >> 20


def generated_crawl(size: str, seed: int) -> Path:
    """The generated crawl of benchmarks/scale.py (``<home>/scale/crawl-<size>.tsv.gz``), made
    with ``linksim generate`` when it is not there."""
    from linksim.home import linksim_home
    from linksim.parameters import PARAMETERS

    links = PARAMETERS["links"].check(size)
    label = f"{links // 1_000_000}M" if links % 1_000_000 == 0 else str(links)
    folder = linksim_home() / "scale"
    folder.mkdir(parents=True, exist_ok=True)
    crawl = folder / f"crawl-{label}.tsv.gz"
    if not crawl.exists():
        print(f"generating {crawl} ...", flush=True)
        subprocess.run([str(Path(sys.executable).parent / "linksim"), "-q", "generate", str(crawl), "--links",
                        str(links), "--seed", str(seed)], check=True)
    return crawl


def split_members(path: Path, parts: int, folder: Path) -> list[Path]:
    """``path`` (a WARC.gz of one gzip member a record) cut into ``parts`` files of consecutive
    members, about equal in size: the same records, byte for byte."""
    import zlib

    data = path.read_bytes()
    view = memoryview(data)
    ends, at = [], 0
    while at < len(data):
        member, fed = zlib.decompressobj(wbits=31), 0
        while not member.eof and at + fed < len(data):  # fed a piece at a time: the rest is not copied
            piece = view[at + fed : at + fed + (1 << 16)]
            member.decompress(piece)
            fed += len(piece)
        at += fed - len(member.unused_data)
        ends.append(at)
    folder.mkdir(parents=True, exist_ok=True)
    files, begin = [], 0
    for number in range(parts):
        goal = len(data) * (number + 1) // parts
        end = next((e for e in ends if e >= goal), len(data))
        files.append(folder / f"{path.name.split('.')[0]}-{number + 1}.warc.gz")
        files[-1].write_bytes(data[begin:end])
        begin = end
    return files


#: The reads of all the files of ``--warc``: (reader of _warc_read.py, processes at once, each a
#: share of the files: the slower one's time). FastWARC + Lexbor's are the machine's own scaling.
PARALLEL_READS = {"workers=1": ("workers=1", 1), "workers=2": ("workers=2", 1),
                  "fastwarc, 1 process": ("fastwarc", 1), "fastwarc, 2 processes": ("fastwarc", 2)}


def warc_read(paths: list[Path], rounds: int, out: Path, split: int = 1) -> None:
    """linksim's WARC reader beside FastWARC + Lexbor and warcio + Lexbor, alternating, one core
    each; then a load's read of the files with one worker and with two."""
    import tempfile

    from _common import results_header

    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"no such WARC file: {', '.join(missing)}")
    script = Path(__file__).resolve().parent / "_warc_read.py"
    readers = ("linksim", "fastwarc", "floor", "warcio")
    core = str(max(os.sched_getaffinity(0)))  # the last core: the first takes more of the machine's interrupts
    runs: dict[str, list[dict]] = {name: [] for name in readers}
    for number in range(rounds):
        for name in readers if number % 2 == 0 else readers[::-1]:
            done = subprocess.run(["taskset", "-c", core, sys.executable, str(script), name, *map(str, paths)],
                                  capture_output=True, text=True, check=True)
            runs[name].append(json.loads(done.stdout.splitlines()[-1]))
            run = runs[name][-1]
            print(f"round {number + 1}, {name}: {run['pages']:,} pages, {run['links']:,} links in "
                  f"{run['seconds']:.1f} s, {run['pages'] / run['seconds']:,.0f} pages/s", flush=True)
    scratch = tempfile.TemporaryDirectory(prefix="warc-split-")
    files = [part for path in paths for part in split_members(path, split, Path(scratch.name))] if split > 1 else paths
    parallel = tuple(PARALLEL_READS)
    for number in range(rounds):
        for name in parallel if number % 2 == 0 else parallel[::-1]:
            reader, processes = PARALLEL_READS[name]
            shares = [files[len(files) * p // processes : len(files) * (p + 1) // processes] for p in range(processes)]
            children = [subprocess.Popen([sys.executable, str(script), reader, *map(str, share)],
                                         stdout=subprocess.PIPE, text=True) for share in shares]
            done = [json.loads(child.communicate()[0].splitlines()[-1]) for child in children]
            if any(child.returncode for child in children):
                sys.exit(f"{name} failed")
            runs.setdefault(name, []).append({"pages": sum(d["pages"] for d in done),
                                              "links": sum(d["links"] for d in done),
                                              "seconds": max(d["seconds"] for d in done)})
            run = runs[name][-1]
            print(f"round {number + 1}, read of {len(files)} files, {name}: {run['pages']:,} pages in "
                  f"{run['seconds']:.1f} s, {run['pages'] / run['seconds']:,.0f} pages/s", flush=True)
    scratch.cleanup()
    best = {name: max(r["pages"] / r["seconds"] for r in found) for name, found in runs.items()}
    median = {name: sorted(r["pages"] / r["seconds"] for r in found)[len(found) // 2] for name, found in runs.items()}
    summary = {"files": [str(p) for p in paths], "bytes": sum(p.stat().st_size for p in paths),
               "pages_per_second_best": {k: round(v) for k, v in best.items()},
               "pages_per_second_median": {k: round(v) for k, v in median.items()},
               "linksim_over_fastwarc_median": round(median["linksim"] / median["fastwarc"], 3),
               "linksim_over_warcio_median": round(median["linksim"] / median["warcio"], 3),
               "floor_over_fastwarc_median": round(median["floor"] / median["fastwarc"], 3),
               "files_read_by_workers": len(files),
               "two_workers_over_one_median": round(median["workers=2"] / median["workers=1"], 3),
               "fastwarc_two_processes_over_one_median": round(
                   median["fastwarc, 2 processes"] / median["fastwarc, 1 process"], 3)}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**results_header(sys.argv), "rounds": rounds, "one_core": f"taskset -c {core}",
                               "runs": runs, "summary": summary}, indent=1))
    print(json.dumps(summary, indent=1))
    print(f"written to {out}")


def webgraph_read(crawl: Path, rounds: int, out: Path) -> None:
    """cnr-2000 as a BV graph (made by the WebGraph tools) read beside its edge list: equal graphs,
    the read times."""
    import tempfile

    import numpy as np

    from _common import results_header
    from linksim.home import linksim_home as home
    from linksim.loader import read_files

    tool = shutil.which("webgraph") or shutil.which("webgraph", path=str(home() / "cargo" / "bin"))
    if tool is None:
        sys.exit("the WebGraph tools are needed to write the BV graph: cargo install --root "
                 f"{home() / 'cargo'} webgraph-cli")
    scratch = tempfile.TemporaryDirectory(prefix="webgraph-")
    basename = Path(scratch.name) / crawl.name.split(".")[0]
    with read_files([crawl])[0] as listed:
        nodes = max(int(url) for url in listed.urls) + 1
        links = listed.links()
        arcs = np.stack([np.array(listed.urls, dtype=np.int64)[links.source],
                         np.array(listed.urls, dtype=np.int64)[links.target]], axis=1)
    text = "".join(f"{a}\t{b}\n" for a, b in arcs.tolist()).encode()
    subprocess.run([tool, "from", "arcs", "--num-nodes", str(nodes), str(basename)], input=text, check=True,
                   capture_output=True)
    subprocess.run([tool, "build", "ef", str(basename)], check=True, capture_output=True)
    runs: dict[str, list[float]] = {"edge list": [], "webgraph": []}
    inputs = {"edge list": crawl, "webgraph": basename.with_suffix(".graph")}
    for number in range(rounds):
        for name in inputs if number % 2 == 0 else list(inputs)[::-1]:
            began = time.perf_counter()
            graph, _ = read_files([inputs[name]])
            runs[name].append(round(time.perf_counter() - began, 3))
            with graph:
                found = graph.links()
                pairs = np.array(graph.urls, dtype=np.int64)
                pairs = np.unique(np.stack([pairs[found.source], pairs[found.target]], axis=1), axis=0)
            if not np.array_equal(pairs, np.unique(arcs, axis=0)):
                sys.exit(f"the {name} read gives another graph than the edge list's arcs")
            print(f"round {number + 1}, {name}: {len(pairs):,} links equal to the edge list's, "
                  f"{runs[name][-1]:.2f} s", flush=True)
    bytes_of = {"edge list": crawl.stat().st_size,
                "webgraph": sum(f.stat().st_size for f in Path(scratch.name).iterdir())}
    scratch.cleanup()
    median = {name: sorted(found)[len(found) // 2] for name, found in runs.items()}
    summary = {"crawl": crawl.name, "nodes": nodes, "links": int(len(arcs)), "equal": True,
               "bytes": bytes_of, "seconds_median": median,
               "webgraph_over_edge_list_speed": round(median["edge list"] / median["webgraph"], 3)}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**results_header(sys.argv), "rounds": rounds, "runs": runs, "summary": summary},
                              indent=1))
    print(json.dumps(summary, indent=1))
    print(f"written to {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--instance", default="bench")
    parser.add_argument("--heap", default="4g")
    parser.add_argument("--pagecache", default="2g")
    parser.add_argument("--skip-bulk", action="store_true", help="online loads only")
    parser.add_argument("--links", help="a generated crawl of this many links (10M, 100M), bulk mode only")
    parser.add_argument("--seed", type=int, default=1, help="the generated crawl's seed (default 1)")
    parser.add_argument("--warc", nargs="+", type=Path, metavar="FILE",
                        help="time the WARC reader on these files beside FastWARC + Lexbor (no Neo4j)")
    parser.add_argument("--rounds", type=int, default=3, help="--warc: rounds of every reader (default 3)")
    parser.add_argument("--split", type=int, default=1, metavar="N",
                        help="--warc: cut each file into N files at record boundaries for the workers' timing")
    parser.add_argument("--webgraph", action="store_true",
                        help="cnr-2000 as a WebGraph BV graph read beside its edge list (no Neo4j)")
    parser.add_argument("--out", type=Path, default=None,
                        help="the results file (default benchmarks/results/warc-read.json or webgraph-read.json)")
    args = parser.parse_args()
    if args.warc:
        return warc_read(args.warc, args.rounds, args.out or REPO / "benchmarks" / "results" / "warc-read.json",
                         args.split)
    if args.webgraph:
        return webgraph_read(args.data / "cnr-2000" / "cnr-2000.edges.tsv.gz", args.rounds,
                             args.out or REPO / "benchmarks" / "results" / "webgraph-read.json")

    from linksim.loader.bulk import bulk_import_command, needs_multiline, write_csv_files
    from linksim.loader import read_files
    from linksim.procedures import QueryRunner
    from linksim.procedures.maintenance import clear_database
    from linksim.server import LocalServer, ServerSettings
    from linksim.server.connection import Connection

    crawl = generated_crawl(args.links, args.seed) if args.links else args.data / "cnr-2000" / "cnr-2000.edges.tsv.gz"
    if not crawl.exists():
        sys.exit(f"{crawl} is missing: put the shared data set there or pass --data")
    settings = ServerSettings.from_env(
        instance=args.instance, bolt_port=free_port(), http_port=free_port(), heap=args.heap,
        pagecache=args.pagecache,
    )
    server = LocalServer(settings)
    server.stop()
    server.start()
    env = cli_env(args.instance)
    connection = Connection(settings.uri, "neo4j", server.password(), "neo4j", "local")

    def wipe() -> None:
        with QueryRunner.connect(connection) as runner:
            clear_database(runner)

    print(f"{crawl.name} load benchmark on Neo4j {settings.neo4j_version} (instance {args.instance}, "
          f"heap {settings.heap}, page cache {settings.pagecache}, {os.cpu_count()} cores)\n")
    results = {}
    # Online twice: on the freshly started server, then again on a server whose JIT has warmed up
    # (the first Cypher batches of a fresh JVM run interpreted code).
    paths = (("online, cold server", "online"), ("online, warm server", "online"), ("bulk", "bulk"))
    if args.links:
        paths = paths[2:]
    for label, mode in paths[:2] if args.skip_bulk else paths:
        wipe()
        command = [str(Path(sys.executable).parent / "linksim"), "-q", "load", "--mode", mode, "--json", str(crawl)]
        results[label] = run_child(command, env, settings.instance_dir / "bench-load.json")
    if args.skip_bulk:
        for label, (summary, wall, peak, _) in results.items():
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
    pages, multiline = len(graph), needs_multiline(graph)
    graph.close()
    server.stop()
    began = time.monotonic()
    result = subprocess.run(bulk_import_command(server, "neo4j", pages_csv, links_csv, folder / "report",
                                                multiline),
                            env=server.env(), capture_output=True, text=True)
    direct = time.monotonic() - began
    shutil.rmtree(folder, ignore_errors=True)
    server.start()
    if result.returncode != 0:
        sys.exit(f"import tool failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")

    n = len(links)
    print(f"{'path':<36}{'wall s':>8}{'write s':>9}{'links/s wall':>14}{'links/s write':>15}"
          f"{'linksim MiB':>12}{'tree MiB':>10}")
    for mode, (summary, wall, peak, tree) in results.items():
        write = summary["write_seconds"]
        print(f"{'linksim load, ' + mode:<36}{wall:>8.1f}{write:>9.1f}{n / wall:>14,.0f}"
              f"{n / write:>15,.0f}{peak:>12}{tree:>10}")
    print(f"{'neo4j-admin import (direct)':<36}{direct:>8.1f}{direct:>9.1f}{n / direct:>14,.0f}{n / direct:>15,.0f}"
          f"{'-':>12}{'-':>10}")
    bulk_summary = results["bulk"][0]
    print(f"\nbulk-mode phases (s): {json.dumps({k: round(v, 1) for k, v in bulk_summary['timings'].items()})}, "
          f"read {bulk_summary['read_seconds']:.1f}")
    bulk_wall = results["bulk"][1]
    print(f"linksim bulk / import tool alone, link rate: {direct / bulk_wall:.2f}x over the whole load "
          f"({n / bulk_wall:,.0f} vs {n / direct:,.0f} links/s), {direct / bulk_summary['write_seconds']:.2f}x over "
          f"the write ({n / bulk_summary['write_seconds']:,.0f} links/s)")
    online = results.get("online, warm server")
    print(f"counts: {n:,} links, {pages:,} pages; "
          + (f"online created {online[0]['links_created']:,}, " if online else "")
          + f"bulk created {bulk_summary['links_created']:,}")
    server.stop()


if __name__ == "__main__":
    main()
