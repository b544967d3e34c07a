"""WARC framing: a record whose Content-Length overstates or understates its block, plain and
gzipped, first, middle and last, is one bad record; with --on-error skip it alone is skipped and
reading resumes at the next record."""

from __future__ import annotations

import gzip
import json
import io
import re
from pathlib import Path

import pytest

from linksim.loader.graph import CrawlGraph
from linksim.loader.readers import ErrorPolicy, InputError, read_input

PAGES = 5


def one_record(url: str, kind: str, body: bytes, http_headers) -> bytes:
    """One WARC record as warcio writes it (CRLF CRLF included)."""
    from warcio.warcwriter import WARCWriter

    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=False)
    writer.write_record(writer.create_warc_record(url, kind, payload=io.BytesIO(body), http_headers=http_headers))
    return buffer.getvalue()


def html_headers():
    from warcio.statusandheaders import StatusAndHeaders

    return StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")


def records(pages: int = PAGES) -> list[bytes]:
    """Each record of a WARC of HTML responses, as warcio writes it (CRLF CRLF included)."""
    return [one_record(f"http://e.org/p{i}", "response", f"<html><title>Page {i}</title><a href='/p{i + 1}'>next"
                       f"</a>{'text ' * 200}</html>".encode(), html_headers()) for i in range(pages)]


def with_length(record: bytes, change: int) -> bytes:
    """The record with its Content-Length changed by ``change``, its bytes as they were."""
    def replace(match: re.Match) -> bytes:
        return b"Content-Length: " + str(int(match.group(1)) + change).encode()

    return re.sub(rb"Content-Length: (\d+)", replace, record, count=1)


def file_of(parts: list[bytes], gz: bool) -> bytes:
    """Plain: the records one after the other; gzipped: one gzip member a record."""
    return b"".join(gzip.compress(part) for part in parts) if gz else b"".join(parts)


def read(path: Path, on_error: str = "stop") -> CrawlGraph:
    graph = CrawlGraph()
    read_input(path, graph, ErrorPolicy(on_error, graph), True, "warc")
    return graph


def titles(graph: CrawlGraph) -> set[str]:
    return set(graph.titles.values())


@pytest.mark.parametrize("gz", [False, True], ids=["warc", "warc.gz"])
@pytest.mark.parametrize("change", [-30, -1, 1, 40, 900], ids=["under30", "under1", "over1", "over40", "over900"])
@pytest.mark.parametrize("bad", [0, 2, PAGES - 1], ids=["first", "middle", "last"])
def test_a_wrong_content_length_is_one_bad_record(tmp_path: Path, gz: bool, change: int, bad: int) -> None:
    parts = records()
    parts[bad] = with_length(parts[bad], change)
    path = tmp_path / ("crawl.warc.gz" if gz else "crawl.warc")
    path.write_bytes(file_of(parts, gz))
    offset = len(file_of(parts[:bad], gz))

    with pytest.raises(InputError) as info:
        read(path)
    message = str(info.value)
    assert f"record {bad + 1} (offset {offset:,})" in message, message
    assert "\n" not in message.split(". Nothing")[0]  # one line, no raw line break of the file's
    assert "Nothing of this load was written" in message

    graph = read(path, on_error="skip")
    assert graph.skipped.counts["truncated or corrupt WARC"] == 1
    assert titles(graph) == {f"Page {i}" for i in range(PAGES) if i != bad}


@pytest.mark.parametrize("gz", [False, True], ids=["warc", "warc.gz"])
def test_a_whole_warc_reads_every_record_and_their_links(tmp_path: Path, gz: bool) -> None:
    path = tmp_path / "crawl.warc"
    path.write_bytes(file_of(records(), gz))
    graph = read(path)
    assert titles(graph) == {f"Page {i}" for i in range(PAGES)}
    assert graph.links().seen == PAGES and not graph.skipped.counts


def test_several_bad_records_are_each_skipped(tmp_path: Path) -> None:
    parts = records(8)
    parts[1], parts[5] = with_length(parts[1], 25), with_length(parts[5], -12)
    path = tmp_path / "crawl.warc"
    path.write_bytes(file_of(parts, False))
    graph = read(path, on_error="skip")
    assert graph.skipped.counts["truncated or corrupt WARC"] == 2
    assert titles(graph) == {f"Page {i}" for i in range(8) if i not in (1, 5)}


