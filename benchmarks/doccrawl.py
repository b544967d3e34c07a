"""Every method's SIMILAR_TO lists on a real wget crawl of a documentation site with navigation sidebars.

Issue 59's acceptance run. Debian's ``rust-doc`` package (the Rust books and the standard library's
API pages: tens of thousands of pages, each linking the same sidebar pages) is downloaded with
``apt-get download``, unpacked, served on 127.0.0.1 and crawled by GNU wget (``--warc-file``); the
WARC is loaded into a Neo4j instance of its own (``doccrawl``, with Graph Data Science for the
writer anchor), and then, for every method of the registry, ``similar`` runs ``--runs`` times in a
row (the first builds the index, the others reuse it; every run writes every list, --rewrite). For each run:
the transient errors the server returned (deadlocks, timeouts; the acceptance wants none), the
stream, compute and write times, the write rate, the lists read from a sample. The anchor is GDS's
own writer (``gds.knn.write`` top 10) on the same store, before the first method and after the last,
and then beside each method's write in ``--pairs`` rounds, one after the other, the order
alternating (the ratio the acceptance reads: the same store state for both writers).
Then ``benchmarks/judged.py`` on the same graph: each method's all-pages lists a second on 2
workers, and extended Jaccard's sampled reading judged against its exact lists and the noise floor.
The summary's ``lists_per_second_min`` is each method's lists a second in its `similar` runs that
reuse the index (2 cores); a method given parameters here (``--pagesim-prune``) is timed there only.

Resumable stage by stage (``<home>/doccrawl/state.json``); the figures go to
``benchmarks/results/doccrawl.json`` with the commit, the machine and the command.

    .venv/bin/python benchmarks/doccrawl.py [--runs 3] [--methods ...] [--no-gds] [--fresh] [--crawl-only]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bench_server, gds_anchor, results_header, resumable_state  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "rust-doc"
SKIPPED = "css,js,png,svg,woff,woff2,ttf,ico,gif,jpg,txt,gz,json"  # wget still fetches every page


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def package(work: Path) -> dict:
    """Download and unpack the documentation package; its HTML folder and version."""
    unpacked = work / "package"
    debs = sorted(work.glob(f"{PACKAGE}_*.deb"))
    if not debs:
        subprocess.run(["apt-get", "download", PACKAGE], cwd=work, check=True, capture_output=True, timeout=600)
        debs = sorted(work.glob(f"{PACKAGE}_*.deb"))
    shutil.rmtree(unpacked, ignore_errors=True)
    subprocess.run(["dpkg", "-x", str(debs[-1]), str(unpacked)], check=True, timeout=600)
    html = unpacked / "usr" / "share" / "doc" / PACKAGE / "html"
    return {"deb": debs[-1].name, "html": str(html), "html_files": sum(1 for _ in html.rglob("*.html"))}


def crawl(work: Path, html: Path) -> dict:
    """wget's recursive crawl of the site served on loopback, recorded as a WARC."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    mirror = work / "mirror"
    warc = work / "crawl"
    began = time.perf_counter()
    try:
        done = subprocess.run(
            ["wget", "--recursive", "--level=inf", "--no-parent", "--no-verbose", "--no-directories", "--delete-after",
             "-e", "robots=off", f"--reject={SKIPPED}", f"--directory-prefix={mirror}", f"--warc-file={warc}",
             f"http://127.0.0.1:{server.server_address[1]}/index.html"],
            capture_output=True, text=True, timeout=7200)
    finally:
        server.shutdown()
        server.server_close()
    shutil.rmtree(mirror, ignore_errors=True)
    path = warc.with_suffix(".warc.gz")
    if not path.exists():
        sys.exit(f"wget wrote no WARC (exit {done.returncode}): {done.stderr[-2000:]}")
    return {"warc": str(path), "warc_bytes": path.stat().st_size, "seconds": round(time.perf_counter() - began, 1),
            "wget_exit": done.returncode}


