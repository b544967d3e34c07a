"""procedures/similarity.py (with the run protocol of procedures/runs.py): write, switch, retire;
related pages read the stored index only."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.parameters import Query
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
    record = similar(runner, "psimrank", tmp_path, query=Query(2), batch_size=2, show_progress=False, n_fingerprints=20)
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
    # of up to 2), one after another (the lanes are what runs at once).
    assert all(p["lists"] == 1 for p in written)
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


@pytest.mark.parametrize("lanes", [1, 2, 4, 7])
def test_the_writes_at_once_are_a_lane_apart(lanes) -> None:
    """Every list is written once, in whole-list spans of about the size asked; any ``lanes``
    spans in a row (what is in flight at once) come from different lanes of consecutive sources
    while every lane has spans left, so that no two of them are neighbours (the lists of
    neighbouring pages meet on the same relationship chains)."""
    from linksim.procedures.similarity import _Lists

    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 11, size=500)  # lists of 1-10 relationships, sources 0..499
    source = np.repeat(np.arange(500), sizes)
    lists = _Lists(source, rng.integers(0, 500, size=len(source)), rng.random(len(source)))
    spans = list(lists.lane_batches(60, lanes))
    covered = np.concatenate([np.arange(first, last) for first, last in spans])
    assert np.array_equal(np.sort(covered), np.arange(500))  # each list once
    assert all(lists.size(first, last) <= 60 or last == first + 1 for first, last in spans)
    starts = sorted(first for first, _ in spans[:lanes])  # the first turn: each lane's first span
    assert starts[0] == 0 and len(set(starts)) == lanes
    lane = [int(np.searchsorted(starts, first, side="right")) - 1 for first, _ in spans]
    by_lane = [[span for span, k in zip(spans, lane) if k == owner] for owner in range(lanes)]
    assert all(a[1] == b[0] for spans_of in by_lane for a, b in zip(spans_of, spans_of[1:]))  # consecutive
    weights = [sum(lists.size(*span) for span in spans_of) for spans_of in by_lane]
    assert max(weights) - min(weights) <= 2 * 10  # as many relationships each, to a list at either end
    full = lanes * min(len(spans_of) for spans_of in by_lane)
    assert all(len(set(lane[i:i + lanes])) == lanes for i in range(full - lanes + 1))


def test_the_rows_look_up_database_ids_a_batch_at_a_time() -> None:
    """Lists of page numbers with the pages' ids give the rows of the same lists written as ids
    (the write no longer holds an id copy of every list)."""
    from linksim.procedures.similarity import _Lists

    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 11, size=300)
    source = np.repeat(np.arange(300), sizes).astype(np.int32)
    target = rng.integers(0, 300, size=len(source)).astype(np.int32)
    score = rng.random(len(source))
    ids = rng.permutation(10_000)[:300].astype(np.int64) + 2**40  # ids beyond int32, as Neo4j's may be
    by_number, by_id = _Lists(source, target, score, ids), _Lists(ids[source], ids[target], score)
    for first, last in by_number.lane_batches(50, 3):
        assert by_number.rows(first, last) == by_id.rows(first, last)
    assert all(isinstance(row[0], int) and row[0] >= 2**40 for row in by_number.rows(0, 300))
