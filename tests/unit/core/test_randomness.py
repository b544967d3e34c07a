"""Hash-based draws: a pure function of (seed, fingerprint, step, page), with the distributions the
papers ask for."""

from __future__ import annotations

import numpy as np

from linksim.graph import LinkGraph
from linksim.fingerprints.minhash import build_minhash_index
from linksim.fingerprints.randomness import GAMMA, draws, inward, mix64, order_keys, stream_key
from linksim.fingerprints.kinds import BOTH, SMALLEST, UNIFORM
from linksim.fingerprints.walks import step_choices
from linksim.methods import fingerprint_index


def random_graph(seed: int, n: int = 300, m: int = 2_000) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)


def test_compiled_draws_equal_the_python_definition() -> None:
    # SplitMix64's published first outputs from state 0 (the state advances by γ before mixing).
    assert [mix64(GAMMA * k) for k in (1, 2, 3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    key = stream_key(12345, 7, 3)
    compiled = draws(np.uint64(key), np.arange(1_000, dtype=np.uint64))
    assert [int(x) for x in compiled] == [mix64(key + page * GAMMA) for page in range(1_000)]
    assert stream_key(1, 2, 3) != stream_key(1, 3, 2) != stream_key(2, 2, 3)


def test_choices_depend_on_nothing_but_seed_fingerprint_step_and_page() -> None:
    """A page's choice is the same whatever other pages the graph holds (so a partition of the
    pages draws what the whole does): graph B has A's in- and out-links of the even pages only."""
    a = random_graph(1)
    source, target = a.edges()
    even = (target % 2 == 0) | (source % 2 == 0)
    b = LinkGraph.from_edges(source[even], target[even], a.n)
    for walk in (UNIFORM, SMALLEST, BOTH):
        for step in (1, 4):
            ca, cb = step_choices(a, walk, 9, 2, step), step_choices(b, walk, 9, 2, step)
            pages = np.flatnonzero(np.arange(a.n) % 2 == 0)
            np.testing.assert_array_equal(ca[pages], cb[pages])


def test_simrank_choices_are_uniform_over_the_in_neighbours() -> None:
    # One page with 5 in-links, drawn in 20,000 streams: each in-neighbour about 1/5 of the time.
    graph = LinkGraph.from_edges(np.array([1, 2, 3, 4, 5]), np.zeros(5, dtype=np.int64), 6)
    picks = np.array([step_choices(graph, UNIFORM, seed, 0, 1)[0] for seed in range(20_000)])
    counts = np.bincount(picks, minlength=6)[1:]
    # chi-square with 4 degrees of freedom: 18.5 is its 0.999 quantile.
    assert ((counts - 4_000) ** 2 / 4_000).sum() < 18.5


def test_psimrank_walks_meet_with_the_jaccard_probability() -> None:
    # Page 0 has in-links {1, 2, 3}, page 6 {2, 3, 4, 5}: they choose the same in-neighbour with
    # probability |∩| / |∪| = 2 / 5 (the 2005 paper's coupling); 20,000 streams, 4 sigmas.
    graph = LinkGraph.from_edges(np.array([1, 2, 3, 2, 3, 4, 5]), np.array([0, 0, 0, 6, 6, 6, 6]), 7)
    same = np.mean([(lambda c: c[0] == c[6])(step_choices(graph, SMALLEST, s, 0, 1)) for s in range(20_000)])
    assert abs(same - 0.4) < 4 * np.sqrt(0.4 * 0.6 / 20_000)


def test_ppsimrank_walks_meet_with_the_mean_jaccard_of_the_closed_neighbourhoods() -> None:
    # Page 0: closed in-set {0, 1, 2, 3}, closed out-set {0, 7}; page 6: in {2, 3, 4, 5, 6}, out
    # {6, 7}. One coin a stream: in-links (Jaccard 2 / 7) or out-links (1 / 3), half the time each.
    graph = LinkGraph.from_edges(np.array([1, 2, 3, 2, 3, 4, 5, 0, 6]), np.array([0, 0, 0, 6, 6, 6, 6, 7, 7]), 8)
    streams = [stream_key(s, 0, 1) for s in range(20_000)]
    assert abs(np.mean([inward(k) for k in streams]) - 0.5) < 4 * np.sqrt(0.25 / 20_000)
    same = np.mean([(lambda c: c[0] == c[6])(step_choices(graph, BOTH, s, 0, 1)) for s in range(20_000)])
    expected = (2 / 7 + 1 / 3) / 2
    assert abs(same - expected) < 4 * np.sqrt(expected * (1 - expected) / 20_000)


def test_order_keys_are_distinct_and_carry_their_page() -> None:
    key = stream_key(3, 1, 0)
    keys = order_keys(np.uint64(key), np.arange(5_000, dtype=np.uint64))
    assert len(np.unique(keys)) == 5_000 and (keys >= 0).all()
    np.testing.assert_array_equal(keys & 0xFFFFFFFF, np.arange(5_000))
    assert [int(k) >> 32 for k in keys] == [mix64(key + p * GAMMA) >> 33 for p in range(5_000)]


def test_minhash_values_are_the_first_page_of_each_in_set() -> None:
    graph = random_graph(2, n=60, m=200)
    index = build_minhash_index(graph, n_fingerprints=3, length=2, seed=5)
    source, target = graph.edges()
    for i in range(3):
        rank = [mix64(stream_key(5, i, 0) + p * GAMMA) >> 33 for p in range(graph.n)]
        reach = [{u} for u in range(graph.n)]  # I_0(u)
        for k in range(2):
            reach = [r | {int(s) for s, t in zip(source, target) if t in r} for r in reach]
            first = [min(r, key=lambda p: rank[p]) for r in reach]
            np.testing.assert_array_equal(index.values[i, k], first)


def test_index_does_not_change_with_the_number_of_fingerprints_built() -> None:
    # Fingerprint i draws from its own streams: the first 3 of 5 are the 3 of a build of 3.
    graph = random_graph(3)
    five, three = fingerprint_index(graph, "psimrank", 5, 6, seed=4), fingerprint_index(graph, "psimrank", 3, 6, seed=4)
    np.testing.assert_array_equal(five.parent[:3], three.parent)
    np.testing.assert_array_equal(five.label[:3], three.label)


def test_simrank_choices_of_two_pages_are_independent() -> None:
    # Page 0 has in-links {1, 2, 3}, page 6 {2, 3, 4, 5}: each page orders its in-links its own way,
    # so they choose the same in-neighbour with probability 2 / (3 * 4) = 1/6 (PSimRank's coupling
    # would give 2 / 5); 20,000 streams, 4 sigmas.
    graph = LinkGraph.from_edges(np.array([1, 2, 3, 2, 3, 4, 5]), np.array([0, 0, 0, 6, 6, 6, 6]), 7)
    same = np.mean([(lambda c: c[0] == c[6])(step_choices(graph, UNIFORM, s, 0, 1)) for s in range(20_000)])
    assert abs(same - 1 / 6) < 4 * np.sqrt((1 / 6) * (5 / 6) / 20_000)


def test_a_simrank_choice_moves_only_when_the_change_touches_it() -> None:
    # A page's in-links gain one page: its choice moves only to that page (the new one comes first
    # in the page's order), in about 1 / (degree + 1) of the streams.
    before = LinkGraph.from_edges(np.array([1, 2, 3, 4]), np.zeros(4, dtype=np.int64), 6)
    after = LinkGraph.from_edges(np.array([1, 2, 3, 4, 5]), np.zeros(5, dtype=np.int64), 6)
    moved = []
    for seed in range(5_000):
        a, b = step_choices(before, UNIFORM, seed, 0, 1)[0], step_choices(after, UNIFORM, seed, 0, 1)[0]
        if a != b:
            assert b == 5
            moved.append(seed)
    assert abs(len(moved) / 5_000 - 1 / 5) < 4 * np.sqrt(0.2 * 0.8 / 5_000)
