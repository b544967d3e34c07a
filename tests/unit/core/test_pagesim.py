"""PageSim: the 2006 paper's propagation example, the brute-force definition, invariants."""

from __future__ import annotations

import numpy as np
import pytest

from linksim import store
from linksim.errors import ConfigurationError
from linksim.graph import LinkGraph
from linksim.pagerank import pagerank
from linksim.pagesim import build_pagesim_index, pagesim_brute_force, propagation_matrix


def cyclic_graph(seed: int, n: int = 14, m: int = 40) -> LinkGraph:
    """Random links plus 2-cycles and 3-cycles, where walks and paths differ."""
    rng = np.random.default_rng(seed)
    source, target = list(rng.integers(0, n, m)), list(rng.integers(0, n, m))
    source += [0, 1, 2, 3, 4, 5, 5, 6]
    target += [1, 0, 3, 4, 2, 6, 7, 5]
    return LinkGraph.from_edges(np.array(source), np.array(target), n)


def test_the_2006_propagation_example() -> None:
    # Figure 1: v0 -> v1, v0 -> v2, v1 -> v2, v2 -> v0; d = 0.8, PR(v0) = 1.
    graph = LinkGraph.from_edges(np.array([0, 0, 1, 2]), np.array([1, 2, 2, 0]), 3)
    pg = propagation_matrix(graph, np.array([1.0, 0.0, 0.0]), radius=3, decay=0.8).toarray()
    assert pg[0, 0] == 1.0
    assert pg[0, 1] == pytest.approx(0.4, abs=1e-15)
    assert pg[0, 2] == pytest.approx(0.72, abs=1e-15)  # 0.4 direct + 0.32 through v1; v2 does not go back to v0


@pytest.mark.parametrize("radius", [1, 2, 3, 4])
@pytest.mark.parametrize("formula", ["minmax", "sum"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_equals_the_brute_force_definition(radius: int, formula: str, seed: int) -> None:
    graph = cyclic_graph(seed)
    ranks = pagerank(graph, tol=1e-12, max_iter=1000, dtype=np.float64).ranks
    index = build_pagesim_index(graph, radius=radius, decay=0.5, formula=formula, ranks=ranks)
    pg, ps = pagesim_brute_force(graph, ranks, radius, 0.5, formula)
    assert np.abs(index.by_source.toarray() - pg).max() <= 1e-9
    got = np.array([[index.sim(u, v) for v in range(graph.n)] for u in range(graph.n)])
    assert np.abs(got - ps).max() <= 1e-9
    # From length 3 on, walks (u -> a -> u -> v, u -> v -> b -> v) would add more: the test graph
    # has such cycles, so a walk-based implementation could not pass.
    if radius >= 3:
        step = np.diag(0.5 / np.maximum(np.diff(graph.out_indptr), 1)) @ _dense(graph)
        walks = np.diag(ranks) @ sum(np.linalg.matrix_power(step, k) for k in range(1, radius + 1))
        np.fill_diagonal(walks, 0.0)
        assert (walks - (pg - np.diag(ranks))).max() > 1e-6


def _dense(graph: LinkGraph) -> np.ndarray:
    matrix = np.zeros((graph.n, graph.n))
    source, target = graph.edges()
    matrix[source, target] = 1.0
    return matrix


@pytest.mark.parametrize("formula", ["minmax", "sum"])
def test_invariants_and_related_equals_sim(formula: str) -> None:
    graph = cyclic_graph(7, n=40, m=120)
    index = build_pagesim_index(graph, formula=formula)
    scores = np.array([[index.sim(u, v) for v in range(graph.n)] for u in range(graph.n)])
    assert np.allclose(scores, scores.T, atol=1e-15)
    assert (scores >= 0).all() and (scores <= 1).all()
    assert np.allclose(scores.diagonal(), scores.max(axis=1), atol=1e-15)
    for u in range(graph.n):
        related = dict(index.related(u, top_k=None))
        expected = {v: scores[u, v] for v in range(graph.n) if v != u and scores[u, v] > 0}
        assert related.keys() == expected.keys()
        assert all(related[v] == pytest.approx(expected[v], abs=1e-15) for v in related)
    # A page without in-links still relates to others (unlike SimRank): through its own score.
    source_only = [u for u in range(graph.n) if graph.in_degree[u] == 0 and graph.out_indptr[u + 1] > graph.out_indptr[u]]
    for u in source_only:
        assert index.related(u, top_k=3)


def test_store_round_trip_and_bad_parameters(tmp_path) -> None:
    graph = cyclic_graph(9, n=30, m=90)
    index = build_pagesim_index(graph, radius=2, decay=0.6)
    store.save(index, tmp_path, "pagesim", graph.n, graph.m)
    loaded = store.load(tmp_path, "pagesim", index.graph_fingerprint, radius=2)
    assert all(loaded.related(u, top_k=None) == index.related(u, top_k=None) for u in range(graph.n))
    with pytest.raises(store.IndexMismatch, match="radius=2.*not radius=3"):
        store.load(tmp_path, "pagesim", index.graph_fingerprint, radius=3)
    for bad in ({"radius": 0}, {"decay": 0.0}, {"decay": 1.5}, {"formula": "max"}):
        with pytest.raises(ConfigurationError):
            build_pagesim_index(graph, **bad)


@pytest.mark.parametrize("formula", ["minmax", "sum"])
def test_compiled_top_k_equals_the_numpy_list_of_every_page(formula: str) -> None:
    rng = np.random.default_rng(1)  # a few hubs get half of the links
    target = np.concatenate([rng.integers(0, 5, 150), rng.integers(0, 100, 150)])
    graph = LinkGraph.from_edges(rng.integers(0, 100, 300), target, 100)
    index = build_pagesim_index(graph, radius=3, formula=formula)
    for u in range(graph.n):
        every = index.related(u, top_k=None)  # numpy: gather and bincount
        for top_k in (1, 5, 30):
            for similarity_cutoff in (0.0, 1e-4):
                got = index.related(u, top_k=top_k, similarity_cutoff=similarity_cutoff)
                assert got == [(v, s) for v, s in every if s > similarity_cutoff][:top_k]  # the same floats
        assert all(s == pytest.approx(index.sim(u, v), abs=1e-15) for v, s in every)
