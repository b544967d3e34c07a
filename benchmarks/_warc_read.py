"""One reading of WARC files on one core, for ``benchmarks/load.py --warc``: prints a JSON line
``{"pages", "links", "seconds"}``. Run as its own process each time, so that no cache of an earlier
reading (linksim's resolved URLs, the page cache aside) helps a later one.

    python benchmarks/_warc_read.py linksim FILES...    # linksim's reader: the pages and links a load gets
    python benchmarks/_warc_read.py fastwarc FILES...   # FastWARC + Lexbor: the <a href> values, bare
    python benchmarks/_warc_read.py warcio FILES...     # warcio + Lexbor: the same, bare
    python benchmarks/_warc_read.py floor FILES...      # FastWARC + Lexbor: hrefs, anchor texts, a look-up each
    python benchmarks/_warc_read.py workers=N FILES...  # a load's whole read (read_files), N workers
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def _html(status: int, content_type: str) -> bool:
    return 200 <= status < 300 and "html" in content_type.lower()


def bare_hrefs(body: bytes) -> int:
    """The parser's part of a reading: the document parsed, its <a href> values taken."""
    from selectolax.lexbor import LexborHTMLParser

    return sum(1 for anchor in LexborHTMLParser(body).css("a[href]") if anchor.attributes.get("href"))


def _fastwarc_html(paths: list[Path]):
    """The bodies of the HTML responses of ``paths``, read by FastWARC."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    for path in paths:
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream, record_types=WarcRecordType.response, parse_http=True):
                headers = record.http_headers
                if headers is not None and _html(headers.status_code, headers.get("Content-Type") or ""):
                    yield record.reader.read()


def fastwarc(paths: list[Path]) -> tuple[int, int]:
    pages = links = 0
    for body in _fastwarc_html(paths):
        links += bare_hrefs(body)
        pages += 1
    return pages, links


def floor(paths: list[Path]) -> tuple[int, int]:
    """The least any reader that keeps linksim's graph does, as an anchor: FastWARC's records,
    Lexbor's parse, every <a href> value with its anchor text, a dictionary look-up a reference;
    no framing checks, no resolution or normalisation, nothing recorded."""
    from selectolax.lexbor import LexborHTMLParser

    pages = links = 0
    known: dict[str, int] = {}
    for body in _fastwarc_html(paths):
        anchors = LexborHTMLParser(body).css("a[href]")
        hrefs = [anchor.attrs.get("href") for anchor in anchors]
        texts = [anchor.text(strip=True, separator=" ") for anchor in anchors]
        if None in list(map(known.get, hrefs)):
            for href in hrefs:
                known.setdefault(href, len(known))
        links += len(texts)
        pages += 1
    return pages, links


def warcio(paths: list[Path]) -> tuple[int, int]:
    from warcio.archiveiterator import ArchiveIterator

    pages = links = 0
    for path in paths:
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                status = record.http_headers.get_statuscode() or ""
                if not (status.isdigit() and _html(int(status), record.http_headers.get_header("Content-Type") or "")):
                    continue
                links += bare_hrefs(record.content_stream().read())
                pages += 1
    return pages, links


def linksim(paths: list[Path]) -> tuple[int, int]:
    """What ``linksim load`` reads before it writes: pages (HTML responses) and their links,
    resolved and normalised, titles and anchor texts, into its crawl graph."""
    from linksim.loader.graph import CrawlGraph
    from linksim.loader.readers import ErrorPolicy
    from linksim.loader.warc import read_warc

    with CrawlGraph() as graph:
        policy = ErrorPolicy("skip", graph)
        for path in paths:
            read_warc(path, graph, policy, True)
        return int(sum(graph.complete)), graph.links_seen


def load_read(paths: list[Path], workers: int) -> tuple[int, int]:
    """What ``linksim load`` reads of the files before it writes, ``workers`` files at once."""
    from linksim.loader import read_files

    graph, _ = read_files(paths, on_error="skip", workers=workers)
    with graph:
        return int(sum(graph.complete)), graph.links_seen


READERS = {"linksim": linksim, "fastwarc": fastwarc, "floor": floor, "warcio": warcio}


def main() -> None:
    name, paths = sys.argv[1], [Path(p) for p in sys.argv[2:]]
    if name.startswith("workers="):
        workers = int(name.partition("=")[2])
        reader = lambda files: load_read(files, workers)  # noqa: E731
    else:
        reader = READERS[name]
    began = time.perf_counter()
    pages, links = reader(paths)
    print(json.dumps({"pages": pages, "links": links, "seconds": round(time.perf_counter() - began, 3)}))


if __name__ == "__main__":
    main()
