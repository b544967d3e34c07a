"""A WARC recorded by a real crawler (wget --warc-file) from a site served on 127.0.0.1."""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from linksim.procedures.load import load
from linksim.procedures import QueryRunner

SITE = {
    "index.html": '<html><head><title>Home</title></head><body>'
    '<a href="a.html">A</a> <a href="b.html#part">B</a> <a href="mailto:x@example.org">mail</a> '
    '<a href="javascript:void(0)">js</a> <a href="http://other.invalid/page">out</a></body></html>',
    "a.html": '<html><head><title>Page A</title><base href="/sub/"></head><body>'
    '<a href="c.html">C via base</a> <a href="/index.html">home</a></body></html>',
    "b.html": "<html><head><title>Page B</title></head><body>"
    '<a href="/sub">sub (redirects)</a> <a href="b.html">me</a></body></html>',
    "sub/index.html": '<html><head><title>Sub</title></head><body><a href="c.html">C</a></body></html>',
    "sub/c.html": '<html><head><title>Page C</title></head><body><a href="../a.html">A</a></body></html>',
}


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def site(tmp_path: Path):
    root = tmp_path / "site"
    for name, html in SITE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(html)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def record_with_wget(start: str, folder: Path) -> Path:
    subprocess.run(
        ["wget", "--recursive", "--level=5", "--no-verbose", "--no-directories", "--delete-after",
         f"--directory-prefix={folder / 'mirror'}", f"--warc-file={folder / 'crawl'}", start],
        check=False, capture_output=True, timeout=120,
    )
    return folder / "crawl.warc.gz"


def record_with_warcio(start: str, folder: Path) -> Path:
    """Fallback where wget is missing: a small breadth-first crawler under warcio's capture_http."""
    import urllib.request
    from urllib.parse import urljoin, urldefrag

    from warcio.capture_http import capture_http
    from selectolax.parser import HTMLParser

    path = folder / "crawl.warc.gz"
    seen, queue = {start}, [start]
    with capture_http(str(path)):
        while queue:
            url = queue.pop(0)
            with urllib.request.urlopen(url, timeout=10) as response:
                body, final = response.read(), response.geturl()
            tree = HTMLParser(body)
            base = tree.css_first("base[href]")
            base_url = urljoin(final, base.attributes["href"]) if base else final
            for a in tree.css("a[href]"):
                link = urldefrag(urljoin(base_url, a.attributes["href"]))[0]
                if link.startswith(start.rsplit("/", 1)[0]) and link not in seen:
                    seen.add(link)
                    queue.append(link)
    return path


def test_wget_warc_loads_pages_links_titles(runner: QueryRunner, site: str, tmp_path: Path) -> None:
    start = f"{site}/index.html"
    recorder = record_with_wget if shutil.which("wget") else record_with_warcio
    warc = recorder(start, tmp_path)
    assert warc.stat().st_size > 0

    summary = load([warc], runner, show_progress=False)
    pages = {
        r["url"].removeprefix(site): (r["title"], r["crawled"])
        for r in runner.run("MATCH (p:Page) RETURN p.url AS url, p.title AS title, p.crawled AS crawled")
    }
    expected = {
        "/index.html": ("Home", True),
        "/a.html": ("Page A", True),
        "/b.html": ("Page B", True),
        "/sub/": ("Sub", True),
        "/sub/c.html": ("Page C", True),
        "http://other.invalid/page": (None, False),
    }
    if recorder is record_with_wget:
        expected["/sub"] = (None, True)  # wget records the 301; it links to /sub/
    assert pages == expected

    links = {
        (r["s"].removeprefix(site), r["t"].removeprefix(site))
        for r in runner.run("MATCH (a:Page)-[:LINKS_TO]->(b:Page) RETURN a.url AS s, b.url AS t")
    }
    want = {
        ("/index.html", "/a.html"), ("/index.html", "/b.html"), ("/index.html", "http://other.invalid/page"),
        ("/a.html", "/sub/c.html"), ("/a.html", "/index.html"),
        ("/b.html", "/sub"), ("/b.html", "/b.html"),
        ("/sub/", "/sub/c.html"), ("/sub/c.html", "/a.html"),
    }
    if recorder is record_with_wget:
        want.add(("/sub", "/sub/"))
    else:
        want = {pair for pair in want if pair[1] != "/sub"} | {("/b.html", "/sub/")}
    assert links == want
    assert summary.non_web_links == 2
    assert summary.self_loops == 1


def test_the_reader_gives_the_graph_of_resolving_each_link_alone(site: str, tmp_path: Path) -> None:
    """The WARC reader (its own framing, its resolver's memo) against the plainest reading of the
    same crawl: warcio's records, each link resolved by itself with resolve(): the same pages,
    links, counts and first anchors."""
    from collections import Counter

    from warcio.archiveiterator import ArchiveIterator

    from linksim.loader.graph import CrawlGraph
    from linksim.loader.readers import ErrorPolicy
    from linksim.loader.urls import WEB, resolve
    from linksim.loader.warc import _html_links, read_warc

    recorder = record_with_wget if shutil.which("wget") else record_with_warcio
    warc = recorder(f"{site}/index.html", tmp_path)
    graph = CrawlGraph()
    read_warc(warc, graph, ErrorPolicy("stop", graph), True)
    links = graph.links()
    read = Counter({(graph.urls[s], graph.urls[t]): c for s, t, c in zip(links.source, links.target, links.count)})
    anchors = {(graph.urls[s], graph.urls[t]): text for (s, t), text in graph.anchors.items()}

    plain, first = Counter(), {}
    with open(warc, "rb") as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type != "response" or record.http_headers is None:
                continue
            kind, page = resolve(record.rec_headers.get_header("WARC-Target-URI"))
            status = record.http_headers.get_statuscode()
            content_type = (record.http_headers.get_header("Content-Type") or "").lower()
            if status.startswith("3") and record.http_headers.get_header("Location"):
                plain[(page, resolve(record.http_headers.get_header("Location"), page)[1])] += 1
            elif status.startswith("2") and "html" in content_type:
                _, base, hrefs, texts = _html_links(record.content_stream().read(), page, content_type)
                for href, text in zip(hrefs, texts, strict=True):
                    kind, target = resolve(href, base)
                    if kind == WEB:
                        plain[(page, target)] += 1
                        if text:
                            first.setdefault((page, target), text)
    assert read == plain and anchors == first and len(read) >= 9
