"""The default's incremental update after a recrawl (linksim.spectral_update): the fold-in against
the stored embedding, the nearest pages kept exact in place, the walks bit for bit, the lists
within reach, the drift check, and the updated lists' judged worth against a rebuild's."""

from __future__ import annotations

import numpy as np
import pytest

import linksim.spectral as spectral
import linksim.spectral_update as spectral_update
from linksim.errors import ConfigurationError
from linksim.evaluation.judged import judged_quality
from linksim.generate import generate_labelled
from linksim.graph import LinkGraph
from linksim.parameters import Query
from linksim.spectral import SpectralIndex, build_spectral_index, nearest_pages
from linksim.embedding import FeatureWeights
from linksim.spectral_update import fold_in, lists_reach, page_lists, update_spectral_index


@pytest.fixture(scope="module")
def crawl() -> LinkGraph:
    labelled = generate_labelled(30_000, seed=2)
    return LinkGraph.from_edges(labelled.source, labelled.target, labelled.pages)


def recrawled(graph: LinkGraph, share: float, seed: int) -> LinkGraph:
    """Each of ``share`` of the crawled pages loses each link with probability 0.3 and gains as many."""
    rng = np.random.default_rng(seed)
    source, target = graph.edges()
    chosen = rng.choice(np.flatnonzero(graph.out_degree > 0), max(1, int(share * graph.n)), replace=False)
    lost = np.isin(source, chosen) & (rng.random(len(source)) < 0.3)
    gained = target[rng.integers(0, len(target), int(lost.sum()))]
    return LinkGraph.from_edges(np.r_[source[~lost], source[lost]], np.r_[target[~lost], gained], graph.n)


def build(graph: LinkGraph, seed: int = 0, fingerprints: int = 60) -> SpectralIndex:
    return build_spectral_index(graph, fingerprints, 3, seed, 0.6, keep_walks=True)


def as_arrays(lists: list, n: int):
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(found) for found in lists])
    return (indptr, np.array([v for found in lists for v, _ in found], dtype=np.int64),
            np.array([s for found in lists for _, s in found], dtype=np.float64))


def test_a_row_folded_into_an_exact_embedding_is_its_row() -> None:
    """Where the rank holds every direction of the features (a small graph), U Σ = X V exactly:
    folding a page's own row in gives its stored row back."""
    rng = np.random.default_rng(4)
    graph = LinkGraph.from_edges(rng.integers(0, 40, 160), rng.integers(0, 40, 160), 40)
    index = build(graph)
    features = FeatureWeights(graph)
    scaled = index.embedding * index.lengths[:, None]
    rows = fold_in(features, features, scaled, index.eigenvalues, np.arange(graph.n))
    np.testing.assert_allclose(rows, scaled, atol=2e-4)
    assert index.updatable and index.fold_state[1] == 0


def test_an_update_keeps_what_did_not_change_and_its_nearest_pages_exact(crawl: LinkGraph) -> None:
    index = build(crawl)
    after = recrawled(crawl, 0.01, 1)
    updated = update_spectral_index(crawl, index, after)
    change = updated.change
    rebuilt = build(after)
    # The walks and the neighbour lists are the rebuild's, bit for bit.
    np.testing.assert_array_equal(np.asarray(updated.fingerprints.parent), np.asarray(rebuilt.fingerprints.parent))
    np.testing.assert_array_equal(updated.neighbour_indices, rebuilt.neighbour_indices)
    # The rows folded in are the pages whose in- or out-links changed; every other row is kept.
    changed = np.zeros(crawl.n, dtype=bool)
    for direction in ("out", "in"):
        old, new = crawl.neighbour_matrix(direction), after.neighbour_matrix(direction)
        changed |= np.asarray((old != new).sum(axis=1)).ravel() > 0
    np.testing.assert_array_equal(change.folded, np.flatnonzero(changed))
    kept = ~changed
    np.testing.assert_array_equal(updated.embedding[kept], index.embedding[kept])
    assert np.allclose(np.linalg.norm(updated.embedding[change.folded], axis=1)[updated.lengths[change.folded] > 0],
                       1.0, atol=1e-5)
    # Below ANN_PAGES the nearest pages are exact: the updated table is the scan's of its embedding.
    assert crawl.n < spectral.ANN_PAGES
    np.testing.assert_array_equal(updated.nearest, nearest_pages(updated.embedding))
    assert 0 <= change.drift < spectral_update.DRIFT_LIMIT and change.folded_share > 0


