"""Target filters: every method's filtered lists are the best passing pages of its ranking, and still
``top_k`` long wherever that many pages pass."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.graph import LinkGraph
from linksim.parameters import Query
from linksim.methods import METHODS
from linksim.ranking.sets import related_to_set
from linksim.ranking.targets import DEEPER, NO_HOST, Targets, host_numbers, ranked_within
from linksim.ranking.topk import top_k_all

TOP_K = 4


def hosts_graph(seed: int, sites: int = 4, per_site: int = 15) -> tuple[LinkGraph, np.ndarray]:
    """Sites of pages that link mostly inside their site (navigation) and sometimes across, and
    a few pages on no host: the shape that fills unfiltered lists with one site's pages."""
    rng = np.random.default_rng(seed)
    n = sites * per_site + 3
    site = np.r_[np.repeat(np.arange(sites), per_site), [NO_HOST] * 3].astype(np.int32)
    sources, targets = [], []
    for u in range(n):
        mine = np.flatnonzero(site == site[u]) if site[u] != NO_HOST else np.arange(n)
        for v in rng.choice(mine, 5):
            sources.append(u), targets.append(int(v))
        for v in rng.integers(0, n, 1):
            sources.append(u), targets.append(int(v))
    return LinkGraph.from_edges(np.array(sources), np.array(targets), n), site


def built(name: str, graph: LinkGraph):
    entry = METHODS[name]
    parameters = entry.parameters_for(n_fingerprints=40, seed=3) if entry.samples else entry.parameters_for()
    return entry.build(graph, parameters)


def filters(site: np.ndarray) -> list[Targets]:
    every_third = (np.arange(len(site)) % 3 == 0)
    return [Targets.of_hosts("other-hosts", site, same=False), Targets.of_hosts("same-host", site, same=True),
            Targets.of_pages("label:Third", every_third)]


@pytest.mark.parametrize("name", [name for name in METHODS if name != "spectral"])
def test_a_filtered_list_is_the_best_passing_pages_of_the_whole_ranking(name: str) -> None:
    graph, site = hosts_graph(1)
    index = built(name, graph)
    full = 0
    for targets in filters(site):
        source, target, score, _ = top_k_all(index, top_k=TOP_K, targets=targets, workers=1, show_progress=False,
                                             **({"sample": 0} if METHODS[name].reads_sample else {}))
        for u in range(graph.n):
            listed = list(zip(target[source == u].tolist(), score[source == u].tolist()))
            everything = index.related(u, top_k=None)
            passing = [(v, s) for v, s in everything if targets.passes(u, np.array([v]))[0]]
            assert [v for v, _ in listed] == [v for v, _ in passing[:TOP_K]]
            np.testing.assert_allclose([s for _, s in listed], [s for _, s in passing[:TOP_K]], atol=1e-12)
            full += len(listed) == TOP_K and len(everything) > DEEPER * TOP_K and \
                sum(targets.passes(u, np.array([v for v, _ in everything[:DEEPER * TOP_K]]))) < TOP_K
    assert full > 0  # lists read deeper than the first depth, and filled


def test_spectral_chooses_its_candidates_among_the_passing_pages() -> None:
    graph, site = hosts_graph(2)
    index = built("spectral", graph)
    for targets in filters(site):
        lists = ranked_within(index, np.arange(graph.n), Query(TOP_K), targets)
        for u, listed in enumerate(lists):
            assert all(targets.passes(u, np.array([v for v, _ in listed])))
            # The compiled lists are the step-by-step numpy lists of the filtered candidates.
            assert listed == index.related_by_steps(u, TOP_K, 0.0, targets=targets)
            candidates = index.candidates(u, targets=targets)
            assert set(targets.passes(u, candidates).tolist()) <= {True}
            scores = index.combine(u, candidates, index.fingerprints.sims(u, candidates))
            if np.count_nonzero(scores[candidates != u] > 0) >= TOP_K:
                assert len(listed) == TOP_K  # enough passing candidates: a full list
    # Unfiltered, the sites' own pages crowd the lists; filtered, other hosts' pages fill them.
    other = filters(site)[0]
    plain = index.related_many(np.arange(60), TOP_K)
    crossed = sum(other.passes(u, np.array([v for v, _ in lst])).sum() for u, lst in enumerate(plain))
    filled = sum(len(lst) for lst in ranked_within(index, np.arange(60), Query(TOP_K), other))
    assert filled > crossed


def test_the_host_filters_and_a_page_on_no_host() -> None:
    site = host_numbers(["a.org", "b.org", None, "a.org"])
    assert site.tolist() == [0, 1, NO_HOST, 0]
    other, same = Targets.of_hosts("other-hosts", site, False), Targets.of_hosts("same-host", site, True)
    pages = np.arange(4)
    assert other.passes(0, pages).tolist() == [False, True, False, False]
    assert same.passes(0, pages).tolist() == [True, False, False, True]
    assert other.passes(2, pages).tolist() == [True, True, False, True]  # no host: every page with one
    assert same.passes(2, pages).tolist() == [False] * 4
    assert other.passes_set(np.array([0, 1]), pages).tolist() == [False, False, False, False]
    assert same.passes_set(np.array([1]), pages).tolist() == [False, True, False, False]
    assert other.digest() != same.digest()


@pytest.mark.parametrize("name", ["psimrank", "spectral"])
def test_a_set_lists_only_pages_that_pass_for_the_set(name: str) -> None:
    graph, site = hosts_graph(3)
    index = built(name, graph)
    other = Targets.of_hosts("other-hosts", site, same=False)
    members = np.array([0, 1, 16])  # two sites
    pages, scores, counts = related_to_set(index, members, top_k=TOP_K, targets=other)
    assert len(pages) == TOP_K and other.passes_set(members, pages).all()
    assert not np.isin(site[pages], site[members]).any()
    plain = related_to_set(index, members, top_k=TOP_K)[0]
    assert np.isin(site[plain], site[members]).any()  # without the filter, the members' sites show


def test_the_nearest_pages_within_a_filter_are_the_best_passing_pages_by_cosine(monkeypatch) -> None:
    import linksim.spectral as spectral

    graph, site = hosts_graph(4)
    index = built("spectral", graph)
    other = Targets.of_hosts("other-hosts", site, same=False)
    embedding = index.embedding.astype(np.float64)
    table = index.nearest_within(other, np.arange(graph.n))
    for u in range(graph.n):
        row = table[u][table[u] >= 0]
        cos = embedding @ embedding[u]
        passing = [v for v in np.flatnonzero(other.passes(u, np.arange(graph.n))) if cos[v] > spectral.NEAR_COSINE]
        best = sorted(passing, key=lambda v: (-round(cos[v], 12), v))[: spectral.NEAREST]
        assert row.tolist() == best  # a scan of every page: the exact answer
    # Every page of a graph beyond ANN_PAGES: the clusters' search, deeper, then the filter.
    monkeypatch.setattr(spectral, "ANN_PAGES", 10)
    searched = np.full(index.nearest.shape, -1, dtype=np.int32)
    spectral.nearest_pages_within(index.embedding, other, np.arange(graph.n), searched)
    assert (searched >= 0).sum() > 0.5 * (table >= 0).sum()
    for u in range(graph.n):
        row = searched[u][searched[u] >= 0]
        assert other.passes(u, row).all() and set(row.tolist()) <= set(np.flatnonzero(other.passes(u, np.arange(graph.n))).tolist())
        cos = embedding[row] @ embedding[u]
        assert (np.diff(np.round(cos, 12)) <= 0).all()  # ranked by exact cosine
