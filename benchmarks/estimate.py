"""``linksim similar METHOD --estimate`` beside the measured peak of the whole process tree.

Issue 59's acceptance: the estimate within +-25 % of the peak PSS of the process tree (forked
workers counted once for the pages they share, memory-mapped index files in proportion) of the
same ``linksim similar METHOD --top-k 10 --rebuild``, for every method, on cnr-2000 and on the
generated 10M-link crawl (``benchmarks/scale.py``'s, made with ``linksim generate`` if missing).
Each crawl is loaded into a Neo4j instance of its own (``estimate``); each method's estimate is
asked first (``--estimate --json``), then the run is timed and sampled (RSS every 0.2 s, PSS and
anonymous memory every 1 s, :class:`_common.Peak`).

Resumable method by method (``<home>/estimate/state.json``); the figures go to
``benchmarks/results/estimate.json`` with the commit, the machine and the command, after every method.

    .venv/bin/python benchmarks/estimate.py [--crawls cnr-2000 10M] [--methods ...] [--pagesim-prune SHARE] [--fresh]

A run the estimate says the memory cannot hold is refused by linksim (exit 8) before it builds:
recorded as ``refused`` beside its estimate and the memory available.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Peak, bench_server, cli_env, results_header, resumable_state  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 0.25


def crawl_path(name: str, data: Path) -> Path:
    if name == "cnr-2000":
        return data / "cnr-2000" / "cnr-2000.edges.tsv.gz"
    from load import generated_crawl

    return generated_crawl(name, 1)


def main() -> None:
    from linksim.methods import METHODS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawls", nargs="+", default=["cnr-2000", "10M"])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--instance", default="estimate")
    parser.add_argument("--fresh", action="store_true", help="forget the runs measured before")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "estimate.json")
    parser.add_argument("--pagesim-prune", type=float, default=None, metavar="SHARE",
                        help="also measure PageSim with this --prune (recorded as pagesim@prune=SHARE)")
    args = parser.parse_args()
    runs = [(method, method, []) for method in args.methods]
    if args.pagesim_prune is not None:
        runs.append(("pagesim", f"pagesim@prune={args.pagesim_prune:g}", ["--prune", f"{args.pagesim_prune:g}"]))

    from linksim.procedures import QueryRunner
    from linksim.procedures.load import load
    from linksim.procedures.maintenance import clear_database

    _, state, save = resumable_state("estimate", args.fresh)

    def write_results() -> None:
        """The results file as the runs stand: rewritten after every method, so that a run cut short
        (it takes hours at 10M links) leaves the methods it measured."""
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({**results_header(sys.argv), "tolerance": TOLERANCE,
                                        "runs": {k: v for k, v in state.items() if k != "loaded"}}, indent=1))
    linksim = str(Path(sys.executable).parent / "linksim")
    for crawl in args.crawls:
        if all(key in state.get(crawl, {}) for _, key, _ in runs):
            continue
        path = crawl_path(crawl, args.data)
        server, connection = bench_server(args.instance)
        env = cli_env(args.instance)
        try:
            with QueryRunner.connect(connection) as runner:
                if state.get("loaded") != crawl:
                    clear_database(runner)
                    load([path], runner, mode="auto", local_server=server, show_progress=False)
                    state["loaded"] = crawl
                    save()
            for method, key, given in runs:
                if key in state.get(crawl, {}):
                    continue
                command = [linksim, "similar", method, "--top-k", "10", "--rebuild", *given]
                asked = subprocess.run([*command, "--estimate", "--json"], env=env, capture_output=True, text=True,
                                       check=True)
                estimate = json.loads(asked.stdout)
                began = time.monotonic()
                child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                peak = Peak(child.pid)
                logged = [(time.monotonic(), line.rstrip()) for line in child.stderr]  # the stage of the peak
                stderr = "\n".join(line for _, line in logged)
                child.wait()
                peak.stop()
                if child.returncode == 8:  # refused by the memory budget: what the estimate is for
                    import psutil

                    state.setdefault(crawl, {})[key] = {
                        "estimate_min": estimate["bytesMin"], "estimate_max": estimate["bytesMax"],
                        "peak_stage": estimate["peakStage"], "refused": True,
                        "available": int(psutil.virtual_memory().available), "parts": estimate["parts"],
                        "pss": peak.peak_pss, "seconds": round(time.monotonic() - began, 1),
                        "message": stderr.strip().splitlines()[-1][:600] if stderr.strip() else ""}
                    save()
                    write_results()
                    print(f"{crawl:<9}{key:<10} estimate {estimate['bytesMin'] / 2**20:,.0f}-"
                          f"{estimate['bytesMax'] / 2**20:,.0f} MiB: refused by the budget, as estimated "
                          f"(peak PSS {peak.peak_pss / 2**20:,.0f} MiB while it measured)", flush=True)
                    continue
                if child.returncode != 0:
                    sys.exit(f"linksim similar {method} failed ({child.returncode}): {stderr[-2000:]}")
                figures = {"estimate_min": estimate["bytesMin"], "estimate_max": estimate["bytesMax"],
                           "peak_stage": estimate["peakStage"], "on_disk": estimate["onDisk"],
                           "pss": peak.peak_pss, "rss": peak.peak, "anonymous": peak.peak_anon,
                           "seconds": round(time.monotonic() - began, 1),
                           "peak_after": next((line for at, line in reversed(logged) if at <= peak.peak_pss_at), "")}
                figures["pss_over_estimate_max"] = round(figures["pss"] / figures["estimate_max"], 3)
                figures["within"] = abs(figures["pss_over_estimate_max"] - 1) <= TOLERANCE
                state.setdefault(crawl, {})[key] = figures
                save()
                write_results()
                print(f"{crawl:<9}{key:<10} estimate {figures['estimate_min'] / 2**20:,.0f}-"
                      f"{figures['estimate_max'] / 2**20:,.0f} MiB, peak PSS {figures['pss'] / 2**20:,.0f} MiB "
                      f"(RSS {figures['rss'] / 2**20:,.0f}), PSS / estimate {figures['pss_over_estimate_max']:.2f}, "
                      f"{figures['seconds']:.0f} s; the peak after: {figures['peak_after']}", flush=True)
        finally:
            server.stop()
    write_results()
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
