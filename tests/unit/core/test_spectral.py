"""Spectral P-PSimRank: the link features and embedding, the invariants, and the Monte Carlo scores
against the exact reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linksim.graph import LinkGraph
import linksim.spectral as spectral
from linksim.spectral import (
    CANDIDATES, IDF_POWER, MAX_SHARE, NEAREST, SpectralIndex, build_spectral_index, colink_weights, colinked,
    link_embedding, link_features, neighbour_lists, spectral_exact,
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
        assert {v for v, _ in ranked} <= set(index.candidates(u).tolist()) and u not in {v for v, _ in ranked}
        assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
        assert all(score == pytest.approx(index.sim(u, v), abs=1e-12) for v, score in ranked)


def brute_adamic_adar(graph: LinkGraph, u: int, v: int, hub_degree: int) -> float:
    """Adamic-Adar by its definition over neighbour sets (links both ways, self-links aside)."""
    source, target = graph.edges()
    neighbours = [set() for _ in range(graph.n)]
    for s, t in zip(source.tolist(), target.tolist()):
        if s != t:
            neighbours[s].add(t)
            neighbours[t].add(s)
    return sum(1 / math.log(max(len(neighbours[w]), 2)) for w in neighbours[u] & neighbours[v]
               if len(neighbours[w]) <= hub_degree)


@pytest.mark.parametrize("hub_degree", [3, 5, 1000])
def test_colinked_pages_are_adamic_adar_without_the_hubs(monkeypatch, hub_degree) -> None:
    monkeypatch.setattr(spectral, "HUB_DEGREE", hub_degree)
    graph = random_graph(7, n=25, m=90)
    indptr, indices = neighbour_lists(graph)
    weights = colink_weights(indptr)
    assert (weights == 0).any() == (hub_degree < np.diff(indptr).max())
    for u in range(graph.n):
        pages, scores = colinked(indptr, indices, weights, u)
        found = dict(zip(pages.tolist(), scores.tolist()))
        for v in range(graph.n):
            expected = brute_adamic_adar(graph, u, v, hub_degree) if v != u else 0.0
            assert found.get(v, 0.0) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("hub_degree", [3, 1000])
def test_the_compiled_colinked_scores_are_numpys_float_for_float(monkeypatch, hub_degree) -> None:
    monkeypatch.setattr(spectral, "HUB_DEGREE", hub_degree)
    graph = random_graph(9, n=200, m=1_500)
    index = build_spectral_index(graph, n_fingerprints=4, seed=9)
    for u in range(graph.n):
        pages, scores = colinked(index.neighbour_indptr, index.neighbour_indices, index._weights, u)
        compiled_pages, compiled_scores = index._colinked(u)
        assert compiled_pages.tolist() == pages.tolist() and compiled_scores.tolist() == scores.tolist()


def test_the_candidates_are_the_best_colinked_and_the_nearest_pages() -> None:
    graph = random_graph(8, n=60, m=200)
    index = build_spectral_index(graph, n_fingerprints=30, seed=8)
    cosines = index.embedding.astype(np.float64) @ index.embedding.astype(np.float64).T
    for u in range(graph.n):
        scored = {v: brute_adamic_adar(graph, u, v, spectral.HUB_DEGREE) for v in range(graph.n) if v != u}
        best = sorted((v for v in scored if scored[v] > 0), key=lambda v: (-round(scored[v], 12), v))[:CANDIDATES]
        near = sorted((v for v in range(graph.n) if v != u and cosines[u, v] > 1e-6),
                      key=lambda v: (-cosines[u, v], v))[:NEAREST]
        wider = sorted((v for v in range(graph.n) if v != u and cosines[u, v] > 0),
                       key=lambda v: (-cosines[u, v], v))[:NEAREST + 2]
        candidates = set(index.candidates(u).tolist())
        # the best co-linked pages, and the nearest ones (up to the float32 cosines' last bits)
        assert set(best) <= candidates and candidates - set(best) <= set(wider)
        assert set(near[:NEAREST - 2]) <= candidates


def test_fingerprint_scores_of_many_pages_are_those_of_one_pair() -> None:
    graph = random_graph(9)
    index = build_spectral_index(graph, n_fingerprints=40, seed=9)
    pages = np.arange(graph.n)
    for u in (0, 3, 11):
        assert index.fingerprints.sims(u, pages).tolist() == [index.fingerprints.sim(u, v) for v in pages]


def test_ten_thousand_fingerprints_are_within_the_bound_of_the_exact_scores() -> None:
    graph = random_graph(4)
    index = build_spectral_index(graph, n_fingerprints=10_000, seed=4)
    exact = spectral_exact(graph, 0.6, 3, candidates=False)
    estimated = np.array([[index.sim(u, v) for v in range(graph.n)] for u in range(graph.n)])
    # Only P-PSimRank's share is sampled: 10,000 fingerprints put it within 0.03 (as its own test).
    assert np.abs(estimated - exact).max() <= (1 - index.share) * 0.03


def test_the_index_round_trips_through_its_stored_arrays() -> None:
    graph = random_graph(5)
    index = build_spectral_index(graph, n_fingerprints=20, seed=5)
    arrays = index.store_arrays()
    meta = {"method": "spectral", "parameters": index.parameters, "graph": {"fingerprint": index.graph_fingerprint}}
    again = SpectralIndex.from_store(meta, arrays)
    assert again.parameters == index.parameters == {"n_fingerprints": 20, "length": 3, "decay": 0.6, "seed": 5}
    assert all(again.related(u, top_k=10) == index.related(u, top_k=10) for u in range(graph.n))


def test_an_index_built_on_disk_is_the_one_built_in_memory(tmp_path) -> None:
    """The walks built into memory-mapped files (where the index does not fit the budget), their
    layout beside them, then stored and opened mapped: the in-memory build's arrays bit for bit,
    and the same lists."""
    from linksim import store
    from linksim.methods import method

    graph = random_graph(4, n=60, m=260)
    parameters = dict(n_fingerprints=12, length=3, seed=4, decay=0.6)
    held = build_spectral_index(graph, **parameters)
    folder = tmp_path / "building"
    folder.mkdir()
    mapped = method("spectral").build(graph, parameters, directory=folder)
    assert isinstance(mapped.fingerprints.parent, np.memmap)
    mapped.layout()
    assert (folder / "layout_order.npy").exists()
    path = store.save(mapped, tmp_path / "store", "spectral", graph.n, graph.m)
    opened = store.open_path(path)
    arrays, expected = opened.store_arrays(), held.store_arrays()
    assert sorted(arrays) == sorted(expected)
    for name, array in expected.items():
        assert np.array_equal(arrays[name], array) and arrays[name].dtype == array.dtype, name
    pages = np.arange(graph.n)
    assert [list(x) for x in opened.related_many(pages)] == [list(x) for x in held.related_many(pages)]


def test_the_exact_lists_keep_the_candidates_of_the_index() -> None:
    graph = random_graph(6, n=40, m=200)
    index = build_spectral_index(graph, n_fingerprints=10, seed=0)
    every = spectral_exact(graph, 0.6, 3, candidates=False)
    lists = spectral_exact(graph, 0.6, 3)
    for u in range(graph.n):
        kept = set(np.flatnonzero(lists[u]).tolist()) - {u}
        assert kept == set(index.candidates(u).tolist()) - {u}
        assert all(lists[u, v] == every[u, v] for v in kept)


def _community_graph(rng, n: int, communities: int, links: int, unlinked: int = 0) -> LinkGraph:
    """Pages in communities: many pages share their nearest cosines (and ``unlinked`` pages
    without links after them)."""
    community = rng.integers(0, communities, n)
    source = rng.integers(0, n, links)
    target = np.where(rng.random(links) < 0.8, rng.permutation(n)[community[source] * 50 % n],
                      rng.integers(0, n, links))
    return LinkGraph.from_edges(source, target, n + unlinked)


def test_the_stored_nearest_pages_are_those_of_a_scan_of_every_page() -> None:
    """Below ANN_PAGES the index stores, for every page, nearest() of it (found many pages a
    product), -1 past the last and for pages without links; the candidates read them."""
    from linksim.spectral import nearest

    rng = np.random.default_rng(3)
    graph = _community_graph(rng, 700, 20, 3_500, unlinked=5)
    index = build_spectral_index(graph, n_fingerprints=10, seed=3)
    assert index.nearest.shape == (graph.n, NEAREST) and index.nearest.dtype == np.int32
    for u in range(graph.n):
        row = index.nearest[u]
        assert row[row >= 0].tolist() == nearest(index.embedding, u).tolist()
        assert (row[: (row >= 0).sum()] >= 0).all()  # -1 only past the last
        assert set(row[row >= 0].tolist()) <= set(index.candidates(u).tolist())
    assert (index.nearest[-5:] == -1).all()


def test_an_index_stored_without_its_nearest_pages_is_built_again(tmp_path) -> None:
    """An index of the layout before the stored nearest pages: queries refuse it and say to
    rebuild, a build replaces it."""
    import json

    from linksim import store

    graph = random_graph(2)
    index = build_spectral_index(graph, n_fingerprints=5, seed=2)
    path = store.save(index, tmp_path, "spectral", graph.n, graph.m)
    meta = json.loads((path / "meta.json").read_text())
    del meta["arrays"]["nearest"]
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(store.IndexOutdated, match="nearest") as raised:
        store.load(tmp_path, "spectral")
    assert raised.value.rebuild and "index(" in str(raised.value)
    assert store.open_built(tmp_path, "spectral", index.parameters, index.graph_fingerprint) is None


def test_from_ann_pages_the_nearest_pages_come_from_clusters_and_lists_keep_exact_scores(monkeypatch) -> None:
    from linksim.ranking.topk import top_k_all
    from linksim.spectral import EmbeddingClusters, _nearest_of_found, nearest

    rng = np.random.default_rng(4)
    graph = _community_graph(rng, 1_500, 30, 9_000, unlinked=20)
    monkeypatch.setattr(spectral, "ANN_PAGES", 1)
    index = build_spectral_index(graph, n_fingerprints=20, seed=1)
    again = build_spectral_index(graph, n_fingerprints=20, seed=1)
    np.testing.assert_array_equal(index.nearest, again.nearest)  # the same seed: the same clusters
    clusters = EmbeddingClusters(index.embedding, seed=1)
    # pages without a direction (the 20 without links among them): in no cluster, nobody's
    # nearest, no nearest of their own; every other page in exactly one
    undirected = np.flatnonzero(~index.embedding.any(axis=1))
    assert set(range(graph.n - 20, graph.n)) <= set(undirected.tolist())
    assert sorted(clusters.members.tolist()) == np.setdiff1d(np.arange(graph.n), undirected).tolist()
    assert len(clusters) == round(np.sqrt(spectral.PROBES * len(clusters.members)))
    assert all(probes[0] == c and len(set(probes.tolist())) == len(probes) for c, probes in enumerate(clusters.probes))
    assert (index.nearest[undirected] == -1).all() and not np.isin(index.nearest, undirected).any()
    # The pages found have the exact search's cosines: at or above its tenth, for 9 pages in 10
    # (clusters of about 14 pages here, a hundred from ANN_PAGES: the more pages, the more each
    # search reads); each row is the exact ranking of what its cluster's search finds.
    found_well = []
    for u in rng.choice(np.flatnonzero(np.abs(index.embedding).sum(axis=1) > 0), 200, replace=False).tolist():
        exact, stored = nearest(index.embedding, u), index.nearest[u]
        stored = stored[stored >= 0]
        found = clusters.found(u, 2 * NEAREST + 1)
        assert found[0] == u or u in found.tolist()  # a page is its own best product
        assert stored.tolist() == _nearest_of_found(index.embedding, u, found, NEAREST).tolist()
        tenth = (index.embedding[exact] @ index.embedding[u]).min()
        found_well.append(np.mean(index.embedding[stored] @ index.embedding[u] >= tenth - 1e-6))
        assert len(stored) == len(exact)
    assert np.mean(found_well) >= 0.9
    # The lists of all pages: every score exact.
    source, target, score, _ = top_k_all(index, top_k=5, workers=1, show_progress=False)
    for u, v, s in list(zip(source.tolist(), target.tolist(), score.tolist()))[::37]:
        assert s == pytest.approx(index.sim(u, v), abs=1e-12)  # (one row against many: BLAS may add apart)


def test_beyond_the_flat_clusters_a_page_searches_as_many_pages_at_any_size() -> None:
    from linksim.spectral import CLUSTER_PAGES, FLAT_CLUSTERS, PROBES, cluster_count

    # sqrt(PROBES n) clusters up to PROBES · CLUSTER_PAGES² pages, where the two counts meet; beyond,
    # clusters of CLUSTER_PAGES pages (so a page's search reads PROBES of them at any size).
    meet = PROBES * CLUSTER_PAGES**2
    assert cluster_count(meet) == FLAT_CLUSTERS == round(math.sqrt(PROBES * meet))
    assert cluster_count(meet // 4) == round(math.sqrt(PROBES * meet / 4))
    for pages in (10 * meet, 10_000_000, 100_000_000):
        assert cluster_count(pages) == pages // CLUSTER_PAGES > round(math.sqrt(PROBES * pages))


def _clustered_rows(rng, n: int, centres: int, dims: int = 16, zero: int = 0) -> np.ndarray:
    """Unit rows around ``centres`` random directions (and ``zero`` rows of no direction)."""
    middle = rng.standard_normal((centres, dims))
    rows = middle[rng.integers(0, centres, n)] + 0.35 * rng.standard_normal((n, dims))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return np.vstack([rows, np.zeros((zero, dims))]).astype(np.float32)


def test_two_level_clusters_hold_every_page_once_and_find_its_nearest_pages(monkeypatch) -> None:
    from linksim.spectral import EmbeddingClusters, _nearest_of_found, cluster_count, nearest

    # Clusters of 8 pages from 64 on: 4,000 pages make 500 clusters, assigned in two steps.
    monkeypatch.setattr(spectral, "CLUSTER_PAGES", 8)
    monkeypatch.setattr(spectral, "FLAT_CLUSTERS", 64)
    rng = np.random.default_rng(7)
    embedding = _clustered_rows(rng, 4_000, 60, zero=15)
    clusters = EmbeddingClusters(embedding, seed=2)
    again = EmbeddingClusters(embedding, seed=2)
    np.testing.assert_array_equal(clusters.members, again.members)  # the same seed: the same clusters
    np.testing.assert_array_equal(clusters.bounds, again.bounds)
    assert sorted(clusters.members.tolist()) == list(range(4_000))  # every page once, the zero rows in none
    assert (clusters.cluster[4_000:] == -1).all()
    assert abs(len(clusters) - cluster_count(4_000)) <= 0.1 * cluster_count(4_000)
    assert max(len(clusters.of(c)) for c in range(len(clusters))) < 20 * 8  # no cluster holds a share of all
    assert all(probes[0] == c and len(set(probes.tolist())) == len(probes) == spectral.PROBES
               for c, probes in enumerate(clusters.probes))
    for c in range(len(clusters)):
        assert (clusters.cluster[clusters.of(c)] == c).all()
    # As many of the exact nearest ten as the flat clusters find (9 in 10 on average), ranked exactly.
    recall = []
    for u in rng.choice(4_000, 300, replace=False).tolist():
        found = clusters.found(u, 2 * NEAREST + 1)
        assert u in found.tolist()
        near, exact = _nearest_of_found(embedding, u, found, NEAREST), nearest(embedding, u)
        recall.append(len(set(near.tolist()) & set(exact.tolist())) / len(exact))
    assert np.mean(recall) >= 0.9
    monkeypatch.setattr(spectral, "ANN_PAGES", 1)
    table = spectral.nearest_pages(embedding, seed=2)
    for u in range(0, 4_000, 97):
        row = table[u][table[u] >= 0]
        assert row.tolist() == _nearest_of_found(embedding, u, clusters.found(u, 2 * NEAREST + 1), NEAREST).tolist()
    assert (table[4_000:] == -1).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lists_that_leave_candidates_unscored_are_the_lists_of_every_candidate_scored(seed) -> None:
    # The top-k query scores P-PSimRank only for candidates whose bound a cos + (1 - a) c
    # can still reach the k-th score: its lists must be those of every candidate scored, float for
    # float, ties by page included. Few fingerprints give many equal scores to break.
    graph = random_graph(seed, n=300, m=2_400)
    index = build_spectral_index(graph, n_fingerprints=8, seed=seed)
    index.share = MAX_SHARE  # the bound prunes where the cosine weighs: a sparse random crawl's share is small
    candidates = 0
    for u in range(graph.n):
        every = index.related(u, top_k=None)
        candidates += len(every)
        for k in (1, 3, 10):
            assert index.related(u, top_k=k) == every[:k]
    asked_with_k = index.pairs_scored - candidates
    assert asked_with_k < 3 * candidates  # three lengths of list: fewer than all candidates scored each time


def test_the_lists_of_all_pages_read_from_page_major_rows_are_the_same_floats(tmp_path) -> None:
    # Before the lists of all pages the walks' page-major rows are built (in memory, or in files
    # the queries map): a candidate's score then reads its own row instead of every fingerprint's
    # arrays. The lists must not change by a bit.
    graph = random_graph(5, n=300, m=2_400)
    index = build_spectral_index(graph, n_fingerprints=12, seed=5)
    index.share = MAX_SHARE  # the bound leaves candidates unscored: the batches are exercised
    before = [index.related(u, top_k=k) for u in range(graph.n) for k in (1, 10)]
    for folder in (None, tmp_path):
        again = SpectralIndex(index.fingerprints.__class__.from_store(
            {"method": "ppsimrank", "parameters": index.parameters, "graph": {"fingerprint": index.graph_fingerprint}},
            index.fingerprints.store_arrays()), index.embedding, index.neighbour_indptr, index.neighbour_indices,
            index.nearest, share=index.share)
        again.fingerprints._exact_members = 0  # a small graph: page-major rows all the same
        again.fingerprints.page_major_folder = folder
        again.prepare_all_pages()
        assert again.fingerprints._page_major[0].shape == (graph.n, 12)
        assert [again.related(u, top_k=k) for u in range(graph.n) for k in (1, 10)] == before


def test_a_page_whose_candidates_all_score_zero_takes_the_walks_best_pages() -> None:
    """The end H of a chain X -> P -> H, X a hub: H's one co-linked page is X (through P), which
    shares no feature with H (P is H's parent and X's child) and whose walks rarely meet H's. The
    list falls back to P-PSimRank's best pages, scored the same way: H gets a list. H's row of the
    embedding is taken away, as for a page whose features are orthogonal to it (the solver leaves
    it a short row of the directions it has not converged in)."""
    rng = np.random.default_rng(4)
    n = 3300
    community = rng.integers(0, 300, (2, 3000))  # a dense part that takes the embedding's ranks
    hub, p, h = 300, 301, 302
    leaves = np.arange(303, n)
    source = np.concatenate([community[0], np.full(len(leaves), hub), leaves, [hub, p]])
    target = np.concatenate([community[1], leaves, np.full(len(leaves), hub), [p, h]])
    graph = LinkGraph.from_edges(source, target, n)
    built = build_spectral_index(graph, n_fingerprints=20, seed=0)  # its walks from H and X never meet
    embedding, nearest = built.embedding.copy(), built.nearest.copy()
    embedding[h], nearest[h] = 0.0, -1
    index = SpectralIndex(built.fingerprints, embedding, built.neighbour_indptr, built.neighbour_indices, nearest)
    primary = index.candidates(h)
    assert hub in primary.tolist() and all(index.sim(h, v) == 0.0 for v in primary.tolist() if v != h)
    ranked = index.related(h, top_k=5)
    assert ranked and all(score > 0 and score == pytest.approx(index.sim(h, v), abs=1e-12) for v, score in ranked)
    walked = {v for v, _ in index.fingerprints.related(h, top_k=CANDIDATES)}
    assert {v for v, _ in ranked} <= walked and p in {v for v, _ in ranked}
    assert index.related(h, top_k=5, similarity_cutoff=0.5) == [(v, s) for v, s in ranked if s > 0.5]


def test_the_nearest_pages_are_the_exact_ones_whichever_product_scanned_them() -> None:
    """nearest() ranks by exact (float64) cosines the pages its float32 scan keeps: the pages of
    the definition (cosine above NEAR_COSINE, ties by page), also where many pages share their
    cosines; and one product for several pages (gemm, other last bits than one page's gemv)
    keeps the same pages within the margin."""
    from linksim.spectral import SCAN_MARGIN, nearest

    rng = np.random.default_rng(11)
    n = 1_200
    graph = _community_graph(rng, n, 24, 7_000)
    embedding = build_spectral_index(graph, n_fingerprints=20, seed=2).embedding
    exact = embedding.astype(np.float64) @ embedding.astype(np.float64).T
    members = rng.choice(np.flatnonzero(np.abs(embedding).sum(axis=1) > 0), 40, replace=False)
    together = embedding @ embedding[members].T
    assert np.abs(together - exact[:, members]).max() < SCAN_MARGIN / 10
    for u in members.tolist():
        want = sorted((v for v in range(n) if v != u and exact[u, v] > spectral.NEAR_COSINE),
                      key=lambda v: (-round(exact[u, v], 12), v))[:NEAREST]
        assert nearest(embedding, u).tolist() == want


def test_the_cosine_share_is_the_weight_the_embedding_holds_at_most_max_share() -> None:
    # The share is the mean squared length of the rows of U Σ before they are scaled: the rank's
    # eigenvalues over the trace of X X^T, one a page with links.
    graph = random_graph(6, n=200, m=900)
    features = link_features(graph).toarray()
    singular = np.linalg.svd(features, compute_uv=False)
    for rank in (5, 20):
        _, held = spectral.embedding_and_share(graph, rank, seed=6)
        exact = (singular[:rank] ** 2).sum() / (np.linalg.norm(features, axis=1) > 0).sum()
        # Ky Fan: no k-dimensional subspace holds more than the k largest eigenvalues; 4 passes of
        # subspace iteration come within a few per cent of them on this flat spectrum.
        assert 0.95 * exact <= held <= exact * (1 + 1e-6)
        assert 0.0 < held < 1.0
    _, whole = spectral.embedding_and_share(graph, 199, seed=6)
    assert whole == pytest.approx(1.0, abs=1e-3)  # every direction: all of the weight
    index = build_spectral_index(graph, n_fingerprints=20, seed=6)
    assert index.share == spectral.cosine_share(spectral.embedding_and_share(graph, spectral.RANK, seed=6)[1])
    assert spectral.cosine_share(1.0) == MAX_SHARE and spectral.cosine_share(0.05) == 0.05


def test_a_page_pair_scores_the_share_of_its_cosine_and_the_rest_of_its_walks() -> None:
    graph = random_graph(7, n=300, m=1_200)
    index = build_spectral_index(graph, n_fingerprints=50, seed=7)
    assert 0.0 < index.share < MAX_SHARE  # a sparse random crawl: rank 100 holds part of its links
    for u, v in ((0, 5), (3, 17), (10, 250)):
        cosine = float(index.cosine(u, np.array([v]))[0])
        walks = index.fingerprints.sim(u, v)
        assert index.sim(u, v) == pytest.approx(index.share * cosine + (1 - index.share) * walks, abs=1e-12)


def test_an_index_stored_without_its_share_scores_with_max_share() -> None:
    graph = random_graph(8)
    index = build_spectral_index(graph, n_fingerprints=20, seed=8)
    arrays = index.store_arrays()
    assert float(arrays["cosine_share"][0]) == index.share
    meta = {"method": "spectral", "parameters": index.parameters, "graph": {"fingerprint": index.graph_fingerprint}}
    restored = SpectralIndex.from_store(meta, arrays)
    assert restored.share == index.share
    older = SpectralIndex.from_store(meta, {k: v for k, v in arrays.items() if k != "cosine_share"})
    assert older.share == MAX_SHARE
