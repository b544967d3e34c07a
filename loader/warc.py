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

import bisect
import io
import json
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser
from warcio.archiveiterator import ArchiveIterator

from linksim.loader.graph import CrawlGraph
from linksim.loader.urls import NON_WEB, WEB, depends_on_folder_only, folder_of, resolve

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
) -> tuple[str | None, str, list[str], list[str]]:
    """(title, base URL, [href], their anchor texts) of an HTML document, its links in order."""
    tree = _parse(body, content_type)
    # The first <title> in document order: the head's if it has one (the head comes first), found
    # without walking the whole body as a search of the tree does.
    head = tree.head
    node = head.css_first("title") if head is not None else None
    if node is None:
        node = tree.css_first("title")
    title = node.text(strip=True) if node is not None else None
    base = page_url
    # A document without the bytes "<base" has no <base> element: spare the parser's search of it
    # (unless it is in UTF-16 or UTF-32, where the tag's bytes are not those: NULs tell).
    base_node = tree.css_first("base[href]") if _BASE_TAG(body) or b"\x00" in body[:4096] else None
    if base_node is not None:
        href = (base_node.attributes.get("href") or "").strip()
        if href:
            base = urljoin(page_url, href)
    # ``attrs.get`` reads the one attribute; ``attributes`` builds a dict of all of them first.
    # Two lists, not pairs: the resolver looks the references up all at once (_Resolver.targets).
    anchors = tree.css("a[href]")
    hrefs = [anchor.attrs.get("href") for anchor in anchors]
    if not all(hrefs):  # an empty href="" or a bare href: no link
        kept = [at for at, href in enumerate(hrefs) if href]
        hrefs, anchors = [hrefs[at] for at in kept], [anchors[at] for at in kept]
    return title or None, base, hrefs, AnchorTexts(anchors)


class AnchorTexts:
    """The anchor texts of a page's links, each read from its element when it is first asked
    for: a graph keeps one text a linked pair (:meth:`CrawlGraph.link_from`), and a page links
    the same page 2.6 times on average (the rust-doc crawl), so most are never read."""

    __slots__ = ("_anchors",)

    def __init__(self, anchors: list) -> None:
        self._anchors = anchors

    def __len__(self) -> int:
        return len(self._anchors)

    def __getitem__(self, at: int) -> str:
        return self._anchors[at].text(strip=True, separator=" ")

    def __iter__(self):
        return map(self.__getitem__, range(len(self._anchors)))

    def picked(self, kept: list[int]) -> "AnchorTexts":
        """The texts of the links at ``kept``, still unread."""
        return AnchorTexts([self._anchors[at] for at in kept])


_BASE_TAG = re.compile(rb"<base", re.IGNORECASE).search


class _Members:
    """The decompressed bytes of a (multi-member) gzip file, handed out as they come, remembering
    where each member starts in the file: a record's offset is its member's, as WARC indexes
    (CDX) give it."""

    def __init__(self, handle) -> None:
        self._file = handle
        self.starts: list[tuple[int, int]] = []  # (decompressed position, file offset) per member
        self._begin(0, 0)

    def _begin(self, position: int, offset: int) -> None:
        self._file.seek(offset)
        self._position, self._consumed = position, offset
        self._input, self._output, self._member = b"", b"", None

    def chunk(self) -> bytes:
        """The next decompressed bytes, as many as one read of the file gives; b"" at the end."""
        while not self._output:
            if self._member is None:
                self._input = self._input or self._file.read(1 << 16)
                if not self._input:
                    return b""  # the end of the file, between members
                self._member = zlib.decompressobj(31)
                if not self.starts or self.starts[-1][0] < self._position:
                    self.starts.append((self._position, self._consumed))
            chunk, self._input = self._input or self._file.read(1 << 16), b""
            if not chunk:
                raise EOFError("the file ends inside a gzip member")
            self._output = self._member.decompress(chunk)
            if self._member.eof:
                self._input = self._member.unused_data
                self._member = None
            self._consumed += len(chunk) - len(self._input)
        out, self._output = self._output, b""
        self._position += len(out)
        return out

    def offset_of(self, position: int) -> int:
        """The file offset of the member holding decompressed byte ``position``."""
        at = bisect.bisect_right(self.starts, (position, float("inf"))) - 1
        return self.starts[max(at, 0)][1]

    def reposition(self, position: int) -> None:
        """Go back or forward to decompressed byte ``position`` (from its member's start)."""
        at = max(bisect.bisect_right(self.starts, (position, float("inf"))) - 1, 0)
        member_position, offset = self.starts[at]
        del self.starts[at:]
        self._begin(member_position, offset)
        while self._position < position:
            out = self.chunk()
            if not out:
                break
            if self._position > position:  # the rest of this chunk is read next
                self._output = out[len(out) - (self._position - position):]
                self._position = position


