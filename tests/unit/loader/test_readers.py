"""Readers: every format gives the fixture site's graph; every kind of bad input a clear error."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from linksim.errors import LinksimError
from linksim.loader import CrawlGraph, InputError, detect_format, read_files
from linksim.loader.readers import ErrorPolicy, read_input

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "crawl"
SITE_PAGES = {
    "http://example.org/",
    "http://example.org/a",
    "http://example.org/b",
    "http://example.org/c",
    "http://other.example/",
}
SITE_LINKS = {
    ("http://example.org/", "http://example.org/a"),
    ("http://example.org/", "http://example.org/b"),
    ("http://example.org/a", "http://example.org/b"),
    ("http://example.org/b", "http://example.org/"),
    ("http://example.org/b", "http://example.org/b"),
    ("http://example.org/c", "http://other.example/"),
}


def link_set(graph: CrawlGraph) -> set[tuple[str, str]]:
    links = graph.links()
    return {(graph.urls[s], graph.urls[t]) for s, t in zip(links.source, links.target)}


@pytest.mark.parametrize(
    "files, fmt, crawled, read, non_web",
    [
        (["site.tsv"], "edges", 5, 7, 1),
        (["site-gz.tsv.gz"], "edges", 5, 7, 1),
        (["site.cites"], "cites", 5, 7, 0),
        (["site.net"], "pajek", 5, 8, 0),
        (["site.jsonl"], "jsonl", 4, 7, 1),
        (["site-pages.csv", "site-links.csv"], "csv", 4, 7, 1),
        (["site-links.csv", "site-pages.csv"], "csv", 4, 7, 1),
    ],
)
def test_every_format_gives_the_same_site(files, fmt, crawled, read, non_web) -> None:
    graph, formats = read_files([FIXTURES / f for f in files])
    assert set(formats) == {fmt}
    assert set(graph.urls) == SITE_PAGES
    assert link_set(graph) == SITE_LINKS
    links = graph.links()
    assert (sum(graph.crawled), links.seen, graph.non_web) == (crawled, read, non_web)
    assert links.self_loops == 1
    assert links.duplicates == read - len(SITE_LINKS)


@pytest.mark.parametrize(
    "files, complete",
    [
        (["site.tsv"], False),
        (["site.net"], False),
        (["site.jsonl"], True),
        (["site-pages.csv", "site-links.csv"], True),
    ],
)
def test_a_recrawl_replaces_the_links_of_the_pages_an_input_gives_in_full(files, complete: bool) -> None:
    """A page record gives all of its page's links (none, too); an edge list only the pages it has a
    link from: other.example, a target only, keeps its links in a recrawl from an edge list."""
    graph, _ = read_files([FIXTURES / f for f in files])
    recrawled = {graph.urls[i] for i in graph.recrawled(graph.links()).nonzero()[0]}
    assert recrawled == {"http://example.org/", "http://example.org/a", "http://example.org/b",
                         "http://example.org/c"}
    assert bool(sum(graph.complete)) == complete
    empty = CrawlGraph()
    empty.page("http://e.org/", complete=True)
    assert empty.recrawled(empty.links()).tolist() == [True] and empty.crawled[0] == 1


def test_titles_properties_and_anchors() -> None:
    graph, _ = read_files([FIXTURES / "site-pages.csv", FIXTURES / "site-links.csv"])
    b = graph.index["http://example.org/b"]
    assert graph.titles[b] == "Page B, with a comma"
    assert graph.properties[graph.index["http://example.org/c"]] == {"lang": "de"}
    assert b not in graph.properties  # an empty cell sets nothing
    a = graph.index["http://example.org/a"]
    assert graph.anchors[(a, b)] == "to B"  # the first anchor seen for the pair
    assert not graph.crawled[graph.index["http://other.example/"]]

    graph, _ = read_files([FIXTURES / "site.jsonl"])
    assert graph.properties[graph.index["http://example.org/c"]] == {"depth": 2}


def test_link_counts_aggregate_per_pair() -> None:
    graph, _ = read_files([FIXTURES / "site.tsv"])
    links = graph.links()
    counts = {(graph.urls[s], graph.urls[t]): c for s, t, c in zip(links.source, links.target, links.count)}
    assert counts[("http://example.org/a", "http://example.org/b")] == 2
    assert sum(counts.values()) == links.seen


@pytest.mark.parametrize(
    "name, fmt",
    [("x.tsv", "edges"), ("x.txt.gz", "edges"), ("x.net.gz", "pajek"), ("x.jsonl", "jsonl"),
     ("x.warc.gz", "warc"), ("x.cites", "cites")],
)
def test_format_from_the_name(tmp_path: Path, name: str, fmt: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"")
    assert detect_format(path) == fmt


def test_unknown_name_asks_for_format(tmp_path: Path) -> None:
    path = tmp_path / "crawl.bin"
    path.write_bytes(b"x")
    with pytest.raises(LinksimError, match="cannot tell the format .*give --format"):
        detect_format(path)


# Bad input -------------------------------------------------------------------------------------
def _read(path: Path, on_error: str = "stop", fmt: str | None = None) -> CrawlGraph:
    graph = CrawlGraph()
    read_input(path, graph, ErrorPolicy(on_error, graph), True, fmt)
    return graph


def _gz(path: Path, data: bytes) -> Path:
    with gzip.open(path, "wb") as handle:
        handle.write(data)
    return path


def good_lines(n: int) -> bytes:
    return b"".join(f"http://e.org/{i}\thttp://e.org/{i + 1}\n".encode() for i in range(n))


ANY_LINE = -1  # the cut's line depends on how gzip compressed the data


def warc_bytes(pages: int = 3, gz: bool = False) -> bytes:
    """A WARC of ``pages`` HTML responses, written by warcio."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=gz)
    for i in range(pages):
        body = f"<html><title>Page {i}</title><a href='/p{i + 1}'>next</a>{'text ' * 200}</html>".encode()
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            f"http://e.org/p{i}", "response", payload=io.BytesIO(body), http_headers=headers))
    return buffer.getvalue()


