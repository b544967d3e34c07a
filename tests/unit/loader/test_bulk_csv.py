"""The CSV files of the bulk path carry exactly what the online path writes."""

from __future__ import annotations

import csv
from pathlib import Path

from linksim.loader import CrawlGraph, read_files
from linksim.loader.bulk import ARRAY_DELIMITER, write_csv_files

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "crawl"


def test_pages_and_links_files(tmp_path: Path) -> None:
    graph, _ = read_files([FIXTURES / "site-pages.csv", FIXTURES / "site-links.csv"])
    graph.page("http://example.org/c", properties={"tags": ["a;b", "c,d"]})
    links = graph.links()
    pages_csv, links_csv = write_csv_files(graph, links, tmp_path)

    with open(pages_csv, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == [":ID(Page)", "url", "title", "host", "crawled:boolean", "lang:string", "tags:string[]"]
    by_url = {row[1]: row for row in rows[1:]}
    assert len(by_url) == len(graph) == 5
    assert by_url["http://example.org/b"][2] == "Page B, with a comma"
    assert by_url["http://example.org/c"][5:] == ["de", f"a;b{ARRAY_DELIMITER}c,d"]
    assert by_url["http://other.example/"][3:5] == ["other.example", "false"]
    assert [int(row[0]) for row in rows[1:]] == list(range(len(graph)))

    with open(links_csv, newline="", encoding="utf-8") as handle:
        rel_rows = list(csv.reader(handle))
    assert rel_rows[0] == [":START_ID(Page)", ":END_ID(Page)", "count:long", "anchor"]
    written = {(graph.urls[int(s)], graph.urls[int(t)]): (int(c), a) for s, t, c, a in rel_rows[1:]}
    assert written[("http://example.org/a", "http://example.org/b")] == (2, "to B")
    assert sum(c for c, _ in written.values()) == links.seen == 7


def test_titles_with_newlines_and_quotes_round_trip(tmp_path: Path) -> None:
    graph = CrawlGraph()
    title = 'two\nlines, "quoted"'
    graph.page("http://e.org/", crawled=True, title=title)
    pages_csv, _ = write_csv_files(graph, graph.links(), tmp_path)
    with open(pages_csv, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[1][2] == title
