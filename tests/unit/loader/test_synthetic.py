"""`linksim generate` writes a crawl the loader reads back as the generated graph."""

from __future__ import annotations

import gzip

import numpy as np

from linksim.generate import generate_links
from linksim.loader import read_crawl
from linksim.loader.synthetic import page_hosts, write_synthetic_crawl


def test_the_loader_reads_back_the_generated_graph(tmp_path):
    links = 30_000
    crawl = write_synthetic_crawl(tmp_path / "crawl.tsv.gz", links, seed=4, show_progress=False)
    source = np.empty(links, np.int32)
    target = np.empty(links, np.int32)
    for _, _, pages in generate_links(links, 4, source=source, target=target):
        pass
    assert (crawl.links, crawl.pages) == (links, pages)
    graph, read, summary = read_crawl([crawl.path])
    assert summary.links_seen == links and summary.formats == ["edges"]
    assert len(graph) == pages
    number = {url: int(url.rsplit("/p", 1)[1]) for url in graph.urls}
    pairs = {(number[graph.urls[s]], number[graph.urls[t]]) for s, t in zip(read.source, read.target)}
    assert pairs == set(zip(source.tolist(), target.tolist()))
    hosts = page_hosts(pages, crawl.hosts)
    for url, n in list(number.items())[:500]:
        assert url == f"https://site{hosts[n]}.example/p{n}"
    assert [p.name for p in tmp_path.iterdir()] == ["crawl.tsv.gz"]  # no work files left


def test_same_seed_same_bytes(tmp_path):
    a = write_synthetic_crawl(tmp_path / "a.tsv.gz", 5_000, seed=9, show_progress=False)
    b = write_synthetic_crawl(tmp_path / "b.tsv.gz", 5_000, seed=9, show_progress=False)
    assert gzip.decompress(a.path.read_bytes()) == gzip.decompress(b.path.read_bytes())


def test_hosts_are_skewed():
    hosts = np.bincount(page_hosts(100_000, 2_000), minlength=2_000)
    assert hosts.sum() == 100_000 and hosts.max() > 20 * np.median(hosts[hosts > 0])