def _cut_in_third_body(p: Path) -> None:
    data = warc_bytes()
    p.write_bytes(data[: data.index(b"Page 2") + 40])


def _cut_in_third_header(p: Path) -> None:
    data = warc_bytes()
    p.write_bytes(data[: data.index(b"http://e.org/p2") + 5])

BAD_INPUTS = {
    # name: (file name, content builder, message, line, skip reason)
    "truncated gzip": ("t.tsv.gz", lambda p: p.write_bytes(_gz(p, good_lines(5000)).read_bytes()[:-200]),
                       "gzip stream is truncated or corrupt", ANY_LINE, "truncated or corrupt gzip"),
    "binary garbage": ("g.tsv", lambda p: p.write_bytes(bytes(range(256)) * 40),
                       "binary data", 1, "binary data"),
    "10 MB line": ("l.tsv", lambda p: p.write_bytes(good_lines(2) + b"http://e.org/" + b"x" * 10_000_000 + b"\n" + good_lines(1)),
                   "line of 10,000,014 bytes exceeds the limit", 3, "line too long"),
    "invalid UTF-8": ("u.tsv", lambda p: p.write_bytes(good_lines(1) + b"http://e.org/\xff\xfe\thttp://e.org/\n"),
                      "invalid UTF-8 at byte 13", 2, "invalid UTF-8"),
    "unbalanced CSV quote": ("q-links.csv", lambda p: p.write_bytes(b'source,target\nhttp://e.org/1,http://e.org/2\n"http://e.org/3,http://e.org/4\nhttp://e.org/5,http://e.org/6\n'),
                             "malformed CSV", 4, "malformed CSV"),
    "5,000-character URL": ("long.tsv", lambda p: p.write_bytes(good_lines(1) + b"http://e.org/" + b"a" * 4987 + b"\thttp://e.org/\n"),
                            "URL of 5,000 characters exceeds the limit of 4,096", 2, "URL too long"),
    "missing column": ("m.tsv", lambda p: p.write_bytes(good_lines(1) + b"http://e.org/lonely\n"),
                       "expected two columns (source, target), found 1", 2, "missing column"),
    "a count that is not a positive integer": ("c.tsv", lambda p: p.write_bytes(good_lines(1) + b"http://e.org/a\thttp://e.org/b\tfive\n"),
                                               "the third column is the link's count, a positive integer; found 'five'", 2,
                                               "invalid count"),
    "a count of 0": ("z.txt", lambda p: p.write_bytes(b"1 2 3\n2 3 0\n"),
                     "the third column is the link's count, a positive integer; found '0'", 2, "invalid count"),
    "a fourth column": ("f.tsv", lambda p: p.write_bytes(good_lines(2) + b"http://e.org/a\thttp://e.org/b\t2\tx\n"),
                        "expected two or three columns (source, target, count), found 4", 3, "extra column"),
    "missing CSV column": ("p.csv", lambda p: p.write_bytes(b"address,title\nhttp://e.org/,Home\n"),
                           "missing column: a pages file needs a `url` column", 1, "missing column"),
    "empty file": ("e.tsv", lambda p: p.write_bytes(b""), "the file is empty", None, "empty file"),
    "WARC cut inside a record's content": ("cut.warc", _cut_in_third_body,
                                           "record 3 (offset 2,918) is truncated: the file ends inside its content", None,
                                           "truncated or corrupt WARC"),
    "WARC cut inside a record's headers": ("cuth.warc", _cut_in_third_header, "the file is truncated after record 2", None,
                                           "truncated or corrupt WARC"),
    "WARC.gz cut in its last gzip trailer": ("cut.warc.gz", lambda p: p.write_bytes(warc_bytes(gz=True)[:-3]),
                                             "the file is truncated after record 3", None,
                                             "truncated or corrupt WARC"),
    "not a WARC file": ("junk.warc", lambda p: p.write_bytes(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 3),
                        "record 1", None, "truncated or corrupt WARC"),
    "Pajek arc to an undeclared vertex": ("u.net", lambda p: p.write_bytes(b'*Vertices 2\n1 "http://e.org/1"\n2 "http://e.org/2"\n*Arcs\n1 2\n1 7\n'),
                                          "vertex 7 is not declared", 6, "unknown vertex"),
    "Pajek *Vertices without a count": ("n.net", lambda p: p.write_bytes(b"*Vertices\n"),
                                        "*Vertices needs a count", 1, "malformed Pajek header"),
    "Pajek data before any section": ("d.net", lambda p: p.write_bytes(b'1 2\n*Vertices 2\n'),
                                      "data before any *Vertices/*Arcs/*Edges section", 1, "malformed Pajek"),
    "JSON line without url": ("nourl.jsonl", lambda p: p.write_bytes(b'{"title": "x", "links": []}\n'),
                              "a record needs a string field `url`", 1, "missing column"),
    "JSON links not a list": ("nolist.jsonl", lambda p: p.write_bytes(b'{"url": "http://e.org/", "links": "http://e.org/a"}\n'),
                              "`links` must be a list", 1, "malformed links"),
    "JSON link of a wrong type": ("badlink.jsonl", lambda p: p.write_bytes(b'{"url": "http://e.org/", "links": [42]}\n'),
                                  "a link must be a URL string or {url, anchor}", 1, "malformed links"),
    "CSV header without rows": ("h-links.csv", lambda p: p.write_bytes(b"source,target\n"),
                                "the CSV file has a header but no rows", None, "empty file"),
    "invalid JSON": ("j.jsonl", lambda p: p.write_bytes(b'{"url": "http://e.org/", "links": []}\n{"url": \n'),
                     "invalid JSON", 2, "invalid JSON"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_stops_with_file_and_line(tmp_path: Path, case: str) -> None:
    name, build, message, line, _ = BAD_INPUTS[case]
    path = tmp_path / name
    build(path)
    with pytest.raises(InputError) as info:
        _read(path)
    error = info.value
    assert message in str(error)
    assert error.path == str(path)
    assert error.line == line if line != ANY_LINE else error.line > 1
    assert "Nothing of this load was written" in str(error) and "--on-error skip" in str(error)


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_skipped_and_counted(tmp_path: Path, case: str) -> None:
    name, build, _, _, reason = BAD_INPUTS[case]
    path = tmp_path / name
    build(path)
    graph = _read(path, on_error="skip")
    assert graph.skipped.counts[reason] >= 1
    assert all(example.startswith(str(path)) for example in graph.skipped.examples[reason])


def test_skip_keeps_the_good_records(tmp_path: Path) -> None:
    path = tmp_path / "mixed.tsv"
    path.write_bytes(good_lines(3) + b"bad-line\n" + b"http://e.org/\xff\thttp://e.org/\n" + good_lines(2))
    graph = _read(path, on_error="skip")
    assert graph.links().seen == 5
    assert dict(graph.skipped.counts) == {"missing column": 1, "invalid UTF-8": 1}


def test_truncated_gzip_keeps_lines_before_the_cut(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv.gz"
    data = _gz(path, good_lines(20000)).read_bytes()
    path.write_bytes(data[: len(data) // 2])
    graph = _read(path, on_error="skip")
    assert 0 < graph.links().seen < 20000


def test_cypher_looking_text_is_just_text(tmp_path: Path) -> None:
    path = tmp_path / "evil.jsonl"
    title = "x'}) DETACH DELETE n //"
    path.write_text(
        '{"url": "http://e.org/MATCH%20(n)%20DETACH%20DELETE%20n", "title": "' + title + '", "links": []}\n'
    )
    graph = _read(path)
    assert graph.titles[0] == title
    assert graph.urls == ["http://e.org/MATCH%20(n)%20DETACH%20DELETE%20n"]


@pytest.mark.parametrize("gz", [False, True], ids=["warc", "warc.gz"])
def test_a_cut_warc_never_loads_a_partial_record(tmp_path: Path, gz: bool) -> None:
    """Cut at every 13th byte: either the cut falls between whole records (the pages before it,
    loaded as they are) or it is a bad record, and the pages kept are whole ones."""
    data = warc_bytes(3, gz=gz)
    whole = _read(_write(tmp_path / "whole.warc", data))
    boundaries = {0}
    for cut in range(1, len(data), 13):
        path = _write(tmp_path / "cut.warc", data[:cut])
        try:
            graph = _read(path)
        except InputError as error:
            assert "truncated" in str(error) or "corrupt" in str(error) or "no WARC-Type" in str(error)
            graph = _read(path, on_error="skip")
            assert graph.skipped.counts["truncated or corrupt WARC"] == 1
        else:
            boundaries.add(cut)
        crawled = {graph.urls[i] for i in range(len(graph)) if graph.crawled[i]}
        for i, url in enumerate(graph.urls):
            if url in crawled:
                assert graph.titles[i] == whole.titles[whole.urls.index(url)]
    assert len(boundaries) <= 3  # only the cuts exactly between records read without complaint


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.fixture
def unreadable(tmp_path: Path):
    """Make a path unreadable for this process, even as root (whose permission checks pass
    anyway): the read runs with the effective user id of `nobody`, in a directory it may enter."""
    import os
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="linksim-unreadable-"))
    os.chmod(folder, 0o755)

    class Unreadable:
        def make(self, name: str, data: bytes) -> Path:
            path = folder / name
            if name.endswith("/"):
                path.mkdir()
                (path / "articles.tsv").write_bytes(data)
                (path / "links.tsv").write_bytes(data)
                os.chmod(path / "links.tsv", 0)
            else:
                path.write_bytes(data)
            os.chmod(path, 0o755 if path.is_dir() else 0)
            return path

        def read(self, path: Path):
            if os.geteuid() != 0:
                return _read(path)
            os.seteuid(65534)
            try:
                return _read(path)
            finally:
                os.seteuid(0)

    yield Unreadable()
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("name", ["links.tsv", "site.jsonl", "site.net", "crawl.warc", "site-links.csv", "wikispeedia/"])
def test_an_unreadable_file_is_one_message(unreadable, name: str) -> None:
    from linksim.loader.readers import UnreadableInput

    path = unreadable.make(name, good_lines(2))
    with pytest.raises(UnreadableInput) as info:
        unreadable.read(path)
    message = str(info.value)
    assert "cannot be read (Permission denied)" in message and str(path).rstrip("/") in message
    assert "truncated" not in message and "Nothing of this load was written" in message


BOM_INPUTS = {
    # name: (file name, content); the same without the BOM gives the reference graph
    "edge list": ("links.tsv", good_lines(3)),
    "edge list, line by line": ("links-mixed.tsv", good_lines(2) + "http://e.org/é\thttp://e.org/1\n".encode()),
    "gzip edge list": ("links.tsv.gz", good_lines(3)),
    "cites": ("site.cites", b"http://e.org/1\thttp://e.org/2\n"),
    "CSV pages": ("pages.csv", b"url,title\nhttp://e.org/1,One\n"),
    "CSV links": ("links.csv", b"source,target\nhttp://e.org/1,http://e.org/2\n"),
    "JSON lines": ("site.jsonl", b'{"url": "http://e.org/1", "links": ["http://e.org/2"]}\n'),
    "Pajek": ("site.net", b'*Vertices 2\n1 "http://e.org/1"\n2 "http://e.org/2"\n*Arcs\n1 2\n'),
    "Wikispeedia": ("wikispeedia/", b"Paris\nFrance\n"),
}


@pytest.mark.parametrize("case", sorted(BOM_INPUTS))
def test_a_byte_order_mark_is_no_part_of_the_data(tmp_path: Path, case: str) -> None:
    name, data = BOM_INPUTS[case]

    def build(folder: Path, content: bytes) -> Path:
        folder.mkdir()
        path = folder / name
        if name.endswith("/"):
            path.mkdir()
            (path / "articles.tsv").write_bytes(content)
            (path / "links.tsv").write_bytes(b"\xef\xbb\xbfParis\tFrance\n" if content.startswith(b"\xef")
                                              else b"Paris\tFrance\n")
        elif name.endswith(".gz"):
            _gz(path, content)
        else:
            path.write_bytes(content)
        return path

    plain = _read(build(tmp_path / "plain", data))
    marked = _read(build(tmp_path / "marked", b"\xef\xbb\xbf" + data))
    assert marked.urls == plain.urls and not any("\ufeff" in url for url in marked.urls)
    assert marked.links().seen == plain.links().seen and len(marked.urls) >= 1
    assert marked.titles == plain.titles


def test_a_wikispeedia_link_to_an_unlisted_article_is_a_page_linked_to(tmp_path: Path) -> None:
    folder = tmp_path / "wikispeedia"
    folder.mkdir()
    (folder / "articles.tsv").write_bytes(b"Paris\nFrance\n")
    (folder / "links.tsv").write_bytes(b"Paris\tFrance\nParis\tAtlantis\nLemuria\tParis\n")
    graph = _read(folder)
    crawled = {url.rsplit("/", 1)[1]: bool(graph.crawled[i]) for i, url in enumerate(graph.urls)}
    # Atlantis is only linked to; Lemuria's links are listed, so it was crawled.
    assert crawled == {"Paris": True, "France": True, "Atlantis": False, "Lemuria": True}


def test_skip_resumes_after_a_broken_csv_quote(tmp_path: Path) -> None:
    path = tmp_path / "q-links.csv"
    path.write_bytes(b'source,target\nhttp://e.org/1,http://e.org/2\nhttp://e.org/3,"http://e.org/4"x\n'
                     b'http://e.org/5,http://e.org/6\nhttp://e.org/7,http://e.org/8\n')
    with pytest.raises(InputError) as info:
        _read(path)
    assert info.value.line == 3
    graph = _read(path, on_error="skip")
    assert graph.skipped.counts["malformed CSV"] == 1
    assert graph.links().seen == 3 and "http://e.org/3" not in graph.urls and "http://e.org/8" in graph.urls


def test_a_headerless_csv_whose_first_url_has_commas_is_an_edge_list(tmp_path: Path) -> None:
    """Told from a header by its column names: a first line with a URL in it is data."""
    path = tmp_path / "links.csv"
    path.write_text("http://e.org/a,b\thttp://e.org/c\nhttp://e.org/c\thttp://e.org/a,b\n")
    assert detect_format(path) == "edges"
    graph = _read(path)
    assert sorted(graph.urls) == ["http://e.org/a,b", "http://e.org/c"] and graph.links().seen == 2
    header = tmp_path / "pages.csv"
    header.write_text("address,title\nhttp://e.org/,Home\n")  # a header naming no known column
    assert detect_format(header) == "csv"
