"""Spectral P-PSimRank: the link features and embedding, the invariants, and the Monte Carlo scores
against the exact reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linksim.graph import LinkGraph
from linksim.spectral import (
    ALPHA, CANDIDATES, IDF_POWER, SpectralIndex, build_spectral_index, link_embedding, link_features, spectral_exact,
)


def random_graph(seed: int, n: int = 30, m: int = 110) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)


def test_link_features_are_idf_weighted_in_and_out_links_of_unit_rows() -> None:
    # 0 -> 1, 0 -> 2, 3 -> 2, 2 -> 2 (a self-link, ignored); page 4 has no link.
    graph = LinkGraph.from_edges(np.array([0, 0, 3, 2]), np.array([1, 2, 2, 2]), 5)
    features = link_features(graph).toarray()
    n = 5
    # Page 2: in-links from 0 and 3 (columns 0 and 3); 0 is a parent of 2 pages, 3 of one.
    raw = np.zeros(2 * n)
    raw[0], raw[3] = math.log(n / 2) ** IDF_POWER, math.log(n / 1) ** IDF_POWER
    np.testing.assert_allclose(features[2], raw / np.linalg.norm(raw))
    # Page 0: out-links to 1 (in-degree 1) and 2 (in-degree 2), columns n + 1 and n + 2.
    raw = np.zeros(2 * n)
    raw[n + 1], raw[n + 2] = math.log(n / 1) ** IDF_POWER, math.log(n / 2) ** IDF_POWER
    np.testing.assert_allclose(features[0], raw / np.linalg.norm(raw))
    assert not features[4].any()


def test_an_embedding_of_full_rank_keeps_the_cosines_of_the_features() -> None:
    # Links among pages 0..5 only: the features have rank 6 at most, below the SVD's n - 1 = 11.
    rng = np.random.default_rng(3)
    graph = LinkGraph.from_edges(rng.integers(0, 6, 20), rng.integers(0, 6, 20), 12)
    features = link_features(graph).toarray()
    embedding = link_embedding(graph).astype(np.float64)
    linked = np.flatnonzero(features.any(axis=1))
    np.testing.assert_allclose(embedding[linked] @ embedding[linked].T, features[linked] @ features[linked].T,
                               atol=1e-6)
    assert not embedding[6:].any()  # pages without links: zero rows
    np.testing.assert_allclose(np.linalg.norm(embedding[linked], axis=1), 1.0, atol=1e-6)


def test_invariants_and_lists_from_the_candidates() -> None:
    graph = random_graph(1)
    index = build_spectral_index(graph, n_fingerprints=60, seed=1)
    for u in range(graph.n):
        assert index.sim(u, u) == 1.0
        for v in range(graph.n):
            s = index.sim(u, v)
            assert 0.0 <= s <= 1.0 + 1e-12 and s == pytest.approx(index.sim(v, u), abs=1e-12)
    for u in (0, 5, 17):
        ranked = index.related(u, top_k=5)
        candidates = {v for v, _ in index.fingerprints.related(u, top_k=CANDIDATES)}
        assert {v for v, _ in ranked} <= candidates and u not in {v for v, _ in ranked}
        assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
        assert all(score == pytest.approx(index.sim(u, v), abs=1e-12) for v, score in ranked)


def test_ten_thousand_fingerprints_are_within_the_bound_of_the_exact_scores() -> None:
    graph = random_graph(4)
    index = build_spectral_index(graph, n_fingerprints=10_000, seed=4)
    exact = spectral_exact(graph, 0.6, 3, candidates=None)
    estimated = np.array([[index.sim(u, v) for v in range(graph.n)] for u in range(graph.n)])
    # Only P-PSimRank's share is sampled: 10,000 fingerprints put it within 0.03 (as its own test).
    assert np.abs(estimated - exact).max() <= (1 - ALPHA) * 0.03


def test_the_index_round_trips_through_its_stored_arrays() -> None:
    graph = random_graph(5)
    index = build_spectral_index(graph, n_fingerprints=20, seed=5)
    arrays = index.store_arrays()
    meta = {"method": "spectral", "parameters": index.parameters, "graph": {"fingerprint": index.graph_fingerprint}}
    again = SpectralIndex.from_store(meta, arrays)
    assert again.parameters == index.parameters == {"n_fingerprints": 20, "length": 3, "decay": 0.6, "seed": 5}
    assert all(again.related(u, top_k=10) == index.related(u, top_k=10) for u in range(graph.n))


def test_the_exact_lists_are_the_best_exact_candidates() -> None:
    from linksim.fingerprints.exact import ppsimrank_exact

    graph = random_graph(6, n=40, m=200)
    walks = ppsimrank_exact(graph, 0.6, 3)
    every = spectral_exact(graph, 0.6, 3, candidates=None)
    lists = spectral_exact(graph, 0.6, 3, candidates=5)
    for u in range(graph.n):
        row = walks[u].copy()
        row[u] = 0
        best = sorted(np.flatnonzero(row > 0), key=lambda v: (-round(row[v], 12), v))[:5]
        kept = set(np.flatnonzero(lists[u]).tolist()) - {u}
        assert kept <= set(best) and all(lists[u, v] == every[u, v] for v in kept)
