"""What each procedure sends to Neo4j, through a recording runner: the order of the steps, the
values as parameters (never in the query text), and that queries read no link."""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest

from linksim import store
from linksim.graph import LinkGraph
from linksim.procedures.locks import LockHeld, acquire

STATE = {"id": "g1", "version": 2, "pages": 4, "links": 5}
URLS = ["http://e.org/a", "http://e.org/b", "http://e.org/c", "http://e.org/d"]
IDS = [10, 11, 12, 13]
EDGES = ([0, 0, 1, 2, 3], [1, 2, 2, 3, 0])


def lock_answers(free: bool = True, pid: int | None = None) -> dict:
    holder = [] if free else [{"owner": "someone", "pid": pid or os.getpid(), "host": socket.gethostname()}]
    row = [free, "me" if free else "someone", pid or os.getpid(), socket.gethostname(), "linksim similar", 0, 0]
    return {"SHOW CONSTRAINTS": [{"name": "linksim_lock_name"}], "RETURN l.owner AS owner": holder,
            "MERGE (l:LinksimLock": [row]}


def graph_answers() -> dict:
    sources = [IDS[s] for s in EDGES[0]]
    targets = [IDS[t] for t in EDGES[1]]
    return {"LinksimGraph {name: 'links'}": [STATE], "collect(id(p)) AS ids": [IDS, URLS],
            "UNWIND $sources AS source": lambda p: [[s for s in sources if s in p["sources"]],
                                                    [t for s, t in zip(sources, targets) if s in p["sources"]]]}


def test_streaming_reads_the_state_first_then_pages_then_links(recording) -> None:
    from linksim.procedures.stream import stream_link_graph

    runner = recording(graph_answers())
    streamed = stream_link_graph(runner, show_progress=False, chunk=3)
    assert streamed.state == STATE and streamed.urls == URLS
    assert sorted(zip(*streamed.graph.edges())) == sorted(zip(*EDGES))
    kinds = [q for _, q, _ in runner.sent]
    assert "LinksimGraph" in kinds[0] and "collect(id(p))" in kinds[1]
    assert [p["sources"] for _, q, p in runner.sent if "UNWIND $sources" in q] == [IDS[:3], IDS[3:]]


def test_pagerank_write_locks_before_reading_and_sends_values_as_parameters(recording) -> None:
    from linksim.procedures.pagerank import run_pagerank

    answers = dict(lock_answers(), **graph_answers())
    answers["SET p[$property]"] = lambda p: {"properties_set": len(p["ids"])}
    runner = recording(answers)
    run = run_pagerank(runner, write_property="pr_test", show_progress=False, batch_size=3)
    order = [q for _, q, _ in runner.sent]
    acquired = next(i for i, q in enumerate(order) if "MERGE (l:LinksimLock" in q)
    read = next(i for i, q in enumerate(order) if "collect(id(p))" in q)
    released = max(i for i, q in enumerate(order) if "DELETE l" in q)
    assert acquired < read < released == len(order) - 1
    writes = [p for _, q, p in runner.sent if "SET p[$property]" in q]
    assert [w["ids"] for w in writes] == [IDS[:3], IDS[3:]] and {w["property"] for w in writes} == {"pr_test"}
    assert all("pr_test" not in q for _, q, _ in runner.sent)  # the property name is a parameter
    assert run.did_converge and abs(sum(run.result.ranks) - 1) < 1e-6


def test_a_second_writer_is_refused_naming_the_first(recording) -> None:
    runner = recording(lock_answers(free=False))
    with pytest.raises(LockHeld, match=f"holds the lock 'similar:simrank': pid {os.getpid()}"):
        acquire(runner, "similar:simrank")
    assert not runner.queries("DELETE l")  # refused: nothing of the holder's is touched


