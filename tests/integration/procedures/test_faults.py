"""Faults against a real Neo4j: linksim killed mid-write and mid-retirement, the server killed
mid-write, two writers of one method, readers sampling the related-pages query while the current
run switches, a corrupt index, a truncated WARC. Each is bounded in time and on loopback only."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from linksim.parameters import Query
from linksim import cypher, store
from linksim.cli.main import main
from linksim.procedures import runs
from linksim.procedures.locks import LockHeld, acquire
from linksim.procedures.indexes import obtain_index
from linksim.procedures.similarity import similar, write_similar

LINKSIM = str(Path(sys.executable).parent / "linksim")
QUERY = cypher.query("related_pages", "related_pages")
SHORT = cypher.query("related_pages", "related_pages_procedure")  # linksim.related: the same rows
SAMPLE = 40  # pages whose related pages are compared before and after a fault


def relationships(runner) -> dict[str, int]:
    rows = runner.run("MATCH ()-[s:SIMILAR_TO]->() RETURN s.run AS run, count(*) AS n")
    return {row["run"]: row["n"] for row in rows}


def current(runner, method: str) -> str | None:
    rows = runner.run("MATCH (c:LinksimCurrent {algorithm: $m}) RETURN c.run AS run", {"m": method})
    return rows[0]["run"] if rows else None


def recorded(runner, run: str) -> int:
    return runner.run("MATCH (r:LinksimRun {id: $id}) RETURN r.written AS n", {"id": run})[0]["n"]


def answers(runner, method: str, urls: list[str]) -> dict[str, list]:
    return {url: runner.run(QUERY, {"url": url, "method": method, "limit": 10}) for url in urls}


def sample_urls(runner, method: str) -> list[str]:
    rows = runner.run("MATCH (c:LinksimCurrent {algorithm: $m}) WITH c.run AS run "
                      "MATCH (p:Page)-[s:SIMILAR_TO {run: run, rank: 10}]->() RETURN p.url AS url ORDER BY url",
                      {"m": method})
    return random.Random(0).sample([r["url"] for r in rows], SAMPLE)


@pytest.fixture
def env(cli_env, tmp_path) -> dict[str, str]:
    """The environment of a `linksim` subprocess: the test server, an index store of the test's."""
    return dict(os.environ, NEO4J_URI=cli_env.uri, NEO4J_USER=cli_env.user, NEO4J_PASSWORD=cli_env.password,
                NEO4J_DATABASE=cli_env.database, LINKSIM_INDEX_DIR=str(tmp_path / "indexes"))


PAGES = 3000


@pytest.fixture
def crawl(runner, tmp_path):
    """A seeded crawl of 3,000 pages and 24,000 links, loaded (quicker than Wikispeedia, and
    with every page's top 10 full)."""
    from linksim.procedures.load import load

    rng = np.random.default_rng(7)
    source = np.repeat(np.arange(PAGES), 8)
    target = (rng.zipf(1.6, len(source)) * 37 + source) % PAGES  # popular pages are linked more
    path = tmp_path / "crawl.tsv"
    path.write_text("".join(f"http://e.org/{s}\thttp://e.org/{t}\n" for s, t in zip(source, target)))
    load([path], runner, show_progress=False)
    return runner


@pytest.fixture
def indexed(crawl, env):
    """The crawl with a current SimRank run (top 10) and its index stored."""
    root = Path(env["LINKSIM_INDEX_DIR"])
    old = similar(crawl, "simrank", root, query=Query(10), show_progress=False)
    return crawl, root, old


