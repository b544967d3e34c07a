"""Similarity in Neo4j: index store per database, SIMILAR_TO runs, related pages in Cypher."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from linksim.parameters import Query
from linksim import cypher, store
from linksim.cli.main import main
from linksim.methods import fingerprint_index
from linksim.procedures.load import load
from linksim.procedures import QueryRunner
from linksim.procedures.indexes import obtain_index
from linksim.procedures.runs import RUNS_OF_CURRENT, is_current, retire
from linksim.procedures import similarity
from linksim.procedures.similarity import write_similar
from linksim.procedures.stream import stream_link_graph

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
PAGES = [
    "https://en.wikipedia.org/wiki/Albert_Einstein",
    "https://en.wikipedia.org/wiki/Paris",
    "https://en.wikipedia.org/wiki/Dog",
]


def relationships(runner: QueryRunner) -> dict[tuple[str, str], int]:
    rows = runner.run("MATCH ()-[s:SIMILAR_TO]->() RETURN s.method AS m, s.run AS r, count(*) AS n")
    return {(row["m"], row["r"]): row["n"] for row in rows}


def current_runs(runner: QueryRunner) -> dict[str, list[str]]:
    rows = runner.run("MATCH (c:LinksimCurrent) RETURN c.algorithm AS a, collect(c.run) AS ids")
    return {row["a"]: row["ids"] for row in rows}


@pytest.mark.parametrize("method", ["simrank", "psimrank", "xjaccard", "ppsimrank", "spectral"])
def test_cypher_related_pages_equal_linksim_related(wikispeedia, cli_env, tmp_path, capsys, monkeypatch, method) -> None:
    runner = wikispeedia
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "pagerank"]) == 0
    assert main(["-q", "similar", method, "--top-k", "10", "--fingerprints", "50"]) == 0
    capsys.readouterr()
    query = cypher.query("related_pages", "related_pages")
    short = cypher.query("related_pages", "related_pages_procedure")  # linksim.related
    for url in PAGES:
        assert main(["-q", "related", url, "--method", method, "--top-k", "10", "--json"]) == 0
        expected = json.loads(capsys.readouterr().out)
        rows = runner.run(query, {"url": url, "method": method, "limit": 10})
        assert runner.run(short, {"url": url, "method": method, "limit": 10}) == rows
        assert runner.run(short, {"url": url, "method": method, "limit": 3}) == rows[:3]
        assert len(rows) == len(expected) > 0
        assert [r["url"] for r in rows] == [e["url"] for e in expected]
        assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
        assert all(r["score"] == pytest.approx(e["score"], abs=1e-12) for r, e in zip(rows, expected))
        assert all(r["title"] == e["title"] and r["pagerank"] == e["pagerank"] for r, e in zip(rows, expected))
        assert all(0 < r["score"] <= 1 for r in rows)
        assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    # Every page has at most 10, its ranks are 1..k, never itself.
    bad = runner.run(
        "MATCH (p:Page)-[s:SIMILAR_TO]->(q) "
        "WITH p, count(s) AS k, min(s.rank) AS lo, max(s.rank) AS hi, count(DISTINCT s.rank) AS d, "
        "     sum(CASE WHEN q = p THEN 1 ELSE 0 END) AS self "
        "WHERE k > 10 OR self > 0 OR lo <> 1 OR hi <> k OR d <> k RETURN count(*) AS n"
    )
    assert bad == [{"n": 0}]


def test_the_short_query_refuses_what_it_cannot_answer(runner, tmp_path) -> None:
    """linksim.related names a method without a current run and a k below 1 (a typo must not
    read as a page without related pages), and answers nothing for a page not in the crawl."""
    from neo4j.exceptions import ClientError

    path = tmp_path / "crawl.tsv"
    path.write_text("".join(f"http://e.org/{i}\thttp://e.org/{(i * 7 + j) % 40}\n" for i in range(40) for j in range(1, 4)))
    load([path], runner, show_progress=False)
    similarity.similar(runner, "psimrank", tmp_path / "indexes", query=Query(5), show_progress=False)
    short = cypher.query("related_pages", "related_pages_procedure")
    rows = runner.run(short, {"url": "http://e.org/1", "method": "psimrank", "limit": 10})
    assert [row["rank"] for row in rows] == list(range(1, len(rows) + 1)) and 0 < len(rows) <= 5
    assert runner.run(short, {"url": "http://e.org/nope", "method": "psimrank", "limit": 10}) == []
    with pytest.raises(ClientError, match="no current SIMILAR_TO run of 'simrnk'.*psimrank"):
        runner.run(short, {"url": "http://e.org/1", "method": "simrnk", "limit": 10})
    with pytest.raises(ClientError, match="k must be at least 1"):
        runner.run(short, {"url": "http://e.org/1", "method": "psimrank", "limit": 0})


def test_a_rerun_replaces_that_method_only_and_never_shows_a_mix(runner, tmp_path) -> None:
    load([DATA / "webkb" / "cornell.cites"], runner, show_progress=False)
    root = tmp_path / "indexes"
    simrank = write_similar(runner, obtain_index(runner, "simrank", root, show_progress=False), show_progress=False)
    psimrank = write_similar(runner, obtain_index(runner, "psimrank", root, show_progress=False), show_progress=False)
    before = relationships(runner)
    assert before == {("simrank", simrank.id): simrank.written, ("psimrank", psimrank.id): psimrank.written}
    assert simrank.written > 0 and psimrank.written > 0

    again = write_similar(
        runner, obtain_index(runner, "simrank", root, seed=7, show_progress=False), query=Query(3), show_progress=False,
        rewrite=True,  # a full run (an update: tests/integration/procedures/test_similar_update.py)
    )
    after = relationships(runner)
    assert after == {("simrank", again.id): again.written, ("psimrank", psimrank.id): psimrank.written}
    assert current_runs(runner) == {"simrank": [again.id], "psimrank": [psimrank.id]}
    ranks = runner.run("MATCH ()-[s:SIMILAR_TO {method: 'simrank'}]->() RETURN max(s.rank) AS top")
    assert ranks == [{"top": 3}]


def test_an_interrupted_run_leaves_the_old_results_and_is_cleaned_up(runner, tmp_path, monkeypatch) -> None:
    load([DATA / "webkb" / "cornell.cites"], runner, show_progress=False)
    root = tmp_path / "indexes"
    old = write_similar(runner, obtain_index(runner, "simrank", root, show_progress=False), show_progress=False)
    query = cypher.query("related_pages", "related_pages")
    url = runner.run("MATCH (p:Page)-[:SIMILAR_TO]->() RETURN p.url AS url LIMIT 1")[0]["url"]
    shown = runner.run(query, {"url": url, "method": "simrank", "limit": 10})

    real_write = runner.write_autocommit
    calls = []
    counted = threading.Lock()  # the lanes' writes call this from several threads at once

    def failing_write(query_text, parameters=None):
        if "CREATE (a)-[:SIMILAR_TO" in query_text:
            with counted:
                calls.append(sum(len(row[1]) for row in parameters["rows"]))  # whole lists, about 100
                third = len(calls) == 3
            if third:
                raise KeyboardInterrupt  # the user pressed ^C in the middle of the write
        return real_write(query_text, parameters)

    monkeypatch.setattr(runner, "write_autocommit", failing_write)
    monkeypatch.setattr(similarity, "QUERY_RELATIONSHIPS", 100)  # queries of about 100 relationships
    handle = obtain_index(runner, "simrank", root, seed=5, show_progress=False)
    with pytest.raises(KeyboardInterrupt):
        write_similar(runner, handle, batch_size=100, show_progress=False)
    monkeypatch.setattr(runner, "write_autocommit", real_write)
    partial = {key: n for key, n in relationships(runner).items() if key[1] != old.id}
    # Every batch started was written but the interrupted one (the lanes' writes in flight finish).
    assert sum(partial.values()) == sum(calls) - calls[2] > 0
    assert current_runs(runner) == {"simrank": [old.id]}
    assert runner.run(query, {"url": url, "method": "simrank", "limit": 10}) == shown

    # The interrupted run is the method's `writing` run; retiring nothing named deletes nothing.
    (dead,) = {key[1] for key in partial}
    assert runner.run("MATCH (c:LinksimCurrent {algorithm: 'simrank'}) RETURN c.writing AS w") == [{"w": dead}]
    assert retire(runner, "simrank", old.id, batch=7) == 0
    # The next writer notes it as retiring and its retirement deletes it with the old run.
    new = write_similar(runner, handle, show_progress=False, rewrite=True)
    assert isinstance(new.id, int) and new.id > dead > old.id  # one counter, increasing
    assert relationships(runner) == {("simrank", new.id): new.written}
    assert runner.run("MATCH (c:LinksimCurrent {algorithm: 'simrank'}) RETURN c.retiring AS a") == [{"a": []}]


def test_a_write_cut_short_by_a_transient_error_is_written_again_whole(runner, tmp_path, monkeypatch) -> None:
    """A query whose concurrent transactions partly committed before a deadlock: its lists are
    deleted and written again, so the run holds every list once (the same as a clean run's)."""
    from neo4j.exceptions import TransientError

    load([DATA / "webkb" / "cornell.cites"], runner, show_progress=False)
    handle = obtain_index(runner, "simrank", tmp_path / "indexes", show_progress=False)
    clean = write_similar(runner, handle, show_progress=False)
    expected = runner.run("MATCH (a)-[s:SIMILAR_TO {run: $run}]->(b) RETURN a.url AS a, b.url AS b, s.rank AS rank, "
                          "s.score AS score ORDER BY a, rank", {"run": clean.id})
    real_write = runner.write_autocommit
    failed = []

    counted = threading.Lock()  # the lanes' writes call this from several threads at once

    def deadlocked_after_writing(query_text, parameters=None):
        counters = real_write(query_text, parameters)  # its transactions committed ...
        if "CREATE (a)-[:SIMILAR_TO" in query_text:
            with counted:
                fail = len(failed) < 2
                if fail:
                    failed.append(sum(len(row[1]) for row in parameters["rows"]))
            if fail:
                raise TransientError("Neo.TransientError.Transaction.DeadlockDetected")  # ... then it failed
        return counters

    monkeypatch.setattr(runner, "write_autocommit", deadlocked_after_writing)
    monkeypatch.setattr(similarity, "QUERY_RELATIONSHIPS", 200)
    again = write_similar(runner, handle, batch_size=50, show_progress=False, rewrite=True)
    monkeypatch.setattr(runner, "write_autocommit", real_write)
    assert len(failed) == 2 and failed[0] > 0
    written = runner.run("MATCH (a)-[s:SIMILAR_TO {run: $run}]->(b) RETURN a.url AS a, b.url AS b, s.rank AS rank, "
                         "s.score AS score ORDER BY a, rank", {"run": again.id})
    assert written == expected and again.written == clean.written == len(expected)


def test_the_index_answers_only_for_its_graph(runner, tmp_path, cli_env, capsys, monkeypatch) -> None:
    load([DATA / "webkb" / "texas.cites"], runner, show_progress=False)
    root = tmp_path / "indexes"
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(root))
    assert main(["-q", "index", "psimrank", "--fingerprints", "20", "--json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert described["built"] is True and described["parameters"]["n_fingerprints"] == 20
    assert main(["-q", "index", "psimrank", "--fingerprints", "20", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["built"] is False  # the same parameters and graph: reused

    # The stored index is the one built in-process from the streamed graph, bit for bit.
    streamed = stream_link_graph(runner, show_progress=False)
    stored = store.load(root, "psimrank")
    fresh = fingerprint_index(streamed.graph, "psimrank", n_fingerprints=20, seed=0)
    assert np.array_equal(stored.parent, fresh.parent) and np.array_equal(stored.label, fresh.label)

    url = streamed.urls[0]
    assert main(["-q", "related", url, "--method", "psimrank", "--json"]) == 0
    capsys.readouterr()
    assert main(["-q", "related", "http://nowhere.example/", "--method", "psimrank"]) == 2  # a bad argument
    assert "is not a page of the graph" in capsys.readouterr().err

    # More links loaded: every read refuses with the stale-index message; nothing is rebuilt.
    before = {m["path"]: m["created"] for m in store.stored(root, "psimrank")}
    extra = tmp_path / "more.tsv"
    extra.write_text(f"{url}\thttp://new.example/\n")
    load([extra], runner, show_progress=False)
    for args in (["related", url], ["sim", url, streamed.urls[1]]):
        assert main(["-q", *args, "--method", "psimrank"]) == 6
        err = capsys.readouterr().err
        assert "stale" in err and "`linksim index psimrank`" in err and "Traceback" not in err
    assert {m["path"]: m["created"] for m in store.stored(root, "psimrank")} == before
    # Two indexes of a method side by side, each answering for the graph as it is now.
    assert main(["-q", "index", "simrank"]) == 0  # N = 100, the default
    assert main(["-q", "similar", "simrank", "--fingerprints", "1000", "--top-k", "5"]) == 0
    capsys.readouterr()
    assert sorted(m["parameters"]["n_fingerprints"] for m in store.stored(root, "simrank")) == [100, 1000]
    answered = {}
    for n in (100, 1000):
        assert main(["-q", "related", url, "--method", "simrank", "--fingerprints", str(n), "--json"]) == 0
        answered[n] = json.loads(capsys.readouterr().out)
    assert answered[100] and answered[1000] and answered[100] != answered[1000]
    with pytest.raises(SystemExit) as refused:  # refused while parsing, before any graph is read
        main(["-q", "index", "psimrank", "--length", "0"])
    assert refused.value.code == 2


def test_pagesim_through_the_command_line(runner, cli_env, tmp_path, capsys, monkeypatch) -> None:
    load([DATA / "webkb" / "wisconsin.cites"], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "similar", "pagesim", "--radius", "2", "--top-k", "5", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["algorithm"] == "pagesim" and record["written"] > 0
    assert json.loads(runner.run("MATCH (c:LinksimCurrent {algorithm: 'pagesim'}) MATCH (r:LinksimRun {id: c.run}) "
                                 "RETURN r.parameters AS p")[0]["p"])["radius"] == 2
    url = runner.run("MATCH (p:Page)-[:SIMILAR_TO {method: 'pagesim'}]->() RETURN p.url AS url LIMIT 1")[0]["url"]
    assert main(["-q", "related", url, "--method", "pagesim", "--top-k", "5", "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    rows = runner.run(cypher.query("related_pages", "related_pages"), {"url": url, "method": "pagesim", "limit": 5})
    assert [r["url"] for r in rows] == [e["url"] for e in expected]
    assert main(["-q", "sim", url, expected[0]["url"], "--method", "pagesim"]) == 0
    assert float(capsys.readouterr().out) == pytest.approx(expected[0]["score"], rel=1e-12)
    # The stored index has radius 2: asking for radius 3 builds another.
    assert main(["-q", "index", "pagesim", "--radius", "3", "--json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert described["built"] is True and described["parameters"]["radius"] == 3


def test_pagesim_is_estimated_and_checked_by_its_measured_reach(wikispeedia, cli_env, tmp_path, capsys,
                                                                monkeypatch) -> None:
    """PageSim's index holds an entry for every page within --radius links of each page, which
    the counts cannot tell (Wikispeedia's hubs put nearly every article within three links of
    every other): --estimate reads the graph and counts them, and a build that fits the budget by
    the counts but not by the measured reach is refused after the stream (exit 8), nothing built."""
    from linksim.methods import method
    from linksim.pagesim import reach

    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    graph = stream_link_graph(wikispeedia, show_progress=False).graph
    entries = int(reach(graph, 3).sum())
    assert main(["similar", "pagesim", "--estimate", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    (part, size), = [(k, v) for k, v in estimate["parts"].items() if k.startswith("propagation")]
    assert "counted" in part and size == method("pagesim").estimate(
        graph.n, graph.m, {"radius": 3, "reach": entries}, False)[0]
    guessed = similarity_estimate_from_counts(wikispeedia)
    assert guessed["bytesMax"] < estimate["bytesMax"] / 2  # the counts alone were far under
    monkeypatch.setenv("LINKSIM_MEMORY_BUDGET", str((guessed["bytesMax"] + estimate["bytesMax"]) // 2))
    assert main(["-q", "index", "pagesim"]) == 8
    assert "nothing was started" in capsys.readouterr().err
    assert not any((tmp_path / "indexes").rglob("meta.json"))


def similarity_estimate_from_counts(runner) -> dict:
    from linksim.procedures.budget import _as_run, _counts

    return _as_run(_counts(runner), "index", "pagesim", None, None).as_dict()


def test_evaluate_grades_the_current_runs(wikispeedia, cli_env, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "similar", "psimrank", "--top-k", "20", "--fingerprints", "30"]) == 0
    capsys.readouterr()
    assert main(["-q", "evaluate", "--json", "--texts", str(DATA / "wikispeedia" / "plaintext_articles.tar.gz"),
                 "--top", "20"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["method"] for row in rows] == ["psimrank"]
    row = rows[0]
    assert row["queries"] > 1000 and row["pairs"] > 10_000 and -1 <= row["gamma"] <= 1
    assert row["gamma"] > 0.1  # same-class pages rank above siblings on Wikispeedia
    delta = row["delta"]
    assert 0 < delta["10"] < delta["1"] < 1  # nearer related pages have more similar texts
    assert main(["-q", "evaluate", "--method", "simrank"]) == 1
    assert "no SIMILAR_TO run for simrank" in capsys.readouterr().err


def test_evaluate_grades_the_anchors_beside_the_runs_and_similar_reports_its_coverage(wikispeedia, cli_env, tmp_path,
                                                                                   capsys, monkeypatch) -> None:
    from linksim.evaluation import sibling_gamma, classes_of
    from linksim.evaluation.anchors import anchor_lists
    from linksim.procedures.evaluation import page_categories
    from linksim.procedures.stream import stream_link_graph

    runner = wikispeedia
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "similar", "ppsimrank", "--top-k", "20", "--fingerprints", "30", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    linked = runner.run("MATCH (p:Page) WHERE EXISTS { MATCH (p)-[:LINKS_TO]-(q) WHERE q <> p } RETURN count(p) AS n")
    answered = runner.run("MATCH (c:LinksimCurrent {algorithm: 'ppsimrank'}) MATCH (p:Page)-[:SIMILAR_TO {run: c.run}]->() "
                          "RETURN count(DISTINCT p) AS n")
    assert record["linked"] == linked[0]["n"] > 4000 and record["answered"] == answered[0]["n"]
    assert record["coverage"] == record["answered"] / record["linked"] == 1.0  # both directions: every page
    assert main(["-q", "evaluate", "--json", "--top", "20", "--anchors", "hub-cosine", "jaccard-in"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["method"], r["source"]) for r in rows] == [("ppsimrank", "neo4j"), ("hub-cosine", "anchor"),
                                                          ("jaccard-in", "anchor")]
    assert rows[0]["coverage"] == 1.0 and rows[0]["labelled"] > 4500
    # The anchors' rows are the lists of linksim.evaluation.anchors on the graph as streamed, graded alike.
    streamed = stream_link_graph(runner, show_progress=False)
    classes = {url: classes_of(paths) for url, paths in page_categories(runner).items()}
    urls = streamed.urls
    linked_urls = [urls[u] for u in range(streamed.graph.n) if streamed.graph.linked()[u]]
    for row in rows[1:]:
        found = anchor_lists(streamed.graph, row["method"], 20)
        expected = sibling_gamma({urls[u]: [(urls[v], s) for v, s in ranked] for u, ranked in found.items()},
                                 classes, top=20, linked=linked_urls).as_dict()
        assert {k: row[k] for k in expected} == pytest.approx(expected, abs=1e-12)
    assert rows[2]["coverage"] < 0.95 < rows[1]["coverage"]  # in-links only: pages without one have no list
    assert all(r["hits_at_10"] <= r["precision_at_10"] for r in rows)
    assert main(["-q", "evaluate", "--anchors", "nodesim"]) == 1
    assert "no anchor 'nodesim'" in capsys.readouterr().err


def test_evaluate_grades_gds_fastrp_where_the_server_has_gds(wikispeedia, cli_env, tmp_path, capsys,
                                                           monkeypatch) -> None:
    from linksim.procedures.evaluation import has_gds

    runner = wikispeedia
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "similar", "ppsimrank", "--top-k", "20", "--fingerprints", "30"]) == 0
    capsys.readouterr()
    if not has_gds(runner):  # a server of NEO4J_URI without GDS (the local test server has it): refused, clearly
        assert main(["-q", "evaluate", "--anchors", "fastrp"]) == 1
        assert "Graph Data Science" in capsys.readouterr().err
        return
    rows = []
    for _ in range(2):
        assert main(["-q", "evaluate", "--json", "--top", "20", "--method", "ppsimrank", "--anchors", "fastrp"]) == 0
        rows.append(json.loads(capsys.readouterr().out))
    assert [(r["method"], r["source"]) for r in rows[0]] == [("ppsimrank", "neo4j"), ("fastrp", "anchor")]
    assert rows[0] == rows[1]  # a seeded FastRP on one thread: the same vectors, the same lists
    fastrp = rows[0][1]
    # Every page with a link has a direction; Wikispeedia's classes are many, so lists at random
    # would put about 0.02 of their first ten in the page's class.
    assert fastrp["coverage"] == 1.0 and fastrp["precision_at_10"] > 0.3
    assert runner.run("CALL gds.graph.list() YIELD graphName RETURN count(*) AS n")[0]["n"] == 0  # dropped


def test_a_run_over_the_memory_budget_is_refused_and_writes_nothing(runner, cli_env, tmp_path, capsys, monkeypatch):
    """A tiny budget: similar, index and pagerank exit 8 naming the setting, before any lock, read
    or write; --estimate prints the estimate and runs nothing."""
    load([DATA / "webkb" / "texas.cites"], runner, show_progress=False)
    root = tmp_path / "indexes"
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(root))
    before = runner.run("MATCH (n) RETURN count(n) AS n")
    for command in (["similar", "simrank", "--memory-budget", "1M"], ["index", "psimrank", "--memory-budget", "1M"],
                    ["pagerank", "--memory-budget", "1M"]):
        assert main(["-q", *command]) == 8, command
        message = capsys.readouterr().err
        assert "--memory-budget" in message and "LINKSIM_MEMORY_BUDGET" in message and "nothing was started" in message
    monkeypatch.setenv("LINKSIM_MEMORY_BUDGET", "2M")
    assert main(["-q", "similar", "psimrank"]) == 8
    capsys.readouterr()
    assert runner.run("MATCH ()-[s:SIMILAR_TO]->() RETURN count(s) AS n") == [{"n": 0}]
    assert runner.run("MATCH (p:Page) WHERE p.pagerank IS NOT NULL RETURN count(p) AS n") == [{"n": 0}]
    assert runner.run("MATCH (n) RETURN count(n) AS n") == before  # no lock, run or current node left
    assert not root.exists() or not any(root.rglob("meta.json"))  # no index built

    monkeypatch.delenv("LINKSIM_MEMORY_BUDGET")
    assert main(["similar", "simrank", "--top-k", "5", "--estimate", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    pages = runner.run("MATCH (p:Page) RETURN count(p) AS n")[0]["n"]
    assert estimate["pages"] == pages and estimate["task"] == "similar simrank"
    assert 0 < estimate["bytesMin"] <= estimate["bytesMax"] and "tree layout" in estimate["parts"]
    assert runner.run("MATCH ()-[s:SIMILAR_TO]->() RETURN count(s) AS n") == [{"n": 0}]  # estimating ran nothing
    assert main(["pagerank", "--estimate"]) == 0
    assert "Estimate for pagerank" in capsys.readouterr().out


def test_a_write_the_disk_cannot_hold_is_refused_before_it_begins(runner, cli_env, tmp_path, capsys, monkeypatch):
    """The server's own settings (SHOW SETTINGS: its folders, its checkpoint policy) place the
    store's growth and the transaction logs of the write on this machine's file systems; a write
    they cannot hold exits 8 with nothing written, where it would have failed half-way (the 100M
    crawl's write filled the disk). With the real sizes, the same run writes."""
    from linksim.procedures import budget

    load([DATA / "webkb" / "texas.cites"], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    settings = budget.server_folders(runner)
    if settings is None:
        pytest.skip("the test server's folders are not on this machine: its disk is not linksim's to check")
    assert settings["db.checkpoint"] == "VOLUME"  # linksim's local server prunes its logs as they grow
    before = runner.run("MATCH (n) RETURN count(n) AS n")
    real = budget.STORE_BYTES_PER_SIMILAR
    monkeypatch.setattr(budget, "STORE_BYTES_PER_SIMILAR", 1 << 50)
    reusable = budget.reusable_relationships
    monkeypatch.setattr(budget, "reusable_relationships", lambda *args: 0)  # a store without room (the tests' has)
    assert main(["-q", "similar", "psimrank", "--top-k", "5"]) == 8
    message = capsys.readouterr().err
    assert "SIMILAR_TO relationships needs" in message and "Neo4j store (SIMILAR_TO)" in message
    assert "nothing was written" in message and "run again, reads them back" in message
    assert runner.run("MATCH ()-[s:SIMILAR_TO]->() RETURN count(s) AS n") == [{"n": 0}]
    assert current_runs(runner) == {} and runner.run("MATCH (n) RETURN count(n) AS n") == before
    monkeypatch.setattr(budget, "STORE_BYTES_PER_SIMILAR", real)
    monkeypatch.setattr(budget, "reusable_relationships", reusable)
    assert main(["-q", "similar", "psimrank", "--top-k", "5"]) == 0
    written = runner.run("MATCH ()-[s:SIMILAR_TO]->() RETURN count(s) AS n")[0]["n"]
    assert written > 100
    # Deleted relationships leave their records to the store's next writes: room counted as such.
    folder = Path(settings["server.directories.data"]) / "databases" / "neo4j"
    room = budget.reusable_relationships(runner, folder, "neo4j")
    runner.write("MATCH ()-[s:SIMILAR_TO]->() DELETE s")
    assert budget.reusable_relationships(runner, folder, "neo4j") == room + written


def test_an_index_the_stores_disk_cannot_hold_is_refused_before_it_is_built(runner, cli_env, tmp_path, capsys,
                                                                           monkeypatch):
    """`linksim index` checks its files against the free space of the store's file system once it
    knows the graph, before it builds: with the file system shown nearly full, exit 8, nothing in
    the store; with its real free space, the same command builds."""
    import os

    load([DATA / "webkb" / "texas.cites"], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    real = os.statvfs

    class Full:
        def __init__(self, path):
            usage = real(path)
            self.f_frsize, self.f_bavail = usage.f_frsize, 16  # 16 blocks free

    monkeypatch.setattr(os, "statvfs", Full)
    assert main(["-q", "index", "psimrank"]) == 8
    message = capsys.readouterr().err
    assert "index psimrank on" in message and "nothing was built" in message
    assert not [path for path in (tmp_path / "indexes").rglob("*") if path.suffix in (".npy", ".json")
                or path.name.startswith(".build-")]  # no index, no scratch folder
    monkeypatch.setattr(os, "statvfs", real)
    assert main(["-q", "index", "psimrank"]) == 0
    assert list((tmp_path / "indexes").rglob("meta.json"))


def test_an_index_over_the_budget_is_built_on_disk_with_the_same_results(runner, cli_env, tmp_path, capsys,
                                                                         monkeypatch):
    """A budget below the in-memory estimate but above the on-disk one: `similar` builds the index
    into memory-mapped files and writes the same SIMILAR_TO lists as a run with the index in memory."""
    load([DATA / "webkb" / "texas.cites"], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    query = (f"MATCH (current:LinksimCurrent {{algorithm: 'psimrank'}}) WITH {RUNS_OF_CURRENT} AS runs "
             f"MATCH (p)-[s:SIMILAR_TO]->(q) WHERE {is_current()} "
             "RETURN p.url AS p, q.url AS q, s.score AS score, s.rank AS rank ORDER BY p, rank")
    assert main(["-q", "similar", "psimrank", "--top-k", "5"]) == 0
    capsys.readouterr()
    in_memory = runner.run(query)
    assert main(["similar", "psimrank", "--top-k", "5", "--estimate", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert not estimate["onDisk"] and estimate["pageMajor"] and not estimate["rowsOnDisk"]
    # Below that, the page-major copies go to disk first (where that lowers the peak), then the index.
    squeezed = estimate
    while not squeezed["onDisk"]:
        budget = str(squeezed["bytesMin"] - 1)
        assert main(["similar", "psimrank", "--top-k", "5", "--estimate", "--json", "--memory-budget", budget]) == 0
        smaller = json.loads(capsys.readouterr().out)  # --estimate: the run as this budget makes it
        assert smaller["bytesMin"] < squeezed["bytesMin"] and smaller["rowsOnDisk"] and smaller["pageMajor"]
        squeezed = smaller
    assert main(["similar", "psimrank", "--top-k", "5", "--rebuild", "--memory-budget", budget]) == 0
    output = capsys.readouterr()
    assert "building on disk" in output.err + output.out
    assert runner.run(query) == in_memory and len(in_memory) > 100
    assert not list((tmp_path / "indexes").rglob(".build-*"))  # the scratch folder went with the save
    stored = list((tmp_path / "indexes").rglob("layout_order.npy"))
    assert len(stored) == 1


def test_the_defaults_index_built_on_disk_is_stored_and_answers_as_built_in_memory(runner, tmp_path, caplog):
    """The default's index built on disk by the run (its walks and their layout into memory-mapped
    files, then moved into the store): the same lists as its build in memory. (On a crawl this
    small its peak is the embedding's, which a budget cannot squeeze: the run is asked directly.)"""
    load([DATA / "webkb" / "texas.cites"], runner, show_progress=False)
    held = obtain_index(runner, "spectral", tmp_path / "memory", show_progress=False, memory_budget=False)
    with caplog.at_level("INFO", logger="linksim"):
        mapped = obtain_index(runner, "spectral", tmp_path / "disk", show_progress=False, memory_budget=False,
                              on_disk=True, reopen=True)
    assert held.built and mapped.built and "building on disk" in caplog.text
    assert list((tmp_path / "disk").rglob("layout_order.npy")) and not list((tmp_path / "disk").rglob(".build-*"))
    pages = np.arange(held.index.fingerprints.n)
    assert [list(x) for x in mapped.index.related_many(pages)] == [list(x) for x in held.index.related_many(pages)]


def test_background_retirement_returns_at_the_switch_then_deletes_the_old_run(runner, cli_env, tmp_path,
                                                                               capsys, monkeypatch):
    """`linksim similar --retire background` returns once the new run is current; a process of
    its own then deletes the old run's relationships (and only those) and empties the list."""
    import time

    load([DATA / "webkb" / "cornell.cites"], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    monkeypatch.setenv("LINKSIM_HOME", str(tmp_path / "home"))
    assert main(["-q", "similar", "psimrank", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["-q", "similar", "psimrank", "--seed", "3", "--retire", "background", "--rewrite", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert current_runs(runner) == {"psimrank": [second["id"]]}  # readers see the new run at once
    deadline = time.monotonic() + 60
    while relationships(runner) != {("psimrank", second["id"]): second["written"]}:
        assert time.monotonic() < deadline, relationships(runner)
        time.sleep(0.5)
    assert first["id"] < second["id"]
    retiring = runner.run("MATCH (c:LinksimCurrent {algorithm: 'psimrank'}) RETURN c.retiring AS r")
    deadline = time.monotonic() + 30
    while retiring != [{"r": []}]:
        assert time.monotonic() < deadline, retiring
        time.sleep(0.5)
        retiring = runner.run("MATCH (c:LinksimCurrent {algorithm: 'psimrank'}) RETURN c.retiring AS r")
    log = (tmp_path / "home" / "logs" / "retire-psimrank.log").read_text()
    assert "relationships deleted" in log and cli_env.password not in log


def test_lists_written_for_chosen_source_pages_only(runner, cli_env, tmp_path, capsys, monkeypatch):
    """--source-pages crawled | pagerank>=Q | @FILE: lists only for those pages, each equal to the
    list the run over all pages wrote for it (all pages stay candidates)."""
    load([DATA / "webkb" / "cornell.cites"], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    # The current lists (a rerun that changes some lists is an update: the rule of related_pages.cypher).
    lists_query = (f"MATCH (current:LinksimCurrent {{algorithm: 'psimrank'}}) WITH {RUNS_OF_CURRENT} AS runs "
                   f"MATCH (p:Page)-[s:SIMILAR_TO]->(q:Page) WHERE {is_current()} "
                   "WITH p, s, q ORDER BY s.rank RETURN p.url AS url, collect([q.url, s.score]) AS list")

    def lists():
        return {row["url"]: row["list"] for row in runner.run(lists_query)}

    assert main(["-q", "similar", "psimrank", "--top-k", "5"]) == 0
    everything = lists()
    runner.write("MATCH (p:Page) WHERE id(p) % 3 = 0 SET p.crawled = false")  # counts unchanged: index valid
    crawled = {row["url"] for row in runner.run("MATCH (p:Page) WHERE p.crawled RETURN p.url AS url")}
    assert main(["-q", "similar", "psimrank", "--top-k", "5", "--source-pages", "crawled"]) == 0
    assert lists() == {url: found for url, found in everything.items() if url in crawled}

    assert main(["-q", "pagerank"]) == 0
    ranks = {row["url"]: row["r"] for row in runner.run("MATCH (p:Page) RETURN p.url AS url, p.pagerank AS r")}
    high = {url for url, r in ranks.items() if r >= np.quantile(list(ranks.values()), 0.75)}
    assert main(["-q", "similar", "psimrank", "--top-k", "5", "--source-pages", "pagerank>=0.75"]) == 0
    assert lists() == {url: found for url, found in everything.items() if url in high}

    chosen = sorted(everything)[:3]
    (tmp_path / "pages.txt").write_text("# three pages\n" + "\n".join(chosen) + "\n\n")
    assert main(["-q", "similar", "psimrank", "--top-k", "5", "--source-pages", f"@{tmp_path / 'pages.txt'}"]) == 0
    assert lists() == {url: everything[url] for url in chosen}
    capsys.readouterr()

    current = lists()
    for spec in ("pagerank>=1.5", "popular", f"@{tmp_path / 'missing.txt'}"):
        assert main(["-q", "similar", "psimrank", "--source-pages", spec]) == 2, spec
        assert "--source-pages" in capsys.readouterr().err
    (tmp_path / "unknown.txt").write_text("http://not.in.the.graph/\n")
    assert main(["-q", "similar", "psimrank", "--source-pages", f"@{tmp_path / 'unknown.txt'}"]) == 2
    assert "is not a page of the graph" in capsys.readouterr().err
    assert lists() == current  # a refused run changed nothing


def test_a_page_without_related_pages_is_an_empty_list_everywhere(runner, cli_env, tmp_path, capsys, monkeypatch):
    """A page nobody links to has no PSimRank related pages: an empty list from the API, the
    command line and Cypher alike (was: a pandas merge error with pandas 3)."""
    import linksim

    load([DATA / "webkb" / "cornell.cites"], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "similar", "psimrank", "--top-k", "5"]) == 0
    lonely = runner.run("MATCH (p:Page) WHERE NOT ()-[:LINKS_TO]->(p) RETURN p.url AS url ORDER BY url LIMIT 1")
    assert lonely, "the crawl has a page without in-links"
    url = lonely[0]["url"]
    capsys.readouterr()

    with linksim.connect() as ls:
        frame = ls.related(url, method="psimrank")
        assert frame.empty and list(frame.columns) == ["rank", "url", "title", "score", "pagerank"]
        assert str(frame["rank"].dtype) == "int64" and str(frame["score"].dtype) == "float64"
        linked = runner.run("MATCH ()-[:LINKS_TO]->(p:Page) RETURN p.url AS url ORDER BY url LIMIT 1")[0]["url"]
        assert len(ls.related(linked, method="psimrank")) > 0  # the same call with a list that is not empty
    assert main(["related", url, "--method", "psimrank", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["related", url, "--method", "psimrank"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and url in captured.out + captured.err
    assert runner.run(cypher.query("related_pages", "related_pages"), {"url": url, "method": "psimrank", "limit": 10}) == []


def test_background_retirement_with_a_home_it_cannot_write_is_one_message(runner, cli_env, tmp_path, capsys,
                                                                         monkeypatch):
    load([DATA / "webkb" / "cornell.cites"], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "similar", "psimrank", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("LINKSIM_HOME", str(blocker / "home"))  # no folder can be made there, even by root
    assert main(["similar", "psimrank", "--seed", "3", "--retire", "background"]) == 2
    err = capsys.readouterr().err
    assert "--retire background writes its log to" in err and "--retire wait" in err and "Traceback" not in err
    assert current_runs(runner) == {"psimrank": [first["id"]]}  # nothing was started
    assert relationships(runner) == {("psimrank", first["id"]): first["written"]}


def test_related_to_a_set_through_the_api_and_the_command_line(runner, cli_env, tmp_path, capsys, monkeypatch):
    """A set's list from the stored index, against the real server: the combination of the members'
    own lists (read one by one with `related --top-k POOL`), the members left out, one URL as a set
    giving that page's list; bad sets refused with exit code 2."""
    import linksim

    load([DATA / "webkb" / "cornell.cites"], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "index", "xjaccard"]) == 0
    linked = [row["url"] for row in runner.run(
        "MATCH ()-[:LINKS_TO]->(p:Page) WITH p, count(*) AS k WHERE k >= 3 RETURN p.url AS url ORDER BY url LIMIT 3")]
    assert len(linked) == 3
    with linksim.connect(show_progress=False) as ls:
        together = ls.related(linked, method="xjaccard", top_k=8, pool=20)
        assert list(together.columns) == ["rank", "url", "title", "score", "lists", "pagerank"]
        assert len(together) > 0 and not set(together["url"]) & set(linked)
        own = [ls.related(url, method="xjaccard", top_k=20) for url in linked]
        expected: dict[str, float] = {}
        for frame in own:
            for url, score in zip(frame["url"], frame["score"]):
                expected[url] = expected.get(url, 0.0) + score / 3
        for url, score, lists in zip(together["url"], together["score"], together["lists"]):
            assert score == pytest.approx(expected[url], abs=1e-12)
            assert lists == sum(url in set(frame["url"]) for frame in own)
        best = sorted((score for url, score in expected.items() if url not in linked), reverse=True)
        assert together["score"].tolist() == pytest.approx(best[: len(together)], abs=1e-12)  # ties: any order
        alone = ls.related([linked[0]], method="xjaccard", top_k=5)
        single = ls.related(linked[0], method="xjaccard", top_k=5)
        assert alone["url"].tolist() == single["url"].tolist()
        assert alone["score"].tolist() == single["score"].tolist()
        with pytest.raises(linksim.ConfigurationError, match="at least one URL"):
            ls.related([], method="xjaccard")
    capsys.readouterr()
    assert main(["-q", "related", *linked, "--method", "xjaccard", "--top-k", "8", "--pool", "20", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [row["url"] for row in printed] == together["url"].tolist()
    assert [row["lists"] for row in printed] == together["lists"].tolist()
    assert main(["related", linked[0], "http://not-in-the.graph/", "--method", "xjaccard"]) == 2
    assert main(["related", linked[0], linked[1], "--method", "xjaccard", "--pool", "5", "--top-k", "10"]) == 2
    err = capsys.readouterr().err
    assert "pool must be at least top_k" in err and "Traceback" not in err


class StopServerAtRetirement(QueryRunner):
    """A runner that stops the real server just before the first deletion of a retired run."""

    def __init__(self, driver, database, server) -> None:
        super().__init__(driver, database)
        self.server, self.stopped = server, False

    def write_autocommit(self, query, parameters=None):
        if "DELETE s" in query and not self.stopped:
            self.stopped = True
            self.server.stop()
        return super().write_autocommit(query, parameters)


def test_a_retirement_cut_short_leaves_the_new_run_current_and_the_next_run_finishes_it(
        neo4j_server, runner, tmp_path, monkeypatch, caplog) -> None:
    """The server stops after the switch, as the old run's relationships are being deleted (the
    100M run's disk filled there): the new run is current and the command succeeds, saying what
    is left; the next run of the method deletes the old run's relationships before it writes, and
    the run it replaces after."""
    from neo4j import GraphDatabase

    server = neo4j_server.local
    if server is None:
        pytest.skip(f"needs the local server to stop it; this one was provisioned by {neo4j_server.kind}")
    load([DATA / "webkb" / "texas.cites"], runner, show_progress=False)
    root = tmp_path / "indexes"
    first = similarity.similar(runner, "psimrank", root, query=Query(5), show_progress=False)
    monkeypatch.setenv("LINKSIM_RETRY_SECONDS", "3")  # the runner's retries once the server is gone
    conn = neo4j_server.connection
    driver = GraphDatabase.driver(conn.uri, auth=(conn.user, conn.password))
    try:
        with caplog.at_level("WARNING", logger="linksim"):
            second = similarity.similar(StopServerAtRetirement(driver, conn.database, server), "psimrank", root,
                                        query=Query(5), show_progress=False, rewrite=True)
    finally:
        driver.close()
        server.start()
    runner.reset_bookmarks()
    assert f"psimrank run {second.id} is current" in caplog.text and "the next run of psimrank deletes" in caplog.text
    assert current_runs(runner) == {"psimrank": [second.id]}
    assert relationships(runner) == {("psimrank", first.id): first.written, ("psimrank", second.id): second.written}
    # The next run deletes what is left before it writes: the store's room is its own.
    check_write_disk, seen = similarity._check_write_disk, []
    monkeypatch.setattr(similarity, "_check_write_disk", lambda *args: (seen.append(relationships(runner)),
                                                                         check_write_disk(*args)))
    third = similarity.similar(runner, "psimrank", root, query=Query(5), show_progress=False, rewrite=True, wait=60)
    assert seen == [{("psimrank", second.id): second.written}]
    assert current_runs(runner) == {"psimrank": [third.id]}
    assert relationships(runner) == {("psimrank", third.id): third.written}
