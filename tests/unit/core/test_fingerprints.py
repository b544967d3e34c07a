"""Fingerprint indexes (Fogaras & Rácz): decoding, error bounds, invariants, exact references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linksim.errors import ConfigurationError
from linksim.fingerprints.exact import ppsimrank_exact, psimrank_exact, simrank_exact, xjaccard_exact
from linksim.fingerprints.minhash import build_minhash_index
from linksim.fingerprints.walks import walk_choices
from linksim.methods import METHODS
from linksim.methods import fingerprint_index
from linksim.graph import LinkGraph

DECAY, LENGTH = 0.6, 10


def random_graph(seed: int, n: int = 40, m: int = 120) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)


def naive_meeting_times(graph: LinkGraph, n_fingerprints: int, length: int, seed: int, method: str):
    """τ for every pair and fingerprint from explicit walks (the same random draws as the index)."""
    for steps in walk_choices(graph, n_fingerprints, length, seed, METHODS[method].walk):
        position = np.arange(graph.n)
        positions = [position]
        for choice in steps:
            position = np.where(position >= 0, choice[np.maximum(position, 0)], -1)
            positions.append(position)
        walks = np.array(positions)  # (length + 1, n)
        meet = (walks[:, :, None] == walks[:, None, :]) & (walks[:, :, None] >= 0)
        times = np.where(meet.any(axis=0), meet.argmax(axis=0), length + 1)
        yield times


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
@pytest.mark.parametrize("seed", [1, 2])
def test_tree_decoding_equals_the_naive_walks(method: str, seed: int) -> None:
    graph = random_graph(seed)
    index = fingerprint_index(graph, method, n_fingerprints=6, length=LENGTH, seed=seed)
    for i, times in enumerate(naive_meeting_times(graph, 6, LENGTH, seed, method)):
        decoded = np.array([[index.meeting_times(u, v)[i] for v in range(graph.n)] for u in range(graph.n)])
        np.testing.assert_array_equal(decoded, times)
        # related(u) walks the tree: the same times for every page u's walk meets.
        for u in (0, 7, 23):
            expected = {v: int(times[u, v]) for v in range(graph.n) if v != u and times[u, v] <= LENGTH}
            assert index.related_times(u, i) == expected


def estimate(graph: LinkGraph, n: int, seed: int, method: str) -> np.ndarray:
    total = np.zeros((graph.n, graph.n))
    for times in naive_meeting_times(graph, n, LENGTH, seed, method):
        total += np.where(times <= LENGTH, DECAY ** times.astype(float), 0.0)
    return total / n


@pytest.mark.parametrize("method, exact", [("simrank", simrank_exact), ("psimrank", psimrank_exact),
                                           ("ppsimrank", ppsimrank_exact)])
@pytest.mark.parametrize("seed", [3, 4])
def test_ten_thousand_fingerprints_are_within_003(method, exact, seed) -> None:
    graph = random_graph(seed, n=30, m=90)
    error = np.abs(estimate(graph, 10_000, seed, method) - exact(graph, DECAY, LENGTH)).max()
    assert error <= 0.03


@pytest.mark.parametrize("seed", [3, 4])
def test_xjaccard_ten_thousand_fingerprints_within_003(seed: int) -> None:
    graph = random_graph(seed, n=30, m=90)
    index = build_minhash_index(graph, 10_000, 4, seed)
    weights = DECAY ** np.arange(1, 5) * (1 - DECAY)
    equal = index.values[:, :, :, None] == index.values[:, :, None, :]
    estimated = np.tensordot(weights, equal.mean(axis=0), axes=(0, 0))
    assert np.abs(estimated - xjaccard_exact(graph, DECAY, 4)).max() <= 0.03
    assert index.sim(2, 5) == pytest.approx(estimated[2, 5])


@pytest.mark.parametrize("method, exact", [("simrank", simrank_exact), ("psimrank", psimrank_exact),
                                           ("ppsimrank", ppsimrank_exact)])
def test_theorem_5_bound_with_100_fingerprints(method, exact) -> None:
    graph = random_graph(7, n=40, m=130)
    index = fingerprint_index(graph, method, n_fingerprints=100, length=LENGTH, seed=7)
    reference = exact(graph, DECAY, LENGTH)
    delta, pairs, off = 0.2, 0, 0
    for u in range(graph.n):
        for v in range(u + 1, graph.n):
            pairs += 1
            off += abs(index.sim(u, v, DECAY) - reference[u, v]) > delta
    assert off / pairs <= 2 * math.exp(-6 / 7 * 100 * delta**2)


def test_xjaccard_theorem_5_bound_with_100_fingerprints() -> None:
    graph = random_graph(8, n=40, m=130)
    index = build_minhash_index(graph, 100, 4, 8)
    reference = xjaccard_exact(graph, DECAY, 4)
    off = [abs(index.sim(u, v) - reference[u, v]) > 0.2 for u in range(40) for v in range(u + 1, 40)]
    assert np.mean(off) <= 2 * math.exp(-6 / 7 * 100 * 0.2**2)


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
def test_invariants(method: str) -> None:
    graph = random_graph(9)
    index = fingerprint_index(graph, method, n_fingerprints=50, seed=9)
    for u in range(0, graph.n, 5):
        assert index.sim(u, u) == 1.0
        for v in range(graph.n):
            s = index.sim(u, v)
            assert 0.0 <= s <= 1.0
            assert s == index.sim(v, u)
    for count in (None, 10):
        ranked = index.related(3, top_k=None, n_fingerprints=count)
        expected = {v: index.sim(3, v, n_fingerprints=count) for v in range(graph.n) if v != 3}
        assert {v for v, _ in ranked} == {v for v, s in expected.items() if s > 0}
        assert all(score == pytest.approx(expected[v], abs=1e-12) for v, score in ranked)
        assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)


def test_xjaccard_invariants() -> None:
    graph = random_graph(10)
    index = build_minhash_index(graph, 50, 4, 10)
    assert index.sim(4, 4) == pytest.approx(DECAY * (1 - DECAY**4))  # Σ_k c^k (1 − c), as defined
    assert index.sim(4, 9) == index.sim(9, 4)
    ranked = index.related(4, top_k=5)
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
    assert ranked[0][1] == pytest.approx(index.sim(4, ranked[0][0]))


def test_same_seed_same_index_bit_for_bit() -> None:
    graph = random_graph(11)
    a = fingerprint_index(graph, "psimrank", 20, seed=5)
    b = fingerprint_index(graph, "psimrank", 20, seed=5)
    c = fingerprint_index(graph, "psimrank", 20, seed=6)
    np.testing.assert_array_equal(a.parent, b.parent)
    np.testing.assert_array_equal(a.label, b.label)
    assert not np.array_equal(a.parent, c.parent)
    assert a.graph_fingerprint == b.graph_fingerprint
    assert a.graph_fingerprint != fingerprint_index(random_graph(12), "psimrank", 1).graph_fingerprint
    assert a.nbytes == 20 * graph.n * (4 + 1)


def test_portal_example_of_the_2005_paper() -> None:
    # Two portals u=0, v=1 with the same k=5 in-neighbours (2..6) that have no in-links.
    k = 5
    graph = LinkGraph.from_edges(np.repeat(np.arange(2, 2 + k), 2), np.tile([0, 1], k), 2 + k)
    assert simrank_exact(graph, DECAY, LENGTH)[0, 1] == pytest.approx(DECAY / k)
    assert psimrank_exact(graph, DECAY, LENGTH)[0, 1] == pytest.approx(DECAY)
    assert fingerprint_index(graph, "psimrank", 200, seed=1).sim(0, 1) == pytest.approx(DECAY)
    assert fingerprint_index(graph, "simrank", 4000, seed=1).sim(0, 1) == pytest.approx(DECAY / k, abs=0.03)
    assert xjaccard_exact(graph, DECAY, 2)[0, 1] == pytest.approx(
        DECAY * (1 - DECAY) * 5 / 7 + DECAY**2 * (1 - DECAY) * 5 / 7)


def test_pages_without_in_links_are_similar_to_nobody() -> None:
    graph = LinkGraph.from_edges(np.array([0, 0]), np.array([1, 2]), 4)  # 0 and 3 have no in-links
    index = fingerprint_index(graph, "simrank", 50, seed=2)
    assert index.sim(0, 3) == 0.0 and index.related(0, top_k=None) == []
    assert index.sim(1, 2) == pytest.approx(DECAY)  # both have the single in-neighbour 0


@pytest.mark.parametrize("kwargs", [{"n_fingerprints": 0}, {"length": 0}, {"name": "jaccard"}, {"name": "pagesim"}])
def test_bad_parameters(kwargs) -> None:
    with pytest.raises(ConfigurationError):
        fingerprint_index(random_graph(1), **{"name": "simrank", **kwargs})


def test_the_build_takes_a_kind_of_walk_only() -> None:
    from linksim.fingerprints.walks import build_index

    with pytest.raises(ConfigurationError, match="kind of walk"):
        build_index(random_graph(1), "simrank", 2)


@pytest.mark.parametrize("slice_min", [0, 10**9], ids=["slices", "gather"])
@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
def test_all_fingerprints_at_once_equals_the_tree_walk(method: str, slice_min: int) -> None:
    graph = random_graph(13, n=60, m=150)
    index = fingerprint_index(graph, method, n_fingerprints=30, seed=13)
    index._slice_min = slice_min
    for u in range(graph.n):
        owner, pages, times = index.related_all_times(u)
        got = {(int(i), int(w)): int(t) for i, w, t in zip(owner, pages, times) if t <= index.length}
        expected = {(i, w): t for i in range(30) for w, t in index.related_times(u, i).items()}
        assert got == expected


@pytest.mark.parametrize("method", ["simrank", "psimrank", "xjaccard"])
def test_related_scores_are_the_pairwise_similarities(method: str) -> None:
    graph = random_graph(21, n=45, m=140)
    if method == "xjaccard":
        index = build_minhash_index(graph, n_fingerprints=25, seed=4)
    else:
        index = fingerprint_index(graph, method, n_fingerprints=25, seed=4)
    for u in range(graph.n):
        for count in (25, 7):
            expected = {v: index.sim(u, v, n_fingerprints=count) for v in range(graph.n) if v != u}
            expected = {v: s for v, s in expected.items() if s > 0}
            got = dict(index.related(u, top_k=None, n_fingerprints=count))
            assert got.keys() == expected.keys()
            assert all(got[v] == pytest.approx(expected[v], abs=1e-12) for v in got)
            ranked = index.related(u, top_k=3, n_fingerprints=count)
            best = sorted(expected.items(), key=lambda item: (-round(item[1], 12), item[0]))[:3]
            assert [v for v, _ in ranked] == [v for v, _ in best]


def navigation_site(n: int = 3_000, sidebar: int = 40, sections: int = 30, seed: int = 3) -> LinkGraph:
    """A documentation site: every page links the sidebar's pages, each of those links 150 pages,
    and two pages in three link 5 pages of their section, so that every page's 2-step
    in-neighbourhood is nearly the whole site and each of its min-hash rows past the first one
    bucket of nearly every page (issue 59: 29 lists a second on a wget crawl)."""
    rng = np.random.default_rng(seed)
    section = rng.integers(0, sections, n)
    source, target = [], []
    for u in range(sidebar, n):
        source += [u] * sidebar
        target += range(sidebar)
        if u % 3:
            mates = rng.choice(np.flatnonzero(section == section[u]), 5)
            source += [u] * 5
            target += mates.tolist()
    for h in range(sidebar):
        target += rng.choice(np.arange(sidebar, n), 150, replace=False).tolist()
        source += [h] * 150
    return LinkGraph.from_edges(np.array(source), np.array(target), n)


@pytest.mark.parametrize("candidates", [256, 12])
def test_xjaccard_hub_buckets_are_sampled_and_the_lists_keep_their_worth(candidates: int, monkeypatch) -> None:
    from linksim.fingerprints.minhash import MinHashIndex

    index = build_minhash_index(navigation_site(), n_fingerprints=40, length=4, seed=1)
    index._sample_candidates = candidates  # 12: the candidates miss pages, so some lists cannot be proven
    read = []
    summed = MinHashIndex._summed
    monkeypatch.setattr(MinHashIndex, "_summed", lambda self, order, starts, sizes, weights: (
        read.append(int(sizes.sum())), summed(self, order, starts, sizes, weights))[1])
    rows = index.n_fingerprints * index.length
    worths, proven = [], 0
    for u in range(40, index.n, 29):
        exact = index.related(u, top_k=10, sample=0)
        whole = read[-1]
        before = index.lists_sampled
        got = index.related(u, top_k=10)
        assert whole > 20_000 and read[-1] <= rows * index._bucket_cap and read[-1] < whole / 4
        assert all(score == pytest.approx(index.sim(u, v), abs=1e-12) for v, score in got)
        if index.lists_sampled == before:  # proven: the exact list
            proven += 1
            assert [v for v, _ in got] == [v for v, _ in exact]
        worths.append(sum(s for _, s in got) / sum(s for _, s in exact))
    assert index.lists_sampled + proven == len(worths)
    if candidates < 100:  # a list that is not the exact one is never passed off as proven
        assert index.lists_sampled > 0 and max(worths) <= 1 + 1e-9
    else:
        assert index.lists_sampled == 0 and min(worths) == pytest.approx(1, abs=1e-9)


# The matrix forms of the exact references against the definitions written pair by pair -------
def simrank_by_pairs(graph: LinkGraph, decay: float, length: int) -> np.ndarray:
    sets = [graph.in_links(v).tolist() for v in range(graph.n)]
    scores = np.eye(graph.n)
    for _ in range(length):
        following = np.eye(graph.n)
        for u in range(graph.n):
            for v in range(graph.n):
                if u != v and sets[u] and sets[v]:
                    following[u, v] = decay * np.mean([scores[a, b] for a in sets[u] for b in sets[v]])
        scores = following
    return scores


def psimrank_pair(a: set, b: set, scores: np.ndarray) -> float:
    """PSimRank's iteration for one pair of choice sets, as the papers README reads it."""
    if not a or not b:
        return 0.0
    union = len(a | b)
    value = len(a & b) / union
    if a - b:
        value += len(a - b) / union * np.mean([scores[x, y] for x in a - b for y in b])
    if b - a:
        value += len(b - a) / union * np.mean([scores[x, y] for x in a for y in b - a])
    return value


