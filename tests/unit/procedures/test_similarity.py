"""procedures/similarity.py (with the run protocol of procedures/runs.py): write, switch, retire;
related pages read the stored index only."""

from __future__ import annotations

import numpy as np
import pytest

from linksim import store
from linksim.graph import LinkGraph


def test_similar_writes_then_switches_then_retires(fake, recording, tmp_path, monkeypatch) -> None:
    from linksim.procedures import similarity
    from linksim.procedures.similarity import similar

    monkeypatch.setattr(similarity, "QUERY_RELATIONSHIPS", 2)  # queries of about 2 relationships

    answers = dict(fake.lock_answers(), **fake.graph_answers())
    answers["CREATE (a)-[:SIMILAR_TO"] = lambda p: {"relationships_created": sum(len(row[1]) for row in p["rows"])}
    answers["MERGE (counter:LinksimCounter"] = [[7]]
    answers["CREATE (r:LinksimRun"] = [[5, [3, 5]]]  # the run current before, and one that died
    answers["MATCH (r:LinksimRun {id: $previous})"] = [{"written": 4}]
    answers["CALL (s) { DELETE s }"] = {"relationships_deleted": 4}
    runner = recording(answers)
    record = similar(runner, "psimrank", tmp_path, top_k=2, batch_size=2, show_progress=False, n_fingerprints=20)
    order = [q for _, q, _ in runner.sent]
    first = lambda text: next(i for i, q in enumerate(order) if text in q)  # noqa: E731
    assert first("MERGE (l:LinksimLock") < first("collect(id) AS ids") < first("CREATE (a)-[:SIMILAR_TO")
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
    assert all(sum(len(row[1]) for row in p["rows"]) <= 2 for p in written)  # queries of about 2 (whole lists)
    # The server commits a query in transactions of about --batch-size relationships (here one list
    # of up to 2), two at once.
    assert all(p["lists"] == 1 and p["concurrency"] == 2 for p in written)
    assert all("autocommit" == kind for kind, q, _ in runner.sent if "CREATE (a)-[:SIMILAR_TO" in q)
    assert {row[0] for row in rows} <= set(fake.IDS) and len({row[0] for row in rows}) == len(rows)  # a list a source
    assert all(len(row[1]) == len(row[2]) <= 2 and row[2] == sorted(row[2], reverse=True) for row in rows)


def test_related_reads_no_link_and_builds_nothing(fake, recording, tmp_path) -> None:
    from linksim.methods import DEFAULT_METHOD, method
    from linksim.procedures.api import Linksim

    graph = LinkGraph.from_edges(np.array(fake.EDGES[0]), np.array(fake.EDGES[1]), 4, keys=fake.URLS)
    index = method(DEFAULT_METHOD).build_index(graph, n_fingerprints=30)
    store.save(index, tmp_path, DEFAULT_METHOD, graph.n, graph.m, urls=fake.URLS, state=fake.STATE)
    details = lambda p: [{"url": u, "title": u[-1].upper(), "pagerank": 0.25} for u in p["urls"]]  # noqa: E731
    runner = recording({"LinksimGraph {name: 'links'}": [fake.STATE], "UNWIND $urls AS url": details})
    ls = Linksim(runner, tmp_path, show_progress=False)
    frame = ls.related("HTTP://E.ORG:80/c#top", top_k=2)  # normalised as the loader stores it
    assert frame["url"].tolist() == [url for url, _ in ((fake.URLS[v], s) for v, s in index.related(2, top_k=2))]
    ls.related("http://e.org/c", top_k=2)
    # Only the constant-time count of links (Neo4j's count store), never the links themselves.
    assert not [q for _, q, _ in runner.sent if ("LINKS_TO" in q and "count(r)" not in q) or "collect(id) AS ids" in q]
    assert len(runner.queries("LinksimGraph")) == 2  # one constant-time check per call
    assert store.stored(tmp_path, DEFAULT_METHOD)[0]["created"]  # the one index, not rebuilt
    runner.answers["LinksimGraph {name: 'links'}"] = [dict(fake.STATE, version=3, links=6)]
    with pytest.raises(store.IndexMismatch, match="stale"):
        ls.related("http://e.org/c")