def count_transient() -> list:
    """QueryRunner.retried wrapped (once) to note each retryable error an attempt raises (its code)
    and its message in the list returned: empty it before each run."""
    from linksim.procedures.runner import QueryRunner

    errors: list = []
    real = QueryRunner.retried

    def retried(self, attempt, before_retry=None):
        def counted(tries):
            try:
                return attempt(tries)
            except Exception as error:
                if getattr(error, "is_retryable", lambda: False)():
                    # the code, and the lock the server names (which node or chain the batches met on)
                    errors.append(f"{getattr(error, 'code', None) or type(error).__name__}: "
                                  f"{str(getattr(error, 'message', error))[:400]}")
                raise

        return real(self, counted, before_retry)

    QueryRunner.retried = retried
    return errors


def paired(runner, method: str, root: Path, pairs: int, errors: list, given: dict) -> list[dict]:
    """The method's write (its index reused, every list written) and gds.knn.write's, one after the
    other in the same store, ``pairs`` times, the order alternating: each round's write rates and
    their ratio, so that neither meets a store the other left warmer (the first writes of a run
    after the load met colder pages than the later ones)."""
    from linksim.procedures.similarity import similar
    from linksim.parameters import Query

    rounds = []
    for number in range(pairs):
        def ours() -> tuple[float, list]:
            errors.clear()
            record = similar(runner, method, root, query=Query(10), show_progress=False, rewrite=True, **given)
            return record.written / max(record.write_millis / 1000, 1e-3), list(errors)

        if number % 2 == 0:
            gds = gds_anchor(runner, f" (round {number + 1} of {method}, first)")
            rate, seen = ours()
        else:
            rate, seen = ours()
            gds = gds_anchor(runner, f" (round {number + 1} of {method}, second)")
        rounds.append({"write_rate": round(rate), "gds_rate": round(gds), "ratio": round(rate / gds, 3),
                       "transient_errors": seen})
        print(f"{method} round {number + 1}: {json.dumps(rounds[-1])}", flush=True)
    return rounds


