"""Links spooled to disk: the same aggregated links, bit for bit, as in memory; a reader that gives
up takes back what it added, spilled or not; nothing is left on disk once the graph is closed."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from linksim.loader import CrawlGraph, fast_edges
from linksim.store import spool as crawl_graph
from linksim.loader.bulk import write_csv_files
from linksim.loader.readers import ErrorPolicy, read_edges


def random_links(seed: int, pages: int, links: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    # skewed sources (a few pages with many out-links, one with more than a partition) and
    # duplicates and self-loops
    source = np.minimum(rng.zipf(1.6, links) - 1, pages - 1)
    target = rng.integers(0, pages, links)
    target[::97] = source[::97]
    return source, target


def graph_with(source, target, pages: int, **spool) -> CrawlGraph:
    graph = CrawlGraph(**spool)
    for page in range(pages):
        graph.page(f"https://p{page}.example/")
    # in three calls, and link by link for a few: both ways into the spool
    cut = len(source) // 3
    graph.extend_links(source[:cut], target[:cut])
    for s, t in zip(source[cut:cut + 50].tolist(), target[cut:cut + 50].tolist()):
        graph.link(s, t)
    graph.extend_links(source[cut + 50:], target[cut + 50:])
    return graph


@pytest.mark.parametrize("partition", [64, 1000, 1 << 20])
def test_spooled_links_equal_the_links_in_memory(tmp_path, monkeypatch, partition):
    pages, total = 300, 20_000
    source, target = random_links(1, pages, total)
    memory = graph_with(source, target, pages).links()
    monkeypatch.setattr(crawl_graph, "PARTITION_LINKS", partition)
    with graph_with(source, target, pages, spool_links=1_000, spool_root=tmp_path) as graph:
        assert graph.spool.spilled > 0
        disk = graph.links()
        assert disk.folder is not None and graph.links() is disk  # aggregated once
        for name in ("source", "target", "count"):
            a, b = getattr(memory, name), getattr(disk, name)
            assert a.dtype == b.dtype == np.int64 and np.array_equal(a, b), name
        assert (disk.seen, disk.self_loops, disk.self_loops_seen, len(disk)) == (
            memory.seen, memory.self_loops, memory.self_loops_seen, len(memory))
        assert memory.self_loops > 0 and memory.duplicates > 0
        # chunk by chunk, the same arrays
        for links in (memory, disk):
            parts = list(links.chunks(777))
            assert all(len(p[0]) <= 777 for p in parts)
            assert np.array_equal(np.concatenate([p[1] for p in parts]), memory.target)
        # and the import tool's files are the same
        write_csv_files(graph, disk, tmp_path / "disk")
    with graph_with(source, target, pages) as small:
        write_csv_files(small, small.links(), tmp_path / "memory")
    for name in ("pages.csv", "links.csv"):
        assert (tmp_path / "disk" / name).read_bytes() == (tmp_path / "memory" / name).read_bytes()
    assert not list(tmp_path.glob("load-*")), "the spool folder outlived the graph"


def test_links_csv_reads_back_as_the_links(tmp_path):
    pages, total = 50, 3_000
    source, target = random_links(2, pages, total)
    with graph_with(source, target, pages, spool_links=500, spool_root=tmp_path) as graph:
        links = graph.links()
        _, rels = write_csv_files(graph, links, tmp_path / "csv")
        lines = rels.read_text().splitlines()
        assert lines[0] == ":START_ID(Page),:END_ID(Page),count:long"
        rows = np.array([[int(v) for v in line.split(",")] for line in lines[1:]])
        assert np.array_equal(rows[:, 0], links.source) and np.array_equal(rows[:, 1], links.target)
        assert np.array_equal(rows[:, 2], links.count) and rows[:, 2].sum() == total


@pytest.mark.parametrize("mark_at", [0, 700, 2_500])
def test_rollback_takes_back_pages_links_and_crawled_flags(tmp_path, mark_at):
    source, target = random_links(3, 100, 4_000)
    with CrawlGraph(spool_links=1_000, spool_root=tmp_path) as graph, CrawlGraph() as reference:
        for g in (graph, reference):
            for page in range(60):
                g.page(f"https://p{page}.example/", crawled=page % 2 == 0)
            g.extend_links(source[:mark_at] % 60, target[:mark_at] % 60)
        mark = graph.mark()
        for page in range(100):
            graph.page(f"https://p{page}.example/", crawled=True)
        graph.extend_links(source[mark_at:], target[mark_at:])
        assert graph.spool.spilled > 0
        graph.rollback(mark)
        assert graph.urls == reference.urls and graph.index == reference.index
        assert bytes(graph.crawled) == bytes(reference.crawled)
        assert graph.links_seen == mark_at
        # the graph goes on as if nothing had been added
        for g in (graph, reference):
            g.extend_links(target[:1_500] % 60, source[:1_500] % 60)
        a, b = graph.links(), reference.links()
        assert np.array_equal(a.source, b.source) and np.array_equal(a.target, b.target)
        assert np.array_equal(a.count, b.count) and a.seen == b.seen == mark_at + 1_500


def test_a_file_the_fast_reader_gives_up_on_late_leaves_the_line_reader_s_graph(tmp_path, monkeypatch):
    """The fast reader had spilled links of the file when it met a bad line near its end."""
    rows = [f"https://a{i % 300}.example/x\thttps://b{i % 211}.example/y" for i in range(20_000)]
    rows.insert(19_000, "https://a1.example/x\tmailto:someone@example.org")  # a non-web link
    path = tmp_path / "late.tsv.gz"
    path.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode()))
    monkeypatch.setattr(fast_edges, "BLOCK_BYTES", 4_096)
    given_up = []
    real = fast_edges.read_edges_fast

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        given_up.append(not result)
        return result

    monkeypatch.setattr(fast_edges, "read_edges_fast", spy)
    with CrawlGraph(spool_links=2_000, spool_root=tmp_path) as spooled, CrawlGraph() as plain:
        spooled.page("https://b0.example/y")  # a page from an earlier file, not crawled
        plain.page("https://b0.example/y")
        read_edges(path, spooled, ErrorPolicy("skip", spooled), True)
        assert given_up == [True]
        monkeypatch.setattr(fast_edges, "read_edges_fast", lambda *a, **k: False)
        read_edges(path, plain, ErrorPolicy("skip", plain), True)
        assert spooled.urls == plain.urls and bytes(spooled.crawled) == bytes(plain.crawled)
        assert spooled.non_web == plain.non_web == 1
        a, b = spooled.links(), plain.links()
        assert a.folder is not None and a.seen == b.seen == 20_000
        assert np.array_equal(a.source, b.source) and np.array_equal(a.count, b.count)


@pytest.mark.parametrize("first_count_at", [0, 1_500, 19_000])
def test_counted_links_spooled_equal_the_links_in_memory(tmp_path, first_count_at):
    """Counts summed per pair, the same in memory and on disk, whether the first count other than
    1 comes before, after or long after the first spill (the pairs before it each count once)."""
    pages, total = 300, 20_000
    source, target = random_links(2, pages, total)
    counts = np.ones(total, dtype=np.int64)
    counts[first_count_at::7] = np.arange(2, 2 + len(counts[first_count_at::7]))
    expected = {}
    for s, t, c in zip(source.tolist(), target.tolist(), counts.tolist()):
        expected[(s, t)] = expected.get((s, t), 0) + c
    results = []
    for spool in ({}, {"spool_links": 1_000, "spool_root": tmp_path}):
        graph = CrawlGraph(**spool)
        for page in range(pages):
            graph.page(f"https://p{page}.example/")
        half = total // 2
        graph.extend_links(source[:half], target[:half], counts[:half])
        for s, t, c in zip(source[half:half + 30].tolist(), target[half:half + 30].tolist(), counts[half:half + 30].tolist()):
            graph.link(s, t, None, c)
        graph.extend_links(source[half + 30:], target[half + 30:], counts[half + 30:])
        links = graph.links()
        results.append({(s, t): c for s, t, c in zip(links.source.tolist(), links.target.tolist(), links.count.tolist())})
        assert links.seen == total
        graph.close()
    assert results[0] == results[1] == expected


def test_taking_back_counted_links_takes_back_their_counts(tmp_path):
    graph = CrawlGraph(spool_links=10, spool_root=tmp_path)
    for page in range(5):
        graph.page(f"https://p{page}.example/")
    for _ in range(12):
        graph.link(0, 1)
    mark = graph.mark()
    graph.link(1, 2, None, 40)
    graph.extend_links(np.array([2, 3] * 6), np.array([3, 4] * 6), np.full(12, 9))
    graph.rollback(mark)
    graph.link(1, 2, None, 3)
    links = graph.links()
    assert dict(zip(zip(links.source.tolist(), links.target.tolist()), links.count.tolist())) == {(0, 1): 12, (1, 2): 3}
    graph.close()
