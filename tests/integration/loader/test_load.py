"""Loading into a real Neo4j: formats, counts, idempotence, updates, bad input, CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from linksim.cli.main import main
from linksim.errors import LinksimError
from linksim.procedures.load import load
from linksim.procedures import QueryRunner

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "crawl"


def graph_counts(runner: QueryRunner) -> dict[str, int]:
    return runner.run(
        """
        MATCH (p:Page)
        WITH count(p) AS pages, count(CASE WHEN p.crawled THEN 1 END) AS crawled
        OPTIONAL MATCH (a:Page)-[r:LINKS_TO]->(b:Page)
        RETURN pages, crawled, count(r) AS links, coalesce(sum(r.count), 0) AS seen,
               count(CASE WHEN a = b THEN 1 END) AS self_loops
        """
    )[0]


@pytest.mark.parametrize(
    "files, crawled, seen",
    [
        (["site.tsv"], 5, 7),
        (["site-gz.tsv.gz"], 5, 7),
        (["site.cites"], 5, 7),
        (["site.net"], 5, 8),
        (["site.jsonl"], 4, 7),
        (["site-pages.csv", "site-links.csv"], 4, 7),
    ],
)
def test_every_format_loads_the_site(runner: QueryRunner, files, crawled, seen) -> None:
    summary = load([FIXTURES / f for f in files], runner, show_progress=False)
    assert graph_counts(runner) == {"pages": 5, "crawled": crawled, "links": 6, "seen": seen, "self_loops": 1}
    assert (summary.pages_created, summary.links_created, summary.links_seen) == (5, 6, seen)
    hosts = runner.run("MATCH (p:Page) RETURN DISTINCT p.host AS host ORDER BY host")
    assert [h["host"] for h in hosts] == ["example.org", "other.example"]


def test_titles_properties_and_anchor_in_the_graph(runner: QueryRunner) -> None:
    load([FIXTURES / "site-pages.csv", FIXTURES / "site-links.csv"], runner, show_progress=False)
    rows = runner.run(
        "MATCH (p:Page {url: $url})-[r:LINKS_TO]->(q:Page {url: $target}) "
        "RETURN p.title AS title, p.crawled AS crawled, r.count AS count, r.anchor AS anchor",
        {"url": "http://example.org/a", "target": "http://example.org/b"},
    )
    assert rows == [{"title": "Page A", "crawled": True, "count": 2, "anchor": "to B"}]
    other = runner.run("MATCH (p:Page {url: 'http://other.example/'}) RETURN p.crawled AS c, p.title AS t")
    assert other == [{"c": False, "t": None}]
    lang = runner.run("MATCH (p:Page {url: 'http://example.org/c'}) RETURN p.lang AS lang")
    assert lang == [{"lang": "de"}]


def test_loading_twice_leaves_the_same_graph(runner: QueryRunner) -> None:
    files = [FIXTURES / "site-pages.csv", FIXTURES / "site-links.csv"]
    load(files, runner, show_progress=False)
    first = graph_counts(runner)
    query = "MATCH (p:Page) RETURN p.url AS url, properties(p) AS props ORDER BY url"
    properties = runner.run(query)
    again = load(files, runner, show_progress=False)
    assert graph_counts(runner) == first
    later = runner.run(query)
    # The same properties, but for when the crawled pages were last crawled: the second load's time.
    for before, after in zip(properties, later, strict=True):
        first_time, second_time = before["props"].pop("lastCrawled", None), after["props"].pop("lastCrawled", None)
        if before["props"]["crawled"]:
            assert second_time > first_time
        else:
            assert first_time is None and second_time is None
    assert later == properties
    assert (again.pages_created, again.pages_updated, again.links_created, again.links_updated) == (0, 5, 0, 6)


def test_a_later_crawl_adds_and_updates(runner: QueryRunner, tmp_path: Path) -> None:
    load([FIXTURES / "site.jsonl"], runner, show_progress=False)
    later = tmp_path / "later.jsonl"
    later.write_text(
        '{"url": "http://other.example/", "title": "Other", "links": ["http://example.org/new"]}\n'
        '{"url": "http://example.org/c", "title": "Page C v2", "links": ["http://other.example/", "http://other.example/"]}\n'
    )
    summary = load([later], runner, show_progress=False)
    assert (summary.pages_created, summary.pages_updated, summary.links_created, summary.links_updated) == (1, 2, 1, 1)
    assert graph_counts(runner)["pages"] == 6 and graph_counts(runner)["links"] == 7
    rows = runner.run(
        "MATCH (c:Page {url: 'http://example.org/c'})-[r:LINKS_TO]->(o:Page) "
        "RETURN c.title AS title, r.count AS count, o.crawled AS crawled, o.title AS other"
    )
    assert rows == [{"title": "Page C v2", "count": 2, "crawled": True, "other": "Other"}]
    # A page once crawled is never demoted by a later crawl that only links to it.
    load([FIXTURES / "site.tsv"], runner, show_progress=False)
    assert runner.run("MATCH (p:Page {url: 'http://other.example/'}) RETURN p.crawled AS c") == [{"c": True}]


def test_cypher_looking_text_is_stored_verbatim(runner: QueryRunner, tmp_path: Path) -> None:
    title = "'}) MATCH (n) DETACH DELETE n // $x {y}"
    url = "http://e.org/'%7D)%20MATCH%20(n)%20DETACH%20DELETE%20n"
    path = tmp_path / "evil.csv"
    path.write_text(f'url,title,note\n{url},"{title}","RETURN 1; DROP CONSTRAINT page_url"\n')
    load([path], runner, show_progress=False)
    rows = runner.run("MATCH (p:Page) RETURN p.url AS url, p.title AS title, p.note AS note")
    assert rows == [{"url": "http://e.org/'%7D)%20MATCH%20(n)%20DETACH%20DELETE%20n", "title": title,
                     "note": "RETURN 1; DROP CONSTRAINT page_url"}]
    assert {r["name"] for r in runner.run("SHOW CONSTRAINTS YIELD name")} >= {"page_url"}


def test_cli_bad_input_writes_nothing(runner, cli_env, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"http://e.org/1\thttp://e.org/2\nhttp://e.org/\xff\thttp://e.org/3\n")
    code = main(["load", str(bad)])
    err = capsys.readouterr().err
    assert code == 4
    assert f"{bad}:2: invalid UTF-8" in err and "Traceback" not in err
    assert graph_counts(runner)["pages"] == 0

    assert main(["-q", "load", "--on-error", "skip", str(bad)]) == 0
    out = capsys.readouterr().out
    assert "1 × invalid UTF-8" in out
    assert graph_counts(runner)["links"] == 1


def test_cli_load_prints_the_summary(runner, cli_env, capsys) -> None:
    assert main(["-q", "load", str(FIXTURES / "site.tsv")]) == 0
    out = capsys.readouterr().out
    assert "pages: 5 (5 crawled): 5 created, 0 updated" in out
    assert "links: 6 distinct of 7 read: 6 created, 0 updated; 1 duplicates merged, 1 self-loops kept" in out
    assert "non-web links skipped: 1" in out
    assert "links/s" in out


def test_unreadable_and_missing_paths(runner, cli_env, tmp_path: Path, capsys) -> None:
    assert main(["load", str(tmp_path / "nope.tsv")]) == 4  # a bad input, as the README's table says
    assert "no such file" in capsys.readouterr().err
    weird = tmp_path / "crawl.xyz"
    weird.write_text("a b\n")
    assert main(["load", str(weird)]) == 2  # a bad argument: an option mends it
    assert "give --format" in capsys.readouterr().err
    assert main(["-q", "load", "--format", "edges", str(weird)]) == 0


def snapshot(runner: QueryRunner) -> tuple[list, list]:
    pages = runner.run("MATCH (p:Page) RETURN properties(p) AS p ORDER BY p.url")
    for row in pages:  # when a page was last crawled: the time of each load, a DateTime in both
        if "lastCrawled" in row["p"]:
            row["p"]["lastCrawled"] = type(row["p"]["lastCrawled"]).__name__
    links = runner.run(
        "MATCH (a:Page)-[r:LINKS_TO]->(b:Page) RETURN a.url AS a, b.url AS b, properties(r) AS r ORDER BY a, b"
    )
    return pages, links


def test_bulk_and_online_give_the_same_graph(runner: QueryRunner, neo4j_server) -> None:
    if neo4j_server.local is None:
        pytest.skip(f"bulk mode needs the local server; this one was provisioned by {neo4j_server.kind}")
    files = [FIXTURES / "site-pages.csv", FIXTURES / "site-links.csv"]
    load(files, runner, mode="online", show_progress=False)
    online = snapshot(runner)
    from linksim.procedures.maintenance import clear_database

    clear_database(runner, schema=True)
    summary = load(files, runner, mode="bulk", local_server=neo4j_server.local, show_progress=False)
    assert summary.mode == "bulk" and summary.links_created == 6
    assert snapshot(runner) == online
    assert len(online[0]) == 5 and len(online[1]) == 6
    # The imported database has linksim's schema (the related-pages query needs its indexes).
    names = {row["name"] for row in runner.run("SHOW INDEXES YIELD name RETURN name")}
    assert {"page_url", "page_pagerank", "linksim_run_algorithm"} <= names
    assert "similar_to_run" not in names  # no relationship property index: each write would update it


def test_bulk_refuses_a_database_with_data(runner: QueryRunner, neo4j_server) -> None:
    load([FIXTURES / "site.tsv"], runner, show_progress=False)
    with pytest.raises(LinksimError, match="only for an empty one|needs the local server"):
        load([FIXTURES / "site.jsonl"], runner, mode="bulk", local_server=neo4j_server.local, show_progress=False)
    assert graph_counts(runner)["pages"] == 5


def test_a_common_crawl_host_graph_loads_twice_to_the_same_graph_and_recrawls(runner: QueryRunner,
                                                                               tmp_path: Path) -> None:
    """A Common Crawl host graph (format ccgraph) in Neo4j: host pages with their links, the same
    graph after a second load, and a recrawl of a newer release replaces the links of the hosts
    it gives (a host with a link out is crawled, its links given in full by an edge list's rule)."""
    import gzip

    def release(name: str, hosts: list[str], edges: list[tuple[int, int]]) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "cc-main-host-vertices.txt.gz").write_bytes(
            gzip.compress("".join(f"{i}\t{h}\n" for i, h in enumerate(hosts)).encode()))
        (folder / "cc-main-host-edges.txt.gz").write_bytes(
            gzip.compress("".join(f"{a}\t{b}\n" for a, b in edges).encode()))
        return folder

    hosts = ["com.example.www", "org.wikipedia.en", "net.other"]
    first = release("first", hosts, [(0, 1), (0, 2), (1, 0)])
    summary = load([first], runner, show_progress=False)
    assert summary.formats == ["ccgraph: www kept"]
    counts = graph_counts(runner)
    assert (counts["pages"], counts["crawled"], counts["links"]) == (3, 2, 3)
    again = load([first], runner, show_progress=False)
    assert graph_counts(runner) == counts and (again.pages_created, again.links_created) == (0, 0)
    newer = release("newer", hosts, [(0, 1), (1, 2)])
    load([newer], runner, show_progress=False, recrawl=True)
    links = runner.run("MATCH (a:Page)-[:LINKS_TO]->(b:Page) RETURN a.url AS a, b.url AS b ORDER BY a, b")
    assert [(row["a"], row["b"]) for row in links] == [("https://en.wikipedia.org/", "https://other.net/"),
                                                      ("https://www.example.com/", "https://en.wikipedia.org/")]