def psimrank_by_pairs(graph: LinkGraph, decay: float, length: int) -> np.ndarray:
    sets = [set(graph.in_links(v).tolist()) for v in range(graph.n)]
    scores = np.eye(graph.n)
    for _ in range(length):
        following = np.eye(graph.n)
        for u in range(graph.n):
            for v in range(u + 1, graph.n):
                following[u, v] = following[v, u] = decay * psimrank_pair(sets[u], sets[v], scores)
        scores = following
    return scores


def ppsimrank_by_pairs(graph: LinkGraph, decay: float, length: int) -> np.ndarray:
    """P-PSimRank by its definition: half PSimRank's step over the closed in-sets, half over the
    closed out-sets (the page itself always in its set)."""
    ins = [set(graph.in_links(v).tolist()) | {v} for v in range(graph.n)]
    outs = [set(graph.out_links(v).tolist()) | {v} for v in range(graph.n)]
    scores = np.eye(graph.n)
    for _ in range(length):
        following = np.eye(graph.n)
        for u in range(graph.n):
            for v in range(u + 1, graph.n):
                following[u, v] = following[v, u] = decay * 0.5 * (
                    psimrank_pair(ins[u], ins[v], scores) + psimrank_pair(outs[u], outs[v], scores))
        scores = following
    return scores