def test_similar_writes_then_switches_then_retires(recording, tmp_path) -> None:
    from linksim.procedures.similarity import similar

    answers = dict(lock_answers(), **graph_answers())
    answers["CREATE (a)-[:SIMILAR_TO"] = lambda p: {"relationships_created": sum(len(row[1]) for row in p["rows"])}
    answers["MERGE (counter:LinksimCounter"] = [[7]]
    answers["CREATE (r:LinksimRun"] = [[5, [3, 5]]]  # the run current before, and one that died
    answers["MATCH (r:LinksimRun {id: $previous})"] = [{"written": 4}]
    answers["CALL (s) { DELETE s }"] = {"relationships_deleted": 4}
    runner = recording(answers)
    record = similar(runner, "psimrank", tmp_path, top_k=2, batch_size=2, show_progress=False, n_fingerprints=20)
    order = [q for _, q, _ in runner.sent]
    first = lambda text: next(i for i, q in enumerate(order) if text in q)  # noqa: E731
    assert first("MERGE (l:LinksimLock") < first("collect(id(p))") < first("CREATE (a)-[:SIMILAR_TO")
    assert first("MERGE (counter:LinksimCounter") < first("CREATE (a)-[:SIMILAR_TO")
    assert first("CREATE (a)-[:SIMILAR_TO") < first("CREATE (r:LinksimRun") < first("CALL (s) { DELETE s }")
    allocate = runner.queries("MERGE (counter:LinksimCounter")[0][2]
    switch = runner.queries("CREATE (r:LinksimRun")[0][2]
    taken = runner.queries("MERGE (l:LinksimLock")[0][2]
    assert record.id == 7 and switch["run"]["id"] == 7  # the run id is the counter's number
    assert switch["owner"] == taken["owner"] == allocate["owner"]  # both fenced by the lock's owner token
    retire = runner.queries("CALL (s) { DELETE s }")[0]
    assert retire[0] == "autocommit" and retire[2]["runs"] == [5, 3]  # only the runs named, never ours
    assert runner.queries("current.retiring = [run IN")[0][2]["runs"] == [5, 3]
    written = [p for _, q, p in runner.sent if "CREATE (a)-[:SIMILAR_TO" in q]
    rows = [row for p in written for row in p["rows"]]
    assert sum(len(row[1]) for row in rows) == record.written and all(p["run"] == 7 for p in written)
    assert all(sum(len(row[1]) for row in p["rows"]) <= 2 for p in written)  # batches of about 2 (whole lists)
    assert {row[0] for row in rows} <= set(IDS) and len({row[0] for row in rows}) == len(rows)  # a list a source
    assert all(len(row[1]) == len(row[2]) <= 2 and row[2] == sorted(row[2], reverse=True) for row in rows)


def test_related_reads_no_link_and_builds_nothing(recording, tmp_path) -> None:
    from linksim.methods import method
    from linksim.procedures.api import Linksim

    graph = LinkGraph.from_edges(np.array(EDGES[0]), np.array(EDGES[1]), 4, keys=URLS)
    index = method("psimrank").build_index(graph, n_fingerprints=30)
    store.save(index, tmp_path, "psimrank", graph.n, graph.m, urls=URLS, state=STATE)
    details = lambda p: [{"url": u, "title": u[-1].upper(), "pagerank": 0.25} for u in p["urls"]]  # noqa: E731
    runner = recording({"LinksimGraph {name: 'links'}": [STATE], "UNWIND $urls AS url": details})
    ls = Linksim(runner, tmp_path, show_progress=False)
    frame = ls.related("HTTP://E.ORG:80/c#top", top_k=2)  # normalised as the loader stores it
    assert frame["url"].tolist() == [url for url, _ in ((URLS[v], s) for v, s in index.related(2, top_k=2))]
    ls.related("http://e.org/c", top_k=2)
    # Only the constant-time count of links (Neo4j's count store), never the links themselves.
    assert not [q for _, q, _ in runner.sent if ("LINKS_TO" in q and "count(r)" not in q) or "collect(id(p))" in q]
    assert len(runner.queries("LinksimGraph")) == 2  # one constant-time check per call
    assert store.stored(tmp_path, "psimrank")[0]["created"]  # the one index, not rebuilt
    runner.answers["LinksimGraph {name: 'links'}"] = [dict(STATE, version=3, links=6)]
    with pytest.raises(store.IndexMismatch, match="stale"):
        ls.related("http://e.org/c")


