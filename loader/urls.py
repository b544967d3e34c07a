"""URL normalisation for crawled links.

With normalisation on (the default), a web URL (``http`` or ``https``) is rewritten to one
canonical form, so that the same page reached by different spellings becomes one node:

- scheme and host lower-cased, international host names in IDNA (punycode) form;
- the default port dropped (``:80`` for http, ``:443`` for https);
- the fragment (``#...``) dropped: it names a place in the page, not another page;
- dot segments (``/a/./b/../c``) resolved, an empty path written as ``/``;
- percent-encoding normalised: hex digits upper-cased, unreserved characters decoded
  (``%7E`` -> ``~``), characters that must be encoded (spaces, non-ASCII) encoded;
- relative links resolved against the page URL (and the HTML ``<base>``) by the readers.

Links with another scheme (``mailto:``, ``javascript:``, ``ftp:``, ``tel:``, ``data:`` ...) are
not web pages: they are skipped and counted. A value without a scheme (``42``, a page name) is
an identifier, kept as it is apart from surrounding white space: crawls published as integer ids
(cnr-2000) load unchanged.

With ``--no-normalize`` web URLs are kept verbatim (fragments and relative links still resolved
against their page, since a relative link has no meaning on its own).
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urldefrag, urljoin, urlsplit

from url_normalize import url_normalize

WEB_SCHEMES = frozenset({"http", "https"})
MAX_URL_LENGTH = 4096

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")

WEB, IDENTIFIER, NON_WEB, INVALID = "web", "id", "non-web", "invalid"


def classify(value: str) -> str:
    """``web`` (http/https URL), ``non-web`` (another scheme) or ``id`` (no scheme)."""
    match = _SCHEME.match(value)
    if match is None:
        return IDENTIFIER
    scheme = match.group(1).lower()
    if scheme in WEB_SCHEMES:
        return WEB
    # "localhost:8080/x" or "c:" style values: a one-letter scheme or a port-looking rest is
    # rare in crawls; RFC 3986 says it is a scheme, and so do we.
    return NON_WEB


#: A web URL in the form url_normalize gives it back unchanged: lower-case http(s) scheme and
#: ASCII host (labels without "--", so no IDNA label), a port that is not the default, a path of
#: non-empty segments of characters that need no escape (no "%"), a query of non-empty
#: ``key[=value]`` parameters of such characters, no fragment. Most links of a crawl are so
#: written, and url_normalize took a fifth of a WARC read for them.
_NORMAL = re.compile(
    r"(https?)://((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)"
    r"(?::([1-9][0-9]{0,4}))?"
    r"(/(?:[A-Za-z0-9._~!$&'()*+,;=:@-]+(?:/[A-Za-z0-9._~!$&'()*+,;=:@-]+)*/?)?)"
    r"(?:\?[A-Za-z0-9._~:/?@!$'()*+,;-]+(?:=[A-Za-z0-9._~:/?@!$'()*+,;-]*)?"
    r"(?:&[A-Za-z0-9._~:/?@!$'()*+,;-]+(?:=[A-Za-z0-9._~:/?@!$'()*+,;-]*)?)*)?\Z"
).match
_DEFAULT_PORT = {"http": "80", "https": "443"}


def already_normal(url: str) -> bool:
    """Whether ``url`` is a web URL that :func:`normalize_url` returns unchanged (:data:`_NORMAL`,
    no dot segment, no "--" in the host, no default or out-of-range port)."""
    match = _NORMAL(url)
    if match is None:
        return False
    scheme, host, port, path = match.groups()
    if "--" in host or (port is not None and (port == _DEFAULT_PORT[scheme] or int(port) > 65535)):
        return False
    return "/./" not in path + "/" and "/../" not in path + "/"


@lru_cache(maxsize=1 << 18)
def normalize_url(url: str) -> str:
    """Normalise one absolute web URL (see the module docstring).

    Raises
    ------
    ValueError
        If the URL cannot be parsed (bad port, bad IPv6 literal, bad host).
    """
    if already_normal(url):
        return url
    url = urldefrag(url.strip())[0]
    parts = urlsplit(url)  # raises ValueError on a malformed netloc
    if not parts.hostname:
        raise ValueError("no host name")
    parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    return url_normalize(url)


def resolve(value: str, base: str | None = None, normalize: bool = True) -> tuple[str, str]:
    """Turn one page reference into a node key.

    Parameters
    ----------
    value : str
        The URL or identifier as found in the input.
    base : str, optional
        The URL of the page the link was found on; relative references are resolved against it.
    normalize : bool
        Normalise web URLs (default).

    Returns
    -------
    (kind, key)
        ``kind`` is ``web``, ``id``, ``non-web`` or ``invalid``; ``key`` is the URL or identifier
        to store (for ``non-web`` the value, for ``invalid`` the reason).
    """
    value = value.strip()
    if not value:
        return INVALID, "empty URL"
    if len(value) > MAX_URL_LENGTH:
        return INVALID, f"URL of {len(value):,} characters exceeds the limit of {MAX_URL_LENGTH:,}"
    kind = classify(value)
    if kind == IDENTIFIER and base is not None:
        return _relative(value, base, normalize)
    return _absolute(value, kind, normalize)


def _absolute(value: str, kind: str, normalize: bool) -> tuple[str, str]:
    if kind == NON_WEB:
        return NON_WEB, value
    if kind == IDENTIFIER:
        return IDENTIFIER, value
    try:
        # Without its fragment first, so that the spellings of one page share normalize_url's cache
        # (urldefrag, as normalize_url applies it: a URL without "#" is left as it is).
        key = normalize_url(urldefrag(value)[0] if "#" in value else value) if normalize else urldefrag(value)[0]
    except (ValueError, UnicodeError) as exc:
        return INVALID, f"malformed URL {value[:200]!r}: {exc}"
    if len(key) > MAX_URL_LENGTH:
        return INVALID, f"URL of {len(key):,} characters exceeds the limit of {MAX_URL_LENGTH:,}"
    return WEB, key


#: Resolved relative references by (scope, reference, normalise): a site's navigation links the
#: same relative URLs from every page of a folder, and joining and normalising them again took
#: three quarters of a WARC load (benchmarks/load.py --warc). Emptied when it reaches the limit
#: (about 300 bytes an entry) and when a load's read ends (:func:`forget_resolved`).
_RELATIVE: dict[tuple[str, str, bool], tuple[str, str]] = {}
_RELATIVE_LIMIT = 1 << 18


def forget_resolved() -> None:
    """Let go of the references resolved so far (a long-lived process between loads)."""
    _RELATIVE.clear()
    _LAST_BASE[0] = _LAST_BASE[1] = None


#: A relative reference joined without urljoin (:func:`join_in_folder`): path characters that
#: need no escape, no ":" or ";" (a scheme, urlparse's parameters), no query, fragment or "%".
_PLAIN_REFERENCE = re.compile(r"[A-Za-z0-9._~!$&'()*+,=@/-]+\Z").match


def join_in_folder(value: str, folder: str) -> str | None:
    """The key :func:`resolve` gives ``value`` against any base of ``folder`` (:func:`folder_of`;
    for an absolute path, the origin of :func:`_scopes` will do), for a plain relative path whose
    join is already normal: joined and its dot segments removed here (RFC 3986, 5.2), at a
    fraction of urljoin's and the normaliser's cost. None for anything else (urljoin's turn): a
    site's navigation makes each folder's references distinct, and joining them was the largest
    part of a WARC read after the parser."""
    if not _PLAIN_REFERENCE(value) or "//" in value:
        return None
    start = folder.find("://")
    slash = folder.find("/", start + 3) if start > 0 else -1
    if value[0] == "/" and start > 0:
        origin, path = (folder if slash < 0 else folder[:slash]), value
    elif slash < 0 or "//" in folder[slash:]:
        return None  # urljoin drops the empty segments of a relative join: left to it
    else:
        origin, path = folder[:slash], folder[slash:] + value
    if "." in path:
        path = _without_dot_segments(path)
    url = origin + path
    return url if len(url) <= MAX_URL_LENGTH and already_normal(url) else None


def _without_dot_segments(path: str) -> str:
    """``path`` (absolute, without empty segments) with its "." and ".." segments resolved as
    urljoin resolves them (a ".." above the root is dropped)."""
    segments = path.split("/")
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments[-1] in (".", ".."):
        kept.append("")
    joined = "/".join(kept)
    return joined if joined.startswith("/") else "/" + joined


def folder_of(base: str) -> str | None:
    """The part of ``base`` that a reference other than a bare query or fragment is resolved
    against (:func:`_scopes`: its origin and folder); None for a base that is no URL."""
    scopes = _scopes(base)
    return None if scopes is None else scopes[1]


def depends_on_folder_only(value: str) -> bool:
    """Whether ``value`` resolves the same against every base of one :func:`folder_of`: all but
    an empty reference, a bare query (``?q``) and a bare fragment (``#f``), which read the rest."""
    value = value.strip()
    return bool(value) and value[0] not in "#?"


def _scopes(base: str) -> tuple[str, str] | None:
    """(origin, folder) of ``base``: what ``urljoin(base, value)`` reads of it for a reference
    ``value`` that is an absolute path, and for a relative path (RFC 3986, 5.2.2-5.2.3: the base's
    last segment, query and fragment are not read); None for a base that is no URL."""
    authority = base.find("://")
    if authority < 0:
        return None
    end = len(base)
    for mark in ("?", "#"):
        at = base.find(mark, authority + 3)
        if at >= 0:
            end = min(end, at)
    path = base.find("/", authority + 3, end)
    origin = base[:end] if path < 0 else base[:path]
    last = base.rfind("/", authority + 3, end)
    return origin, base[:end] + "/" if last < 0 else base[: last + 1]


_LAST_BASE: list = [None, None]  # the base last asked for and its scopes: a page's links share it


def _relative(value: str, base: str, normalize: bool) -> tuple[str, str]:
    """:func:`resolve` of a reference without a scheme, against ``base``: joined against the
    part of the base it reads (:func:`_scopes`), once for every page that shares it. A fragment
    names a place in a web page: the reference is resolved without it, and a fragment alone is
    the base itself (whatever the fragment, once a base). What resolves to no web URL (an
    identifier, another scheme, a malformed URL) keeps its fragment and is joined as it is."""
    found = None
    if value.startswith("#"):
        # The base is its own key, unless urljoin reads a ";" in it as urlparse's parameters.
        if normalize and ";" not in base and already_normal(base):
            return WEB, base
        found = _cached((base, "#", normalize), base, value)
    elif not value.startswith(("?", "//")):
        if _LAST_BASE[0] != base:
            _LAST_BASE[0], _LAST_BASE[1] = base, _scopes(base)
        scopes = _LAST_BASE[1]
        if scopes is not None:
            hash_at = value.find("#")
            part = value if hash_at < 0 else value[:hash_at]
            scope = scopes[0] if part.startswith("/") else scopes[1]
            found = _cached((scope, part, normalize), scope, part)
    if found is None:
        joined = urljoin(base, value)
        found = _absolute(joined, classify(joined), normalize)
    return found


def _cached(key: tuple[str, str, bool], base: str, value: str) -> tuple[str, str] | None:
    """``value`` resolved against ``base``, kept in :data:`_RELATIVE` under ``key``; None where
    it is no web URL (the caller resolves it as written)."""
    found = _RELATIVE.get(key)
    if found is None:
        plain = join_in_folder(value, base) if key[2] else None
        if plain is not None:
            found = WEB, plain
        else:
            joined = urljoin(base, value)
            found = _absolute(joined, classify(joined), key[2])
        if found[0] != WEB:
            return None
        if len(_RELATIVE) >= _RELATIVE_LIMIT:
            _RELATIVE.clear()
        _RELATIVE[key] = found
    return found


def host_of(key: str) -> str | None:
    """The host of a web URL key, None for an identifier."""
    if classify(key) != WEB:
        return None
    return urlsplit(key).hostname


# The host of an http(s) URL whose authority is ``host[:port]`` with no user info, bracket, "%" or
# white space: what urlsplit(key).hostname gives, lower-cased (empty: None). Anything else goes to
# host_of. One match a URL: about 0.65 us where urlsplit takes 3.8 us (1.1M URLs of the generated
# 10M-link crawl: 0.72 s against 4.2 s).
_PLAIN_HOST = re.compile(r"(?i:https?)://([^/?#@\[\]%:\s]*)(?::[^/?#@\[\]\s]*)?(?=[/?#]|\Z)").match


def hosts_of(keys: list[str]) -> list[str | None]:
    """:func:`host_of` of every key, the same values, the plain web URLs by one regular expression."""
    hosts: list[str | None] = []
    add = hosts.append
    for key in keys:
        match = _PLAIN_HOST(key)
        if match is None:
            add(host_of(key))
        else:
            host = match.group(1)
            add(host.lower() if host else None)
    return hosts


def stored_key(url: str) -> str:
    """``url`` as the loader stores it (normalised web URL, or an identifier as it is); a value
    that names no page (empty, non-web or malformed) is a :class:`~linksim.errors.ConfigurationError`."""
    from linksim.errors import ConfigurationError

    kind, key = resolve(url)
    if kind not in (WEB, IDENTIFIER):
        raise ConfigurationError(f"{url!r} is not a page URL ({key if kind == INVALID else 'a non-web link'})")
    return key