def xjaccard_by_sets(graph: LinkGraph, decay: float, length: int) -> np.ndarray:
    reach = [{u} for u in range(graph.n)]
    scores = np.zeros((graph.n, graph.n))
    for k in range(1, length + 1):
        reach = [r.union(*(reach[w] for w in graph.in_links(u).tolist())) for u, r in enumerate(reach)]
        for u in range(graph.n):
            for v in range(graph.n):
                scores[u, v] += decay**k * (1 - decay) * len(reach[u] & reach[v]) / len(reach[u] | reach[v])
    return scores


@pytest.mark.parametrize("seed", [5, 6])
def test_exact_references_equal_their_pairwise_definitions(seed: int) -> None:
    graph = random_graph(seed, n=18, m=45)
    assert np.allclose(simrank_exact(graph, 0.6, 5), simrank_by_pairs(graph, 0.6, 5), atol=1e-12)
    assert np.allclose(psimrank_exact(graph, 0.6, 5), psimrank_by_pairs(graph, 0.6, 5), atol=1e-12)
    assert np.allclose(ppsimrank_exact(graph, 0.6, 4), ppsimrank_by_pairs(graph, 0.6, 4), atol=1e-12)
    assert np.allclose(xjaccard_exact(graph, 0.6, 3), xjaccard_by_sets(graph, 0.6, 3), atol=1e-12)


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
def test_meeting_times_of_many_pages_equal_lemma_2(method: str) -> None:
    graph = random_graph(31, n=50, m=150)
    index = fingerprint_index(graph, method, n_fingerprints=20, seed=8)
    for u in range(graph.n):
        many = index.meeting_times_many(u, np.arange(graph.n))
        for v in range(graph.n):
            assert many[v].tolist() == index.meeting_times(u, v).tolist()


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
@pytest.mark.parametrize("limit, cost", [(-1, 5.0), (5, 0.0), (10_000, 0.0), (2_000, 5.0)])
def test_top_k_read_level_by_level_equals_reading_every_member(method: str, limit: int, cost: float) -> None:
    # Clusters of pages linked from the same hubs (high similarity inside), plus random links.
    rng = np.random.default_rng(33)
    source, target = [], []
    for cluster in range(8):
        hubs, pages = [80 + 2 * cluster], range(10 * cluster, 10 * cluster + 10)
        source += [h for h in hubs for _ in pages]
        target += [p for _ in hubs for p in pages]
    source += rng.integers(0, 96, 60).tolist()
    target += rng.integers(0, 96, 60).tolist()
    graph = LinkGraph.from_edges(np.array(source), np.array(target), 96)
    index = fingerprint_index(graph, method, n_fingerprints=30, seed=2)
    index._candidate_limit = limit  # -1: the bound never stops the reading
    index._rescore_cost = cost  # 0: stop as soon as the bound allows
    index._use_twins = False
    levels = []
    for count in (30, 11):
        powers = index.powers(DECAY)
        for u in range(graph.n):
            every = index.related(u, top_k=None, n_fingerprints=count)  # numpy, every member
            for top_k in (1, 3, 8):
                for similarity_cutoff in (0.0, 0.1):
                    got = index.related(u, top_k=top_k, similarity_cutoff=similarity_cutoff, n_fingerprints=count)
                    assert got == [(v, s) for v, s in every if s > similarity_cutoff][:top_k]  # same floats
                    levels.append(index._top_k_scan(u, top_k, powers, similarity_cutoff, count)[2])
    if limit >= 0 and cost == 0:
        assert min(levels) <= 2  # the bound proved some lists after two levels
    elif limit < 0:
        assert min(levels) == index.length + 1  # every member read


