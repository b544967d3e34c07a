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


@pytest.mark.parametrize("radius", [1, 2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_the_pushed_propagation_without_pruning_is_the_exact_one(radius: int, seed: int) -> None:
    """The push of each source along its simple paths (the pruned build's kernel) with nothing
    pruned gives the sparse products' path sums, repeats taken out the same way."""
    from linksim.pagesim import _pruned_path_sums, _simple_path_sums

    graph = cyclic_graph(seed, n=30, m=120)
    exact = _simple_path_sums(graph, radius, 0.5).toarray()
    assert np.allclose(_pruned_path_sums(graph, radius, 0.5, 0.0).toarray(), exact, rtol=0, atol=1e-14)


@pytest.mark.parametrize("radius", [1, 2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_the_filled_propagation_is_the_sparse_products_and_its_reach(radius: int, seed: int) -> None:
    """The build's rows, pushed into arrays sized by the pages within reach, hold exactly the
    sparse products' path sums plus the identity: no entry missing, none extra (the reach
    counted by a breadth-first search is each row's size), and the estimate reads that reach."""
    from linksim.pagesim import _filled_path_sums, _simple_path_sums, reach

    graph = cyclic_graph(seed, n=60, m=400)
    exact = _simple_path_sums(graph, radius, 0.5)
    filled = _filled_path_sums(graph, radius, 0.5)
    assert np.allclose(filled.toarray(), exact.toarray() + np.eye(graph.n), rtol=0, atol=1e-14)
    dense = np.eye(graph.n, dtype=bool)
    step = np.zeros((graph.n, graph.n), dtype=bool)
    step[graph.edges()] = True
    for _ in range(radius):
        dense = dense | (dense.astype(int) @ step.astype(int) > 0)
    assert (reach(graph, radius) == dense.sum(axis=1)).all()
    assert (np.diff(filled.indptr) == dense.sum(axis=1)).all() and filled.has_sorted_indices


@pytest.mark.parametrize("prune", [1e-3, 1e-2, 5e-2])
@pytest.mark.parametrize("seed", range(4))
def test_pruning_leaves_out_only_light_walks_and_bounds_the_rows(prune: float, seed: int) -> None:
    """A pruned entry is never above the exact one, every kept entry holds at least ``prune``, a
    row keeps at most (d + d^2 + d^3) / prune entries, and what a row loses is at most d times the
    hop-2 mass of the pages that did not push, the entries dropped (each under ``prune``), and
    hops 2 and 3 whole where the first hop's share is under ``prune``."""
    from linksim.pagesim import _pruned_path_sums, _simple_path_sums, _transition

    d = 0.5
    graph = cyclic_graph(seed, n=40, m=300)
    exact = _simple_path_sums(graph, 3, d).toarray()
    pruned = _pruned_path_sums(graph, 3, d, prune).toarray()
    assert (pruned <= exact + 1e-15).all() and ((pruned == 0) | (pruned >= prune)).all()
    assert ((pruned > 0).sum(axis=1) <= (d + d**2 + d**3) / prune).all()
    step = _transition(graph).toarray()
    hop2 = d * d * (step @ step)
    np.fill_diagonal(hop2, 0.0)  # hop 2 never returns to its source
    degree = np.diff(graph.out_indptr)
    for i in range(graph.n):
        if degree[i] and d / degree[i] < prune:
            bound = d**2 + d**3 + prune * graph.n
        else:
            bound = d * hop2[i][hop2[i] < prune].sum() + prune * graph.n
        assert exact[i].sum() - pruned[i].sum() <= bound + 1e-12
    assert pruned.sum() < exact.sum()  # something was pruned: the bound is not vacuous here


def test_a_pruned_index_keeps_its_share_through_the_store(tmp_path) -> None:
    graph = cyclic_graph(2, n=40, m=300)
    index = build_pagesim_index(graph, radius=3, prune=1e-2)
    exact = build_pagesim_index(graph, radius=3)
    assert index.parameters["prune"] == 0.01 and exact.parameters["prune"] == 0.0
    assert index.by_source.nnz < exact.by_source.nnz
    # min^2/max moves by at most twice what its entries move: a pair's score, by at most twice what
    # the two feature vectors lost
    lost = np.asarray((exact.by_page - index.by_page).sum(axis=1)).ravel()
    assert (lost >= -1e-15).all()
    assert all(abs(index.sim(0, v) - exact.sim(0, v)) <= 2 * (lost[0] + lost[v]) + 1e-12 for v in range(graph.n))
    path = store.save(index, tmp_path, "pagesim", graph.n, graph.m)
    again = store.open_path(path)
    assert again.prune == 0.01 and again.related(0) == index.related(0)
    with pytest.raises(ConfigurationError, match="radius of at most 3"):
        build_pagesim_index(graph, radius=4, prune=1e-2)


def test_the_reach_of_a_large_crawl_is_estimated_from_a_sample_within_its_error(monkeypatch) -> None:
    """Below REACH_SAMPLE pages the propagation's entries are counted exactly (the pruned ones
    too: the built matrix's); above, from a uniform sample of that many pages, within four of its
    own standard errors of the exact total (a fixed seed)."""
    from linksim import pagesim
    from linksim.pagesim import propagation_matrix, reach, reach_estimate

    rng = np.random.default_rng(5)
    graph = LinkGraph.from_edges(rng.integers(0, 3_000, 20_000), rng.integers(0, 3_000, 20_000), 3_000)
    exact = int(reach(graph, 3).sum())
    assert reach_estimate(graph, 3) == (exact, 0.0)
    ranks = np.full(graph.n, 1.0 / graph.n)
    pruned = propagation_matrix(graph, ranks, 3, 0.5, prune=1e-3).nnz
    assert reach_estimate(graph, 3, 0.5, 1e-3) == (pruned, 0.0) and pruned < exact / 2
    monkeypatch.setattr(pagesim, "REACH_SAMPLE", 600)
    for expected, prune in ((exact, 0.0), (pruned, 1e-3)):
        total, error = reach_estimate(graph, 3, 0.5, prune)
        assert 0 < error < 0.1 and abs(total - expected) <= 4 * error * expected