class _Plain:
    """An uncompressed file read as :class:`_Members` reads a gzip one: offsets are positions."""

    def __init__(self, handle) -> None:
        self._file = handle

    def chunk(self) -> bytes:
        return self._file.read(1 << 18)

    def offset_of(self, position: int) -> int:
        return position

    def reposition(self, position: int) -> None:
        self._file.seek(position)


class _Framing(Exception):
    """A record whose framing is broken: its reason, whether the file simply ended, and where the
    record began (when known before its headers were read)."""

    def __init__(self, reason: str, truncated: bool = False, start: int | None = None) -> None:
        super().__init__(reason)
        self.truncated, self.start = truncated, start


class _Reader:
    """WARC records framed by their own headers: a ``WARC/`` line, header lines, an empty line,
    ``Content-Length`` bytes of block, then CRLF CRLF. A record whose framing does not hold (a
    length that overstates or understates its block, a file cut short, a missing header) is one
    error; reading resumes at the next ``CRLF CRLF WARC/`` after the bad record's first byte."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.buffer = bytearray()
        self.at = 0  # bytes of ``buffer`` already read
        self.position = 0  # decompressed bytes consumed

    def _more(self) -> bool:
        if self.at > (1 << 20):
            del self.buffer[: self.at]
            self.at = 0
        chunk = self.raw.chunk()
        self.buffer += chunk
        return bool(chunk)

    def _take(self, size: int) -> bytes:
        with memoryview(self.buffer) as view:  # one copy, not a slice's and then bytes'
            data = bytes(view[self.at : self.at + size])
        self.at += len(data)
        self.position += len(data)
        return data

    def read(self, size: int) -> bytes:
        while len(self.buffer) - self.at < size and self._more():
            pass
        return self._take(size)

    def peek(self, size: int) -> bytes:
        """The next ``size`` bytes (fewer at the end), not consumed; a gzip member cut short or
        corrupt is left for the next read to report."""
        try:
            while len(self.buffer) - self.at < size and self._more():
                pass
        except (EOFError, OSError, zlib.error):
            pass
        return bytes(self.buffer[self.at : self.at + size])

    def skip(self, size: int) -> int:
        done = 0
        while done < size:
            got = len(self.read(min(1 << 20, size - done)))
            if not got:
                break
            done += got
        return done

    def move_to(self, position: int) -> None:
        self.raw.reposition(position)
        self.buffer, self.at, self.position = bytearray(), 0, position

    def resynchronise(self, after: int) -> bool:
        """Move to the next record that begins after decompressed byte ``after``; False at the end."""
        self.move_to(after + 1)
        tail = b""
        while True:
            try:
                chunk = self.read(1 << 20)
            except (EOFError, OSError, zlib.error):
                return False
            if not chunk:
                return False
            window = tail + chunk
            found = window.find(_BOUNDARY)
            if found >= 0:
                self.move_to(self.position - len(window) + found + 4)
                return True
            tail = window[-(len(_BOUNDARY) - 1) :]

    def header_block(self) -> tuple[int, bytes | None]:
        """Where the record begins and its header lines (the version line first, the empty line
        last); None at a clean end of the file. Blank lines between records are passed over."""
        while True:  # the blank lines before the record
            while len(self.buffer) - self.at < 2 and self._more():
                pass
            start = self.position
            if self.buffer.startswith(b"\r\n", self.at):
                self._take(2)
            elif self.buffer.startswith(b"\n", self.at):
                self._take(1)
            elif self.at == len(self.buffer):
                return start, None
            else:
                break
        # The headers end at the first empty line: a line feed, then CRLF or another line feed.
        searched = 0
        while True:
            found = _HEADER_END(self.buffer, self.at + max(searched - 2, 0),
                                self.at + MAX_HEADER_BYTES + 2)
            if found is not None:
                return start, self._take(found.end() - self.at)
            searched = len(self.buffer) - self.at
            if searched >= MAX_HEADER_BYTES:
                raise _Framing(f"has headers over {MAX_HEADER_BYTES:,} bytes", start=start)
            if not self._more():
                raise _Framing("is truncated: the file ends inside its headers", truncated=True, start=start)


_HEADER_END = re.compile(rb"\n\r?\n").search
_BOUNDARY = b"\r\n\r\nWARC/"
MAX_HEADER_BYTES = 1 << 20


def _fields(header: bytes) -> tuple[str | None, int | None]:
    """(WARC-Type, Content-Length) of a header block; None for what is missing or malformed."""
    if not header.startswith(b"WARC/"):
        raise _Framing("does not begin with a WARC/ version line: the record before it announced a "
                       "wrong Content-Length, or this is not a WARC file")
    kind = length = None
    for line in header.split(b"\n")[1:]:
        name, colon, value = line.partition(b":")
        if not colon:
            continue
        name = name.strip().lower()
        if name == b"warc-type":
            kind = value.strip().decode("latin-1")
        elif name == b"content-length":
            text = value.strip()
            length = int(text) if text.isdigit() else None
    if kind is None or length is None:
        raise _Framing("has no WARC-Type or no valid Content-Length: the file is cut inside its "
                       "headers, or is not a WARC file")
    return kind, length


def _one_record(header: bytes, block: bytes):
    """The warcio record of one framed record (warcio reads the HTTP headers and the body)."""
    return next(iter(ArchiveIterator(io.BytesIO(header + block))))


def read_warc(path: Path, graph: CrawlGraph, policy, normalize: bool, wat: bool = False) -> None:
    """Add the HTML pages and links of one WARC (or WARC.gz) file to ``graph``; ``wat``: of a WAT
    file, Common Crawl's link metadata of a WARC file (:func:`_wat_page`).

    A record is added only once its whole block, and the CRLF CRLF that ends it, have been read:
    a record whose framing is broken (its ``Content-Length`` overstates or understates its block,
    the file ends inside it, its headers are missing) is a bad record named by its number and
    offset, never a page; with ``--on-error skip`` it is counted and reading resumes at the next
    record. A gzip file is read member by member, its records' offsets are their members'.
    """
    if path.stat().st_size == 0:
        policy.bad(path, None, "the file is empty: nothing to load", "empty file")
        return
    with open(path, "rb") as handle:  # an unreadable file is not a corrupt one: raised as it is
        read_warc_from(handle, path, graph, policy, normalize, wat)


def read_warc_from(handle, path: Path, graph: CrawlGraph, policy, normalize: bool, wat: bool = False) -> None:
    """:func:`read_warc` of an open, seekable binary ``handle`` (a file, a member of a WACZ
    package), named ``path`` in messages."""
    bad = "truncated or corrupt WARC"
    gzipped = handle.read(2) == b"\x1f\x8b"
    handle.seek(0)
    raw = _Members(handle) if gzipped else _Plain(handle)
    reader = _Reader(raw)
    resolver = _Resolver(graph, normalize)
    number = 0
    while True:
        start, where = reader.position, None
        try:
            start, header = reader.header_block()
            if header is None:
                return
            number += 1
            where = f"record {number} (offset {raw.offset_of(start):,})"
            page = _framed_record(reader, header, where, path, policy, normalize, wat)
        except _Framing as framing:
            if framing.start is not None:  # the headers were not read whole
                number += 1
                start = framing.start
                where = f"record {number} (offset {raw.offset_of(start):,})"
                if framing.truncated and number > 1:
                    policy.bad(path, None, f"the file is truncated after record {number - 1}: {where} "
                               f"{framing}", bad)
                    return
            policy.bad(path, None, f"{where} {framing}", bad)
        except (EOFError, OSError, zlib.error) as exc:  # a gzip member cut short or corrupt
            reason = _gzip_reason(exc)
            policy.bad(path, None, f"{where} is truncated or corrupt ({reason})" if where else
                       f"the file is truncated after record {number}: record {number + 1} (offset "
                       f"{raw.offset_of(start):,}) is cut inside its headers (a gzip member is cut "
                       f"short or corrupt: {reason})", bad)
            return
        else:
            if page is not None:
                _add_page(graph, page, resolver)
            continue
        if not reader.resynchronise(start):
            return


def _gzip_reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _framed_record(reader: _Reader, header: bytes, where: str, path: Path, policy,
                   normalize: bool, wat: bool = False) -> "_Page | None":
    """Read one record's block and its end; its page, or None for a record that is no page."""
    kind, length = _fields(header)
    keep = kind == ("metadata" if wat else "response")
    if keep and length <= MAX_HTML_BYTES + MAX_HEADER_BYTES:
        block = reader.read(length)
        got = len(block)
    else:  # a record that is no page, or too large to be one: its head tells which
        block = reader.read(min(length, 1 << 16)) if keep else b""
        got = len(block) + reader.skip(length - len(block))
    if got < length:
        raise _Framing(f"is truncated: the file ends inside its content ({length:,} bytes announced, "
                       f"{got:,} there)", truncated=True)
    end = reader.read(4)
    if end != b"\r\n\r\n":
        if len(end) < 4 and (end == b"\r\n\r\n"[: len(end)]):
            raise _Framing("is truncated: the file ends inside the CRLF CRLF after its content",
                           truncated=True)
        raise _Framing(f"has a block that does not end where its Content-Length ({length:,} bytes) says: "
                       f"CRLF CRLF expected there, found {end!r} (the length understates or overstates "
                       "the block)")
    following = reader.peek(5)
    if following and not b"WARC/".startswith(following) and following[:1] not in (b"\r", b"\n"):
        raise _Framing(f"is followed by {following!r} where the next record or the end of the file should "
                       f"be: its Content-Length ({length:,} bytes) understates its block")
    if not keep:
        return None
    if wat:
        return _wat_page(block, where, path, policy, normalize) if len(block) == length else None
    if len(block) < length:  # the head of a response too large to hold
        record = _one_record(header, block)
        if _is_html_page(record):
            policy.bad(path, None, f"{where}: HTML of {record.rec_headers.get_header('WARC-Target-URI')} "
                       f"exceeds {MAX_HTML_BYTES:,} bytes", "page too large")
        return None
    response = _plain_response(header, block)
    if response is None:
        response = _Response.of(_one_record(header, block))
    return _read_response(response, where, path, policy, normalize)


