"""The link graph built from spooled links (the graph stream's bounded path) is the graph built in
memory, bit for bit, and so is every index built from it."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.graph import GraphError, LinkGraph
from linksim.methods import method
from linksim.store import spool as spool_module
from linksim.store.spool import LinkSpool


def pairs(seed: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    source = np.minimum(rng.zipf(1.5, m) - 1, n - 1)  # a hub with most of the out-links
    target = np.minimum(rng.zipf(1.8, m) - 1, n - 1)
    target[::50] = source[::50]  # self-loops
    return source, target


def spooled(source, target, tmp_path, limit: int) -> LinkSpool:
    spool = LinkSpool(limit=limit, root=tmp_path)
    for begin in range(0, len(source), 333):  # in chunks, as the stream's queries give them
        spool.extend(source[begin:begin + 333], target[begin:begin + 333])
    return spool


def same(a: LinkGraph, b: LinkGraph) -> None:
    for name in ("out_indptr", "out_indices", "in_indptr", "in_indices"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.n == b.n and a.keys == b.keys


@pytest.mark.parametrize("self_loops", [False, True])
@pytest.mark.parametrize("partition", [100, 1 << 22])
def test_the_graph_from_a_spool_on_disk_is_the_graph_from_memory(tmp_path, monkeypatch, self_loops, partition):
    n, m = 700, 12_000
    source, target = pairs(5, n, m)
    keys = [f"https://p{i}.example/" for i in range(n)]
    expected = LinkGraph.from_edges(source, target, n, keys=keys, self_loops=self_loops)
    monkeypatch.setattr(spool_module, "PARTITION_LINKS", partition)
    spool = spooled(source, target, tmp_path, limit=1_000)
    try:
        assert spool.spilled > 0
        same(LinkGraph.from_spool(spool, n, keys=keys, self_loops=self_loops), expected)
    finally:
        spool.close()
    small = spooled(source, target, tmp_path, limit=1 << 22)
    assert small.spilled == 0
    same(LinkGraph.from_spool(small, n, keys=keys, self_loops=self_loops), expected)
    assert not list(tmp_path.glob("load-*")), "a spool folder outlived its spool"


def test_an_index_of_the_spooled_graph_is_the_index_of_the_graph_in_memory(tmp_path):
    n, m = 1_500, 15_000
    source, target = pairs(6, n, m)
    spool = spooled(source, target, tmp_path, limit=2_000)
    try:
        from_disk = LinkGraph.from_spool(spool, n)
    finally:
        spool.close()
    in_memory = LinkGraph.from_edges(source, target, n)
    for name in ("simrank", "psimrank"):
        a = method(name).build_index(from_disk, n_fingerprints=10, length=5).store_arrays()
        b = method(name).build_index(in_memory, n_fingerprints=10, length=5).store_arrays()
        assert a.keys() == b.keys()
        for array in a:
            assert a[array].dtype == b[array].dtype and np.array_equal(a[array], b[array]), (name, array)


def test_a_page_out_of_range_is_refused(tmp_path):
    spool = spooled(np.array([0, 1, 5] * 400), np.array([1, 2, 0] * 400), tmp_path, limit=100)
    try:
        with pytest.raises(GraphError, match="page indices"):
            LinkGraph.from_spool(spool, 3)
    finally:
        spool.close()
