"""The vectorised edge-list reader gives exactly what the line reader gives, or gives way to it."""

from __future__ import annotations

import gzip
import random

import numpy as np
import pytest

from linksim.loader import CrawlGraph
from linksim.loader import fast_edges
from linksim.loader.fast_edges import CANONICAL, read_edges_fast
from linksim.loader.readers import ErrorPolicy, read_edges
from linksim.loader.urls import WEB, IDENTIFIER, resolve


def line_by_line(path, normalize=True, reverse=False, graph=None):
    graph = graph or CrawlGraph()
    real = fast_edges.read_edges_fast
    fast_edges.read_edges_fast = lambda *args, **kwargs: False
    try:
        read_edges(path, graph, ErrorPolicy("stop", graph), normalize, reverse)
    finally:
        fast_edges.read_edges_fast = real
    return graph


def same(a: CrawlGraph, b: CrawlGraph) -> None:
    assert a.urls == b.urls and a.index == b.index and bytes(a.crawled) == bytes(b.crawled)
    la, lb = a.links(), b.links()
    assert np.array_equal(la.source, lb.source) and np.array_equal(la.target, lb.target)
    assert np.array_equal(la.count, lb.count) and la.seen == lb.seen and a.non_web == b.non_web


CASES = {
    "tabs.tsv": "# a comment\nhttp://A.example/x\thttp://b.example/y/./z\n\nhttp://b.example/y/z\thttp://a.example/x\n"
                "% another\n  http://c.example/\thttp://a.example/x\n",
    "counts.tsv": "1\t2\t5\n2\t3\t1\n1\t2\t2\n3\t1\t900000000000\n",  # a count column: summed per pair
    "counts.txt": "1 2 5\n2 3    1\n",
    "some_counts.tsv": "1\t2\t5\n2\t3\n1\t2\n",  # counts on some lines: read line by line
    "ids.tsv": "1 2\n2 3\n3\t1\n",  # a mix of separators: read line by line
    "commas.csv": "1,2\n2,3\n3,1\n3,1\n",
    "spaces.txt": "  10   20  \n20 30\r\n30 10\n10 10\n",
    "crlf.tsv": "https://x.example/a\thttps://x.example/b\r\nhttps://x.example/b\thttps://x.example/a\r\n",
    "mailto.tsv": "http://a.example/\tmailto:me@a.example\nhttp://a.example/\thttp://b.example/\n",
    "unicode.tsv": "http://a.example/é\thttp://b.example/\n",
    "nolastline.tsv": "1\t2\n2\t3",
    "tab_in_comment.csv": "# a\ttab in a comment\n1,2\n2,3\n",  # the separator of the data lines: a comma
    "comma_in_url.tsv": "http://a.example/x,y\thttp://b.example/\nhttp://b.example/\thttp://a.example/x,y\n",
    "tabs_and_commas.txt": "1\t2\n2,3\n",  # a mix of separators: read line by line
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("compress", [False, True])
def test_the_same_graph_as_the_line_reader(tmp_path, name, compress):
    path = tmp_path / (name + (".gz" if compress else ""))
    data = CASES[name].encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    for normalize in (True, False):
        for reverse in (False, True):
            fast = CrawlGraph()
            read_edges(path, fast, ErrorPolicy("stop", fast), normalize, reverse)
            same(fast, line_by_line(path, normalize, reverse))


def test_clean_files_take_the_fast_path_and_others_give_way(tmp_path):
    for name, taken in [("tabs.tsv", True), ("commas.csv", True), ("spaces.txt", True), ("crlf.tsv", True),
                        ("tab_in_comment.csv", True), ("comma_in_url.tsv", True), ("counts.tsv", True),
                        ("counts.txt", True), ("some_counts.tsv", False),
                        ("ids.tsv", False), ("mailto.tsv", False), ("unicode.tsv", False),
                        ("tabs_and_commas.txt", False)]:
        path = tmp_path / name
        path.write_text(CASES[name])
        graph = CrawlGraph()
        assert read_edges_fast(path, graph, True) is taken, name
        if not taken:
            assert len(graph) == 0 and graph.links_seen == 0  # gave way having changed nothing


def test_a_second_file_adds_to_the_pages_of_the_first(tmp_path):
    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    first.write_text("1\t2\n2\t3\n")
    second.write_text("3\t4\n4\t1\n5\t2\n")
    fast = CrawlGraph()
    for path in (first, second):
        read_edges(path, fast, ErrorPolicy("stop", fast), True)
    slow = line_by_line(second, graph=line_by_line(first))
    same(fast, slow)


def test_blocks_split_anywhere_give_the_same_graph(tmp_path, monkeypatch):
    rng = random.Random(3)
    lines = [f"https://h{rng.randrange(50)}.example/p{rng.randrange(400)}\thttps://h{rng.randrange(50)}.example/"
             f"p{rng.randrange(400)}" for _ in range(5_000)]
    path = tmp_path / "big.tsv.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    monkeypatch.setattr(fast_edges, "BLOCK_BYTES", 4_099)  # many blocks, cut mid-line
    fast = CrawlGraph()
    assert read_edges_fast(path, fast, True)
    same(fast, line_by_line(path))


def test_a_truncated_gzip_gives_way_to_the_line_reader(tmp_path):
    path = tmp_path / "cut.tsv.gz"
    path.write_bytes(gzip.compress(("\n".join(f"{i}\t{i + 1}" for i in range(50_000)) + "\n").encode())[:-200])
    assert read_edges_fast(path, CrawlGraph(), True) is False


@pytest.mark.parametrize("value", [
    "https://site1.example/p1", "http://a.b/", "http://a-b.c/x-y_z.html", "http://a.b/x.", "http://a.b/~x/",
    "http://1.2.3.4/a", "http://a.b/.x", "http://a.b/..x/y", "12345", "0",
])
def test_canonical_values_are_their_own_keys(value):
    import re

    assert re.match(CANONICAL, value)
    for normalize in (True, False):
        assert resolve(value, None, normalize) in ((WEB, value), (IDENTIFIER, value))


@pytest.mark.parametrize("value", [
    "HTTP://a.b/", "http://A.b/", "http://a.b", "http://a.b:80/", "http://a.b/x/./y", "http://a.b/x//y",
    "http://a.b/x/..", "http://a.b/.", "http://a.b/A%7e", "http://a.b/?q=1", "http://a.b/#f", "http://-a.b/",
    "http://a.b./", "ftp://a.b/", " 12", "a b", "http://a..b/",
])
def test_values_normalisation_may_change_are_not_canonical(value):
    import re

    assert not re.match(CANONICAL, value)


def test_a_count_column_is_the_times_a_link_was_seen(tmp_path):
    path = tmp_path / "counts.tsv"
    path.write_text(CASES["counts.tsv"])
    for graph in (line_by_line(path), None):
        if graph is None:
            graph = CrawlGraph()
            assert read_edges_fast(path, graph, True)
        links = graph.links()
        by_pair = {(graph.urls[s], graph.urls[t]): int(c) for s, t, c in zip(links.source, links.target, links.count)}
        assert by_pair == {("1", "2"): 7, ("2", "3"): 1, ("3", "1"): 900_000_000_000}
        assert links.seen == 4  # lines read