def test_tree_sizes_by_length_equal_the_walks_meeting_by_then() -> None:
    from linksim.fingerprints.index import tree_sizes_by_length

    graph = random_graph(41, n=70, m=200)
    index = fingerprint_index(graph, "psimrank", n_fingerprints=12, length=6, seed=3)
    by_length = tree_sizes_by_length(index)
    all_times = list(naive_meeting_times(graph, 12, 6, 3, "psimrank"))
    for length in range(1, 7):
        sizes = []
        for times in all_times:  # pages whose walks meet by `length` form one tree
            together = times <= length
            seen = np.zeros(graph.n, dtype=bool)
            for u in range(graph.n):
                if not seen[u]:
                    sizes.append(int(together[u].sum()))
                    seen |= together[u]
        assert by_length[length] == (pytest.approx(np.mean(sizes)), max(sizes))


def hub_graph(seed: int) -> LinkGraph:
    """Hubs each linking a set of pages that have no other in-link (twins), some of them
    also linked from elsewhere, plus random links."""
    rng = np.random.default_rng(seed)
    source, target = [], []
    for hub, size in zip(range(90, 96), (2, 3, 5, 9, 14, 20)):
        pages = rng.choice(90, size, replace=False)
        source += [hub] * size
        target += pages.tolist()
    source += rng.integers(0, 96, 70).tolist()
    target += rng.integers(60, 96, 70).tolist()
    return LinkGraph.from_edges(np.array(source), np.array(target), 96)


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
def test_twin_classes_are_the_pages_meeting_at_step_one_everywhere(method: str) -> None:
    graph = hub_graph(8)
    index = fingerprint_index(graph, method, n_fingerprints=30, seed=8)
    for count in (30, 4):
        klass, indptr, members = index.twin_classes(count)
        assert (np.diff(indptr) >= 2).all() and sorted(members.tolist()) == np.flatnonzero(klass >= 0).tolist()
        for j in range(len(indptr) - 1):
            group = members[indptr[j] : indptr[j + 1]]
            assert (np.diff(group) > 0).all() and (klass[group] == j).all()
        for u in range(graph.n):
            times = index.meeting_times_many(u, np.arange(graph.n), count)
            twins = (times == 1).all(axis=1)
            expected = np.flatnonzero(twins | (np.arange(graph.n) == u)) if klass[u] >= 0 else np.array([u])
            got = np.flatnonzero(klass == klass[u]) if klass[u] >= 0 else np.array([u])
            assert got.tolist() == expected.tolist()
    if method != "ppsimrank":  # closed neighbourhoods in both directions: a page is nobody's twin here
        assert len(index.twin_classes()[1]) > 4  # the hubs' single-link pages at least


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
def test_twin_answers_equal_the_query_of_each_page(method: str) -> None:
    graph = hub_graph(9)
    index = fingerprint_index(graph, method, n_fingerprints=30, seed=9)
    for similarity_cutoff in (0.0, 0.05):
        for count in (30, 7):
            for u in range(graph.n):
                for top_k in (1, 4, 12, 40):  # the same class asked for lists of several lengths
                    index._use_twins = False
                    expected = index.related(u, top_k=top_k, similarity_cutoff=similarity_cutoff, n_fingerprints=count)
                    index._use_twins = True
                    got = index.related(u, top_k=top_k, similarity_cutoff=similarity_cutoff, n_fingerprints=count)
                    assert [v for v, _ in got] == [v for v, _ in expected]
                    assert np.allclose([s for _, s in got], [s for _, s in expected], atol=1e-12)


