"""WACZ packages (Webrecorder's and Browsertrix's format, version 1.1): a ZIP holding the crawl's
WARC files under ``archive/`` and its pages list, ``pages/pages.jsonl`` (a header line, then one
``{"url", "title", "ts"}`` a page; ``pages/extraPages.jsonl`` the same).

The WARC files are read in name order by linksim's WARC reader, straight from the package (a
member is read, not extracted), with every guarantee of a WARC file: a bad record is named by
``package!member`` and its number and offset. The pages list gives the pages it names a title
where their WARC record had none, and adds those the archive holds no HTML response for as
pages that are linked to only (their links are unknown).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from linksim.loader.graph import CrawlGraph
from linksim.loader.readers import ErrorPolicy, UnreadableInput
from linksim.loader.urls import INVALID, NON_WEB, resolve
from linksim.loader.warc import read_warc_from

PAGE_LISTS = ("pages/pages.jsonl", "pages/extraPages.jsonl")


def read_wacz(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
    """Add the pages and links of a WACZ package's WARC files, and its pages list (see the module)."""
    try:
        package = zipfile.ZipFile(path)
    except zipfile.BadZipFile as error:
        raise UnreadableInput(path, f"not a WACZ package (a ZIP file): {error}") from None
    with package:
        names = package.namelist()
        warcs = sorted(name for name in names if name.startswith("archive/")
                       and name.endswith((".warc", ".warc.gz")))
        if not warcs:
            policy.bad(path, None, "the package holds no WARC file under archive/", "empty WACZ")
        for name in warcs:
            with package.open(name) as member:
                read_warc_from(member, Path(f"{path}!{name}"), graph, policy, normalize)
        for name in PAGE_LISTS:
            if name in names:
                _read_pages(package, name, Path(f"{path}!{name}"), graph, policy, normalize)


def _read_pages(package: zipfile.ZipFile, name: str, where: Path, graph: CrawlGraph, policy: ErrorPolicy,
                normalize: bool) -> None:
    with package.open(name) as member:
        for number, raw in enumerate(member, 1):
            try:
                record = json.loads(raw)
            except ValueError:
                policy.bad(where, number, "not a JSON object", "malformed JSON")
                continue
            if not isinstance(record, dict):
                policy.bad(where, number, "not a JSON object", "malformed JSON")
                continue
            if "format" in record and "url" not in record:
                continue  # the list's header line
            url = record.get("url")
            if not isinstance(url, str):
                policy.bad(where, number, "a page without a string \"url\"", "missing url")
                continue
            kind, key = resolve(url, None, normalize)
            if kind in (NON_WEB, INVALID):
                policy.bad(where, number, f"page URL {url[:200]!r} is not a web URL", "non-web page URL")
                continue
            page = graph.page(key)
            title = record.get("title")
            if isinstance(title, str) and title.strip() and page not in graph.titles:
                graph.titles[page] = title.strip()
