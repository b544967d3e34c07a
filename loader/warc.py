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


def read_warc(path: Path, graph: CrawlGraph, policy, normalize: bool) -> None:
    """Add the HTML pages and links of one WARC (or WARC.gz) file to ``graph``."""
    if path.stat().st_size == 0:
        policy.bad(path, None, "the file is empty: nothing to load", "empty file")
        return
    number = 0
    try:
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                number += 1
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                target = record.rec_headers.get_header("WARC-Target-URI")
                if not target:
                    continue
                status = record.http_headers.get_statuscode() or ""
                kind, page_key = resolve(target, None, normalize)
                if kind != WEB:
                    continue
                where = f"record {number}"
                if status.startswith("3"):
                    location = record.http_headers.get_header("Location")
                    if location:
                        kind, target_key = resolve(location, page_key, normalize)
                        if kind == WEB:
                            graph.link(graph.page(page_key, crawled=True), graph.page(target_key))
                    continue
                content_type = (record.http_headers.get_header("Content-Type") or "").lower()
                if not status.startswith("2") or "html" not in content_type:
                    continue
                body = record.content_stream().read(MAX_HTML_BYTES + 1)
                if len(body) > MAX_HTML_BYTES:
                    policy.bad(path, None, f"{where}: HTML of {target} exceeds {MAX_HTML_BYTES:,} bytes", "page too large")
                    continue
                title, base, links = _html_links(body, page_key, content_type)
                source = graph.page(page_key, crawled=True, title=title)
                for href, anchor in links:
                    kind, key = resolve(href, base, normalize)
                    if kind == WEB:
                        graph.link(source, graph.page(key), anchor or None)
                    elif kind == "non-web":
                        graph.non_web += 1
                    else:  # a broken href is the page's fault, not the file's: count, go on
                        graph.skipped.add("malformed link in HTML", f"{path}:{where}")
    except (ArchiveLoadFailed, EOFError, OSError, ValueError) as exc:
        policy.bad(
            path,
            None,
            f"the WARC file is truncated or corrupt after record {number} ({exc})",
            "truncated or corrupt WARC",
        )
