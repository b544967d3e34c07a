"""`linksim spark extract` (really run, local mode): WARC, WAT and WACZ files read on Spark into a
link table that loads as the graph a local load of the same files gives, pages, titles, flags,
links, counts, anchors and skipped records alike."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from linksim.errors import ConfigurationError
from linksim.loader import InputError, detect_format, read_files
from linksim.loader.readers import UnreadableInput

_spec = importlib.util.spec_from_file_location("warc_helpers", Path(__file__).with_name("test_warc.py"))
warc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(warc)


def _page(url: str, title: str | None, links: list[tuple[str, str]]) -> bytes:
    anchors = "".join(f"<a href='{href}'>{text}</a>" for href, text in links)
    head = f"<title>{title}</title>" if title else ""
    return warc.one_record(url, "response", f"<html>{head}<body>{anchors}</body></html>".encode(), warc.html_headers())


def _crawl(folder: Path) -> list[Path]:
    """Three files that overlap as a real crawl's do: a page in two files (titled differently, its
    anchor texts only in the later one), links seen in several files, links to other schemes, a
    redirect, a bad record, a WAT and a WACZ of their own."""
    from warcio.statusandheaders import StatusAndHeaders

    moved = StatusAndHeaders("301 Moved", [("Location", "/a")], protocol="HTTP/1.1")
    first = [_page("http://e.org/a", "A", [("/b", "to b"), ("/c", ""), ("mailto:x@e.org", "mail"), ("/b", "again")]),
             _page("http://e.org/b", None, [("/a", ""), ("/shared", "")]),
             warc.one_record("http://e.org/old", "response", b"", moved)]
    second = [_page("http://e.org/b", "B later", [("/a", "back to a"), ("/shared", "s")]),
              warc.with_length(_page("http://e.org/broken", "X", [("/a", "")]), 30),
              _page("http://e.org/c", "C", [("#top", ""), ("d.html#x", "dee"), ("/a", "a")])]
    wat = [warc.wat_record("http://e.org/w", "response", title="W", links=[
        {"path": "A@/href", "url": "/a", "text": "from wat"}, {"path": "IMG@/src", "url": "/i.png"}])]
    paths = [folder / "one.warc.gz", folder / "two.warc", folder / "three.warc.wat.gz", folder / "four.wacz"]
    paths[0].write_bytes(warc.file_of(first, gz=True))
    paths[1].write_bytes(warc.file_of(second, gz=False))
    paths[2].write_bytes(warc.file_of(wat, gz=True))
    listed = "\n".join(json.dumps(row) for row in ({"format": "json-pages-1.0", "id": "pages"},
                                                  {"url": "http://e.org/listed", "title": "Listed"})) + "\n"
    warc.wacz_of(paths[3], {"archive/x.warc.gz": warc.file_of([_page("http://e.org/z", "Z", [("/a", "zed")])], gz=True),
                            "pages/pages.jsonl": listed.encode()})
    return paths


def _graph(graph) -> dict:
    links = graph.links()
    return {"urls": list(graph.urls), "titles": dict(graph.titles), "crawled": bytes(graph.crawled),
            "complete": bytes(graph.complete), "non_web": graph.non_web, "skipped": dict(graph.skipped.counts),
            "links": list(zip(links.source.tolist(), links.target.tolist(), links.count.tolist())),
            "anchors": dict(graph.anchors)}


def test_an_extract_loads_as_the_local_load_of_its_files(spark, tmp_path: Path) -> None:
    paths = _crawl(tmp_path)
    table = tmp_path / "table"
    from linksim.loader.extract import extract

    described = extract(spark, paths, table, on_error="skip", partitions=3)
    assert detect_format(table) == "linktable"
    local, _ = read_files(paths, on_error="skip")
    loaded, formats = read_files([table])
    with local, loaded:
        assert _graph(loaded) == _graph(local)
        assert formats == ["linktable: extracted from 4 files"]
        assert local.titles[local.index["http://e.org/b"]] == "B later"  # the later file's title
        assert local.anchors[(local.index["http://e.org/b"], local.index["http://e.org/a"])] == "back to a"
        assert described["pages"] == len(local) and described["links"] == len(local.links())
        assert described["links_seen"] == local.links_seen
        assert described["non_web_links"] == local.non_web == 1
        assert described["skipped"] == dict(local.skipped.counts) and sum(described["skipped"].values()) == 1
        assert described["formats"] == ["warc", "warc", "wat", "wacz"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no work folder left


def test_a_bad_record_stops_the_extract_as_it_stops_a_load(spark, tmp_path: Path) -> None:
    """The first bad record in file order is the error a local load gives; no link table appears."""
    from linksim.loader.extract import extract

    paths = _crawl(tmp_path)
    with pytest.raises(InputError) as local:
        read_files(paths)
    with pytest.raises(InputError) as extracted:
        extract(spark, paths, tmp_path / "table")
    assert str(extracted.value) == str(local.value) and "two.warc" in str(local.value)
    assert not (tmp_path / "table").exists() and not list(tmp_path.glob(".table.partial-*"))


def test_what_an_extract_does_not_read_is_refused_before_spark_runs(tmp_path: Path) -> None:
    from linksim.loader.extract import extract

    edges = tmp_path / "links.tsv"
    edges.write_text("a\tb\n")
    with pytest.raises(ConfigurationError, match="edges input loads straight into Neo4j"):
        extract(None, [edges], tmp_path / "table")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    warc_file = _crawl(tmp_path)[0]
    with pytest.raises(ConfigurationError, match="not empty"):
        extract(None, [warc_file], tmp_path / "full")
    with pytest.raises(UnreadableInput, match="no such file"):
        extract(None, [tmp_path / "missing.warc.gz"], tmp_path / "table")
