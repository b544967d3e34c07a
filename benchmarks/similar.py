"""``linksim similar simrank --top-k 10`` for all pages of cnr-2000: a first run and a rerun.

Issue 15's targets: <= 100 s on a first run (index built), <= 120 s on a rerun (index reused, the
previous run's relationships retired), SIMILAR_TO written at >= 120,000 relationships/s. Prints
each stage (stream, index build, top-k, write, switch + grace, retirement) and the write and
delete rates, beside an anchor: the server alone creating and deleting the same number of
relationships from a query with no parameters (what Cypher writes cost here without a client);
with ``--gds``, also GDS's own batched writer: ``gds.knn.write`` top 10 on the PageRank of the
pages (a cheap computation, so that its ``writeMillis`` measures the writer), relationships/s, once
right before linksim's first run and once after its reruns, and the ratios of the writers on a
store in the same state. The figures go to ``benchmarks/results/similar.json`` with the commit,
the machine and the command.

    .venv/bin/python benchmarks/similar.py [--data ../shared/data] [--instance bench] [--gds]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bench_server, ensure_cnr, gds_anchor, peak_mib, results_header  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def one_run(runner, root: Path, label: str, retire: str = "wait", rewrite: bool = False) -> tuple[float, float]:
    from linksim.procedures import runs, similarity
    from linksim.parameters import Query

    retired = {}
    real_retire = runs.retire

    def timed_retire(*args, **kwargs):
        began = time.perf_counter()
        retired["n"] = real_retire(*args, **kwargs)
        retired["s"] = time.perf_counter() - began
        return retired["n"]

    runs.retire = timed_retire
    try:
        began = time.perf_counter()
        record = similarity.similar(runner, "simrank", root, query=Query(10), show_progress=False, retire=retire,
                                    rewrite=rewrite)
        total = time.perf_counter() - began
    finally:
        runs.retire = real_retire
    write = record.write_millis / 1000
    print(f"{label}: {total:.1f} s for {record.written:,} relationships (run {record.id})")
    print(f"  stream {record.stream_millis / 1000:.1f} s, index + top-k {record.compute_millis / 1000:.1f} s, "
          f"write {write:.1f} s ({record.written / write:,.0f} relationships/s), "
          f"retire {retired.get('s', 0):.1f} s ({retired.get('n', 0):,} deleted"
          + (f", {retired['n'] / retired['s']:,.0f}/s" if retired.get("n") else "") + ")")
    return total, record.written / write


def anchor(runner, relationships: int) -> dict:
    """The server creating and deleting ``relationships`` SIMILAR_TO-shaped relationships on its own:
    one transaction stream, and transactions of 500 two at once (what linksim's writer asks of the
    server: the ceiling of any Cypher writer here, with no client)."""
    pages = runner.run("MATCH (p:Page) RETURN count(p) AS n")[0]["n"]
    rates = {}
    for label, batching in (("one transaction stream", "IN TRANSACTIONS OF 50000 ROWS"),
                            ("two concurrent transactions of 500", "IN 2 CONCURRENT TRANSACTIONS OF 500 ROWS")):
        from neo4j.exceptions import TransientError

        for attempt in range(3):  # concurrent transactions can deadlock on a hub page: measured again
            began = time.perf_counter()
            try:
                runner.write_autocommit(  # node ids are dense: the pages were created into an empty store
                    "UNWIND range(0, $n - 1) AS i "
                    "CALL (i) { MATCH (x) WHERE id(x) = i / 10 MATCH (y) WHERE id(y) = (i * 7919) % $pages "
                    "CREATE (x)-[:BENCH_SIMILAR {score: 0.5, method: 'simrank', rank: i % 10 + 1, run: -1}]->(y) } "
                    + batching, {"n": relationships, "pages": pages})
                break
            except TransientError as error:
                print(f"anchor, the server alone ({label}): {error.code}; again")
                runner.write_autocommit("MATCH ()-[s:BENCH_SIMILAR]->() CALL (s) { DELETE s } "
                                        "IN TRANSACTIONS OF 50000 ROWS")
        else:
            raise RuntimeError(f"anchor ({label}): deadlocked three times")
        created = time.perf_counter() - began
        began = time.perf_counter()
        runner.write_autocommit("MATCH ()-[s:BENCH_SIMILAR]->() CALL (s) { DELETE s } IN TRANSACTIONS OF 50000 ROWS")
        deleted = time.perf_counter() - began
        print(f"anchor, the server alone ({label}, no client): create {relationships / created:,.0f}/s, "
              f"delete {relationships / deleted:,.0f}/s")
        rates[label] = {"create_rate": round(relationships / created), "delete_rate": round(relationships / deleted)}
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--instance", default="bench")
    parser.add_argument("--no-anchor", action="store_true")
    parser.add_argument("--gds", action="store_true", help="also the GDS writer anchor (installs GDS)")
    parser.add_argument("--only-anchors", action="store_true", help="skip the linksim runs")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "similar.json")
    args = parser.parse_args()

    from linksim.procedures import QueryRunner

    path = args.data / "cnr-2000" / "cnr-2000.edges.tsv.gz"
    server, connection = bench_server(args.instance, gds=args.gds)
    root = Path(tempfile.mkdtemp(prefix="linksim-bench-similar-"))
    try:
        with QueryRunner.connect(connection) as runner:
            ensure_cnr(runner, server, path)
            runner.write_autocommit("MATCH ()-[s:SIMILAR_TO]->() CALL (s) { DELETE s } IN TRANSACTIONS OF 50000 ROWS")
            runner.write("MATCH (c:LinksimCurrent) DETACH DELETE c")
            from linksim.procedures.budget import estimate_run

            estimate = estimate_run(runner, "similar", "simrank", top_k=10)
            if args.only_anchors:
                if not args.no_anchor:
                    anchor(runner, 3_255_491)
                if args.gds:
                    gds_anchor(runner)
                return
            # GDS writes right before linksim's first run and again after its reruns: each writer is
            # compared with the other on a store in the same state (a store that grows on a first
            # write, one with the freed space of deleted relationships to reuse after).
            gds_before = gds_anchor(runner, " before the first run") if args.gds else None
            first, first_rate = one_run(runner, root, "first run (index built)")
            # The reruns write every list (--rewrite): the same lists would otherwise be an update that
            # writes none of them (SIMILAR_TO updates), and the write rate is what they measure.
            rerun, rerun_rate = one_run(runner, root, "rerun --rewrite (index reused, previous run retired)",
                                        rewrite=True)
            background, background_rate = one_run(
                runner, root, "rerun --rewrite --retire background (the old run deleted after it returns)",
                retire="background", rewrite=True)
            print(f"targets: first <= 100 s (measured {first:.0f} s), rerun <= 120 s (measured {rerun:.0f} s; "
                  f"{background:.0f} s with the retirement in the background)")
            began = time.perf_counter()
            while runner.run("MATCH (c:LinksimCurrent {algorithm: 'simrank'}) RETURN size(c.retiring) AS n")[0]["n"]:
                time.sleep(1)
            print(f"  background retirement finished {time.perf_counter() - began:.0f} s after the command returned")
            figures = {"first_seconds": round(first, 1), "rerun_seconds": round(rerun, 1),
                       "background_seconds": round(background, 1), "write_rate_first": round(first_rate),
                       "write_rate_rerun": round(rerun_rate), "write_rate_background": round(background_rate)}
            if not args.no_anchor:
                figures["server_alone"] = anchor(runner, 3_255_491)
            if args.gds:
                gds_after = gds_anchor(runner, " after the reruns")
                print(f"write rate against GDS's writer: first run {first_rate / gds_before:.2f}x (GDS before it), "
                      f"rerun {rerun_rate / gds_after:.2f}x and {background_rate / gds_after:.2f}x in the background "
                      f"(GDS after them)")
                figures.update(gds_rate_before=round(gds_before), gds_rate_after=round(gds_after),
                               write_vs_gds_first=round(first_rate / gds_before, 3),
                               write_vs_gds_rerun=round(rerun_rate / gds_after, 3),
                               write_vs_gds_background=round(background_rate / gds_after, 3))
            print(f"estimate of similar simrank --top-k 10: {estimate.bytes_min / 2**20:,.0f} to "
                  f"{estimate.bytes_max / 2**20:,.0f} MiB (peak stage {estimate.peak_stage}); measured peak "
                  f"RSS of this process: {peak_mib():,.0f} MiB")
            args.out.write_text(json.dumps({**results_header(sys.argv), "crawl": "cnr-2000", "method": "simrank",
                                            "top_k": 10, **figures}, indent=2) + "\n")
            print(f"written to {args.out}")
    finally:
        print(f"peak RSS of this process: {peak_mib():,.0f} MiB")
        server.stop()


if __name__ == "__main__":
    main()