def test_ppsimrank_sees_both_directions() -> None:
    """A page with out-links only (no in-link) is related to a page linking to the same pages, and
    two pages that link to each other are related without any other link; PSimRank sees neither."""
    graph = LinkGraph.from_edges(np.array([0, 0, 1, 1, 3]), np.array([2, 3, 2, 3, 4]), 6)
    both = ppsimrank_exact(graph, DECAY, 3)
    assert both[0, 1] > 0 and psimrank_exact(graph, DECAY, 3)[0, 1] == 0
    # 3 -> 4 only: closed out-sets {3, 4} and {4} share 4; closed in-sets {0, 1, 3} and {3, 4} share 3.
    assert both[3, 4] > 0
    assert both[5].sum() == 1.0 and both[:, 5].sum() == 1.0  # a page without links: itself only
    assert np.allclose(both, both.T) and (both >= 0).all() and (both <= 1).all()
    index = fingerprint_index(graph, "ppsimrank", n_fingerprints=200, length=3, seed=2)
    assert {v for v, _ in index.related(0, top_k=None)} >= {1}
    assert index.related(5, top_k=None) == []


def test_min_hash_inverted_lists_are_each_rows_pages_by_value() -> None:
    """order[i, k] lists the pages by min-hash value (stable: by page within a value), and
    indptr[i, k, v] is where value v's pages start: a reading of the definition, row by row."""
    from linksim.fingerprints.minhash import build_minhash_index
    from linksim.graph import LinkGraph

    rng = np.random.default_rng(7)
    graph = LinkGraph.from_edges(rng.integers(0, 60, 300), rng.integers(0, 60, 300), 60)
    index = build_minhash_index(graph, 5, 3, seed=2)
    order, indptr = index.inverted()
    assert order.dtype == indptr.dtype == np.int32
    for i in range(5):
        for k in range(3):
            values = index.values[i, k]
            expected = sorted(range(60), key=lambda page: (values[page], page))
            assert order[i, k].tolist() == expected
            for v in range(61):
                assert indptr[i, k, v] == np.count_nonzero(values < v)


