"""WARC framing: a record whose Content-Length overstates or understates its block, plain and
gzipped, first, middle and last, is one bad record; with --on-error skip it alone is skipped and
reading resumes at the next record."""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import pytest

from linksim.loader.graph import CrawlGraph
from linksim.loader.readers import ErrorPolicy, InputError, read_input

PAGES = 5


def records(pages: int = PAGES) -> list[bytes]:
    """Each record of a WARC of HTML responses, as warcio writes it (CRLF CRLF included)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    out = []
    for i in range(pages):
        buffer = io.BytesIO()
        writer = WARCWriter(buffer, gzip=False)
        body = f"<html><title>Page {i}</title><a href='/p{i + 1}'>next</a>{'text ' * 200}</html>".encode()
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            f"http://e.org/p{i}", "response", payload=io.BytesIO(body), http_headers=headers))
        out.append(buffer.getvalue())
    return out


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