def test_schema_statements_then_the_wait_for_indexes(recording) -> None:
    from linksim.procedures.schema import apply_schema

    runner = recording()
    apply_schema(runner)
    order = [q for _, q, _ in runner.sent]
    assert all("IF NOT EXISTS" in q or "IF EXISTS" in q for q in order[:10]) and "db.awaitIndexes" in order[10]
    assert "LinksimRun {current: true}" in order[11]  # old databases' flags adopted, once


def test_a_load_reads_first_then_locks_bumps_the_version_around_its_writes(recording, tmp_path) -> None:
    from linksim.procedures.load import load

    crawl = tmp_path / "crawl.tsv"
    crawl.write_text("http://e.org/a\thttp://e.org/b\nhttp://e.org/b\thttp://e.org/c\n")
    answers = dict(lock_answers(), **{"RETURN count(": [{"n": 0}]})
    answers["MERGE (p:Page {url: $url[i]})"] = lambda p: [[100 + i] for i in range(len(p["url"]))]
    answers["MATCH (b) WHERE id(b) = $target[i]"] = lambda p: {"relationships_created": len(p["source"])}
    runner = recording(answers)
    summary = load([crawl], runner, show_progress=False, batch_size=1)
    order = [q for _, q, _ in runner.sent]
    taken = next(i for i, q in enumerate(order) if "MERGE (l:LinksimLock" in q)
    bumps = [i for i, q in enumerate(order) if "g.version = g.version + 1" in q]
    writes = [i for i, q in enumerate(order) if "$url[i]" in q or "$target[i]" in q]
    assert taken < bumps[0] < min(writes) and max(writes) < bumps[1] < len(order) - 1  # released last
    assert summary.pages == 3 and summary.links == 2
    assert all("http://e.org" not in q for q in order)  # URLs travel as parameters


def test_pagerank_tiers_are_set_in_one_transaction(recording) -> None:
    from linksim.procedures.browser import label_pagerank_tiers

    runner = recording({"count(p) AS n": [{"n": 250}], "SET p:": {"labels_added": 3}})
    counts = label_pagerank_tiers(runner)
    transactions = [p["statements"] for kind, _, p in runner.sent if kind == "transaction"]
    assert len(transactions) == 1 and len(transactions[0]) == 4  # clear both tiers, set both: or nothing
    assert [params for _, params in transactions[0][2:]] == [
        {"property": "pagerank", "skip": 0, "limit": 3}, {"property": "pagerank", "skip": 3, "limit": 22}]
    assert counts.ranked == 250


def test_writes_give_up_together_one_retry_time_after_the_server_went_away(monkeypatch) -> None:
    """Writes in flight and writes after them stop retrying one retry time after the server was
    first found unreachable, not one retry time each (pagerank took 71 s to give up, for a
    documented 30). A real driver against a closed port: every attempt is refused at once."""
    import threading
    import time

    from neo4j import GraphDatabase
    from neo4j.exceptions import ServiceUnavailable

    from linksim.procedures import QueryRunner

    monkeypatch.setenv("LINKSIM_RETRY_SECONDS", "1.5")
    driver = GraphDatabase.driver("bolt://127.0.0.1:9", auth=("neo4j", "x"))
    runner = QueryRunner(driver, "neo4j")
    began = time.monotonic()
    ended: dict[str, float] = {}

    def write(name: str, delay: float) -> None:
        time.sleep(delay)
        try:
            runner.write("CREATE (:X)")
        except ServiceUnavailable:
            ended[name] = time.monotonic() - began

    threads = [threading.Thread(target=write, args=(f"w{i}", d)) for i, d in enumerate([0, 0, 0.2, 1.0])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    driver.close()
    assert sorted(ended) == ["w0", "w1", "w2", "w3"]
    assert all(1.4 <= seconds <= 2.2 for seconds in ended.values()), ended  # w3 alone would take to 2.5
    late = time.monotonic()
    runner = QueryRunner(GraphDatabase.driver("bolt://127.0.0.1:9", auth=("neo4j", "x")), "neo4j")
    runner._unreachable_since = late - 5  # found unreachable long ago: a new call does not wait again
    with pytest.raises(ServiceUnavailable):
        runner.write("CREATE (:X)")
    assert time.monotonic() - late < 0.5
    runner.driver.close()
