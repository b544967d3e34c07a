"""URL normalisation and classification."""

import pytest

from linksim.loader.urls import IDENTIFIER, INVALID, MAX_URL_LENGTH, NON_WEB, WEB, host_of, resolve


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("HTTP://Example.COM/", "http://example.com/"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("http://example.com/a#section", "http://example.com/a"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com/%7euser", "http://example.com/~user"),
        ("http://example.com/%e2%82%ac", "http://example.com/%E2%82%AC"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("  http://example.com/pad  ", "http://example.com/pad"),
    ],
)
def test_web_urls_are_normalised(raw: str, expected: str) -> None:
    assert resolve(raw) == (WEB, expected)


def test_without_normalisation_only_the_fragment_goes() -> None:
    assert resolve("HTTP://Example.COM:80/a/./b#x", normalize=False) == (WEB, "http://Example.COM:80/a/./b")


@pytest.mark.parametrize(
    "href, expected",
    [
        ("b", "http://example.com/dir/b"),
        ("./b", "http://example.com/dir/b"),
        ("../up", "http://example.com/up"),
        ("/root", "http://example.com/root"),
        ("//other.org/x", "http://other.org/x"),
        ("?q=1", "http://example.com/dir/page?q=1"),
        ("#frag", "http://example.com/dir/page"),
    ],
)
def test_relative_links_resolve_against_the_page(href: str, expected: str) -> None:
    assert resolve(href, base="http://example.com/dir/page") == (WEB, expected)


@pytest.mark.parametrize("href", ["mailto:a@b.org", "javascript:void(0)", "ftp://x.org/f", "tel:+1", "data:,x"])
def test_non_web_links_are_classified(href: str) -> None:
    assert resolve(href, base="http://example.com/")[0] == NON_WEB


def test_identifiers_are_kept_verbatim() -> None:
    assert resolve("42") == (IDENTIFIER, "42")
    assert resolve(" Some_Page ") == (IDENTIFIER, "Some_Page")


def test_too_long_and_malformed_urls_are_invalid() -> None:
    kind, reason = resolve("http://example.com/" + "a" * 5000)
    assert kind == INVALID and f"exceeds the limit of {MAX_URL_LENGTH:,}" in reason
    assert resolve("http://example.com:99999/")[0] == INVALID
    assert resolve("http:///nohost")[0] == INVALID
    assert resolve("")[0] == INVALID


def test_host() -> None:
    assert host_of("http://example.com:8080/a") == "example.com"
    assert host_of("42") is None


def test_hosts_of_is_host_of_for_every_kind_of_key() -> None:
    """The vectorised hosts equal urlsplit's, URL by URL: user info (the last @ counts), ports,
    empty hosts, upper case, IPv6 literals and zones, control characters, non-ASCII, identifiers,
    and random strings over the characters that delimit an authority."""
    import random

    from linksim.loader.urls import host_of, hosts_of

    keys = [
        "http://example.org/", "HTTPS://Example.ORG:8080/a?b#c", "http://a@b@host:8/x", "http://host:8@x/",
        "http:///path", "http://:80/", "http://user@/", "http://host?x", "http://host#f", "http://[::1]:80/",
        "http://[FE80::1%25eth0]/", "http://ex\tample.org/", " http://lead.space/", "http://bücher.de/",
        "https://xn--bcher-kva.de/p", "42", "page-name", "ftp://files.example/", "http:", "http://", "hTtP://MiXeD/",
        "http://h\\x/", "http://a:b@c:d@e.f:9/g", "https://site3.example/p17",
    ]
    rng = random.Random(1)
    alphabet = "aB9.-_:@/?#[]%\\ é"
    keys += ["http" + rng.choice(["", "s"]) + "://" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
             for _ in range(3000)]

    def is_key(value: str) -> bool:  # what urlsplit refuses (a broken IPv6 literal) is never a key
        try:
            host_of(value)
        except ValueError:
            return False
        return True

    keys = [k for k in keys if is_key(k)]
    assert len(keys) > 2000
    assert hosts_of(keys) == [host_of(k) for k in keys]
    assert hosts_of([]) == []


def _joined_then_normalised(value: str, base: str, normalize: bool = True) -> tuple[str, str]:
    """A reference joined against its whole base every time, then resolved as an absolute URL:
    what the cached resolution must equal."""
    from urllib.parse import urljoin

    from linksim.loader.urls import classify

    value = value.strip()
    if value and classify(value) == IDENTIFIER:
        value = urljoin(base, value)
    return resolve(value, None, normalize)


BASES = ["http://h", "http://h/", "http://h/a;", "http://h/a/b;?q", "http://h/a/b?", "https://H.example:443/a/b/c.html", "http://h/a/b/", "http://h/a/b?x=/y/z#f/g",
         "http://h/a;p/b;q?r#s", "http://h/a/../b/./c", "https://xn--bcher-kva.example/d/é/f.html",
         "http://user@h:8080/a/b", "http://h/a/b#frag", "http://h?only", "http://h#only/x", "page42",
         "http://h/a//b/c", "HTTP://H/A/B/C", "http://h/%7Euser/dir/", "ftp://h/a/b", "http://h:99999/a/",
         "page42#x", "urn:x:y"]
HREFS = ["c", "./c", "../c", "../../../../c", "c/", "c?q", "c#f", "c?q#f", "/c", "/c/../d", "/", "//other/x",
         "?q", "#f", "", " c ", "..", ".", "c/./d/../e", "é/ü", "%7E/x", "c;p", "a:b", "mailto:x@y", "http://o/p#q",
         "HTTPS://O/P", "c d", "/%2F", "c%20d", "javascript:void(0)", "//", "///x", "./", "../", "c?", "c#", "c;#f", "c?#",
         "c;", "/c;#", "../c?q#f/g", "c#f#g", "#", "?#", "#other", "#f?q", "#/x"]


@pytest.mark.parametrize("normalize", [True, False])
def test_cached_resolution_equals_joining_against_the_whole_base(normalize: bool) -> None:
    """The relative references resolved once per scope (the base's origin or folder) give what
    joining each against its whole base gives, over bases with queries, fragments, params, ports,
    dot segments and IDNA hosts and references of every form; asked twice, in any order."""
    from linksim.loader import urls

    urls._RELATIVE.clear()
    for _ in range(2):
        for base in BASES + BASES[::-1]:
            for href in HREFS:
                assert resolve(href, base, normalize) == _joined_then_normalised(href, base, normalize), (base, href)
    assert urls._RELATIVE  # the cache was used


def _random_urls(seed: int, count: int) -> list[str]:
    """URLs near the edge of the already-normal form: hosts, ports, paths and queries drawn from
    the characters that url_normalize keeps, escapes, decodes or splits on."""
    import random

    draw = random.Random(seed)
    host_parts = ["a", "b1", "x-y", "ab--cd", "-a", "a-", "A", "0", "127", "xn--bcher-kva", "é", "a_b"]
    path_chars = "az09._~!$&'()*+,;=:@-/%7E[] \u00e9"
    query_chars = "az09._~:/?@!$'()*+,;=&%-"
    urls = []
    for _ in range(count):
        host = ".".join(draw.choice(host_parts) for _ in range(draw.randint(1, 3)))
        port = draw.choice(["", "", ":80", ":443", ":8000", ":0", ":65536", ":08"])
        path = "".join(draw.choice(path_chars) for _ in range(draw.randint(0, 12)))
        query = "".join(draw.choice(query_chars) for _ in range(draw.randint(0, 8)))
        scheme = draw.choice(["http", "https", "HTTP"])
        urls.append(f"{scheme}://{host}{port}{'/' if draw.random() < 0.8 else ''}{path}"
                    + (f"?{query}" if draw.random() < 0.4 else ""))
    urls += ["http://a.com/a/./b", "http://a.com/a/..", "http://a.com/?a==1", "http://a.com/?&a", "http://a.com"]
    return urls


def test_the_already_normal_shortcut_changes_no_key() -> None:
    """already_normal(u) holds only where url_normalize leaves u as it is and resolve keeps it
    (else a page would be two nodes, one from each path); and it holds often enough to matter."""
    from url_normalize import url_normalize

    from linksim.loader.urls import already_normal

    urls = _random_urls(7, 20000)
    shortcut = [url for url in urls if already_normal(url)]
    for url in shortcut:
        assert url_normalize(url) == url, url
        assert resolve(url) == (WEB, url), url
    assert len(shortcut) > 300
    assert not any(already_normal(url) for url in urls[-5:])


def test_joining_in_a_folder_gives_resolves_key() -> None:
    """join_in_folder(v, folder) is None or the key resolve(v, base) gives, for every base of the
    folder, on random references of dot, empty, unusual and escaped segments; and it answers for
    most of the plain ones (else the WARC reader's shortcut saves nothing)."""
    import random

    from linksim.loader.urls import folder_of, join_in_folder

    draw = random.Random(11)
    segments = ["a", "b", ".", "..", "", "x.html", "~u", "c-d", "e;f", "g:h", "%7E", "A", "?q", "#f", " s"]
    bases = ["http://h.org/", "http://h.org/a/p.html", "http://h.org/a/b/", "https://h.org:8080/a/./q",
             "http://H.org/a/", "http://h.org/a//b/p", "http://h.org:80/x/", "http://127.0.0.1:8000/std/vec/x.html",
             "http://h.org/a/p?x=1", "http://h.org"]
    answered = plain = 0
    for _ in range(20000):
        value = "/".join(draw.choice(segments) for _ in range(draw.randint(1, 5)))
        value = "/" + value if draw.random() < 0.2 else value
        base = draw.choice(bases)
        got = join_in_folder(value, folder_of(base))
        plain += all(s in ("a", "b", ".", "..", "x.html", "~u", "c-d", "A") for s in value.strip("/").split("/"))
        if got is not None:
            answered += 1
            assert resolve(value, base) == (WEB, got), (value, base)
    assert answered > plain / 2 > 1000
