"""Readers for the crawl formats linksim loads.

Each reader adds the pages and links of one input to a :class:`~linksim.loader.graph.CrawlGraph`.
Bad records go through an :class:`ErrorPolicy`: with ``on_error="stop"`` the first one ends the
load with ``file:line: reason`` before anything is written; with ``"skip"`` it is counted by reason.

Formats (detected from the name, ``.gz`` read transparently):

========== ===================================== =============================================
format     files                                 what
========== ===================================== =============================================
edges      ``.tsv .txt .edges .el .csv``*        ``source target [count]`` per line (TAB,
                                                 comma or white space), ``#``/``%`` comments;
                                                 ids or URLs; a third column is the times the
                                                 link was seen (a positive integer)
cites      ``.cites``                            WebKB/LINQS: ``cited citing`` per line
csv        ``.csv``                              pages file (``url``, ``title``, more columns)
                                                 or links file (``source``, ``target``,
                                                 ``anchor``), told apart by their header
jsonl      ``.jsonl .ndjson``                    ``{"url", "title", "links": [...]}`` per line
pajek      ``.net``                              ``*Vertices`` (labels are URLs), ``*Arcs``,
                                                 ``*Edges`` (a link both ways)
warc       ``.warc .warc.gz``                    HTML responses: page, ``<title>``, ``<a href>``
wikispeedia a folder with articles.tsv, links.tsv Wikipedia for Schools (SNAP Wikispeedia)
========== ===================================== =============================================

(*) ``.csv`` is read as ``csv`` when its header names the columns, else as ``edges``.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import unquote

from linksim.errors import ConfigurationError, LinksimError
from linksim.loader.graph import CrawlGraph
from linksim.loader.urls import IDENTIFIER, INVALID, NON_WEB, classify, resolve

BOM = b"\xef\xbb\xbf"  # UTF-8 byte-order mark: editors on Windows begin text files with it
MAX_LINE_BYTES = 1 << 20  # 1 MiB: no line of a link file is longer; a JSON page may be
MAX_JSON_LINE_BYTES = 64 << 20
FORMATS = ("edges", "cites", "csv", "jsonl", "pajek", "warc", "wat", "wacz", "wikispeedia", "ccgraph", "webgraph", "linktable")


class InputError(LinksimError):
    """A record of an input file that cannot be loaded."""

    exit_code = 4

    def __init__(self, path: Path | str, line: int | None, reason: str) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(
            f"{where}: {reason}. Nothing of this load was written. Fix the input, or rerun "
            "with --on-error skip to skip and count such records."
        )
        self.path, self.line, self.reason = str(path), line, reason

    def __reduce__(self):  # raised in a worker of a parallel read, raised again in its parent
        return type(self), (self.path, self.line, self.reason)


class UnreadableInput(LinksimError):
    """An input file or folder that cannot be opened or read at all (permissions, I/O error)."""

    exit_code = 4

    def __init__(self, path: Path | str, cause: str) -> None:
        super().__init__(f"{path}: cannot be read ({cause}). Nothing of this load was written.")
        self.path, self.cause = str(path), cause

    def __reduce__(self):  # raised in a worker process or a Spark task, raised again in its parent
        return type(self), (self.path, self.cause)

    def __reduce__(self):
        return type(self), (self.path, self.cause)


class ErrorPolicy:
    """What to do with a bad record: ``stop`` (raise :class:`InputError`) or ``skip`` (count)."""

    def __init__(self, on_error: str, graph: CrawlGraph) -> None:
        if on_error not in ("stop", "skip"):
            raise ValueError(f"on_error must be 'stop' or 'skip', got {on_error!r}")
        self.on_error = on_error
        self.graph = graph

    def bad(self, path: Path, line: int | None, reason: str, category: str | None = None) -> None:
        if self.on_error == "stop":
            raise InputError(path, line, reason)
        self.graph.skipped.add(category or reason, f"{path}:{line}" if line else str(path))


# Opening and line reading ---------------------------------------------------------------------
def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def open_binary(path: Path):
    """Open a file for binary reading, gunzipping it if it is gzip (by content, not name)."""
    return gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")


def read_lines(
    path: Path, policy: ErrorPolicy, max_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` of a text file, decoded as UTF-8, line ends stripped.

    Over-long lines, NUL bytes (binary data) and invalid UTF-8 are bad records; a truncated or
    corrupt gzip stream ends the file as a bad record after the last complete line.
    """
    if path.stat().st_size == 0:
        policy.bad(path, None, "the file is empty: nothing to load", "empty file")
        return
    number = 0
    with open_binary(path) as handle:
        while True:
            try:
                raw = handle.readline(max_bytes + 1)
            except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as exc:
                policy.bad(
                    path,
                    number + 1,
                    f"the gzip stream is truncated or corrupt ({exc}); lines up to {number} read",
                    "truncated or corrupt gzip",
                )
                return
            if not raw:
                if number == 0:  # a gzip file of nothing
                    policy.bad(path, None, "the file is empty once decompressed: nothing to load", "empty file")
                return
            number += 1
            if number == 1:
                raw = raw.removeprefix(BOM)
            if len(raw) > max_bytes and not raw.endswith(b"\n"):
                size = len(raw)
                while True:  # consume the rest of the line without keeping it
                    chunk = handle.readline(1 << 20)
                    size += len(chunk)
                    if not chunk or chunk.endswith(b"\n"):
                        break
                policy.bad(
                    path,
                    number,
                    f"line of {size:,} bytes exceeds the limit of {max_bytes:,}",
                    "line too long",
                )
                continue
            if b"\x00" in raw:
                policy.bad(path, number, "binary data (NUL byte): not a text file", "binary data")
                if number == 1 and policy.on_error == "skip":
                    return
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                policy.bad(
                    path,
                    number,
                    f"invalid UTF-8 at byte {exc.start} of the line",
                    "invalid UTF-8",
                )
                continue
            yield number, text.rstrip("\r\n")


