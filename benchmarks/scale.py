"""Every stage of linksim on generated labelled crawls of 10M, 30M and 100M links, resumable stage by stage.

For each size: generate the crawl (`linksim generate --labels`: planted topics, sites, sections and
navigation hubs; reused if the file is there), bulk-load it into a Neo4j instance of its own
(`scale-<size>`, with Graph Data Science unless `--no-gds`), then `linksim pagerank`, `linksim
index METHOD` (default: linksim's default method), `linksim similar METHOD --top-k 10` for all
pages, GDS's own writer of top-10 lists on the same store (`gds.knn.write`, the SIMILAR_TO write's
anchor), the lists graded against the planted labels on a sample of pages beside 1-step Jaccard of
links both ways and the hub-weighted cosine on the same pages, and 1,000 related-pages Cypher
queries. Each stage runs in a new process; the script polls the process tree for its peak RSS (the
JVM and forked workers included, which `time -v` does not see), and prints per stage: wall time,
linksim's peak RSS (and PSS, anonymous) beside its estimate (`--estimate`), Neo4j's RSS, heap and
page cache settings, the store's and the index's size on disk; then the grades, the write against
GDS's and a log-log fit of time against links per stage (the growth exponent).

A stage's result is kept in `<home>/scale/results-<method>.json` as soon as it ends: a rerun skips
what is done (`--redo STAGE` to run one again), so an interrupted run resumes where it stopped. A
stage that fails (a refused budget, say) is recorded with its exit code and message, and the stages
that depend on it are skipped. The report is written to `--json` (default
`benchmarks/results/scale.json`) with the commit, machine and command.

    .venv/bin/python benchmarks/scale.py --sizes 10M 30M 100M [--heap 4g --pagecache 6g]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import MemoryCap, Peak, free_port, results_header  # noqa: E402

STAGES = ("generate", "load", "pagerank", "index", "similar", "gds", "grade", "queries")
DEPENDS = {"load": "generate", "pagerank": "load", "index": "load", "similar": "index", "gds": "similar",
           "grade": "similar", "queries": "similar"}
PIPELINE = ("generate", "load", "pagerank", "index", "similar", "queries")  #: what a user runs
#: The stages that run linksim alone, which --memory-cap confines (load runs Neo4j's import tool)
CAPPED = ("generate", "pagerank", "index", "similar")
#: The methods whose `similar` takes --sample (fingerprint trees)
SAMPLED = ("simrank", "psimrank", "xjaccard", "ppsimrank")
HERE = Path(__file__).resolve().parent


def parse_size(text: str) -> int:
    from linksim.parameters import PARAMETERS

    return PARAMETERS["links"].check(text)


def run_stage(command: list[str], env: dict, log: Path, cap: MemoryCap | None = None) -> dict:
    """Run a linksim command, measuring wall time and peak RSS of its process tree; in the memory
    cgroup ``cap`` if given (its peak and how often it hit the limit recorded)."""
    if cap:
        cap.start()
    began = time.monotonic()
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(f"\n$ {' '.join(command)}\n")
        handle.flush()
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=handle, text=True, cwd="/",
                                   preexec_fn=cap.join if cap else None)
        peak = Peak(process.pid)
        out, _ = process.communicate()
        rss = peak.stop()
        handle.write(out)
    result = {"seconds": round(time.monotonic() - began, 1), "peakRss": rss, "peakPss": peak.peak_pss,
              "peakAnon": peak.peak_anon, "peakFile": peak.peak_file, "peakAnonParts": peak.peak_anon_parts,
              "peakOwn": peak.peak_own, "exit": process.returncode, "output": out[-4000:]}
    if cap:
        result.update(cap=cap.limit, capPeak=cap.peak(), capFailures=cap.failures())
        cap.stop()
    return result


def neo4j_rss(home: Path, instance: str) -> int:
    import psutil

    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if "CommunityEntryPoint" in cmdline and f"instances/{instance}" in cmdline:
            return process.memory_info().rss
    return 0


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from linksim.methods import DEFAULT_METHOD

    parser.add_argument("--sizes", nargs="+", default=["10M", "30M", "100M"])
    parser.add_argument("--method", default=DEFAULT_METHOD, help=f"the method indexed (default {DEFAULT_METHOD})")
    parser.add_argument("--grade-sample", type=int, default=2000,
                        help="labelled pages graded (default 2000, drawn with seed 0)")
    parser.add_argument("--no-gds", action="store_true", help="without GDS (no gds.knn.write anchor)")
    parser.add_argument("--gds-every", default="100M=10",
                        help="SIZE=N,...: at these sizes, GDS's anchor writes the lists of one page in N, in the "
                        "same store (default 100M=10: the whole kNN would take hours there)")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "scale.json",
                        help="results file (default benchmarks/results/scale.json)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--heap", default="4g", help="Neo4j heap of the scale instances (default 4g)")
    parser.add_argument("--pagecache", default="6g", help="Neo4j page cache (default 6g)")
    parser.add_argument("--redo", nargs="*", default=[], choices=STAGES, help="run these stages again")
    parser.add_argument("--only", nargs="*", choices=STAGES, help="run only these stages")
    parser.add_argument("--keep-server", action="store_true", help="leave the instances running")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: print the report of the stages done and write it to --json")
    parser.add_argument("--sample", default="16",
                        help="similar --sample of the fingerprint methods (members a top-k list reads per "
                        "large tree range; default 16, linksim's; 0: exact lists)")
    parser.add_argument("--memory-budget", default="12G",
                        help="LINKSIM_MEMORY_BUDGET of the runs and their estimates (default 12G, the issue's "
                        "limit on linksim's peak: an index over it is built on disk; none: every index in "
                        "memory)")
    parser.add_argument("--memory-cap", default=None,
                        help="run the stages of linksim alone (" + ", ".join(CAPPED) + ") in a memory cgroup of "
                        "this size (12G, say; root, or a delegated cgroup): anonymous memory and the page cache "
                        "they read in held to it by the kernel, the clean page cache dropped before each; "
                        "default: no cap")
    args = parser.parse_args()

    from linksim.estimate import parse_bytes
    from linksim.home import linksim_home

    cap_bytes = parse_bytes(args.memory_cap)

    home = linksim_home()
    folder = home / "scale"
    folder.mkdir(parents=True, exist_ok=True)
    results_file = folder / f"results-{args.method}.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    if not results and args.json.exists():
        # A new machine (no cache): start from the committed report's sizes of the same method, so that
        # this run adds its sizes to them instead of writing a report of its sizes alone.
        report_file = json.loads(args.json.read_text())
        if report_file.get("method") == args.method:
            results = report_file.get("sizes", {})
    linksim = str(Path(sys.executable).parent / "linksim")
    mine: set[str] = set()  # the sizes this run writes

    def save() -> None:
        # Another run of other sizes may have saved since this one began: keep its sizes, write ours.
        current = json.loads(results_file.read_text()) if results_file.exists() else {}
        results.update({label: stages for label, stages in current.items() if label not in mine})
        results_file.write_text(json.dumps(results, indent=2))

    for size in [] if args.report else args.sizes:
        links = parse_size(size)
        label = f"{links // 1_000_000}M" if links % 1_000_000 == 0 else str(links)
        crawl = folder / f"labelled-{label}.tsv.gz"
        categories = folder / f"labelled-{label}.categories.tsv"
        instance = f"scale-{label}"
        done = results.setdefault(label, {})
        mine.add(label)
        env = dict(os.environ, LINKSIM_INSTANCE=instance, LINKSIM_HEAP=args.heap, LINKSIM_PAGECACHE=args.pagecache,
                   LINKSIM_BOLT_PORT=str(free_port()), LINKSIM_HTTP_PORT=str(free_port()),
                   LINKSIM_INDEX_DIR=str(folder / f"indexes-{label}"), LINKSIM_MEMORY_BUDGET=args.memory_budget)
        for key in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "NEO4J_PASSWORD_FILE", "NEO4J_DATABASE"):
            env.pop(key, None)
        log = folder / f"scale-{label}.log"
        start = [linksim, "-q", "neo4j", "start"] + ([] if args.no_gds else ["--with-gds"])
        method = args.method
        sample = ["--sample", args.sample] if method in SAMPLED else []
        started = False
        for stage in STAGES:
            if args.only and stage not in args.only:
                continue
            if stage in done and done[stage].get("exit") == 0 and stage not in args.redo:
                continue
            need = DEPENDS.get(stage)
            if need and done.get(need, {}).get("exit") != 0:
                print(f"{label} {stage}: skipped ({need} has not succeeded)")
                continue
            if stage != "generate" and not started:
                subprocess.run(start, env=env, check=True, cwd="/")
                started = True
            print(f"{label} {stage}: running ...", flush=True)
            cap = MemoryCap(cap_bytes, f"linksim-scale-{label}-{stage}") if cap_bytes and stage in CAPPED else None
            # Every attempt's start, saved before it runs: a stage cut short (the session's end) and
            # run again (`similar` resumes from the lists it had finished) shows what it took in all.
            attempts = done.setdefault("attempts", {}).setdefault(stage, [])
            attempts.append({"began": time.time()})
            save()
            if stage == "generate":
                result = run_stage([linksim, "generate", str(crawl), "--links", str(links), "--seed",
                                    str(args.seed), "--labels", "--json"], env, log, cap) if not crawl.exists() else {
                    "seconds": 0.0, "peakRss": 0, "exit": 0, "output": "reused"}
            elif stage == "load":  # into a new instance (a new password too): the bulk import needs an empty store
                subprocess.run([linksim, "-q", "neo4j", "stop"], env=env, check=False, cwd="/")
                shutil.rmtree(home / "instances" / instance, ignore_errors=True)
                subprocess.run(start, env=env, check=True, cwd="/")
                result = run_stage([linksim, "load", str(crawl), "--mode", "bulk", "--json"], env, log)
            elif stage == "pagerank":
                estimate = run_stage([linksim, "pagerank", "--estimate", "--json"], env, log)
                result = run_stage([linksim, "pagerank", "--json"], env, log, cap)
                result["estimate"] = json.loads(estimate["output"]) if estimate["exit"] == 0 else None
            elif stage == "index":
                estimate = run_stage([linksim, "index", method, "--estimate", "--json"], env, log)
                # A stage run again builds again: the stored index of the same parameters is the old code's.
                rebuild = ["--rebuild"] if stage in args.redo else []
                result = run_stage([linksim, "index", method, "--json", *rebuild], env, log, cap)
                result["estimate"] = json.loads(estimate["output"]) if estimate["exit"] == 0 else None
            elif stage == "similar":
                estimate = run_stage([linksim, "similar", method, "--top-k", "10", "--estimate", "--json"], env, log)
                # Run again, the stage writes every list (not an update of the few that changed), so
                # that its write is measured against GDS's.
                rewrite = ["--rewrite"] if stage in args.redo else []
                result = run_stage([linksim, "similar", method, "--top-k", "10", *sample, *rewrite, "--json"], env, log, cap)
                result["estimate"] = json.loads(estimate["output"]) if estimate["exit"] == 0 else None
                result["sample"] = args.sample if sample else None
            elif stage == "gds":
                if args.no_gds:
                    continue
                every = dict(part.split("=") for part in args.gds_every.split(",") if part).get(label, "1")
                result = run_stage([sys.executable, str(HERE / "_scale_gds.py"), "--every", every], env, log)
            elif stage == "grade":
                result = run_stage([sys.executable, str(HERE / "_scale_grade.py"), "--crawl", str(crawl),
                                    "--categories", str(categories), "--method", method,
                                    "--sample", str(args.grade_sample)], env, log)
            else:
                result = run_stage([sys.executable, str(HERE / "_scale_queries.py"), "--count", "1000",
                                    "--method", method], env, log)
            result["neo4jRss"] = neo4j_rss(home, instance)
            result["storeBytes"] = folder_bytes(home / "instances" / instance / "data")
            result["indexBytes"] = folder_bytes(folder / f"indexes-{label}")
            # What each attempt came to, kept when a later one replaces the stage's result: a capped
            # stage stopped for its pace shows how far it got and at what rate.
            attempts[-1].update({key: result[key] for key in ("seconds", "exit", "peakPss", "peakAnon", "cap",
                                                              "capPeak", "capFailures") if key in result},
                                progress=last_progress(log))
            result["began"] = attempts[-1]["began"]  # the attempt it is: the report lists the others
            done[stage] = result
            save()
            print(f"{label} {stage}: exit {result['exit']}, {result['seconds']:.0f} s, peak RSS "
                  f"{result['peakRss'] / 2**30:.2f} GiB", flush=True)
        if started and not args.keep_server:
            subprocess.run([linksim, "-q", "neo4j", "stop"], env=env, check=False, cwd="/")
    save()  # the other runs' sizes as they are now
    summary = report(results, args.heap, args.pagecache)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(dict(results_header(sys.argv), method=args.method, heap=args.heap,
                                         pagecache=args.pagecache, sizes=results, summary=summary), indent=1) + "\n")
    print(f"\nwritten to {args.json}")


def last_progress(log: Path) -> dict:
    """The last progress line of each phase of the stage that wrote the end of ``log`` (the lines
    with a rate after its last command line, by their phase: ``top related pages``, ``writing
    SIMILAR_TO (spectral)``): how fast each phase went, also for a stage that failed later."""
    with open(log, "rb") as handle:
        handle.seek(max(0, handle.seek(0, 2) - (1 << 20)))
        lines = handle.read().decode("utf-8", "replace").splitlines()
    start = max((i for i, line in enumerate(lines) if line.startswith("$ ")), default=0)
    phases: dict = {}
    for line in lines[start:]:
        if line.startswith("linksim: ") and re.search(r"\d [a-z]+/s\b", line) and ": " in line[9:]:
            phases[line[9:].split(": ", 1)[0]] = line.strip()
    return phases


def last_json(output: str) -> dict | None:
    """The JSON a helper printed last (GDS's anchor prints a line before it)."""
    try:
        return json.loads(output.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return None


def capped(result: dict) -> str:
    """A capped stage's cgroup peak (anonymous memory and page cache) against its cap, and the times it hit it."""
    if not result.get("cap"):
        return ""
    gib = 2**30
    return f"{result['capPeak'] / gib:.2f}G/{result['cap'] / gib:.0f}G x{result['capFailures']}"


def report(results: dict, heap: str, pagecache: str) -> dict:
    import numpy as np

    print(f"\nNeo4j heap {heap}, page cache {pagecache} (linksim neo4j start --heap/--pagecache)")
    print("peak RSS, PSS, anon: the stage's whole process tree; linksim: the tree less the JVMs it starts "
          "(the import tool); off: the estimate's middle against the peak PSS (the anonymous peak where the "
          "index is on disk), ! beyond 25 %; cgroup peak/cap (--memory-cap): the stage's memory cgroup's peak, "
          "anonymous memory and page cache, its limit and the times it reached it")
    print(f"{'size':>6} {'stage':>9} {'exit':>4} {'seconds':>8} {'peak RSS':>9} {'PSS':>7} {'anon':>7} {'linksim':>7} "
          f"{'estimate, off':>23} {'Neo4j RSS':>9} {'store':>8} {'index':>8} {'cgroup peak/cap':>16}")
    gib = 2**30
    summary: dict = {"pipelineMinutes": {}, "growth": {}, "grade": {}, "writeVsGds": {}, "memory": {}}
    for label, stages in results.items():
        for stage in STAGES:
            r = stages.get(stage)
            if not r:
                continue
            est = r.get("estimate")
            estimate = f"{est['bytesMin'] / gib:.2f}-{est['bytesMax'] / gib:.2f} GiB" if est else ""
            # The estimate counts what the run holds: the PSS of its processes (forked workers share
            # the index), less the file pages of an index built on disk (page cache: its anonymous memory).
            measured = r.get("peakAnon", 0) if est and est.get("onDisk") else r.get("peakPss", 0)
            if est and measured and r["exit"] == 0:  # a stage that failed early says nothing of its peak
                low, high = est["bytesMin"], est["bytesMax"]
                if stage == "similar" and stages.get("index", {}).get("exit") == 0 and "build" in est.get("stages", {}):
                    # It read the index the index stage stored: of its estimate, the stages it ran.
                    ran = {name: s for name, s in est["stages"].items() if name != "build"}
                    base = low - max(s["bytesMin"] for s in est["stages"].values())
                    low = base + max(s["bytesMin"] for s in ran.values())
                    high = base + max(s["bytesMax"] for s in ran.values())
                    estimate = f"{low / gib:.2f}-{high / gib:.2f} GiB"
                middle = (low + high) / 2
                off = middle / measured - 1
                estimate += f" {off:+.0%}{'!' if abs(off) > 0.25 else ''}"
                # What the docs' scale page shows: the estimate of the stages the run went through,
                # against the peak it counts (anonymous: PSS less file pages, where peakFile says so).
                summary["memory"].setdefault(label, {})[stage] = {
                    "low": low, "high": high, "measured": measured, "off": off,
                    "compared": ("anonymous PSS" if "peakFile" in r else "RSS less file pages")
                    if est.get("onDisk") else "PSS"}
            print(f"{label:>6} {stage:>9} {r['exit']:>4} {r['seconds']:>8.0f} {r['peakRss'] / gib:>8.2f}G "
                  f"{r.get('peakPss', 0) / gib:>6.2f}G {r.get('peakAnon', 0) / gib:>6.2f}G {r.get('peakOwn', 0) / gib:>6.2f}G {estimate:>23} {r.get('neo4jRss', 0) / gib:>8.2f}G {r.get('storeBytes', 0) / gib:>7.2f}G "
                  f"{r.get('indexBytes', 0) / gib:>7.2f}G {capped(r):>16}")
    print("\nattempts replaced by a later result or cut short (their own figures; progress: each phase's last rate)")
    summary["attempts"] = {}
    for label, stages in results.items():
        for stage, tries in stages.get("attempts", {}).items():
            for attempt in tries:
                if "exit" not in attempt or attempt.get("began") == stages.get(stage, {}).get("began"):
                    continue
                summary["attempts"].setdefault(label, {}).setdefault(stage, []).append(
                    {k: v for k, v in attempt.items() if k != "estimate"})
                when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(attempt["began"]))
                rates = "; ".join(line.split(", ", 1)[-1].split(", ETA")[0] + f" ({phase})"
                                  for phase, line in attempt.get("progress", {}).items()) \
                    if isinstance(attempt.get("progress"), dict) else attempt.get("progress", "")
                print(f"{label:>6} {stage:>9} {when} exit {attempt['exit']}, {attempt['seconds']:.0f} s, PSS "
                      f"{attempt.get('peakPss', 0) / gib:.2f}G, anon {attempt.get('peakAnon', 0) / gib:.2f}G"
                      + (f", cgroup {attempt['capPeak'] / gib:.2f}G of {attempt['cap'] / gib:.0f}G" if attempt.get("cap") else "")
                      + f"; {rates}")
    for label, stages in results.items():
        try:
            run = json.loads(stages["similar"]["output"])
        except (KeyError, ValueError):
            continue
        computed = run["pages"] - run.get("lists_resumed", 0)
        tries = stages.get("attempts", {}).get("similar", [])
        print(f"{label} similar: {run['pages']:,} pages' lists, {computed:,} computed in this attempt at "
              f"{computed / max(run['compute_millis'] / 1000, 1e-9):,.0f} pages/s, {run.get('lists_resumed', 0):,} read "
              f"back from the attempts before"
              + (f" ({len(tries)} attempts, begun " + ", ".join(time.strftime("%H:%M", time.localtime(t["began"]))
                                                           for t in tries) + ")" if tries else "") + "; "
              + (f"{run['written']:,} SIMILAR_TO written at {run['written'] / max(run['write_millis'] / 1000, 1e-9):,.0f}/s"
                 if run.get("lists_rewritten") is None else
                 f"an update: {run['lists_rewritten']:,} lists changed and were written again"))
    print("\nquality against the planted labels (a sample of labelled pages with a link; the anchors on the same pages)")
    for label, stages in results.items():
        grade = last_json(stages.get("grade", {}).get("output", "")) if stages.get("grade", {}).get("exit") == 0 else None
        if not grade:
            continue
        summary["grade"][label] = grade["rows"]
        print(f"{label}: {grade['sample']:,} of {grade['labelled']:,} pages; " + "; ".join(
            f"{name} P@10 {row['precision_at_10']:.3f} hits@10 {row['hits_at_10']:.3f} coverage {row['coverage']:.3f}"
            for name, row in grade["rows"].items()))
    for label, stages in results.items():
        gds = last_json(stages.get("gds", {}).get("output", "")) if stages.get("gds", {}).get("exit") == 0 else None
        try:
            run = json.loads(stages["similar"]["output"])
        except (KeyError, ValueError):
            continue
        if gds and run.get("written") and run.get("write_millis"):
            ours = run["written"] / (run["write_millis"] / 1000)
            every = gds.get("every", 1)
            summary["writeVsGds"][label] = {"linksim": ours, "gds": gds["relationshipsPerSecond"],
                                            "ratio": ours / gds["relationshipsPerSecond"], "gdsEvery": every}
            print(f"{label} SIMILAR_TO write: {ours:,.0f}/s, gds.knn.write {gds['relationshipsPerSecond']:,.0f}/s"
                  + (f" (the lists of one page in {every})" if every > 1 else "")
                  + f": {ours / gds['relationshipsPerSecond']:.2f}x")
    print("\ngrowth: seconds ~ links^b (log-log least squares over the sizes that succeeded)")
    for stage in PIPELINE[1:]:
        points = [(parse_size(label), stages[stage]["seconds"]) for label, stages in results.items()
                  if stage in stages and stages[stage]["exit"] == 0 and stages[stage]["seconds"] > 0]
        if len(points) >= 2:
            x, y = np.log([p[0] for p in points]), np.log([p[1] for p in points])
            slope = float(np.polyfit(x, y, 1)[0])
            flag = "  (faster than links^1.2)" if slope > 1.2 else ""
            print(f"  {stage:>9}: b = {slope:.2f} over {len(points)} sizes{flag}")
            summary["growth"][stage] = slope
    total = {label: sum(stages[s]["seconds"] for s in PIPELINE if stages.get(s, {}).get("exit") == 0)
             for label, stages in results.items()}
    summary["pipelineMinutes"] = {k: v / 60 for k, v in total.items()}
    print("\nwhole pipeline (its stages that succeeded; not the GDS anchor or the grading): "
          + ", ".join(f"{k}: {v / 60:.0f} min" for k, v in total.items()))
    return summary


if __name__ == "__main__":
    main()