def test_a_record_that_does_not_begin_a_warc_header_is_named(tmp_path: Path) -> None:
    path = tmp_path / "crawl.warc"
    path.write_bytes(b"garbage line\r\n\r\n" + file_of(records(), False))
    with pytest.raises(InputError, match=r"record 1 \(offset 0\) does not begin with a WARC/ version line"):
        read(path)
    assert titles(read(path, on_error="skip")) == {f"Page {i}" for i in range(PAGES)}


def test_a_length_understated_onto_a_blank_line_is_still_caught(tmp_path: Path) -> None:
    """The four bytes after the announced end happen to be CRLF CRLF: what follows them is not a
    record, so the cut-off page is not loaded."""
    parts = records()
    body_end = parts[2].rindex(b"</html>")
    parts[2] = parts[2][:body_end] + b"\r\n\r\n" + parts[2][body_end:]
    # The announced block now ends just before the inserted CRLF CRLF: the block announced ends 8
    # bytes before the record does (its own CRLF CRLF, and the 4 bytes inserted).
    parts[2] = with_length(parts[2], body_end - (len(parts[2]) - 8))
    path = tmp_path / "crawl.warc"
    path.write_bytes(file_of(parts, False))
    with pytest.raises(InputError, match=r"record 3 \(offset [\d,]+\) is followed by"):
        read(path)
    assert titles(read(path, on_error="skip")) == {f"Page {i}" for i in range(PAGES) if i != 2}


def mixed_records(count: int, seed: int, sizes: int = 40_000) -> list[bytes]:
    """A crawl as wget writes it: a request record before each response, bodies of seeded sizes
    from 100 bytes to ``sizes``, so that records and header lines fall across every buffer
    boundary of the reader (its 64 KiB reads and the compaction past 1 MiB)."""
    import random

    from warcio.statusandheaders import StatusAndHeaders

    rng = random.Random(seed)
    out = []
    for i in range(count):
        request = StatusAndHeaders(f"GET /p{i} HTTP/1.1", [("Host", "e.org")], is_http_request=True)
        out.append(one_record(f"http://e.org/p{i}", "request", b"", request))
        links = "".join(f"<a href='/p{rng.randrange(count)}'>l</a>" for _ in range(rng.randrange(1, 6)))
        body = f"<html><title>Page {i}</title>{links}{'x' * rng.randrange(100, sizes)}</html>".encode()
        out.append(one_record(f"http://e.org/p{i}", "response", body, html_headers()))
    return out


FRAMINGS = {
    "plain": lambda parts: b"".join(parts),
    "one-gzip-member": lambda parts: gzip.compress(b"".join(parts)),
    "gzip-per-record": lambda parts: b"".join(gzip.compress(part) for part in parts),
}


def url_links(graph: CrawlGraph) -> set[tuple[str, str, int]]:
    """The graph's links by URL, with their counts: comparable across two reads."""
    out = set()
    for source, target, count in graph.links().chunks(1 << 20):
        out.update((graph.urls[s], graph.urls[t], int(c)) for s, t, c in zip(source, target, count))
    return out


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_framing_of_one_warc_loads_the_same_graph(tmp_path: Path, framing: str, seed: int) -> None:
    # Small records: header lines are a large share of the bytes, so the reader's buffer is
    # compacted while a header line straddles its end.
    count = 2_500
    parts = mixed_records(count, seed, sizes=2_000)
    assert sum(map(len, parts)) > 3 << 20  # past the reader's compaction point, three times
    reference = tmp_path / "reference.warc.gz"
    reference.write_bytes(FRAMINGS["gzip-per-record"](parts))
    path = tmp_path / f"crawl-{framing}.warc"
    path.write_bytes(FRAMINGS[framing](parts))
    expected, got = read(reference), read(path)
    assert not got.skipped.counts
    assert titles(got) == titles(expected) == {f"Page {i}" for i in range(count)}
    assert url_links(got) == url_links(expected) and len(url_links(got)) > count


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_cut_last_record_is_named_in_every_framing(tmp_path: Path, framing: str) -> None:
    parts = mixed_records(60, 4)
    whole = FRAMINGS[framing](parts)
    # Inside the last record: half its bytes (its member's, gzipped by record) or, in one gzip
    # member, the deflate stream's last bytes before the 8-byte trailer.
    cut = {"plain": len(parts[-1]) // 2, "gzip-per-record": len(gzip.compress(parts[-1])) // 2,
           "one-gzip-member": 12}[framing]
    path = tmp_path / "crawl.warc"
    path.write_bytes(whole[: len(whole) - cut])
    with pytest.raises(InputError, match=r"truncated") as info:
        read(path)
    offset = {"plain": len(whole) - len(parts[-1]), "one-gzip-member": 0,  # a member's offset
              "gzip-per-record": len(whole) - len(gzip.compress(parts[-1]))}[framing]
    assert f"record {len(parts)} (offset {offset:,})" in str(info.value), str(info.value)
    graph = read(path, on_error="skip")
    assert titles(graph) == {f"Page {i}" for i in range(59)}
    assert graph.skipped.counts == {"truncated or corrupt WARC": 1}