@dataclass
class _Response:
    """What a page is read from: a response record's target, HTTP status, ``Content-Type`` and
    ``Location``, and its body (None for a record that is no HTTP response)."""

    target: str | None
    status: str
    content_type: str
    location: str | None
    body: object  # () -> bytes, at most MAX_HTML_BYTES + 1 of them

    @classmethod
    def of(cls, record) -> "_Response | None":
        """From warcio's record (which undoes a chunked transfer and a content encoding)."""
        if record.rec_type != "response" or record.http_headers is None:
            return None
        headers = record.http_headers
        return cls(record.rec_headers.get_header("WARC-Target-URI"), headers.get_statuscode() or "",
                   (headers.get_header("Content-Type") or "").lower(), headers.get_header("Location"),
                   lambda: record.content_stream().read(MAX_HTML_BYTES + 1))


#: The HTTP headers of a response whose body warcio must decode (a chunked transfer, a compressed
#: content); a response with neither, the common case, is read here without warcio.
_ENCODED = (b"transfer-encoding", b"content-encoding")


def _plain_response(header: bytes, block: bytes) -> "_Response | None":
    """The response of a record whose block is a plain HTTP/1 response (status line, headers, an
    empty line, the body as sent), read without warcio; None for anything else (warcio reads it:
    an encoded body, a target that is no HTTP URL, a head warcio reads more leniently)."""
    target = None
    for line in header.split(b"\r\n")[1:]:
        name, colon, value = line.partition(b":")
        if colon and name.strip().lower() == b"warc-target-uri":
            target = _header_text(value.strip())
            break
    if target is None:
        return None
    # As warcio mends it (wget 1.19 writes it in angle brackets), and reads HTTP headers only for
    # the targets that begin so, case and all; bare line feeds and folded header lines are left to it.
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    target = target.replace(" ", "%20")
    if not target.startswith(("http:", "https:")) or not block.startswith(b"HTTP/"):
        return None
    end = block.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = block[:end].split(b"\r\n")
    status = lines[0].split(b" ", 2)
    if len(status) < 2 or not status[1].isdigit():
        return None
    fields: dict[bytes, bytes] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or b"\n" in line or line[:1] in (b" ", b"\t"):
            return None
        name = name.strip().lower()
        if name in _ENCODED:
            return None
        fields.setdefault(name, value.strip())
    content_type, location = fields.get(b"content-type"), fields.get(b"location")
    body = block[end + 4 :]
    return _Response(target, _header_text(status[1]), _header_text(content_type or b"").lower(),
                     None if location is None else _header_text(location), lambda: body[: MAX_HTML_BYTES + 1])


