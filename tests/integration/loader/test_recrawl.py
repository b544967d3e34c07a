"""Recrawl loads against the real server: the recrawled pages' links replaced, pages no longer
linked to deleted, the change recorded, a rerun changing nothing, a stopped server finished by a
rerun; the graph equal to the one a single load of the merged crawl gives."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from linksim import cypher
from linksim.cli.main import main
from linksim.loader.online import LoadInterrupted
from linksim.procedures import QueryRunner
from linksim.procedures.load import load
from linksim.procedures.stream import GraphHalfWritten, stream_link_graph

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "crawl"
E = "http://example.org/"


def links_of(runner: QueryRunner) -> set[tuple[str, str]]:
    rows = runner.run("MATCH (a:Page)-[:LINKS_TO]->(b:Page) RETURN a.url AS a, b.url AS b")
    return {(r["a"], r["b"]) for r in rows}


def pages_of(runner: QueryRunner) -> set[str]:
    return {r["url"] for r in runner.run("MATCH (p:Page) RETURN p.url AS url")}


def records(runner: QueryRunner) -> list[dict]:
    state = runner.run("MATCH (g:LinksimGraph) RETURN g.id AS id")[0]
    return runner.run(cypher.query("graph", "changes_since"), {"graph": state["id"], "version": 0})


def graph_version(runner: QueryRunner) -> int:
    return runner.run("MATCH (g:LinksimGraph {name: 'links'}) RETURN g.version AS v")[0]["v"]


def write_jsonl(path: Path, pages: dict[str, list[str]]) -> Path:
    path.write_text("".join(json.dumps({"url": url, "links": links}) + "\n" for url, links in pages.items()))
    return path


def test_a_recrawl_replaces_the_links_of_the_pages_it_crawled(runner: QueryRunner, tmp_path: Path) -> None:
    load([FIXTURES / "site.jsonl"], runner, show_progress=False)
    before = links_of(runner)
    assert (E + "c", "http://other.example/") in before and (E + "a", E + "b") in before
    crawled_at = {r["url"]: r["t"] for r in runner.run("MATCH (p:Page) RETURN p.url AS url, p.lastCrawled AS t")}
    assert crawled_at["http://other.example/"] is None and crawled_at[E + "a"] is not None

    # a loses its link to b and links to a new page; c now links nowhere, so other.example (never
    # crawled, linked to by c only) goes; the home page and b are not in this crawl: unchanged.
    later = write_jsonl(tmp_path / "later.jsonl", {E + "a": [E + "new", E], E + "c": []})
    summary = load([later], runner, show_progress=False, recrawl=True)

    gone = {(E + "a", E + "b"), (E + "c", "http://other.example/")}
    expected = (before - gone) | {(E + "a", E + "new"), (E + "a", E)}
    assert links_of(runner) == expected
    assert pages_of(runner) == {E, E + "a", E + "b", E + "c", E + "new"}
    assert (summary.recrawled_pages, summary.changed_pages) == (2, 2)
    assert (summary.links_created, summary.links_removed, summary.pages_deleted) == (2, 2, 1)
    assert "2 pages recrawled, 2 with links changed: 2 links added, 2 removed; 1 pages no longer linked to" in \
        "\n".join(summary.lines())
    after = {r["url"]: r["t"] for r in runner.run("MATCH (p:Page) RETURN p.url AS url, p.lastCrawled AS t")}
    assert after[E + "a"] > crawled_at[E + "a"] and after[E + "c"] > crawled_at[E + "c"]
    assert after[E + "b"] == crawled_at[E + "b"] and after[E + "new"] is None

    # The record: written under the version the load bumped first, listing what changed, done.
    last = records(runner)[-1]
    assert last["scope"] == "pages" and last["done"]
    assert sorted(last["sources"]) == [E + "a", E + "c"]
    assert sorted(last["removedTargets"]) == [E + "b", "http://other.example/"]

    # The same recrawl again changes nothing, and leaves the graph's version (so every index built
    # since) where it was: no record, no bump.
    version, count = graph_version(runner), len(records(runner))
    again = load([later], runner, show_progress=False, recrawl=True)
    assert links_of(runner) == expected
    assert (again.changed_pages, again.links_created, again.links_removed, again.pages_deleted) == (0, 0, 0, 0)
    assert (graph_version(runner), len(records(runner))) == (version, count)


def test_a_page_crawled_once_is_kept_when_nothing_links_to_it(runner: QueryRunner, tmp_path: Path) -> None:
    load([write_jsonl(tmp_path / "one.jsonl", {E: [E + "a"], E + "a": []})], runner, show_progress=False)
    load([write_jsonl(tmp_path / "two.jsonl", {E: []})], runner, show_progress=False, recrawl=True)
    assert pages_of(runner) == {E, E + "a"} and links_of(runner) == set()


def test_an_edge_list_recrawls_the_pages_it_has_links_from(runner: QueryRunner, tmp_path: Path) -> None:
    load([FIXTURES / "site.tsv"], runner, show_progress=False)
    before = links_of(runner)
    later = tmp_path / "later.tsv"
    later.write_text(f"{E}b\t{E}c\n")  # b recrawled; c is only a target: its links stay
    summary = load([later], runner, show_progress=False, recrawl=True)
    kept = {(a, b) for a, b in before if a != E + "b"}
    assert links_of(runner) == kept | {(E + "b", E + "c")}
    assert summary.recrawled_pages == 1


def random_crawl(rng: random.Random, pages: int, links: int) -> dict[str, list[str]]:
    urls = [f"http://site{i % 7}.example/p{i}" for i in range(pages)]
    crawl: dict[str, list[str]] = {u: [] for u in urls[: pages * 2 // 3]}  # a third only linked to
    for _ in range(links):
        crawl[rng.choice(urls[: pages * 2 // 3])].append(rng.choice(urls))
    return crawl


def merged(first: dict[str, list[str]], later: dict[str, list[str]]) -> tuple[set[str], set[tuple[str, str]]]:
    """Pages and links after ``later`` recrawled its pages: what a single load of the merged crawl
    holds, less the pages never crawled that nothing links to any more."""
    crawl = {**first, **later}
    links = {(a, b) for a, targets in crawl.items() for b in targets}
    pages = set(crawl) | {b for _, b in links}
    return pages, links


def test_random_recrawls_leave_the_graph_of_the_merged_crawl(runner: QueryRunner, tmp_path: Path) -> None:
    rng = random.Random(7)
    first = random_crawl(rng, 300, 1500)
    load([write_jsonl(tmp_path / "first.jsonl", first)], runner, show_progress=False)
    current = first
    for round_ in range(3):
        recrawled = rng.sample(sorted(current), 40)
        later = {}
        for url in recrawled:
            kept = [t for t in current[url] if rng.random() < 0.6]
            later[url] = kept + [rng.choice(sorted(current)) for _ in range(rng.randint(0, 4))]
        later[f"http://site9.example/new{round_}"] = [recrawled[0]]  # a new crawled page
        load([write_jsonl(tmp_path / f"r{round_}.jsonl", later)], runner, show_progress=False, recrawl=True)
        pages, links = merged(current, later)
        assert links_of(runner) == links
        assert pages_of(runner) == pages
        current = {**current, **later}
    # The records name crawled pages only.
    changed_sources = set().union(*(set(r["sources"]) for r in records(runner) if r["scope"] == "pages"))
    assert changed_sources <= set(current)


class StopServerAt(QueryRunner):
    """A runner that stops the real server before the first write whose query holds ``marker``."""

    def __init__(self, driver, database, server, marker: str) -> None:
        super().__init__(driver, database)
        self.server, self.marker, self.stopped = server, marker, False

    def write(self, query, parameters=None):
        if self.marker in query and not self.stopped:
            self.stopped = True
            self.server.stop()
        return super().write(query, parameters)

    def write_many(self, statements):
        if any(self.marker in query for query, _ in statements) and not self.stopped:
            self.stopped = True
            self.server.stop()
        return super().write_many(statements)


@pytest.mark.parametrize("marker", ["DELETE r", "DETACH DELETE p"])
def test_a_recrawl_stopped_halfway_is_finished_by_its_rerun(neo4j_server, runner: QueryRunner, tmp_path: Path,
                                                              marker: str, monkeypatch) -> None:
    server = neo4j_server.local
    if server is None:
        pytest.skip(f"needs the local server to stop it; this one was provisioned by {neo4j_server.kind}")
    rng = random.Random(3)
    first = random_crawl(rng, 400, 2000)
    load([write_jsonl(tmp_path / "first.jsonl", first)], runner, show_progress=False)
    later = {url: [t for t in first[url] if rng.random() < 0.5] + [f"http://fresh.example/{i}"]
             for i, url in enumerate(rng.sample(sorted(first), 100))}
    path = write_jsonl(tmp_path / "later.jsonl", later)

    conn = neo4j_server.connection
    monkeypatch.setenv("LINKSIM_RETRY_SECONDS", "3")  # the runner's retries after the stop: 30 s by default
    driver = GraphDatabase.driver(conn.uri, auth=(conn.user, conn.password))
    try:
        with pytest.raises(LoadInterrupted, match="Rerun the same command to finish"):
            load([path], StopServerAt(driver, conn.database, server, marker), batch_size=50, show_progress=False,
                 recrawl=True)
    finally:
        driver.close()
        server.start()
    runner.reset_bookmarks()
    assert not records(runner)[-1]["done"]  # recorded before the first change

    load([path], runner, batch_size=50, show_progress=False, recrawl=True)
    pages, links = merged(first, later)
    assert links_of(runner) == links
    assert pages_of(runner) == pages
    # The records of the failed load and of its rerun together name every changed page.
    changed = {a for a in later if set(later[a]) != set(first[a])}
    named = set().union(*(set(r["sources"]) for r in records(runner) if r["scope"] == "pages"))
    assert changed <= named and all(r["done"] for r in records(runner))


def test_cli_recrawl_prints_what_changed(runner: QueryRunner, cli_env, tmp_path: Path, capsys) -> None:
    load([FIXTURES / "site.jsonl"], runner, show_progress=False)
    later = write_jsonl(tmp_path / "later.jsonl", {E + "c": [E]})
    assert main(["-q", "load", "--recrawl", str(later), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["recrawl"], out["recrawled_pages"], out["links_created"], out["links_removed"]) == (True, 1, 1, 1)
    assert (out["pages_deleted"], out["changed_pages"]) == (1, 1)


def test_a_recrawl_with_a_bad_record_changes_nothing(runner: QueryRunner, tmp_path: Path) -> None:
    from linksim.loader.readers import InputError

    load([FIXTURES / "site.jsonl"], runner, show_progress=False)
    before, pages, recorded = links_of(runner), pages_of(runner), records(runner)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"url": E + "a", "links": []}) + "\n{not json\n")
    with pytest.raises(InputError, match="bad.jsonl:2"):
        load([bad], runner, show_progress=False, recrawl=True)
    assert (links_of(runner), pages_of(runner), records(runner)) == (before, pages, recorded)


def out_links(runner: QueryRunner, urls: list[str]) -> dict[str, set[str]]:
    rows = runner.run("UNWIND $urls AS url MATCH (a:Page {url: url}) OPTIONAL MATCH (a)-[:LINKS_TO]->(b) "
                      "RETURN a.url AS a, collect(b.url) AS b", {"urls": urls})
    return {r["a"]: set(r["b"]) for r in rows}


@pytest.mark.parametrize("new_pages", [False, True], ids=["existing-targets", "new-pages"])
def test_a_recrawl_killed_at_any_moment_leaves_each_page_old_or_new(runner: QueryRunner, cli_env, tmp_path: Path,
                                                                    new_pages: bool) -> None:
    """kill -9 of `linksim load --recrawl` while it reads, after its first page's links changed and
    half-way: every page has all its old out-links or all its new ones, the graph's version has not
    moved where nothing changed, and the rerun gives the merged crawl exactly."""
    import os
    import signal
    import subprocess
    import sys
    import time

    rng = random.Random(11)
    first = random_crawl(rng, 400, 2400)
    load([write_jsonl(tmp_path / "first.jsonl", first)], runner, show_progress=False)
    urls = sorted(first)
    later = {}
    for i, url in enumerate(rng.sample(urls, 200)):
        kept = [t for t in first[url] if rng.random() < 0.5]
        extra = [t for t in rng.sample(urls, 3) if t not in first[url]][:1]
        later[url] = kept + (extra if not new_pages or i % 3 else [f"http://fresh.example/{i}"])
    later = {url: links for url, links in later.items() if set(links) != set(first[url])}
    path = write_jsonl(tmp_path / "later.jsonl", later)
    old, new = {u: set(first[u]) for u in later}, {u: set(v) for u, v in later.items()}
    env = dict(os.environ, NEO4J_URI=cli_env.uri, NEO4J_USER=cli_env.user, NEO4J_PASSWORD=cli_env.password,
               NEO4J_DATABASE=cli_env.database)
    command = [str(Path(sys.executable).parent / "linksim"), "-q", "load", "--recrawl", "--batch-size", "1", str(path)]

    def moment_reached(moment: str) -> bool:
        if moment == "read":
            return runner.run("MATCH (l:LinksimLock {name: 'load'}) RETURN count(l) AS n")[0]["n"] > 0
        now = out_links(runner, sorted(later))
        switched = sum(now.get(u, set()) == new[u] for u in later)
        return switched >= (1 if moment == "first" else len(later) // 2)

    killed_mid_write = 0
    for moment in ("read", "first", "half"):
        version, links_before, pages_before = graph_version(runner), links_of(runner), pages_of(runner)
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while process.poll() is None and not moment_reached(moment) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process.poll() is None, f"the recrawl ended before the moment {moment!r}: {process.stderr.read()}"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        runner.reset_bookmarks()
        now = out_links(runner, sorted(later))
        assert all(now.get(u, set()) in (old[u], new[u]) for u in later), moment
        if links_of(runner) == links_before and pages_of(runner) == pages_before:
            assert graph_version(runner) == version, f"the version moved with nothing changed ({moment})"
        else:
            killed_mid_write += 1
            assert graph_version(runner) > version
    assert killed_mid_write >= 1  # at least one kill landed inside the write
    # Half-written, and its writer gone: nothing is computed from it until the rerun.
    with pytest.raises(GraphHalfWritten, match="half-written.*Run the same `linksim load`"):
        stream_link_graph(runner, show_progress=False)
    from linksim.procedures.spark import spark_index, spark_similar

    for spark_path in (spark_index, spark_similar):  # refused before Spark starts
        with pytest.raises(GraphHalfWritten, match="half-written"):
            spark_path(runner, runner.connection, tmp_path / "indexes", "psimrank")

    load([path], runner, show_progress=False, recrawl=True, wait=30)
    pages, links = merged(first, later)
    assert links_of(runner) == links
    assert pages_of(runner) == pages
    assert stream_link_graph(runner, show_progress=False).graph.m == len({(a, b) for a, b in links if a != b})
