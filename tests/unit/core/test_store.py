"""The index store: what is saved is what is loaded, and a wrong index is refused with a hint."""

from __future__ import annotations

import json

import numpy as np
import pytest

from linksim import store
from linksim.fingerprints import build_index, build_minhash_index, graph_fingerprint
from linksim.graph import LinkGraph


def random_graph(seed: int, n: int = 50, m: int = 160, keys=None) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n, keys=keys)


def build(method: str, graph: LinkGraph, **kwargs):
    if method == "xjaccard":
        return build_minhash_index(graph, n_fingerprints=20, seed=3, **kwargs)
    return build_index(graph, method, n_fingerprints=20, seed=3, **kwargs)


@pytest.mark.parametrize("method", ["simrank", "psimrank", "xjaccard"])
def test_round_trip_answers_the_same(tmp_path, method: str) -> None:
    graph = random_graph(1)
    index = build(method, graph, decay=0.7)
    store.save(index, tmp_path, method, graph.n, graph.m)
    loaded = store.load(tmp_path, method, graph_fingerprint(graph))
    assert store.parameters_of(loaded) == {"n_fingerprints": 20, "length": index.length, "decay": 0.7, "seed": 3}
    for u in range(0, graph.n, 7):
        assert loaded.related(u, top_k=None) == index.related(u, top_k=None)
        assert loaded.sim(u, (u + 1) % graph.n) == index.sim(u, (u + 1) % graph.n)
    # The decay given at build time is the queries' default.
    some = next(u for u in range(graph.n) if index.related(u, top_k=None))
    best = loaded.related(some, top_k=1)[0][1]
    assert best == pytest.approx(index.related(some, top_k=1, decay=0.7)[0][1])
    assert best != pytest.approx(index.related(some, top_k=1, decay=0.5)[0][1])


def test_a_different_graph_is_refused(tmp_path) -> None:
    graph = random_graph(1, keys=[f"https://x/{i}" for i in range(50)])
    store.save(build("simrank", graph), tmp_path, "simrank", graph.n, graph.m)
    other = random_graph(2, keys=graph.keys)
    with pytest.raises(store.IndexMismatch, match="different graph.*linksim index simrank"):
        store.load(tmp_path, "simrank", graph_fingerprint(other))
    # Same links, pages named differently: also a different graph.
    renamed = random_graph(1, keys=[f"https://y/{i}" for i in range(50)])
    with pytest.raises(store.IndexMismatch, match="different graph"):
        store.load(tmp_path, "simrank", graph_fingerprint(renamed))
    store.load(tmp_path, "simrank", graph_fingerprint(random_graph(1, keys=list(graph.keys))))


def test_other_parameters_are_refused_fewer_fingerprints_allowed(tmp_path) -> None:
    graph = random_graph(1)
    store.save(build("psimrank", graph), tmp_path, "psimrank", graph.n, graph.m)
    fingerprint = graph_fingerprint(graph)
    with pytest.raises(store.IndexMismatch, match="length=10.*not length=5"):
        store.load(tmp_path, "psimrank", fingerprint, length=5)
    with pytest.raises(store.IndexMismatch, match="20 fingerprints, fewer than the 50"):
        store.load(tmp_path, "psimrank", fingerprint, n_fingerprints=50)
    index = store.load(tmp_path, "psimrank", fingerprint, n_fingerprints=10, length=10, seed=3)
    assert index.n_fingerprints == 20


def test_missing_unreadable_and_foreign_versions(tmp_path) -> None:
    with pytest.raises(store.IndexNotFound, match="no simrank index"):
        store.load(tmp_path, "simrank")
    graph = random_graph(1)
    path = store.save(build("simrank", graph), tmp_path, "simrank", graph.n, graph.m)
    meta = json.loads((path / "meta.json").read_text())
    meta["version"] = 99
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(store.IndexMismatch, match="version 99"):
        store.load(tmp_path, "simrank")
    meta["version"] = store.FORMAT_VERSION
    meta["arrays"]["parent"]["shape"] = [20, 49]
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(store.IndexMismatch, match="parent.npy holds"):
        store.load(tmp_path, "simrank")


def test_a_failed_save_leaves_the_old_index(tmp_path, monkeypatch) -> None:
    graph = random_graph(1)
    old = build("simrank", graph)
    store.save(old, tmp_path, "simrank", graph.n, graph.m)
    calls = []

    def failing_save(*args, **kwargs):
        calls.append(args)
        if len(calls) == 3:
            raise OSError("disk full")
        return real_save(*args, **kwargs)

    real_save = np.save
    monkeypatch.setattr(np, "save", failing_save)
    with pytest.raises(OSError, match="disk full"):
        store.save(build_index(random_graph(2), "simrank", n_fingerprints=20, seed=9), tmp_path, "simrank", 50, 1)
    monkeypatch.setattr(np, "save", real_save)
    assert [p.name for p in tmp_path.iterdir()] == ["simrank"]  # no staging directory left
    loaded = store.load(tmp_path, "simrank", graph_fingerprint(graph))
    assert np.array_equal(loaded.parent, old.parent)
