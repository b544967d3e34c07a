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