def _header_text(value: bytes) -> str:
    """A header's value as warcio decodes it: UTF-8, else Latin-1."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def _is_html_page(record) -> bool:
    if record.rec_type != "response" or record.http_headers is None:
        return False
    status = record.http_headers.get_statuscode() or ""
    content_type = (record.http_headers.get_header("Content-Type") or "").lower()
    return status.startswith("2") and "html" in content_type


@dataclass
class _Page:
    key: str
    title: str | None = None
    redirect: str | None = None
    base: str = ""
    # the links' references as written, resolved against ``base`` when the page is added
    # (_Resolver), and their anchor texts (a list, None where there is none, or AnchorTexts)
    hrefs: list = field(default_factory=list)
    texts: "list | AnchorTexts" = field(default_factory=list)
    where: str = ""  # file:record, for a malformed link


def _read_response(response: "_Response | None", where: str, path: Path, policy, normalize: bool) -> _Page | None:
    """The page of one response (None for what is not a crawled web page)."""
    if response is None:
        return None
    target = response.target
    if not target:
        return None
    status = response.status
    kind, page_key = resolve(target, None, normalize)
    if kind != WEB:
        return None
    if status.startswith("3"):
        location = response.location
        if not location:
            return None
        kind, target_key = resolve(location, page_key, normalize)
        return _Page(page_key, redirect=target_key) if kind == WEB else None
    content_type = response.content_type
    if not status.startswith("2") or "html" not in content_type:
        return None
    body = response.body()
    if len(body) > MAX_HTML_BYTES:
        policy.bad(path, None, f"{where}: HTML of {target} exceeds {MAX_HTML_BYTES:,} bytes", "page too large")
        return None
    title, base, hrefs, texts = _html_links(body, page_key, content_type)
    return _Page(page_key, title=title, base=base, hrefs=hrefs, texts=texts, where=f"{path}:{where}")


#: The links of a WAT record that are the HTML reader's (``a[href]``); the others are resources.
WAT_LINKS = ("A@/href",)


def _wat_page(block: bytes, where: str, path: Path, policy, normalize: bool) -> _Page | None:
    """The page of one WAT metadata record (Common Crawl's ``Envelope -> Payload-Metadata ->
    HTTP-Response-Metadata -> HTML-Metadata -> Links``): that of an HTML response, its title and
    its ``<a href>`` links resolved against its ``<base>``, or a redirect; None for the metadata of
    anything else (requests, other content, the WARC's own metadata)."""
    try:
        envelope = json.loads(block)["Envelope"]
        warc = envelope["WARC-Header-Metadata"]
    except (ValueError, KeyError, TypeError):
        policy.bad(path, None, f"{where} is not a WAT record (no JSON Envelope with WARC-Header-Metadata)",
                   "malformed WAT record")
        return None
    if warc.get("WARC-Type") != "response" or not isinstance(warc.get("WARC-Target-URI"), str):
        return None
    kind, page_key = resolve(warc["WARC-Target-URI"], None, normalize)
    http = (envelope.get("Payload-Metadata") or {}).get("HTTP-Response-Metadata") or {}
    if kind != WEB or not isinstance(http, dict):
        return None
    status = str((http.get("Response-Message") or {}).get("Status", ""))
    headers = {str(k).lower(): v for k, v in (http.get("Headers") or {}).items()}
    if status.startswith("3"):
        kind, target_key = resolve(str(headers.get("location") or ""), page_key, normalize)
        return _Page(page_key, redirect=target_key) if kind == WEB and headers.get("location") else None
    html = http.get("HTML-Metadata")
    if not status.startswith("2") or not isinstance(html, dict):
        return None
    head = html.get("Head") or {}
    title = head.get("Title") if isinstance(head.get("Title"), str) else None
    base = page_key
    if isinstance(head.get("Base"), str):
        kind, key = resolve(head["Base"], page_key, normalize)
        base = key if kind == WEB else page_key
    links = [link for link in html.get("Links") or []
             if isinstance(link, dict) and link.get("path") in WAT_LINKS and isinstance(link.get("url"), str)]
    return _Page(page_key, title=title.strip() or None if title else None, base=base,
                 hrefs=[link["url"] for link in links], texts=[link.get("text") for link in links],
                 where=f"{path}:{where}")


#: What a reference resolves to besides a page: a link of another scheme, a malformed one.
_NON_WEB, _MALFORMED = -1, -2


class _Resolver:
    """The links of one read resolved to page numbers of its graph. A site links the same
    references from every page of a folder (its navigation), and resolving and normalising each
    of them again was three quarters of a WARC read (``benchmarks/load.py --warc``): each
    reference is resolved once a folder (:func:`~linksim.loader.urls.folder_of`), and looked up
    after that. What depends on more than the folder (a bare query or fragment) is resolved
    each time. Forgets everything at :data:`LIMIT` references, to bound its memory."""

    LIMIT = 1 << 18

    def __init__(self, graph: CrawlGraph, normalize: bool) -> None:
        self.graph, self.normalize = graph, normalize
        self.folders: dict[str, dict[str, int]] = {}
        self.size = 0

    def targets(self, page: _Page) -> tuple[list[int], "list | AnchorTexts"]:
        """The page numbers of ``page``'s web links and their anchor texts, in the page's order;
        links of other schemes and malformed ones counted in the graph."""
        folder = folder_of(page.base)
        known = self.folders.get(folder) if folder is not None else None
        if known is None:
            if self.size >= self.LIMIT:
                self.folders.clear()
                self.size = 0
            known = {}
            if folder is not None:
                self.folders[folder] = known
        hrefs, texts = page.hrefs, page.texts
        # Looked up all at once (a folder's references are mostly known): Python steps only for
        # the new ones and for the links that are no web page.
        targets = list(map(known.get, hrefs))
        if None in targets:
            in_page = None  # what a bare fragment (#x) resolves to: the base itself, whatever the fragment
            for at, target in enumerate(targets):
                if target is not None:
                    continue
                href = hrefs[at]
                target = known.get(href)  # resolved at an earlier link of this page
                if target is None:
                    if href[:1] == "#":
                        if in_page is None:
                            in_page = self._resolve(href, page.base, known)
                        target = in_page
                    else:
                        target = self._defragmented(href, page.base, known)
                targets[at] = target
        if targets and min(targets) < 0:
            kept = []
            for at, target in enumerate(targets):
                if target >= 0:
                    kept.append(at)
                elif target == _NON_WEB:
                    self.graph.non_web += 1
                else:  # a broken href is the page's fault, not the file's: count, go on
                    self.graph.skipped.add("malformed link in HTML", page.where)
            targets = [targets[at] for at in kept]
            texts = texts.picked(kept) if isinstance(texts, AnchorTexts) else [texts[at] for at in kept]
        return targets, texts

    def _defragmented(self, href: str, base: str, known: dict[str, int]) -> int:
        """``href`` resolved, by the web page its fragment-less form resolved to if it is known."""
        cut = href.find("#")
        target = known.get(href[:cut]) if cut > 0 else None
        if target is None or target < 0:
            return self._resolve(href, base, known)
        self._remember(known, href, target)
        return target

    def _resolve(self, href: str, base: str, known: dict[str, int]) -> int:
        kind, key = resolve(href, base, self.normalize)
        target = self.graph.page(key) if kind == WEB else _NON_WEB if kind == NON_WEB else _MALFORMED
        if depends_on_folder_only(href):
            self._remember(known, href, target)
        return target

    def _remember(self, known: dict[str, int], href: str, target: int) -> None:
        """``href`` resolves to ``target`` for every page of ``known``'s folder, counted against :data:`LIMIT`."""
        known[href] = target
        self.size += 1


def _add_page(graph: CrawlGraph, page: _Page, resolver: _Resolver) -> None:
    source = graph.page(page.key, complete=True, title=page.title)
    if page.redirect is not None:
        graph.link(source, graph.page(page.redirect))
    if page.hrefs:
        graph.link_from(source, *resolver.targets(page))
