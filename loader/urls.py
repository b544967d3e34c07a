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


@lru_cache(maxsize=1 << 18)
def normalize_url(url: str) -> str:
    """Normalise one absolute web URL (see the module docstring).

    Raises
    ------
    ValueError
        If the URL cannot be parsed (bad port, bad IPv6 literal, bad host).
    """
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
        value = urljoin(base, value)
        kind = classify(value)
    if kind == NON_WEB:
        return NON_WEB, value
    if kind == IDENTIFIER:
        return IDENTIFIER, value
    try:
        key = normalize_url(value) if normalize else urldefrag(value)[0]
    except (ValueError, UnicodeError) as exc:
        return INVALID, f"malformed URL {value[:200]!r}: {exc}"
    if len(key) > MAX_URL_LENGTH:
        return INVALID, f"URL of {len(key):,} characters exceeds the limit of {MAX_URL_LENGTH:,}"
    return WEB, key


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
