"""The CSV files of the bulk path carry exactly what the online path writes."""

from __future__ import annotations

import csv
from datetime import datetime, timezone
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
    assert rows[0] == [":ID(Page)", "url", "title", "host", "crawled:boolean", "lastCrawled:datetime",
                       "lang:string", "tags:string[]"]
    by_url = {row[1]: row for row in rows[1:]}
    assert len(by_url) == len(graph) == 5
    assert by_url["http://example.org/b"][2] == "Page B, with a comma"
    assert by_url["http://example.org/c"][6:] == ["de", f"a;b{ARRAY_DELIMITER}c,d"]
    assert by_url["http://other.example/"][3:6] == ["other.example", "false", ""]  # never crawled
    crawled_at = datetime.fromisoformat(by_url["http://example.org/c"][5])
    assert abs((datetime.now(timezone.utc) - crawled_at).total_seconds()) < 60
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


import pytest  # noqa: E402


@pytest.mark.parametrize("name", ["id:ID(Page)", "x:int", 'a"b', "line\nbreak", "9lives", ""])
def test_a_property_name_that_would_change_the_import_header_is_refused(tmp_path: Path, name: str) -> None:
    from linksim.loader.bulk import BulkImportError

    graph, _ = read_files([FIXTURES / "site-pages.csv", FIXTURES / "site-links.csv"])
    graph.page("http://example.org/c", properties={name: "v"})
    with pytest.raises(BulkImportError, match="cannot go into the import tool's CSV header.*--mode online"):
        write_csv_files(graph, graph.links(), tmp_path)


FULL_DISK_BULK = """
import resource, signal, sys
from pathlib import Path
from linksim.loader import CrawlGraph
from linksim.loader.bulk import BulkImportError, bulk_import

class Settings:
    import_dir = Path(sys.argv[1])
    logs_dir = Path(sys.argv[1])

class Server:  # the local server as bulk_import sees it before it stops it: running
    settings = Settings()
    def is_running(self):
        return True
    def stop(self):
        raise AssertionError("the server must not be stopped when the CSV files cannot be written")

graph = CrawlGraph()
for i in range(20000):
    graph.link(graph.page(f"http://e.org/{i}", crawled=True), graph.page(f"http://e.org/{i + 1}"))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))  # writes past 64 KiB fail, as on a full disk
try:
    bulk_import(Server(), "neo4j", graph, graph.links())
except BulkImportError as error:
    print(error)
    sys.exit(5)
"""


def test_a_full_disk_while_writing_the_import_files_leaves_nothing(tmp_path: Path) -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", FULL_DISK_BULK, str(tmp_path)], capture_output=True, cwd="/",
                            text=True, timeout=120)
    assert result.returncode == 5, result.stderr
    assert "cannot write the import's CSV files to" in result.stdout and "File too large" in result.stdout
    assert "Nothing was imported" in result.stdout and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # the half-written CSV folder is gone