# Shared page/link helpers ---------------------------------------------------------------------
def _invalid_category(reason: str) -> str:
    if "exceeds the limit" in reason:
        return "URL too long"
    return "empty URL" if reason == "empty URL" else "malformed URL"


class _Resolver:
    """Turns raw page references into node keys, caching each distinct value once."""

    def __init__(self, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
        self.graph = graph
        self.policy = policy
        self.normalize = normalize
        self._cache: dict[str, tuple[str, str]] = {}

    def key(self, value: str, path: Path, line: int, base: str | None = None) -> str | None:
        """The node key of ``value``, or None (non-web link counted, invalid reported)."""
        if base is None:
            resolved = self._cache.get(value)
            if resolved is None:
                resolved = resolve(value, None, self.normalize)
                if len(self._cache) < 4_000_000:
                    self._cache[value] = resolved
        else:
            resolved = resolve(value, base, self.normalize)
        kind, key = resolved
        if kind == NON_WEB:
            self.graph.non_web += 1
            return None
        if kind == INVALID:
            self.policy.bad(path, line, key, _invalid_category(key))
            return None
        return key

    def page_key(self, value: str, path: Path, line: int) -> str | None:
        """A crawled page's own URL: a non-web or identifier-less URL is a bad record."""
        kind, key = resolve(value, None, self.normalize)
        if kind == NON_WEB:
            self.policy.bad(path, line, f"page URL {value[:200]!r} is not a web URL", "non-web page URL")
            return None
        if kind == INVALID:
            self.policy.bad(path, line, key, _invalid_category(key))
            return None
        return key


# Formats -----------------------------------------------------------------------------------
_COMMENT = ("#", "%")


def _split_pair(text: str) -> list[str]:
    if "\t" in text:
        return text.split("\t")
    if "," in text:
        return text.split(",")
    return text.split()


def read_edges(
    path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool, reverse: bool = False
) -> None:
    """``source target [count]`` per line; ``reverse`` for files that list ``target source``.
    A third column is the link's ``count`` (the times it was seen, as a duplicate line counts);
    anything but a positive integer there, or a fourth column, is a bad record.

    A clean file is read by the vectorised reader (:mod:`linksim.loader.fast_edges`, the same
    result); one with anything else is read here, line by line, with ``file:line`` messages.
    """
    from linksim.loader.fast_edges import read_edges_fast

    if read_edges_fast(path, graph, normalize, reverse):
        return
    resolver = _Resolver(graph, policy, normalize)
    link = graph.link
    # Raw value -> page index: a page recurs in many lines, and is resolved only the first time.
    # Every page of an edge list belongs to the published graph: it counts as crawled.
    known: dict[str, int] = {}

    def node(value: str, number: int) -> int | None:
        key = resolver.key(value, path, number)
        if key is None:
            return None
        idx = known[value] = graph.page(key, crawled=True)
        return idx

    for number, text in read_lines(path, policy):
        stripped = text.strip()
        if not stripped or stripped.startswith(_COMMENT):
            continue
        fields = _split_pair(stripped)
        if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
            policy.bad(
                path,
                number,
                f"expected two columns (source, target), found {len([f for f in fields if f.strip()])}",
                "missing column",
            )
            continue
        count = 1
        if len(fields) > 2:
            extra = [f.strip() for f in fields[2:]]
            if any(extra[1:]):
                policy.bad(path, number, f"expected two or three columns (source, target, count), found "
                           f"{len([f for f in fields if f.strip()])}", "extra column")
                continue
            if extra[0]:
                count = _count(extra[0])
                if count is None:
                    policy.bad(path, number, "the third column is the link's count, a positive integer; "
                               f"found {extra[0][:40]!r}", "invalid count")
                    continue
        first, second = (fields[1], fields[0]) if reverse else (fields[0], fields[1])
        source = known.get(first)
        if source is None and (source := node(first, number)) is None:
            continue
        target = known.get(second)
        if target is None and (target := node(second, number)) is None:
            continue
        link(source, target, None, count)


MAX_COUNT = (1 << 63) - 1


def _count(text: str) -> int | None:
    """A link count (a positive integer in ASCII digits that an int64 holds), else None."""
    if not (text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if 0 < value <= MAX_COUNT else None


def read_cites(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
    """WebKB/LINQS ``.cites``: ``cited citing`` per line, the link goes citing -> cited."""
    read_edges(path, graph, policy, normalize, reverse=True)


_PAJEK_VERTEX = re.compile(r'^\s*(\d+)\s+(?:"((?:[^"\\]|\\.)*)"|(\S+))')


def read_pajek(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
    """Pajek ``.net``: ``*Vertices N``, ``id "label"``, then ``*Arcs`` / ``*Edges`` sections."""
    resolver = _Resolver(graph, policy, normalize)
    vertices: dict[int, int] = {}
    section = None
    declared = None
    for number, text in read_lines(path, policy):
        stripped = text.strip()
        if not stripped or stripped.startswith("%"):
            continue
        if stripped.startswith("*"):
            head = stripped.split()
            section = head[0].lower()
            if section == "*vertices":
                try:
                    declared = int(head[1])
                except (IndexError, ValueError):
                    policy.bad(path, number, "*Vertices needs a count", "malformed Pajek header")
            elif section not in ("*arcs", "*edges"):
                policy.bad(path, number, f"unsupported Pajek section {head[0]!r}", "unsupported section")
                section = None
            continue
        if section == "*vertices":
            match = _PAJEK_VERTEX.match(stripped)
            if match is None:
                policy.bad(path, number, "expected a vertex line `id \"label\"`", "malformed vertex")
                continue
            label = match.group(2) if match.group(2) is not None else match.group(3)
            key = resolver.page_key(label, path, number)
            if key is not None:
                vertices[int(match.group(1))] = graph.page(key, crawled=True)
        elif section in ("*arcs", "*edges"):
            fields = stripped.split()
            try:
                a, b = vertices[int(fields[0])], vertices[int(fields[1])]
            except (IndexError, ValueError):
                policy.bad(path, number, "expected `source target [weight]`", "missing column")
                continue
            except KeyError as exc:
                policy.bad(path, number, f"vertex {exc.args[0]} is not declared", "unknown vertex")
                continue
            graph.link(a, b)
            if section == "*edges" and a != b:
                graph.link(b, a)
        else:
            policy.bad(path, number, "data before any *Vertices/*Arcs/*Edges section", "malformed Pajek")
    if declared is not None and len(vertices) != declared and policy.on_error == "stop":
        raise InputError(path, None, f"*Vertices declares {declared:,} vertices, {len(vertices):,} found")


def read_jsonl(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
    """One crawled page per line: ``url`` (required), ``title``, ``links`` (URLs or objects with
    ``url`` and ``anchor``); other scalar fields become page properties. Relative links are
    resolved against the page URL."""
    resolver = _Resolver(graph, policy, normalize)
    for number, text in read_lines(path, policy, MAX_JSON_LINE_BYTES):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            policy.bad(path, number, f"invalid JSON ({exc.msg} at column {exc.colno})", "invalid JSON")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("url"), str):
            policy.bad(path, number, "a record needs a string field `url`", "missing column")
            continue
        key = resolver.page_key(record["url"], path, number)
        if key is None:
            continue
        title = record.get("title")
        properties = {
            k: v
            for k, v in record.items()
            if k not in ("url", "title", "links", "crawled", "host", "lastCrawled")
            and isinstance(v, (str, int, float, bool))
        }
        source = graph.page(
            key, complete=True, title=title if isinstance(title, str) else None, properties=properties
        )
        links = record.get("links") or []
        if not isinstance(links, list):
            policy.bad(path, number, "`links` must be a list", "malformed links")
            continue
        for item in links:
            anchor = None
            if isinstance(item, dict):
                anchor = item.get("anchor") if isinstance(item.get("anchor"), str) else None
                item = item.get("url")
            if not isinstance(item, str):
                policy.bad(path, number, "a link must be a URL string or {url, anchor}", "malformed links")
                continue
            target = resolver.key(item, path, number, base=key)
            if target is not None:
                graph.link(source, graph.page(target), anchor)


def _csv_rows(path: Path, policy: ErrorPolicy) -> Iterator[tuple[int, list[str], list[str]]]:
    """Yield ``(line, header, row)`` of a CSV file; malformed CSV is a bad record. With
    ``--on-error skip``, reading resumes at the line after the one where the bad record ended
    (a broken quote may have run over several lines: they are that one record)."""
    at = [0]  # the file's line number of the last line the csv module took

    def lines():
        for number, text in read_lines(path, policy, MAX_JSON_LINE_BYTES):
            at[0] = number
            yield text + "\n"

    source = lines()
    reader = csv.reader(source, strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        policy.bad(path, at[0], f"malformed CSV header ({exc})", "malformed CSV")
        return
    if header is None:
        return
    header = [name.strip() for name in header]
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            policy.bad(path, at[0], f"malformed CSV ({exc})", "malformed CSV")
            reader = csv.reader(source, strict=True)  # a new parser from the next line on
            continue
        yield at[0], header, row


def csv_kind(path: Path) -> str | None:
    """``pages`` or ``links`` by the header, None for a header-less edge list (its first line
    holds a URL or a number), ``unknown`` for a header that names neither."""
    try:
        with open_binary(path) as handle:
            first = handle.readline(MAX_LINE_BYTES).removeprefix(BOM).decode("utf-8", errors="replace")
    except (OSError, EOFError):
        return None
    fields = [c.strip().strip('"') for c in next(csv.reader([first]), [])]
    columns = {c.lower() for c in fields}
    if "url" in columns:
        return "pages"
    if {"source", "target"} <= columns:
        return "links"
    # Data, not a header: a first line with a URL or an id in it (a URL with commas splits into
    # several fields, only some of them URLs). A header names columns: words only.
    if not first.strip() or any(c.isdigit() or classify(c) != IDENTIFIER for c in fields if c):
        return None
    return "unknown"


def read_csv(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
    """A pages file (``url``, optional ``title``, further columns as properties) or a links file
    (``source``, ``target``, optional ``anchor``), told apart by the header."""
    resolver = _Resolver(graph, policy, normalize)
    kind = None
    for number, header, row in _csv_rows(path, policy):
        if kind is None:
            lower = [name.lower() for name in header]
            if "url" in lower:
                kind, url_at = "pages", lower.index("url")
                title_at = lower.index("title") if "title" in lower else None
                extra = [
                    (i, name)
                    for i, name in enumerate(header)
                    if i not in (url_at, title_at) and name and name.lower() not in ("crawled", "host", "lastcrawled")
                ]
            elif "source" in lower and "target" in lower:
                kind = "links"
                source_at, target_at = lower.index("source"), lower.index("target")
                anchor_at = lower.index("anchor") if "anchor" in lower else None
            else:
                policy.bad(
                    path,
                    1,
                    "missing column: a pages file needs a `url` column, a links file `source` "
                    f"and `target` columns; the header has {', '.join(header) or 'no columns'}",
                    "missing column",
                )
                return
        if len(row) != len(header):
            policy.bad(
                path, number, f"{len(row)} fields where the header has {len(header)}", "wrong field count"
            )
            continue
        if kind == "pages":
            key = resolver.page_key(row[url_at], path, number)
            if key is None:
                continue
            title = row[title_at] if title_at is not None and row[title_at] != "" else None
            properties = {name: row[i] for i, name in extra if row[i] != ""}
            graph.page(key, complete=True, title=title, properties=properties)
        else:
            source = resolver.key(row[source_at], path, number)
            target = resolver.key(row[target_at], path, number)
            if source is None or target is None:
                continue
            anchor = row[anchor_at] if anchor_at is not None and row[anchor_at] else None
            graph.link(graph.page(source), graph.page(target), anchor)
    if kind is None and path.stat().st_size > 0:
        policy.bad(path, None, "the CSV file has a header but no rows", "empty file")


WIKIPEDIA = "https://en.wikipedia.org/wiki/"


def read_wikispeedia(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
    """The SNAP Wikispeedia folder: ``articles.tsv``, ``links.tsv``, ``categories.tsv``.

    Each article becomes ``https://en.wikipedia.org/wiki/<name>`` with its decoded title and its
    categories (``subject.`` paths) as the list property ``categories``.
    """
    resolver = _Resolver(graph, policy, normalize)
    keys: dict[str, int] = {}

    def article(name: str, number: int, file: Path, crawled: bool) -> int | None:
        """An article's page; ``crawled`` for one of articles.tsv or one whose links are listed
        (an article only linked to or only categorised is a page linked to, as in any crawl)."""
        idx = keys.get(name)
        if idx is None:
            key = resolver.page_key(WIKIPEDIA + name, file, number)
            if key is None:
                return None
            idx = graph.page(key, crawled=crawled, title=unquote(name).replace("_", " "))
            keys[name] = idx
        elif crawled:
            graph.crawled[idx] = 1
        return idx

    def rows(name: str) -> Iterator[tuple[Path, int, list[str]]]:
        file = path / name
        for number, text in read_lines(file, policy):
            if text.strip() and not text.startswith("#"):
                yield file, number, text.split("\t")

    for file, number, fields in rows("articles.tsv"):  # links.tsv lists every article's links
        idx = article(fields[0].strip(), number, file, crawled=True)
        if idx is not None:
            graph.complete[idx] = 1
    categories: dict[int, list[str]] = {}
    if (path / "categories.tsv").exists():
        for file, number, fields in rows("categories.tsv"):
            if len(fields) < 2:
                policy.bad(file, number, "expected `article<TAB>category`", "missing column")
                continue
            idx = article(fields[0].strip(), number, file, crawled=False)
            if idx is not None:
                categories.setdefault(idx, []).append(fields[1].strip())
    for idx, values in categories.items():
        graph.page(graph.urls[idx], properties={"categories": values})
    for file, number, fields in rows("links.tsv"):
        if len(fields) < 2:
            policy.bad(file, number, "expected `source<TAB>target`", "missing column")
            continue
        source = article(fields[0].strip(), number, file, crawled=True)
        target = article(fields[1].strip(), number, file, crawled=False)
        if source is not None and target is not None:
            graph.link(source, target)


def _read_warc(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
    from linksim.loader.warc import read_warc

    read_warc(path, graph, policy, normalize)


def _read_wat(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
    from linksim.loader.warc import read_warc

    read_warc(path, graph, policy, normalize, wat=True)


def _read_wacz(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> None:
    from linksim.loader.wacz import read_wacz

    read_wacz(path, graph, policy, normalize)


def _read_ccgraph(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> str:
    from linksim.loader.ccgraph import read_ccgraph

    return read_ccgraph(path, graph, policy, normalize)


def _read_webgraph(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> str:
    from linksim.loader.webgraph import read_webgraph

    return read_webgraph(path, graph, policy, normalize)


def _read_link_table(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> str:
    from linksim.loader.linktable import read_link_table

    return read_link_table(path, graph, policy, normalize)


#: Each format's reader; one that returns a string says what it found (the summary shows it).
READERS: dict[str, Callable[[Path, CrawlGraph, ErrorPolicy, bool], str | None]] = {
    "edges": read_edges,
    "cites": read_cites,
    "csv": read_csv,
    "jsonl": read_jsonl,
    "pajek": read_pajek,
    "warc": _read_warc,
    "wat": _read_wat,
    "wacz": _read_wacz,
    "wikispeedia": read_wikispeedia,
    "ccgraph": _read_ccgraph,
    "webgraph": _read_webgraph,
    "linktable": _read_link_table,
}


def detect_format(path: Path) -> str:
    """The format of ``path`` from its name (``.gz`` ignored), or a clear error."""
    from linksim.loader.ccgraph import graph_files

    if path.is_dir():
        if (path / "articles.tsv").exists() and (path / "links.tsv").exists():
            return "wikispeedia"
        if graph_files(path) is not None:
            return "ccgraph"
        from linksim.loader.linktable import is_link_table

        if is_link_table(path):
            return "linktable"
        raise ConfigurationError(
            f"{path} is a folder but neither a Wikispeedia data set (articles.tsv and links.tsv), a link table "
            "of `linksim spark extract` nor a "
            "Common Crawl graph (*vertices.txt.gz and *edges.txt.gz); give the files inside it instead"
        )
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = Path(name).suffix
    if name.endswith(".wat"):  # Common Crawl's x.warc.wat.gz
        return "wat"
    if name.endswith((".warc", ".arc")):
        return "warc"
    if suffix == ".wacz":
        return "wacz"
    if name.endswith("vertices.txt") and graph_files(path) is not None:
        return "ccgraph"
    if suffix == ".net":
        return "pajek"
    if path.suffix in (".graph", ".properties"):
        from linksim.loader.webgraph import basename_of

        if basename_of(path) is not None:
            return "webgraph"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".cites":
        return "cites"
    if suffix == ".csv":
        return "csv" if csv_kind(path) else "edges"
    if suffix in (".tsv", ".txt", ".edges", ".el", ".edgelist"):
        return "edges"
    raise ConfigurationError(
        f"cannot tell the format of {path} from its name; give --format "
        f"({', '.join(FORMATS)})"
    )


def read_input(
    path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool, fmt: str | None = None
) -> str:
    """Read one input path into ``graph``; return the format used."""
    if not path.exists():
        raise UnreadableInput(path, "no such file or folder")
    fmt = fmt or detect_format(path)
    if fmt not in READERS:
        raise ConfigurationError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    try:
        found = READERS[fmt](path, graph, policy, normalize)
    except OSError as exc:  # readers report what is wrong inside a file; this is the file itself
        raise UnreadableInput(exc.filename or path, exc.strerror or str(exc)) from None
    return fmt if found is None else f"{fmt}: {found}"


__all__ = [
    "FORMATS",
    "ErrorPolicy",
    "InputError",
    "UnreadableInput",
    "detect_format",
    "read_input",
]
