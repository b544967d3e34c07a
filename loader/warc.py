"""WARC input: crawled pages and their links from web archive files.

Records are read with warcio (the Webrecorder library that reads what wget ``--warc-file``,
Heritrix and Common Crawl write); HTML is parsed with selectolax's Lexbor HTML5 parser, which
copes with the broken markup real crawls are full of. The character set comes from the HTTP
``Content-Type`` header, else from the document (``<meta charset>``) as Lexbor detects it.

- a ``response`` record with an HTML body (status 2xx) gives a crawled page: its URL
  (``WARC-Target-URI``), its ``<title>`` and its ``<a href>`` links with their anchor text,
  resolved against the ``<base href>`` if there is one, else against the response URL;
- a redirect (3xx with ``Location``) gives a crawled page that links to its target;
- other records (requests, metadata, images, CSS) are passed over.
"""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from linksim.loader.graph import CrawlGraph
from linksim.loader.urls import WEB, resolve

MAX_HTML_BYTES = 32 << 20


def _parse(body: bytes, content_type: str) -> LexborHTMLParser:
    charset = None
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip() == "charset" and value.strip():
            charset = value.strip().strip('"')
    if charset:
        try:
            return LexborHTMLParser(body.decode(charset, errors="replace"))
        except LookupError:  # an unknown charset name: let the parser detect it
            pass
    return LexborHTMLParser(body, encoding=True)


def _html_links(
    body: bytes, page_url: str, content_type: str = ""
) -> tuple[str | None, str, list[tuple[str, str]]]:
    """(title, base URL, [(href, anchor text)]) of an HTML document."""
    tree = _parse(body, content_type)
    node = tree.css_first("title")
    title = node.text(strip=True) if node is not None else None
    base = page_url
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        href = (base_node.attributes.get("href") or "").strip()
        if href:
            base = urljoin(page_url, href)
    links = []
    for anchor in tree.css("a[href]"):
        href = anchor.attributes.get("href")
        if href:
            links.append((href, anchor.text(strip=True, separator=" ")))
    return title or None, base, links


def _drain(record) -> bool:
    """Read what is left of a record's block; False if the file ends before the block does."""
    stream = record.raw_stream
    while stream.read(1 << 16):
        pass
    return getattr(stream, "limit", 0) == 0


def _ends_whole(path: Path, offset: int) -> bool:
    """True if the file ends where its last record does (``offset``: where the reader stopped
    taking records), with the record's CRLF CRLF and, gzipped, whole members: a file cut in a
    record's headers, in the separator or in a gzip trailer does not."""
    size = path.stat().st_size
    if offset != size:
        return False
    with open(path, "rb") as handle:
        if handle.read(2) != b"\x1f\x8b":
            handle.seek(-min(4, size), os.SEEK_END)
            return handle.read() == b"\r\n\r\n"
    tail = b""
    try:
        with gzip.open(path, "rb") as stream:  # checks every member's CRC and length
            while chunk := stream.read(1 << 20):
                tail = (tail + chunk)[-4:]
    except (EOFError, OSError, zlib.error):
        return False
    return tail == b"\r\n\r\n"


def read_warc(path: Path, graph: CrawlGraph, policy, normalize: bool) -> None:
    """Add the HTML pages and links of one WARC (or WARC.gz) file to ``graph``.

    A record is added only once its whole block has been read: a record that the end of the file
    cuts short (in its headers or its content) is a bad record, named by its number, never a
    page; a file cut after its last whole record is reported too.
    """
    size = path.stat().st_size
    if size == 0:
        policy.bad(path, None, "the file is empty: nothing to load", "empty file")
        return
    number = 0
    bad = "truncated or corrupt WARC"
    with open(path, "rb") as handle:  # an unreadable file is not a corrupt one: raised as it is
        try:
            records = ArchiveIterator(handle)
            for record in records:
                number += 1
                if record.rec_type is None or record.rec_headers.get_header("Content-Length") is None:
                    policy.bad(path, None, f"record {number} has no WARC-Type or Content-Length: the "
                               "file is cut inside its headers, or is not a WARC file", bad)
                    return
                page = _read_record(record, number, path, policy, normalize)
                if not _drain(record):
                    policy.bad(path, None, f"record {number} is truncated: the file ends inside its "
                               f"content ({record.length:,} bytes announced)", bad)
                    return
                if page is not None:
                    _add_page(graph, page)
        except (ArchiveLoadFailed, EOFError, OSError, ValueError, AttributeError, zlib.error) as exc:
            # warcio reads a header block cut short as None and fails on it with an AttributeError.
            policy.bad(path, None, f"record {number + 1} is truncated or corrupt ({type(exc).__name__}: "
                       f"{exc}); {number} records read before it", bad)
            return
    if not _ends_whole(path, records.offset):
        policy.bad(path, None, f"the file is truncated after record {number} (it does not end with a "
                   "whole record)", bad)


@dataclass
class _Page:
    key: str
    title: str | None = None
    redirect: str | None = None
    links: list = field(default_factory=list)  # [(url, anchor)], resolved
    non_web: int = 0
    malformed: list = field(default_factory=list)


def _read_record(record, number: int, path: Path, policy, normalize: bool) -> _Page | None:
    """The page of one record (None for what is not a crawled web page)."""
    if record.rec_type != "response" or record.http_headers is None:
        return None
    target = record.rec_headers.get_header("WARC-Target-URI")
    if not target:
        return None
    status = record.http_headers.get_statuscode() or ""
    kind, page_key = resolve(target, None, normalize)
    if kind != WEB:
        return None
    where = f"record {number}"
    if status.startswith("3"):
        location = record.http_headers.get_header("Location")
        if not location:
            return None
        kind, target_key = resolve(location, page_key, normalize)
        return _Page(page_key, redirect=target_key) if kind == WEB else None
    content_type = (record.http_headers.get_header("Content-Type") or "").lower()
    if not status.startswith("2") or "html" not in content_type:
        return None
    body = record.content_stream().read(MAX_HTML_BYTES + 1)
    if len(body) > MAX_HTML_BYTES:
        policy.bad(path, None, f"{where}: HTML of {target} exceeds {MAX_HTML_BYTES:,} bytes", "page too large")
        return None
    title, base, links = _html_links(body, page_key, content_type)
    page = _Page(page_key, title=title)
    for href, anchor in links:
        kind, key = resolve(href, base, normalize)
        if kind == WEB:
            page.links.append((key, anchor or None))
        elif kind == "non-web":
            page.non_web += 1
        else:  # a broken href is the page's fault, not the file's: count, go on
            page.malformed.append(f"{path}:{where}")
    return page


def _add_page(graph: CrawlGraph, page: _Page) -> None:
    source = graph.page(page.key, crawled=True, title=page.title)
    if page.redirect is not None:
        graph.link(source, graph.page(page.redirect))
    for key, anchor in page.links:
        graph.link(source, graph.page(key), anchor)
    graph.non_web += page.non_web
    for where in page.malformed:
        graph.skipped.add("malformed link in HTML", where)