def preorder_layout(parent: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, ...]:
    """The tree layout by its definition, one page at a time: the roots by page, each page's
    children by (label, page), in preorder; (order, position, size, label at each position, root)."""
    n = len(parent)
    children: dict[int, list[int]] = {u: [] for u in range(n)}
    for u in range(n):
        if parent[u] >= 0:
            children[int(parent[u])].append(u)
    order: list[int] = []
    size, root = np.ones(n, dtype=np.int64), np.arange(n)

    def visit(u: int, top: int) -> int:
        order.append(u)
        root[u] = top
        for v in sorted(children[u], key=lambda v: (int(label[v]), v)):
            size[u] += visit(v, top)
        return int(size[u])

    for u in range(n):
        if parent[u] < 0:
            visit(u, u)
    order_array = np.array(order)
    position = np.empty(n, dtype=np.int64)
    position[order_array] = np.arange(n)
    return order_array, position, size, label[order_array], root


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
def test_the_tree_layout_is_each_forest_in_preorder_by_label(method: str) -> None:
    from linksim.fingerprints.index import TreeLayout

    index = fingerprint_index(random_graph(5, n=300, m=1200), method, n_fingerprints=12, length=4, seed=3)
    rng = np.random.default_rng(0)
    deep = np.full(2000, -1, dtype=np.int32)  # a forest deeper than any walk's, labels of either sign
    deep[1:] = [rng.integers(0, u) if rng.random() < 0.9 else -1 for u in range(1, 2000)]
    parents = [np.asarray(index.parent), deep[None, :]]
    labels = [np.asarray(index.label), rng.integers(-128, 128, (1, 2000)).astype(np.int8)]
    for parent, label in zip(parents, labels):
        layout = TreeLayout.build(parent, label)
        for i in range(len(parent)):
            expected = preorder_layout(parent[i], label[i])
            for name, want in zip(("order", "position", "size", "label", "root"), expected):
                np.testing.assert_array_equal(getattr(layout, name)[i], want, err_msg=f"{name} of fingerprint {i}")


def test_a_parent_table_that_is_no_forest_is_refused() -> None:
    from linksim.fingerprints.index import TreeLayout

    parent = np.array([[-1, 2, 1]], dtype=np.int32)  # 1 and 2 each other's parent: no root above them
    with pytest.raises(ValueError, match="not a forest"):
        TreeLayout.build(parent, np.zeros((1, 3), dtype=np.int8))