def main() -> None:
    from linksim.methods import METHODS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="similar runs a method, in a row (default 3)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--instance", default="doccrawl")
    parser.add_argument("--no-gds", action="store_true", help="without the GDS writer anchor")
    parser.add_argument("--pairs", type=int, default=3,
                        help="rounds a method of its write beside gds.knn.write's, alternating (default 3)")
    parser.add_argument("--fresh", action="store_true", help="forget the stages finished before")
    parser.add_argument("--crawl-only", action="store_true", help="stop after the crawl (no Neo4j)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "doccrawl.json")
    parser.add_argument("--pagesim-prune", type=float, default=None, metavar="SHARE",
                        help="PageSim's --prune (default: its own, every walk kept)")
    args = parser.parse_args()
    given = {"pagesim": {"prune": args.pagesim_prune}} if args.pagesim_prune is not None else {}

    work, state, save = resumable_state("doccrawl", args.fresh)

    def done(stage: str, value) -> None:
        state[stage] = value
        save()
        print(f"{stage}: {json.dumps(value)[:400]}", flush=True)

    if "package" not in state:
        done("package", package(work))
    if "crawl" not in state:
        done("crawl", crawl(work, Path(state["package"]["html"])))
    if args.crawl_only:
        return

    from linksim.procedures import QueryRunner
    from linksim.procedures.load import load
    from linksim.procedures.similarity import similar
    from linksim.parameters import Query

    server, connection = bench_server(args.instance, gds=not args.no_gds)
    try:
        with QueryRunner.connect(connection) as runner:
            pages = runner.run("MATCH (p:Page) RETURN count(p) AS n")[0]["n"]
            if "load" not in state or pages != state["load"]["pages"]:
                from linksim.procedures.maintenance import clear_database

                clear_database(runner)
                began = time.perf_counter()
                summary = load([Path(state["crawl"]["warc"])], runner, mode="auto", local_server=server,
                               show_progress=False)
                done("load", {"pages": runner.run("MATCH (p:Page) RETURN count(p) AS n")[0]["n"],
                              "links": runner.run("MATCH ()-[r:LINKS_TO]->() RETURN count(r) AS n")[0]["n"],
                              "seconds": round(time.perf_counter() - began, 1), "summary": str(summary)[:2000]})
            if "edges" not in state:
                from linksim.procedures.stream import stream_link_graph

                graph = stream_link_graph(runner, show_progress=False).graph
                edges = work / "edges.tsv"
                with edges.open("w") as out:
                    for u in range(graph.n):
                        for v in graph.out_indices[graph.out_indptr[u]:graph.out_indptr[u + 1]]:
                            out.write(f"{u}\t{v}\n")
                done("edges", {"path": str(edges), "pages": graph.n, "links": graph.m})
            if not args.no_gds and "gds_before" not in state:
                done("gds_before", gds_anchor(runner, " before the first method"))
            root = work / "indexes"
            errors = count_transient()
            for method in args.methods:
                if method in state.get("similar", {}):
                    continue
                runs = []
                for number in range(args.runs):
                    errors.clear()
                    began = time.perf_counter()
                    record = similar(runner, method, root, query=Query(10), show_progress=False, rewrite=True,
                                     rebuild=number == 0, **given.get(method, {}))
                    runs.append({"seconds": round(time.perf_counter() - began, 1), "transient_errors": list(errors),
                                 "written": record.written, "stream_s": record.stream_millis / 1000,
                                 "compute_s": record.compute_millis / 1000, "write_s": record.write_millis / 1000,
                                 "write_rate": round(record.written / max(record.write_millis / 1000, 1e-3)),
                                 "lists_sampled": record.lists_sampled, "answered": record.answered,
                                 "linked": record.linked})
                    print(f"{method} run {number + 1}: {json.dumps(runs[-1])}", flush=True)
                done("similar", {**state.get("similar", {}), method: runs})
                if method in given:
                    done("parameters", {**state.get("parameters", {}), method: given[method]})
            if not args.no_gds and "gds_after" not in state:
                done("gds_after", gds_anchor(runner, " after the last method"))
            if not args.no_gds:
                for method in args.methods:
                    if method not in state.get("paired", {}):
                        done("paired", {**state.get("paired", {}),
                                        method: paired(runner, method, root, args.pairs, errors, given.get(method, {}))})
    finally:
        server.stop()

    for stage, command in (
        ("judged_xjaccard", ["--methods", "xjaccard", "--pages", "600"]),
        ("all_pages", ["--methods", *[m for m in args.methods if m not in given], "--pages", "0", "--all-pages",
                   str(state["edges"]["pages"])]),
    ):
        if stage not in state:
            began = time.perf_counter()
            printed = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "judged.py"), "--edges",
                                      state["edges"]["path"], *command], capture_output=True, text=True, check=True)
            done(stage, {"command": "benchmarks/judged.py --edges EDGES " + " ".join(command),
                         "seconds": round(time.perf_counter() - began, 1), "printed": printed.stdout.splitlines()})

    gds = [state[k] for k in ("gds_before", "gds_after") if k in state]
    summary = {}
    for method, runs in state.get("similar", {}).items():
        summary[method] = {
            "runs_without_transient_errors": sum(1 for r in runs if not r["transient_errors"]),
            "runs": len(runs),
            "write_rate_min": min(r["write_rate"] for r in runs),
            "write_vs_gds_min": round(min(r["write_rate"] for r in runs) / min(gds), 2) if gds else None,
            # the runs after the first read the index it built: their compute is the lists alone (2 cores)
            "lists_per_second_min": min((round(r["answered"] / max(r["compute_s"], 1e-3)) for r in runs[1:]),
                                        default=None),
            "parameters": state.get("parameters", {}).get(method, {}),
        }
        rounds = state.get("paired", {}).get(method)
        if rounds:
            ratios = sorted(r["ratio"] for r in rounds)
            summary[method].update({"write_vs_gds_paired_median": ratios[len(ratios) // 2],
                                    "write_vs_gds_paired_min": ratios[0], "paired_rounds": len(ratios),
                                    "paired_transient_errors": sum(len(r["transient_errors"]) for r in rounds)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({**results_header(sys.argv), "package": PACKAGE, "state": state,
                                    "summary": summary}, indent=1))
    for method, figures in summary.items():
        print(f"{method:<10} {figures}")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
