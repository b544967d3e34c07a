"""Pages related to a set: the combination against a direct computation from every pair's score."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.errors import ConfigurationError
from linksim.graph import LinkGraph
from linksim.methods import METHODS
from linksim.ranking.sets import related_to_set

N = 60


def random_graph(seed: int) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, N, 400), rng.integers(0, N, 400), N)


def small_index(method: str, graph: LinkGraph):
    given = {"n_fingerprints": 40, "seed": 3} if METHODS[method].samples else {}
    return METHODS[method].build_index(graph, **given)


def direct(index, members: list[int], top_k: int, pool: int) -> tuple[list[int], np.ndarray]:
    """From the score of every pair (index.sim): each member's pool best pages (ties by page, u
    and scores of 0 left out), summed, divided by the members, the members left out."""
    total = np.zeros(index.n)
    for s in members:
        scores = np.array([index.sim(s, v) if v != s else 0.0 for v in range(index.n)])
        ranked = [v for v in np.lexsort((np.arange(index.n), -np.round(scores, 12))) if scores[v] > 0][:pool]
        total[ranked] += scores[ranked]
    total /= len(members)
    total[members] = 0.0
    order = [v for v in np.lexsort((np.arange(index.n), -np.round(total, 12))) if total[v] > 0][:top_k]
    return order, total[order]


@pytest.mark.parametrize("method", ["simrank", "xjaccard", "pagesim", "spectral"])
@pytest.mark.parametrize("pool", [5, 100])
def test_the_combination_is_the_mean_of_the_members_lists_scores(method: str, pool: int) -> None:
    graph = random_graph(1)
    index = small_index(method, graph)
    members = [3, 17, 42]
    pages, scores, counts = related_to_set(index, members, top_k=5, pool=pool, sample=0) \
        if METHODS[method].samples and METHODS[method].fingerprint_trees else \
        related_to_set(index, members, top_k=5, pool=pool)
    expected_pages, expected_scores = direct(index, members, 5, pool)
    assert pages.tolist() == expected_pages
    np.testing.assert_allclose(scores, expected_scores, rtol=0, atol=1e-12)
    assert not set(pages.tolist()) & set(members)
    assert ((counts >= 1) & (counts <= len(members))).all()
    if pool >= N:  # every member's whole list: the plain mean of the similarities to the members
        mean = np.mean([[index.sim(s, v) for v in pages.tolist()] for s in members], axis=0)
        np.testing.assert_allclose(scores, mean, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["simrank", "psimrank", "xjaccard", "pagesim", "spectral"])
def test_a_set_of_one_page_is_that_pages_list(method: str) -> None:
    index = small_index(method, random_graph(2))
    for u in (0, 7, 33):
        pages, scores, counts = related_to_set(index, [u, u], top_k=10)
        own = index.related(u, top_k=10)
        assert list(zip(pages.tolist(), scores.tolist())) == own  # the same floats, not close ones
        assert (counts == 1).all()


def test_bad_sets_are_refused() -> None:
    index = small_index("xjaccard", random_graph(3))
    with pytest.raises(ConfigurationError, match="at least one page"):
        related_to_set(index, [], top_k=3)
    with pytest.raises(ConfigurationError, match="pool must be at least top_k"):
        related_to_set(index, [1, 2], top_k=10, pool=5)
    with pytest.raises(ConfigurationError, match="top-k"):
        related_to_set(index, [1, 2], top_k=0)
