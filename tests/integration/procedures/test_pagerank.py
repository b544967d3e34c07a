"""PageRank in Neo4j: streamed graph, written property, modes, LinksimRun, Cypher queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linksim import cypher
from linksim.cli.main import main
from linksim.graph import LinkGraph
from linksim.loader import read_files
from linksim.procedures.load import load
from linksim.pagerank import pagerank
from linksim.procedures import QueryRunner
from linksim.procedures.pagerank import run_pagerank
from linksim.procedures.stream import stream_link_graph

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "crawl"


def in_memory_ranks(folder: Path) -> dict[str, float]:
    """PageRank from the files alone, with no Neo4j in between."""
    graph, _ = read_files([folder])
    links = graph.links()
    link_graph = LinkGraph.from_edges(links.source, links.target, len(graph))
    return dict(zip(graph.urls, pagerank(link_graph).ranks.astype(float)))


def test_streamed_graph_is_the_loaded_graph(runner: QueryRunner) -> None:
    load([FIXTURES / "site.tsv"], runner, show_progress=False)
    streamed = stream_link_graph(runner, show_progress=False)
    graph = streamed.graph
    pairs = {(graph.keys[s], graph.keys[t]) for s, t in zip(*graph.edges())}
    assert graph.n == 5
    assert pairs == {
        ("http://example.org/", "http://example.org/a"), ("http://example.org/", "http://example.org/b"),
        ("http://example.org/a", "http://example.org/b"), ("http://example.org/b", "http://example.org/"),
        ("http://example.org/c", "http://other.example/"),
    }  # the self-loop is stored but left out of computations
    with_loops = stream_link_graph(runner, self_loops=True, show_progress=False).graph
    assert with_loops.m == 6
    assert list(streamed.node_ids) == sorted(streamed.node_ids)


def test_crawled_only_leaves_out_pages_only_linked_to(runner: QueryRunner) -> None:
    load([FIXTURES / "site.jsonl"], runner, show_progress=False)
    graph = stream_link_graph(runner, crawled_only=True, show_progress=False).graph
    assert graph.n == 4 and "http://other.example/" not in graph.keys
    assert graph.m == 4


def test_written_property_equals_in_memory_result(wikispeedia: QueryRunner) -> None:
    runner = wikispeedia
    run = run_pagerank(runner, show_progress=False)
    assert run.record.converged and run.record.written == 4604
    stored = {r["url"]: r["pr"] for r in runner.run("MATCH (p:Page) RETURN p.url AS url, p.pagerank AS pr")}
    expected = in_memory_ranks(DATA / "wikispeedia")
    assert stored.keys() == expected.keys()
    assert sum(abs(stored[u] - expected[u]) for u in stored) <= 1e-6
    assert sum(stored.values()) == pytest.approx(1.0, abs=1e-5)

    runs = runner.run("MATCH (r:LinksimRun) RETURN r.algorithm AS a, r.converged AS c, r.iterations AS i, "
                      "r.parameters AS p, r.millis AS ms, r.pages AS n")
    assert len(runs) == 1
    assert runs[0]["a"] == "pagerank" and runs[0]["c"] is True and runs[0]["i"] == run.record.iterations
    assert json.loads(runs[0]["p"])["damping"] == 0.85 and runs[0]["n"] == 4604


def test_rerun_overwrites_cleanly(wikispeedia: QueryRunner) -> None:
    runner = wikispeedia
    run_pagerank(runner, damping=0.5, show_progress=False)
    run_pagerank(runner, damping=0.85, show_progress=False)
    stored = {r["url"]: r["pr"] for r in runner.run("MATCH (p:Page) RETURN p.url AS url, p.pagerank AS pr")}
    expected = in_memory_ranks(DATA / "wikispeedia")
    assert sum(abs(stored[u] - expected[u]) for u in stored) <= 1e-6
    assert runner.run("MATCH (r:LinksimRun) RETURN count(r) AS n") == [{"n": 2}]


def test_stream_and_stats_write_nothing(runner: QueryRunner) -> None:
    load([FIXTURES / "site.tsv"], runner, show_progress=False)
    run = run_pagerank(runner, mode="stream", top=3, show_progress=False)
    assert list(run.top.columns) == ["rank", "url", "pagerank"] and len(run.top) == 3
    assert run.top.pagerank.is_monotonic_decreasing
    run_pagerank(runner, mode="stats", show_progress=False)
    assert runner.run("MATCH (p:Page) WHERE p.pagerank IS NOT NULL RETURN count(p) AS n") == [{"n": 0}]
    assert runner.run("MATCH (r:LinksimRun) RETURN collect(r.mode) AS m")[0]["m"] in (["stream", "stats"], ["stats", "stream"])


def test_personalized_and_crawled_only(runner: QueryRunner) -> None:
    load([FIXTURES / "site.jsonl"], runner, show_progress=False)
    run_pagerank(runner, show_progress=False)
    run = run_pagerank(runner, crawled_only=True, personalization={"http://example.org/c": 1.0}, show_progress=False)
    rows = {r["url"]: r["pr"] for r in runner.run("MATCH (p:Page) RETURN p.url AS url, p.pagerank AS pr")}
    assert rows["http://other.example/"] is None  # left out of a crawled-only run: no stale rank
    assert rows["http://example.org/c"] == max(v for v in rows.values() if v is not None)
    assert run.record.pages == 4


def test_cypher_queries_and_cli(wikispeedia: QueryRunner, cli_env, capsys) -> None:
    runner = wikispeedia
    assert main(["-q", "pagerank", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "converged after" in out and "Wrote pagerank on 4,604 pages" in out
    top = runner.run(cypher.query("pagerank", "top_pages"), {"limit": 3})
    assert [row["url"] for row in top][0] in out
    assert top[0]["pagerank"] >= top[1]["pagerank"] >= top[2]["pagerank"]
    host = runner.run(cypher.query("pagerank", "top_pages_of_host"), {"host": "en.wikipedia.org", "limit": 3})
    assert host == top
    page = runner.run(cypher.query("pagerank", "page_rank"), {"url": top[1]["url"]})
    assert page[0]["position"] == 2 and page[0]["inLinks"] > 0

    assert main(["pagerank", "--personalize", "https://nowhere.example/x"]) != 0
    assert "not in the graph" in capsys.readouterr().err
    assert main(["pagerank", "--write-property", "url"]) == 2
    assert "would overwrite" in capsys.readouterr().err


def test_browser_tiers_follow_pagerank(runner: QueryRunner, cli_env, capsys) -> None:
    load([FIXTURES / "site.tsv"], runner, show_progress=False)
    assert main(["browser"]) != 0  # no PageRank yet: a clear message, nothing labelled
    assert "run `linksim pagerank` first" in capsys.readouterr().err
    assert runner.run("MATCH (p:PageRankTop1|PageRankTop10) RETURN count(p) AS n")[0]["n"] == 0

    run_pagerank(runner, show_progress=False)
    assert main(["browser"]) == 0
    assert ":PageRankTop1 1, :PageRankTop10 0 of 5 ranked pages" in capsys.readouterr().out
    top = runner.run("MATCH (p:Page) RETURN p.url AS url ORDER BY p.pagerank DESC, p.url LIMIT 1")[0]["url"]
    labelled = runner.run("MATCH (p:PageRankTop1) RETURN p.url AS url")
    assert [row["url"] for row in labelled] == [top]

    # The tiers move with the ranks: personalised on another page, that page leads (PageRank
    # relabels by itself once the tiers are in use).
    other = runner.run("MATCH (p:Page) WHERE p.url <> $top RETURN p.url AS url ORDER BY p.url LIMIT 1",
                       {"top": top})[0]["url"]
    run_pagerank(runner, personalization={other: 1.0}, show_progress=False)  # moves the tiers itself
    lead = runner.run("MATCH (p:Page) RETURN p.url AS url ORDER BY p.pagerank DESC, p.url LIMIT 1")[0]["url"]
    assert [row["url"] for row in runner.run("MATCH (p:PageRankTop1) RETURN p.url AS url")] == [lead]
    assert runner.run("MATCH (p:PageRankTop1|PageRankTop10) RETURN count(p) AS n")[0]["n"] == 1
    assert main(["browser", "--no-tiers"]) == 0
    assert "PageRank tiers" not in capsys.readouterr().out


def test_a_warm_start_after_a_recrawl_gives_the_same_ranks_in_fewer_iterations(
        runner: QueryRunner, cli_env, tmp_path: Path, capsys) -> None:
    import random

    rng = random.Random(5)
    urls = [f"http://s{i % 5}.example/{i}" for i in range(3000)]
    crawl = {u: rng.sample(urls, rng.randint(1, 12)) for u in urls[:2500]}
    first = tmp_path / "first.jsonl"
    first.write_text("".join(json.dumps({"url": u, "links": t}) + "\n" for u, t in crawl.items()))
    load([first], runner, show_progress=False)
    cold_before = run_pagerank(runner, show_progress=False)
    assert not cold_before.record.parameters["warmStart"]
    later = tmp_path / "later.jsonl"
    later.write_text("".join(json.dumps({"url": u, "links": crawl[u][1:] + [rng.choice(urls)]}) + "\n"
                             for u in rng.sample(sorted(crawl), 25)))  # 1 % of the crawled pages
    load([later], runner, show_progress=False, recrawl=True)

    cold = run_pagerank(runner, "stats", show_progress=False)
    assert main(["-q", "pagerank", "--warm-start", "--json"]) == 0
    warm = json.loads(capsys.readouterr().out)
    assert warm["parameters"]["warmStart"] and warm["converged"]
    assert warm["iterations"] < cold.record.iterations, (warm["iterations"], cold.record.iterations)
    stored = {r["url"]: r["pr"] for r in runner.run("MATCH (p:Page) RETURN p.url AS url, p.pagerank AS pr")}
    streamed = stream_link_graph(runner, show_progress=False)
    cold_ranks = dict(zip(streamed.urls, cold.ranks.astype(float)))
    # Both runs stop within c/(1-c) times the tolerance of the fixed point.
    assert sum(abs(stored[u] - cold_ranks[u]) for u in stored) <= 2 * 0.85 / 0.15 * 1e-6