def start(env, *args: str) -> subprocess.Popen:
    return subprocess.Popen([LINKSIM, "-q", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(condition, timeout: float, what: str, poll: float = 0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


def new_relationships(runner, old) -> int:
    return sum(n for run, n in relationships(runner).items() if run != old.id)


def start_writing(runner, env, old) -> subprocess.Popen:
    """A `linksim similar simrank` subprocess, returned once its first relationships are committed
    (small batches: its write lasts seconds)."""
    writer = start(env, "similar", "simrank", "--top-k", "5", "--batch-size", "100")
    try:
        wait_for(lambda: new_relationships(runner, old) > 0, 90, "the new run's first relationships")
    except BaseException:
        kill(writer)
        raise
    return writer


def assert_intact(runner, run: str, urls: list[str], before: dict) -> None:
    """``run`` is the current SimRank run, with every relationship it recorded, answering as before."""
    assert current(runner, "simrank") == run
    assert relationships(runner)[run] == recorded(runner, run)
    assert answers(runner, "simrank", urls) == before


def current_runs(runner, method: str) -> list:
    rows = runner.run(f"MATCH (current:LinksimCurrent {{algorithm: $m}}) RETURN {runs.RUNS_OF_CURRENT} AS runs",
                      {"m": method})
    return rows[0]["runs"] if rows else []


def assert_clean_rerun(runner, root: Path) -> None:
    """A rerun (on this host: the dead writer's lock is taken over at once; an update of the
    lists, which retires the dead writer's run) leaves only the relationships of the current runs,
    as many as it recorded."""
    began = time.monotonic()
    new = similar(runner, "simrank", root, query=Query(10), show_progress=False)
    assert time.monotonic() - began < 60
    assert current(runner, "simrank") == new.id
    held = relationships(runner)
    assert set(held) <= set(current_runs(runner, "simrank")) and sum(held.values()) == new.written


def test_linksim_killed_while_writing_similar_to(indexed, env) -> None:
    runner, root, old = indexed
    urls = sample_urls(runner, "simrank")
    before = answers(runner, "simrank", urls)
    writer = start_writing(runner, env, old)
    kill(writer)
    partial = new_relationships(runner, old)
    assert 0 < partial < PAGES * 5  # killed mid-write, not before nor after
    assert_intact(runner, old.id, urls, before)
    held = runner.run("MATCH (l:LinksimLock {name: 'similar:simrank'}) RETURN l.pid AS pid")
    assert held == [{"pid": writer.pid}]  # the dead writer's lock: taken over by the rerun below
    assert_clean_rerun(runner, root)


def similar_json(env, *args: str) -> dict:
    done = subprocess.run([LINKSIM, "-q", "similar", "simrank", "--top-k", "5", "--batch-size", "100", "--json", *args],
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def run_lists(runner, run: int) -> set:
    return {tuple(row.values()) for row in runner.run(
        "MATCH (a)-[s:SIMILAR_TO {run: $run}]->(b) RETURN a.url, b.url, s.rank, s.score", {"run": run})}


def test_a_similar_run_killed_while_writing_resumes_from_the_lists_it_had_finished(indexed, env) -> None:
    runner, root, old = indexed
    kill(start_writing(runner, env, old))
    partial = root / "lists" / ".simrank.partial"
    assert list(partial.glob("part-*.npz"))  # every list was finished before the write began
    resumed = similar_json(env)
    assert resumed["lists_resumed"] == resumed["pages"] == PAGES  # read back, none computed again
    assert not partial.exists()  # written: the finished lists are let go
    lists = run_lists(runner, resumed["id"])  # before the next run retires them
    fresh = similar_json(env, "--rewrite")  # the same lists computed from the index, start to end
    assert fresh["lists_resumed"] == 0
    assert lists == run_lists(runner, fresh["id"]) and len(lists) == fresh["written"] == PAGES * 5


def test_linksim_killed_while_retiring_the_old_run(indexed, env) -> None:
    runner, root, old = indexed
    urls = sample_urls(runner, "simrank")
    writer = start(env, "similar", "simrank", "--top-k", "10", "--batch-size", "100", "--rewrite")
    try:
        new = wait_for(lambda: current(runner, "simrank") != old.id and current(runner, "simrank"), 90,
                       "the switch to the new run")
        after = answers(runner, "simrank", urls)  # the new run, during the grace before retiring
        wait_for(lambda: relationships(runner).get(old.id, 0) < old.written, 30, "the retirement to start",
                 poll=0.005)
    finally:
        kill(writer)
    left = relationships(runner).get(old.id, 0)
    assert 0 < left < old.written  # killed mid-retirement
    assert_intact(runner, new, urls, after)
    assert_clean_rerun(runner, root)


def test_server_killed_while_writing_similar_to(indexed, env, neo4j_server, test_settings) -> None:
    server = neo4j_server.local
    if server is None:
        pytest.skip(f"needs the local server to kill it; this one was provisioned by {neo4j_server.kind}")
    runner, root, old = indexed
    urls = sample_urls(runner, "simrank")
    before = answers(runner, "simrank", urls)
    writer = start_writing(runner, dict(env, LINKSIM_RETRY_SECONDS="3"), old)
    try:
        os.kill(server.pid(), signal.SIGKILL)
        out, err = writer.communicate(timeout=120)  # retried for 3 s (30 by default), then it gives up
    finally:
        if writer.poll() is None:
            kill(writer)
        server.start()
    assert writer.returncode == 3, err
    assert "linksim: error: cannot reach Neo4j" in err or "linksim: error: Neo4j error" in err, err
    assert all(line.startswith("linksim:") for line in err.splitlines()), err  # no traceback, no driver log
    assert_intact(runner, old.id, urls, before)
    assert_clean_rerun(runner, root)


def test_two_similar_runs_of_one_method(indexed, env) -> None:
    """While a writer holds the method's lock (this test, through the protocol every writer uses:
    a writer run in a subprocess finished before a second one had started under a loaded machine),
    a second run is refused at once naming it, and one given --wait waits, then runs once the lock
    is let go."""
    runner, root, _ = indexed
    with acquire(runner, "similar:simrank"):
        refused = subprocess.run([LINKSIM, "-q", "similar", "simrank", "--top-k", "5"], env=env,
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode == 7
        assert f"another linksim run holds the lock 'similar:simrank': pid {os.getpid()} on " in refused.stderr
        assert "--wait SECONDS" in refused.stderr and "Traceback" not in refused.stderr
        waiting = subprocess.Popen([LINKSIM, "similar", "simrank", "--top-k", "5", "--wait", "180", "--json"], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # its log: stderr
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(waiting.stderr), daemon=True)
        reader.start()
        try:
            wait_for(lambda: any("waiting for the lock similar:simrank" in line for line in lines), 120,
                     "the second run to wait for the lock")
        except BaseException:
            kill(waiting)
            raise
        assert waiting.poll() is None  # still waiting while the lock is held
    out = waiting.stdout.read()
    assert waiting.wait(timeout=240) == 0, "".join(lines)
    second = json.loads(out)
    # The waiting writer ran after the lock was let go: it is current, and only its relationships
    # are left, as many as it recorded.
    assert current(runner, "simrank") == second["id"]
    assert relationships(runner) == {second["id"]: second["written"]} and recorded(runner, second["id"]) == second["written"]
    assert runner.run("MATCH ()-[s:SIMILAR_TO]->() RETURN max(s.rank) AS k") == [{"k": 5}]


def read_while(runner, urls: list[str], work, root: Path) -> list[tuple[str, str, list]]:
    """Four readers ask for the related pages of random ``urls`` in a loop while ``work()`` runs:
    by the shipped protocol query, by the short query (``linksim.related``), by the API
    (``Linksim.related``) and by the command line (``linksim related --json``, in this process);
    every (form, url, answer) they got, the API's and the command line's as the URLs in order."""
    import contextlib
    import io

    from linksim.procedures.api import Linksim

    stop = threading.Event()
    seen: list[tuple[str, str, list]] = []
    api = Linksim(runner, root, show_progress=False)

    def cypher_reader(query: str):
        return lambda url: runner.run(query, {"url": url, "method": "simrank", "limit": 10})

    def command_line(url: str) -> list:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):  # the one reader that prints
            code = main(["-q", "related", url, "--method", "simrank", "--top-k", "10", "--json"])
        return [row["url"] for row in json.loads(out.getvalue())] if code == 0 else []

    forms = {"protocol": cypher_reader(QUERY), "short": cypher_reader(SHORT),
             "api": lambda url: api.related(url, method="simrank", top_k=10)["url"].tolist(),
             "cli": command_line}

    def read(seed: int, form: str) -> None:
        pick = random.Random(seed)
        while not stop.is_set():
            url = pick.choice(urls)
            seen.append((form, url, forms[form](url)))

    readers = [threading.Thread(target=read, args=(seed, form)) for seed, form in enumerate(forms)]
    for thread in readers:
        thread.start()
    try:
        work()
    finally:
        stop.set()
        for thread in readers:
            thread.join(timeout=30)
    return seen


def tally(seen: list[tuple[str, str, list]], expected: dict[str, list]) -> dict[str, dict[str, int]]:
    """Per reading form: answers, empty ones, and ones that are no whole list of ``expected`` (the
    API and the command line, which read the index, by their URLs in order)."""
    counts = {}
    for form in sorted({form for form, _, _ in seen}):
        answers = [(url, rows) for one, url, rows in seen if one == form]
        whole = {url: [rows if form in ("protocol", "short") else [row["url"] for row in rows] for rows in lists]
                 for url, lists in expected.items()}
        counts[form] = {"answers": len(answers), "empty": sum(not rows for _, rows in answers),
                        "mixed": sum(bool(rows) and rows not in whole[url] for url, rows in answers)}
    return counts


def assert_whole(counts: dict[str, dict[str, int]]) -> None:
    """Every form answered (the Cypher ones thousands of times), never nothing, never a mix."""
    for form, least in (("protocol", 500), ("short", 500), ("api", 20), ("cli", 5)):
        assert counts[form]["answers"] >= least, counts
        assert counts[form]["empty"] == 0 and counts[form]["mixed"] == 0, counts


def test_readers_never_see_nothing_or_a_mix_while_runs_switch(indexed, monkeypatch) -> None:
    """Four readers, by the shipped protocol query, the short query, the API and the command line,
    ask for related pages in a loop while five reruns switch the current run between top 10 and
    top 6 lists; every answer must be a whole list of one of them (a mix or a half-deleted run is
    neither; the API and the command line read the index, whose top 10 is the first). The figures
    go to test-output/faults/readers.json."""
    runner, root, _ = indexed
    monkeypatch.setattr(runs, "RETIRE_GRACE_SECONDS", 2.0)  # the shipped default, not the suite's 0.2 s
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(root))  # the command line's index store
    handle = obtain_index(runner, "simrank", root, show_progress=False)
    urls = sample_urls(runner, "simrank")
    expected = {url: [rows] for url, rows in answers(runner, "simrank", urls).items()}  # top 10, same index

    def rerun_five_times() -> None:
        for rerun in range(5):
            write_similar(runner, handle, query=Query((6, 10)[rerun % 2]), show_progress=False)
            if rerun == 0:  # the top 6 lists, whole, once the first rerun is current
                for url, rows in answers(runner, "simrank", urls).items():
                    expected[url].append(rows)

    began = time.monotonic()
    seen = read_while(runner, urls, rerun_five_times, root)
    counts = tally(seen, expected)
    report = Path(__file__).resolve().parents[3] / "test-output" / "faults" / "readers.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(dict(counts, reruns=5, seconds=round(time.monotonic() - began, 1)), indent=2))
    assert all(len(lists) == 2 and lists[0] != lists[1] for lists in expected.values())
    assert_whole(counts)


def test_pagerank_and_load_writers_wait_or_are_refused(crawl, cli_env, capsys, tmp_path) -> None:
    runner = crawl
    with acquire(runner, "pagerank:pagerank"):
        assert main(["-q", "pagerank"]) == 7
        assert "another linksim run holds the lock 'pagerank:pagerank'" in capsys.readouterr().err
        assert main(["-q", "pagerank", "--write-property", "pr_other"]) == 0  # another property: free
    crawl = tmp_path / "more.tsv"
    crawl.write_text("http://e.org/1\thttp://e.org/2\n")
    holder = acquire(runner, "load")
    threading.Timer(1.5, holder.release).start()
    assert main(["-q", "load", str(crawl)]) == 7
    assert "holds the lock 'load'" in capsys.readouterr().err
    assert main(["-q", "load", str(crawl), "--wait", "60"]) == 0  # got it once the holder let go
    assert runner.run("MATCH (p:Page {url: 'http://e.org/2'}) RETURN count(p) AS n") == [{"n": 1}]


def test_a_dead_or_silent_holder_is_taken_over(runner) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    import socket

    first = acquire(runner, "similar:xjaccard")
    first.stop_heartbeat()
    with pytest.raises(LockHeld, match="pid %d" % os.getpid()):
        acquire(runner, "similar:xjaccard")  # the holder is alive (this process): refused
    runner.write("MATCH (l:LinksimLock {name: 'similar:xjaccard'}) SET l.pid = $pid", {"pid": gone.pid})
    taken = acquire(runner, "similar:xjaccard")  # its process is gone on this host: at once
    assert taken.owner != first.owner
    first.release()  # not the holder any more: releases nothing
    assert runner.run("MATCH (l:LinksimLock) RETURN l.owner AS o") == [{"o": taken.owner}]
    taken.stop_heartbeat()
    # A holder on another host is taken for dead once its heartbeat is a minute old.
    runner.write("MATCH (l:LinksimLock) SET l.host = 'elsewhere', l.heartbeat = timestamp() - 30000")
    with pytest.raises(LockHeld, match="on elsewhere"):
        acquire(runner, "similar:xjaccard")
    runner.write("MATCH (l:LinksimLock) SET l.heartbeat = timestamp() - 61000")
    acquire(runner, "similar:xjaccard").release()
    assert socket.gethostname() != "elsewhere"


def test_a_corrupt_index_is_reported_not_answered(indexed, env) -> None:
    runner, root, _ = indexed
    url = sample_urls(runner, "simrank")[0]
    folder = Path(store.stored(root, "simrank")[0]["path"])
    path = folder / "parent.npy"
    parent = np.load(path)
    np.save(path, np.roll(parent, 1, axis=1))  # a valid header, the same shape, wrong values
    for args in (["related", url, "--method", "simrank"], ["sim", url, url, "--method", "simrank"],
                 ["similar", "simrank"], ["index", "simrank", "--verify"]):
        result = subprocess.run([LINKSIM, "-q", *args], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 6, (args, result.stderr)
        assert "parent.npy is corrupt" in result.stderr and "--rebuild" in result.stderr
        assert "Traceback" not in result.stderr and result.stdout == ""
    (folder / "layout_order.npy").write_bytes(b"")
    result = subprocess.run([LINKSIM, "-q", "index", "simrank", "--rebuild"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert subprocess.run([LINKSIM, "-q", "index", "simrank", "--verify"], env=env, capture_output=True,
                          text=True, timeout=120).returncode == 0
    assert store.load(root, "simrank", verify=True).n_fingerprints == 100


def test_a_truncated_warc_writes_nothing(runner, env, tmp_path) -> None:
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    for i in range(5):
        body = f"<html><title>Page {i}</title><a href='/p{i + 1}'>next</a></html>".encode()
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(f"http://e.org/p{i}", "response",
                                                      payload=io.BytesIO(body), http_headers=headers))
    data = buffer.getvalue()
    crawl = tmp_path / "cut.warc.gz"
    crawl.write_bytes(data[: len(data) - 120])
    result = subprocess.run([LINKSIM, "load", str(crawl)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 4, result.stderr
    assert "truncated" in result.stderr and str(crawl) in result.stderr and "Traceback" not in result.stderr
    assert runner.run("MATCH (p:Page) RETURN count(p) AS n") == [{"n": 0}]
    skipped = subprocess.run([LINKSIM, "load", str(crawl), "--on-error", "skip", "--json"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert skipped.returncode == 0, skipped.stderr
    summary = json.loads(skipped.stdout)
    assert summary["skipped"] == {"truncated or corrupt WARC": 1}
    titles = {r["t"] for r in runner.run("MATCH (p:Page {crawled: true}) RETURN p.title AS t")}
    assert titles == {f"Page {i}" for i in range(4)}  # the whole records before the cut, not the cut one


def test_readers_never_see_nothing_or_a_mix_while_updates_switch(indexed, monkeypatch) -> None:
    """As above, while four runs switch the current lists by updates: a similarity cutoff on and
    off changes the lists of about a quarter of the pages (those whose 10th page scores below it),
    and each run rewrites only those. Every answer must be a whole list of one of the two states."""
    runner, root, old = indexed
    monkeypatch.setattr(runs, "RETIRE_GRACE_SECONDS", 2.0)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(root))
    handle = obtain_index(runner, "simrank", root, show_progress=False)
    tenth = runner.run("MATCH (p:Page)-[s:SIMILAR_TO {run: $run, rank: 10}]->() RETURN s.score AS score",
                       {"run": old.id})
    cutoff = float(np.quantile([row["score"] for row in tenth], 0.25))
    urls = sample_urls(runner, "simrank")
    expected = {url: [rows] for url, rows in answers(runner, "simrank", urls).items()}
    rewritten = []

    def update_four_times() -> None:
        for rerun in range(4):
            record = write_similar(runner, handle, query=Query(10, (cutoff, 0.0)[rerun % 2]),
                                   show_progress=False)
            rewritten.append(record.lists_rewritten)
            if rerun == 0:  # the lists under the cutoff, once the first update is current
                for url, rows in answers(runner, "simrank", urls).items():
                    if rows != expected[url][0]:
                        expected[url].append(rows)

    seen = read_while(runner, urls, update_four_times, root)
    counts = tally(seen, expected)
    assert all(0 < count < PAGES / 2 for count in rewritten), rewritten  # updates, every one of them
    assert len(current_runs(runner, "simrank")) == 5
    assert any(len(lists) == 2 for lists in expected.values())  # some sampled pages change
    assert_whole(counts)


def test_an_update_of_the_default_killed_mid_write_leaves_its_lists_and_the_rerun_completes(
        crawl, env, tmp_path, recrawl_file, caplog) -> None:
    """After a recrawl, `linksim similar` of the default updates its index and writes the lists
    within reach; killed while it writes them, the lists before stay current, whole; the rerun
    (its index now the updated one, stored with what its update changed) makes the lists within
    the same reach and finishes the update."""
    from linksim.methods import DEFAULT_METHOD
    from linksim.procedures.load import load

    runner, method = crawl, DEFAULT_METHOD
    root = Path(env["LINKSIM_INDEX_DIR"])
    old = similar(runner, method, root, query=Query(10), show_progress=False)
    load([recrawl_file(runner, tmp_path / "week.jsonl", 0.02, 0)], runner, show_progress=False, recrawl=True)
    urls = sample_urls(runner, method)
    before = answers(runner, method, urls)
    writer = start(env, "similar", method, "--top-k", "10", "--batch-size", "20")
    try:
        wait_for(lambda: new_relationships(runner, old) > 0, 120, "the update's first relationships")
    finally:
        kill(writer)
    assert current(runner, method) == old.id and current_runs(runner, method) == [old.id]
    assert answers(runner, method, urls) == before
    with caplog.at_level("INFO", logger="linksim"):
        rerun = similar(runner, method, root, query=Query(10), show_progress=False)
    assert "using the stored spectral index" in caplog.text  # the killed run's update, not another
    reached = re.search(r"([\d,]+) of ([\d,]+) pages' lists are within reach of the change", caplog.text)
    assert reached is not None, caplog.text
    assert 0 < int(reached[1].replace(",", "")) < int(reached[2].replace(",", "")) / 2
    assert current_runs(runner, method)[-1] == rerun.id
    held = relationships(runner)
    assert set(held) <= set(current_runs(runner, method)) and sum(held.values()) == rerun.written
    assert rerun.answered > 0.9 * PAGES  # the lists made within reach and those kept: every page's