def _raw_record(target: bytes, head: bytes, body: bytes, kind: bytes = b"response") -> tuple[bytes, bytes]:
    """(WARC header block, block) of a record written by hand: what wget and others write,
    quirks included, which warcio's writer would mend."""
    block = head + b"\r\n\r\n" + body
    header = (b"WARC/1.0\r\nWARC-Type: " + kind + b"\r\nWARC-Target-URI: " + target +
              b"\r\nContent-Type: application/http;msgtype=response\r\nContent-Length: " +
              str(len(block)).encode() + b"\r\n\r\n")
    return header, block


PAGE = b"<html><title>T</title><a href='a.html'>A</a></html>"
CHUNKED = b"%x\r\n%s\r\n0\r\n\r\n" % (len(PAGE), PAGE)
RESPONSES = {
    "plain": (b"http://e.org/p", b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8", PAGE),
    "wget's angle brackets": (b"<http://e.org/p>", b"HTTP/1.0 200 OK\r\nContent-type: text/html", PAGE),
    "a space in the target": (b"http://e.org/a b", b"HTTP/1.1 200 OK\r\nContent-Type: text/html", PAGE),
    "no reason phrase": (b"https://e.org/p", b"HTTP/1.1 200\r\nContent-Type: TEXT/HTML", PAGE),
    "a redirect": (b"http://e.org/old", b"HTTP/1.1 301 Moved\r\nLocation: /n\xc3\xa9w\r\nContent-Length: 0", b""),
    "a Latin-1 location": (b"http://e.org/old", b"HTTP/1.1 302 Found\r\nLocation: /n\xe9w", b""),
    "chunked": (b"http://e.org/c", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html",
                CHUNKED),
    "gzipped": (b"http://e.org/g", b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: text/html",
                gzip.compress(PAGE)),
    "a folded header": (b"http://e.org/f", b"HTTP/1.1 200 OK\r\nContent-Type:\r\n text/html", PAGE),
    "a repeated header": (b"http://e.org/r", b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Type: text/plain",
                          PAGE),
    "an upper-case scheme": (b"HTTP://e.org/u", b"HTTP/1.1 200 OK\r\nContent-Type: text/html", PAGE),
    "no HTTP target": (b"dns:e.org", b"HTTP/1.1 200 OK\r\nContent-Type: text/html", PAGE),
    "a not found": (b"http://e.org/x", b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html", PAGE),
}


@pytest.mark.parametrize("case", sorted(RESPONSES))
def test_a_response_read_without_warcio_is_what_warcio_reads(case: str) -> None:
    """The common response (a plain HTTP/1 head, no transfer or content encoding) is read
    without warcio: the same target, status, Content-Type, Location and body as warcio gives;
    what warcio must decode or mend differently is left to it (the fast reading says None)."""
    from linksim.loader.warc import _one_record, _plain_response, _Response

    header, block = _raw_record(*RESPONSES[case])
    expected = _Response.of(_one_record(header, block))
    got = _plain_response(header, block)
    if case in ("chunked", "gzipped", "a folded header", "an upper-case scheme", "no HTTP target"):
        assert got is None
        return
    assert got is not None and expected is not None
    assert (got.target, got.status, got.content_type, got.location, got.body()) == \
        (expected.target, expected.status, expected.content_type, expected.location, expected.body())


def wacz_of(path: Path, members: dict[str, bytes]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as package:  # WACZ stores its WARC files as they are
        for name, data in members.items():
            package.writestr(name, data)
    return path


def test_a_wacz_package_loads_its_warcs_and_its_pages_list(tmp_path: Path) -> None:
    """The WARC files of a WACZ read from the package give what the same files give; its pages
    list titles the pages without one and adds the pages the archive has no response for."""
    from linksim.loader import read_files

    parts = records(6)
    first, second = file_of(parts[:3], gz=True), file_of(parts[3:], gz=False)
    (tmp_path / "a.warc.gz").write_bytes(first)
    (tmp_path / "b.warc").write_bytes(second)
    pages = "\n".join(json.dumps(line) for line in (
        {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"},
        {"url": "http://e.org/p1", "title": "Listed title", "ts": "2026-01-01T00:00:00Z"},
        {"url": "http://e.org/elsewhere", "title": "Not archived"},
    )) + "\n"
    package = wacz_of(tmp_path / "crawl.wacz", {"archive/a.warc.gz": first, "archive/b.warc": second,
                                                 "pages/pages.jsonl": pages.encode(), "datapackage.json": b"{}"})
    warcs, formats = read_files([tmp_path / "a.warc.gz", tmp_path / "b.warc"])
    wacz, wacz_formats = read_files([package])
    assert formats == ["warc", "warc"] and wacz_formats == ["wacz"]
    assert wacz.urls == warcs.urls + ["http://e.org/elsewhere"]
    assert (wacz.links().source.tolist(), wacz.links().target.tolist()) == \
        (warcs.links().source.tolist(), warcs.links().target.tolist())
    assert wacz.titles == {**warcs.titles, len(warcs.urls): "Not archived"}  # the records' titles kept
    assert list(wacz.crawled) == list(warcs.crawled) + [0]


def test_a_bad_record_in_a_wacz_is_named_by_package_and_member(tmp_path: Path) -> None:
    parts = records()
    parts[2] = with_length(parts[2], 40)
    package = wacz_of(tmp_path / "crawl.wacz", {"archive/data.warc": file_of(parts, gz=False)})
    with pytest.raises(InputError, match=r"crawl\.wacz!archive/data\.warc.*record 3 \(offset"):
        read_input(package, CrawlGraph(), ErrorPolicy("stop", CrawlGraph()), True)
    graph = CrawlGraph()
    read_input(package, graph, ErrorPolicy("skip", graph), True)
    assert titles(graph) == {f"Page {i}" for i in range(PAGES) if i != 2}


def test_a_file_that_is_not_a_zip_is_not_a_wacz(tmp_path: Path) -> None:
    from linksim.loader.readers import UnreadableInput

    path = tmp_path / "crawl.wacz"
    path.write_bytes(b"WARC/1.0\r\n")
    with pytest.raises(UnreadableInput, match="not a WACZ package"):
        read_input(path, CrawlGraph(), ErrorPolicy("stop", CrawlGraph()), True)


def wat_record(url: str, warc_type: str, status: int = 200, title: str | None = None, links=(), location=None,
               base: str | None = None) -> bytes:
    """One WAT metadata record as Common Crawl writes it: the JSON envelope of a WARC record."""
    head = {**({"Title": title} if title else {}), **({"Base": base} if base else {})}
    http = {"Response-Message": {"Status": str(status)},
            "Headers": {"Content-Type": "text/html", **({"Location": location} if location else {})},
            **({"HTML-Metadata": {"Head": head, "Links": list(links)}} if status == 200 else {})}
    envelope = {"Envelope": {"WARC-Header-Metadata": {"WARC-Type": warc_type, "WARC-Target-URI": url},
                             "Payload-Metadata": {"HTTP-Response-Metadata": http}}}
    return one_record(url, "metadata", json.dumps(envelope).encode(), None)


def test_a_wat_file_gives_the_graph_of_its_warc(tmp_path: Path) -> None:
    """Common Crawl's WAT: each HTML response's title and <a href> links (not its images or
    stylesheets), a redirect as a link to its target; the metadata of requests is no page."""
    from warcio.statusandheaders import StatusAndHeaders

    from linksim.loader import detect_format

    moved = StatusAndHeaders("301 Moved", [("Location", "/p0")], protocol="HTTP/1.1")
    warc = records() + [one_record("http://e.org/old", "response", b"", moved)]
    wat = [wat_record("http://e.org/p0", "request")]
    for i in range(PAGES):
        wat.append(wat_record(f"http://e.org/p{i}", "response", title=f"Page {i}", links=[
            {"path": "A@/href", "url": f"/p{i + 1}", "text": "next"},
            {"path": "IMG@/src", "url": "/logo.png"}, {"path": "LINK@/href", "url": "/style.css"}]))
    wat.append(wat_record("http://e.org/old", "response", status=301, location="/p0"))
    (tmp_path / "crawl.warc.gz").write_bytes(file_of(warc, gz=True))
    (tmp_path / "crawl.warc.wat.gz").write_bytes(file_of(wat, gz=True))
    assert detect_format(tmp_path / "crawl.warc.wat.gz") == "wat"
    from_warc, from_wat = read(tmp_path / "crawl.warc.gz"), CrawlGraph()
    read_input(tmp_path / "crawl.warc.wat.gz", from_wat, ErrorPolicy("stop", from_wat), True)
    assert from_wat.urls == from_warc.urls and from_wat.titles == from_warc.titles
    assert from_wat.links().source.tolist() == from_warc.links().source.tolist()
    assert from_wat.links().target.tolist() == from_warc.links().target.tolist()
    assert list(from_wat.crawled) == list(from_warc.crawled)


def test_a_wat_record_that_is_not_json_is_one_bad_record(tmp_path: Path) -> None:
    parts = [wat_record("http://e.org/a", "response", title="A", links=[{"path": "A@/href", "url": "/b"}]),
             one_record("http://e.org/b", "metadata", b"not json", None)]
    path = tmp_path / "crawl.wat"
    path.write_bytes(file_of(parts, gz=False))
    with pytest.raises(InputError, match=r"record 2 \(offset .*is not a WAT record"):
        read_input(path, CrawlGraph(), ErrorPolicy("stop", CrawlGraph()), True)
    graph = CrawlGraph()
    read_input(path, graph, ErrorPolicy("skip", graph), True)
    assert graph.urls == ["http://e.org/a", "http://e.org/b"] and graph.skipped.total == 1


def test_links_resolved_once_a_folder_are_those_resolved_one_by_one() -> None:
    """The resolver's memo (a reference once a folder, a bare fragment once a page, a fragment's
    page by its fragment-less reference) gives every link the page that resolve() gives it, in
    the same order, with the same counts of other schemes and malformed links."""
    from linksim.loader.urls import NON_WEB, WEB, resolve
    from linksim.loader.warc import _Page, _Resolver

    hrefs = ["b.html", "b.html#x", "#top", "#other", "?q=1", "", " c.html ", "../up/", "/root", "//o.org/p",
             "mailto:a@b.c", "http://[bad", "HTTP://Example.COM:80/a/./b", "b.html#y", "sub/../b.html", "#top",
             "../../../a", "./", "..", ".", "a//b.html", "x;p=1", "%7Eu/", "/./c/../d", "b.html"]
    pages = [("http://s.org/dir/one.html", "http://s.org/dir/one.html"),
             ("http://s.org/dir/two.html?v=2", "http://s.org/dir/two.html?v=2"),
             ("http://s.org/dir/three.html", "http://s.org/other/"),  # a <base href> elsewhere
             ("http://s.org/x/one.html", "http://s.org/x/one.html"),
             ("http://s.org/x/two.html", "HTTP://S.org:80/x/./"),  # a base that is no key
             ("http://s.org/y//z.html", "http://s.org/y//z.html")]
    fast, slow = CrawlGraph(), CrawlGraph()
    resolver = _Resolver(fast, True)
    expected_non_web = expected_malformed = 0
    for key, base in pages:
        page = _Page(key, base=base, hrefs=hrefs, texts=[f"t{n}" for n in range(len(hrefs))], where="f:1")
        source = fast.page(key, complete=True)
        targets, texts = resolver.targets(page)
        slow.page(key, complete=True)
        wanted = []
        for n, href in enumerate(hrefs):
            kind, found = resolve(href, base)
            if kind == WEB:
                wanted.append((slow.page(found), f"t{n}"))
            elif kind == NON_WEB:
                expected_non_web += 1
            else:
                expected_malformed += 1
        assert list(zip(targets, texts)) == wanted
        assert source == slow.index[key]
    assert fast.urls == slow.urls
    assert fast.non_web == expected_non_web == len(pages)
    assert fast.skipped.total == expected_malformed > 0


@pytest.mark.parametrize("html, title", [
    ("<html><head><title>In head</title></head><body><title>In body</title></body></html>", "In head"),
    ("<html><body><svg><title>Of the image</title></svg><title>Late</title></body></html>", "Of the image"),
    ("<body><p>text</p><title>Only in body</title>", "Only in body"),
    ("<html><head><base href='http://b.org/d/'></head><body>no title</body></html>", None),
])
def test_the_title_is_the_first_in_document_order(html: str, title: str | None) -> None:
    from linksim.loader.warc import _html_links

    assert _html_links(html.encode(), "http://e.org/p")[0] == title