def test_the_clusters_search_is_kept_as_good_in_place(crawl: LinkGraph, monkeypatch) -> None:
    """Above ANN_PAGES (lowered here) the nearest pages come from the stored clusters: after an
    update they find as many of the exact nearest pages as the build's search does."""
    monkeypatch.setattr(spectral, "ANN_PAGES", 1_000)
    index = build(crawl)
    assert len(index.centroids) > 1 and (index.page_cluster >= 0).sum() > 0.9 * crawl.n
    after = recrawled(crawl, 0.01, 2)
    updated = update_spectral_index(crawl, index, after)

    def recall(table: np.ndarray, embedding: np.ndarray) -> float:
        monkeypatch.setattr(spectral, "ANN_PAGES", 10**9)  # a scan of every page
        exact = nearest_pages(embedding)
        monkeypatch.setattr(spectral, "ANN_PAGES", 1_000)
        found = [len(set(a[a >= 0]) & set(b[b >= 0])) for a, b in zip(table, exact) if (b >= 0).any()]
        return float(np.sum(found)) / float((exact >= 0).sum())

    assert recall(updated.nearest, updated.embedding) >= recall(index.nearest, index.embedding) - 0.01


def test_lists_outside_the_reach_are_kept_and_the_updated_lists_are_worth_a_rebuilds(crawl: LinkGraph) -> None:
    """The update's lists (those within reach made again, the others kept) judged against a
    rebuild's by an independent index: at least 0.99 of its worth on average, and at the 5th
    percentile at least what a rebuild with another seed is worth."""
    index = build(crawl)
    pages = np.arange(crawl.n)
    before = index.lists(pages, Query(10))
    after = recrawled(crawl, 0.01, 3)
    updated = update_spectral_index(crawl, index, after)
    report: dict = {}
    reach = lists_reach(updated, as_arrays(before, crawl.n), 10, report=report)
    assert set(updated.change.folded) <= set(reach) and 0 < len(reach) < crawl.n / 2
    assert sum(report.values()) == len(reach)
    made = updated.lists(reach, Query(10))
    lists = {u: found for u, found in enumerate(before) if found}
    lists.update({int(u): found for u, found in zip(reach, made)})
    lists = {u: found for u, found in lists.items() if found}
    rebuilt = build(after)
    fresh = {u: found for u, found in enumerate(rebuilt.lists(pages, Query(10))) if found}
    other = build(after, seed=1)
    judge = build(after, seed=7, fingerprints=300)

    def judged(u, found):
        found = np.asarray(found, dtype=np.int64)
        return judge.combine(u, found, judge.fingerprints.sims(u, found))

    sample = sorted(np.random.default_rng(0).choice(sorted(fresh), 600, replace=False).tolist())
    floor = judged_quality({u: other.lists(np.array([u]), Query(10))[0] for u in sample}, fresh, judged, sample)
    quality = judged_quality(lists, fresh, judged, sample)
    assert quality.mean >= 0.99, (quality, floor)
    assert quality.p5 >= floor.p5, (quality, floor)


def test_no_change_updates_nothing_and_reaches_no_list(crawl: LinkGraph) -> None:
    index = build(crawl)
    updated = update_spectral_index(crawl, index, crawl)
    assert len(updated.change.folded) == 0 and len(updated.change.nearest_changed) == 0
    np.testing.assert_array_equal(updated.nearest, index.nearest)
    before = index.lists(np.arange(crawl.n), Query(10))
    assert len(lists_reach(updated, as_arrays(before, crawl.n), 10)) == 0


def test_drift_beyond_the_limits_and_an_index_without_its_state_are_built_again(crawl: LinkGraph,
                                                                                 monkeypatch) -> None:
    index = build(crawl)
    after = recrawled(crawl, 0.01, 5)
    monkeypatch.setattr(spectral_update, "FOLD_LIMIT", 0.001)
    with pytest.raises(ConfigurationError, match="folded into the link embedding"):
        update_spectral_index(crawl, index, after)
    monkeypatch.setattr(spectral_update, "FOLD_LIMIT", 1.0)
    monkeypatch.setattr(spectral_update, "DRIFT_LIMIT", -1.0)
    with pytest.raises(ConfigurationError, match="drifted"):
        update_spectral_index(crawl, index, after)
    plain = build_spectral_index(crawl, 20, 3, 0, 0.6)  # no walk state, no lengths
    assert not plain.updatable
    with pytest.raises(ConfigurationError, match="built again"):
        update_spectral_index(crawl, plain, after)


