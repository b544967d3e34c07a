"""The Spark path against the real Neo4j: read and write through the Neo4j connector, indexes
equal to the local ones, SIMILAR_TO equal to `linksim similar`'s, PageRank equal to `linksim
pagerank`'s."""

from __future__ import annotations

import json

import numpy as np
import pytest

from linksim import cypher, store
from linksim.cli.main import main
from linksim.procedures import spark as spark_path
from linksim.procedures.stream import stream_link_graph
from linksim.methods import fingerprint_index

URLS = [
    "https://en.wikipedia.org/wiki/Albert_Einstein",
    "https://en.wikipedia.org/wiki/Paris",
    "https://en.wikipedia.org/wiki/Dog",
    "https://en.wikipedia.org/wiki/Jazz",
]


def test_spark_index_equals_linksim_index_for_2_and_7_partitions(wikispeedia, neo4j_server, spark, cli_env,
                                                                   tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    local = stream_link_graph(wikispeedia, show_progress=False).graph
    # The connector reads the graph numbered as the local stream numbers it.
    graph = spark_path.read_graph(spark, neo4j_server.connection, 4)
    edges = graph.edges.toPandas().sort_values(["src", "dst"])
    source, target = local.edges()
    order = np.lexsort((target, source))
    assert (graph.n, graph.m) == (local.n, local.m)
    np.testing.assert_array_equal(edges["src"], source[order])
    np.testing.assert_array_equal(edges["dst"], target[order])
    # 7 partitions here, 2 in the command below (1, 2 and 7 on random graphs: the unit tests).
    index, _ = spark_path.build_index(spark, graph, "simrank", 7, n_fingerprints=2, length=5, seed=5)
    expected = fingerprint_index(local, "simrank", 2, 5, seed=5)
    np.testing.assert_array_equal(index.parent, expected.parent)
    np.testing.assert_array_equal(index.label, expected.label)
    # The command: its stored arrays are those of `linksim index`, and `linksim related` answers.
    assert main(["-q", "spark", "index", "simrank", "--fingerprints", "8", "--length", "6", "--seed", "3",
                 "--partitions", "2", "--json"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert main(["-q", "related", URLS[0], "--method", "simrank", "--json"]) == 0
    answered = json.loads(capsys.readouterr().out)
    assert len(answered) == 10
    from_spark = store.open_path(built["path"])
    assert main(["-q", "index", "simrank", "--fingerprints", "8", "--length", "6", "--seed", "3", "--rebuild",
                 "--json"]) == 0
    rebuilt = json.loads(capsys.readouterr().out)
    assert rebuilt["path"] == built["path"]  # the same parameters and graph: the same entry of the store
    from_numpy = store.open_path(rebuilt["path"])
    np.testing.assert_array_equal(from_spark.parent, from_numpy.parent)
    np.testing.assert_array_equal(from_spark.label, from_numpy.label)
    assert main(["-q", "related", URLS[0], "--method", "simrank", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == answered


def _lists(runner, method: str) -> dict:
    query = cypher.query("related_pages", "related_pages")
    return {url: [(row["url"], row["rank"], round(row["score"], 12)) for row in
                  runner.run(query, {"url": url, "method": method, "limit": 10})] for url in URLS}


def test_spark_similar_writes_the_lists_of_linksim_similar(wikispeedia, cli_env, tmp_path, monkeypatch,
                                                           capsys) -> None:
    runner = wikispeedia
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "similar", "psimrank", "--top-k", "10", "--fingerprints", "12", "--length", "6",
                 "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    expected = _lists(runner, "psimrank")
    everything = runner.run("MATCH (a)-[s:SIMILAR_TO]->(b) RETURN a.url AS a, b.url AS b, s.rank AS r, s.score AS s "
                            "ORDER BY a, r")
    assert all(expected.values())
    # The Spark run builds its own index (--rebuild), replaces the local run, and writes the same.
    assert main(["-q", "spark", "similar", "psimrank", "--top-k", "10", "--fingerprints", "12", "--length", "6",
                 "--rebuild", "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["written"] == local["written"] > 0 and written["id"] != local["id"]
    assert _lists(runner, "psimrank") == expected
    again = runner.run("MATCH (a)-[s:SIMILAR_TO]->(b) RETURN a.url AS a, b.url AS b, s.rank AS r, s.score AS s "
                       "ORDER BY a, r")
    assert again == everything  # every relationship, score for score; the old run is retired
    runs = runner.run("MATCH ()-[s:SIMILAR_TO]->() RETURN collect(DISTINCT s.run) AS runs")[0]["runs"]
    assert runs == [written["id"]]


def test_spark_pagerank_written_through_the_connector_is_within_1e9_of_numpy(wikispeedia, neo4j_server, spark) -> None:
    from linksim.pagerank import pagerank

    from linksim.procedures.browser import label_pagerank_tiers

    runner = wikispeedia
    streamed = stream_link_graph(runner, show_progress=False)
    reference = pagerank(streamed.graph, tol=1e-9, max_iter=300, dtype=np.float64)
    runner.write("MATCH (p:Page) SET p.pagerank = 0.0")  # stale ranks, and tiers set from them
    label_pagerank_tiers(runner)
    summary = spark_path.spark_pagerank(runner, neo4j_server.connection, partitions=2, tol=1e-9, max_iter=300,
                                        spark=spark)
    assert summary.did_converge and summary.ran_iterations == reference.iterations and summary.engine == "spark"
    rows = runner.run("MATCH (p:Page) RETURN id(p) AS id, p.pagerank AS rank")
    written = dict((row["id"], row["rank"]) for row in rows)
    ranks = np.array([written[i] for i in streamed.node_ids.tolist()])
    assert np.abs(ranks - reference.ranks).sum() < 1e-9
    # The same tail as the local write: the run recorded, the written count checked, the tiers in step.
    run = runner.run("MATCH (r:LinksimRun {algorithm: 'pagerank'}) RETURN r.mode AS mode, r.written AS written, "
                     "r.pages AS pages, r.iterations AS iterations, r.converged AS converged, r.parameters AS p")
    assert len(run) == 1 and run[0]["mode"] == "write" and run[0]["converged"] is True
    assert run[0]["written"] == run[0]["pages"] == streamed.graph.n and run[0]["iterations"] == reference.iterations
    assert '"engine": "spark"' in run[0]["p"]
    top = runner.run("MATCH (p:PageRankTop1) RETURN min(p.pagerank) AS low, count(p) AS n")[0]
    rest = runner.run("MATCH (p:Page) WHERE NOT p:PageRankTop1 RETURN max(p.pagerank) AS high")[0]
    assert top["n"] > 0 and top["low"] >= rest["high"]  # the tiers follow the new ranks, not the zeros


def test_spark_index_of_spectral_p_psimrank_answers_as_linksim_index(wikispeedia, cli_env, tmp_path, monkeypatch,
                                                                     capsys) -> None:
    """The default method on Spark: P-PSimRank's fingerprints, the neighbour lists and the
    embedding bit for bit, and `linksim related` gives the same pages from either index."""
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "spark", "index", "spectral", "--fingerprints", "10", "--partitions", "2", "--json"]) == 0
    built = json.loads(capsys.readouterr().out)
    from_spark = store.open_path(built["path"])
    answered = {}
    for url in URLS:
        assert main(["-q", "related", url, "--method", "spectral", "--fingerprints", "10", "--json"]) == 0
        answered[url] = json.loads(capsys.readouterr().out)
        assert len(answered[url]) == 10
    assert main(["-q", "index", "spectral", "--fingerprints", "10", "--rebuild", "--json"]) == 0
    rebuilt = json.loads(capsys.readouterr().out)
    assert rebuilt["path"] == built["path"]
    from_numpy = store.open_path(rebuilt["path"])
    np.testing.assert_array_equal(from_spark.fingerprints.parent, from_numpy.fingerprints.parent)
    np.testing.assert_array_equal(from_spark.fingerprints.label, from_numpy.fingerprints.label)
    np.testing.assert_array_equal(from_spark.neighbour_indices, from_numpy.neighbour_indices)
    np.testing.assert_array_equal(from_spark.embedding, from_numpy.embedding)
    for url in URLS:
        assert main(["-q", "related", url, "--method", "spectral", "--fingerprints", "10", "--json"]) == 0
        again = json.loads(capsys.readouterr().out)
        assert [row["url"] for row in again] == [row["url"] for row in answered[url]]
    # Every page's list written by Spark's tasks from the stored index: what `related` answers.
    assert main(["-q", "spark", "similar", "spectral", "--top-k", "10", "--fingerprints", "10", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] > 0
    written = _lists(wikispeedia, "spectral")
    assert {url: [row[0] for row in rows] for url, rows in written.items()} == \
        {url: [row["url"] for row in answered[url]] for url in URLS}