def test_the_folding_state_survives_the_store(crawl: LinkGraph, tmp_path) -> None:
    from linksim import store

    index = build(crawl)
    path = store.save(index, tmp_path, "spectral", crawl.n, crawl.m, graph=crawl)
    restored = store.open_path(path)
    assert isinstance(restored, SpectralIndex) and restored.updatable
    for name in ("lengths", "eigenvalues", "centroids", "page_cluster", "fold_state"):
        np.testing.assert_array_equal(getattr(restored, name), getattr(index, name))
    assert restored.change is None  # a build changed nothing


def test_an_updated_index_reopened_from_the_store_reaches_the_same_lists(crawl: LinkGraph, tmp_path) -> None:
    """The update's change is kept with the index: a run that finds the index already updated (the
    updating run killed before its lists were written) reaches the same lists as the update did."""
    from linksim import store

    index = build(crawl)
    before = as_arrays(index.lists(np.arange(crawl.n), Query(10)), crawl.n)
    after = recrawled(crawl, 0.01, 3)
    updated = update_spectral_index(crawl, index, after)
    reach = lists_reach(updated, before, 10)
    restored = store.open_path(store.save(updated, tmp_path, "spectral", after.n, after.m, graph=after))
    change = restored.change
    assert change is not None and change.before == index.graph_fingerprint != restored.graph_fingerprint
    for name in ("folded", "nearest_changed", "gained", "lost", "moved"):
        np.testing.assert_array_equal(np.asarray(getattr(change, name)), np.asarray(getattr(updated.change, name)))
    assert (change.deleted, change.drift, change.folded_share) == (
        updated.change.deleted, updated.change.drift, updated.change.folded_share)
    np.testing.assert_array_equal(lists_reach(restored, before, 10), reach)


def test_a_folded_row_moves_its_cosine_with_any_unchanged_page_by_at_most_how_far_it_moved(crawl: LinkGraph) -> None:
    """What the reach's co-linked gate rests on: |cos'(x, v) - cos(x, v)| <= |x' - x| (unit rows),
    for a folded page x and a page v whose row stayed. A stored change of an older linksim, without
    the distances, counts every row as moved as far as a unit row can."""
    index = build(crawl)
    after = recrawled(crawl, 0.01, 4)
    updated = update_spectral_index(crawl, index, after)
    change = updated.change
    old_rows, new_rows = np.asarray(index.embedding)[change.folded], updated.embedding[change.folded]
    np.testing.assert_allclose(change.moved, np.linalg.norm(new_rows - old_rows, axis=1), atol=1e-6)
    assert change.moved.max() > 0.05  # folding moved rows: the bound below is not about nothing
    stayed = np.setdiff1d(np.arange(crawl.n), change.folded)
    moved_cosines = np.abs(new_rows @ updated.embedding[stayed].T - old_rows @ np.asarray(index.embedding)[stayed].T)
    assert (moved_cosines <= change.moved[:, None] + 1e-5).all()
    arrays = {k: v for k, v in change.arrays().items() if k != "change_moved"}
    np.testing.assert_array_equal(spectral.Change.of_arrays(arrays).moved, np.full(len(change.folded), 2.0))


def test_lists_by_code_become_lists_by_page_and_a_gone_page_is_marked() -> None:
    codes = np.array([50, 10, 30], dtype=np.uint64)  # pages 0, 1, 2 of the new graph
    sources = np.array([10, 30, 70], dtype=np.uint64)  # page 70 is gone
    indptr, targets, scores = page_lists(sources, np.array([0, 2, 3, 4]), np.array([30, 70, 50, 10], dtype=np.uint64),
                                         np.array([0.9, 0.5, 0.4, 0.3]), codes)
    np.testing.assert_array_equal(indptr, [0, 0, 2, 3])
    np.testing.assert_array_equal(targets, [2, -1, 0])
    np.testing.assert_array_equal(scores, [0.9, 0.5, 0.4])
