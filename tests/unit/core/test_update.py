"""Fingerprint indexes brought up to date with a changed graph equal a rebuild, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from linksim.errors import ConfigurationError
from linksim.fingerprints import update as updating
from linksim.fingerprints.state import WalkState
from linksim.fingerprints.update import changed_pages, common_order, update_index
from linksim.methods import walking_methods
from linksim.methods import fingerprint_index
from linksim.graph import LinkGraph

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def recrawl(graph: LinkGraph, rng: np.random.Generator, share: float, new_pages: int = 0) -> LinkGraph:
    """``share`` of the pages with out-links recrawled (each link lost with probability 0.3, as
    many gained, to any page or to one of ``new_pages`` new pages after the old ones)."""
    source, target = graph.edges()
    crawled = np.flatnonzero(graph.out_degree > 0)
    if len(crawled) == 0:
        crawled = np.arange(graph.n)
    chosen = rng.choice(crawled, max(1, int(share * len(crawled))), replace=False)
    lost = np.isin(source, chosen) & (rng.random(len(source)) < 0.3)
    n = graph.n + new_pages
    gained = rng.integers(0, n, int(lost.sum()) + len(chosen))
    gained_from = np.concatenate([source[lost], chosen])
    return LinkGraph.from_edges(np.concatenate([source[~lost], gained_from]),
                                np.concatenate([target[~lost], gained]), n)


def assert_same(updated, rebuilt) -> None:
    assert updated.graph_fingerprint == rebuilt.graph_fingerprint
    np.testing.assert_array_equal(updated.parent, rebuilt.parent)
    np.testing.assert_array_equal(updated.label, rebuilt.label)
    for name in ("offsets", "representatives", "positions"):
        np.testing.assert_array_equal(getattr(updated.walks, name), getattr(rebuilt.walks, name))


@pytest.fixture(params=["by pages", "by children"])
def reading(request, monkeypatch):
    """Both ways of reading an old meeting again: from the pages a walk reaches the touched page
    from, and (for pages reached from many) from the old fingerprint graph's children."""
    monkeypatch.setattr(updating, "_FEW_BACK", 10**9 if request.param == "by pages" else 0)
    return request.param


@pytest.mark.parametrize("method", walking_methods())
def test_an_updated_index_is_the_rebuilt_index_bit_for_bit_on_random_recrawls(method, reading) -> None:
    rng = np.random.default_rng(28)
    changed_somewhere = 0
    for trial in range(25):
        n = int(rng.integers(2, 250))
        m = int(rng.integers(n, 6 * n))
        # Skewed targets, as on the web: walks meet on a few pages.
        graph = LinkGraph.from_edges(rng.integers(0, n, m), (rng.pareto(1.2, m) * 4).astype(int) % n, n)
        new = recrawl(graph, rng, float(rng.choice([0.01, 0.1, 0.5, 1.0])), int(rng.integers(0, 4)))
        length, fingerprints = int(rng.integers(1, 9)), int(rng.integers(1, 6))
        old = fingerprint_index(graph, method, fingerprints, length, seed=trial, keep_walks=True)
        rebuilt = fingerprint_index(new, method, fingerprints, length, seed=trial, keep_walks=True)
        assert_same(update_index(old, graph, new), rebuilt)
        changed_somewhere += not np.array_equal(old.parent, rebuilt.parent[:, : graph.n])
    assert changed_somewhere >= 20  # the recrawls changed the indexes: the equality says something


@pytest.mark.parametrize("method", walking_methods())
def test_an_update_to_an_unrelated_graph_is_its_rebuild(method, reading) -> None:
    rng = np.random.default_rng(7)
    for trial in range(10):
        n, n_new = int(rng.integers(1, 40)), int(rng.integers(40, 60))
        graph = LinkGraph.from_edges(rng.integers(0, n, 3 * n), rng.integers(0, n, 3 * n), n)
        new = LinkGraph.from_edges(rng.integers(0, n_new, 3 * n_new), rng.integers(0, n_new, 3 * n_new), n_new)
        old = fingerprint_index(graph, method, 3, 6, seed=trial, keep_walks=True)
        assert_same(update_index(old, graph, new), fingerprint_index(new, method, 3, 6, seed=trial, keep_walks=True))


@pytest.mark.skipif(not (DATA / "wikispeedia" / "links.tsv").exists(), reason="needs ../shared/data/wikispeedia")
@pytest.mark.parametrize("method", walking_methods())
def test_wikispeedia_recrawled_twice_updates_to_its_rebuild(method) -> None:
    links = pd.read_csv(DATA / "wikispeedia" / "links.tsv", sep="\t", comment="#", header=None, names=["s", "t"])
    codes, names = pd.factorize(pd.concat([links.s, links.t]))
    graph = LinkGraph.from_edges(codes[: len(links)], codes[len(links):], len(names))
    rng = np.random.default_rng(2026)
    index = fingerprint_index(graph, method, 8, 10, seed=3, keep_walks=True)
    for share, new_pages in ((0.01, 0), (0.05, 20)):
        new = recrawl(graph, rng, share, new_pages)
        index = update_index(index, graph, new)
        assert_same(index, fingerprint_index(new, method, 8, 10, seed=3, keep_walks=True))
        graph = new


def test_the_walk_state_holds_the_groups_that_have_not_met_or_stopped() -> None:
    rng = np.random.default_rng(3)
    graph = LinkGraph.from_edges(rng.integers(0, 300, 1500), (rng.pareto(1.0, 1500) * 3).astype(int) % 300, 300)
    index = fingerprint_index(graph, "psimrank", 6, 8, seed=1, keep_walks=True)
    for i in range(6):
        earlier = np.arange(graph.n)
        for step in range(1, 9):
            positions, representatives = index.walks.at(i, step)
            assert (np.diff(positions) > 0).all()  # one group a page, in page order
            assert set(representatives) <= set(earlier)  # groups only end
            label = index.label[i, representatives]
            assert ((label == 0) | (label > step)).all()  # none has met a smaller one yet
            ended = np.setdiff1d(earlier, representatives)
            met_now = ended[index.label[i, ended] == step]
            assert (index.parent[i, met_now] < met_now).all()
            earlier = representatives


def test_changed_pages_are_the_pages_whose_lists_differ() -> None:
    old = LinkGraph.from_edges([0, 1, 2, 2], [1, 2, 0, 1], 3)
    new = LinkGraph.from_edges([0, 1, 2, 3], [1, 2, 1, 0], 4)
    changed = changed_pages(old.in_indptr, old.in_indices, new.in_indptr, new.in_indices, new.n)
    # In-links: 0 had {2} and has {3}; 1 had {0, 2} and has {0, 2}; 2 had {1} and has {1}; 3 is new.
    assert changed.tolist() == [True, False, False, True]


def test_update_refuses_what_it_cannot_update() -> None:
    graph = LinkGraph.from_edges([0, 1, 2], [1, 2, 0], 3)
    other = LinkGraph.from_edges([0, 1], [1, 0], 3)
    with pytest.raises(ConfigurationError, match="walk state"):
        update_index(fingerprint_index(graph, "simrank", 2, 3), graph, other)
    index = fingerprint_index(graph, "simrank", 2, 3, keep_walks=True)
    with pytest.raises(ConfigurationError, match="not built on the old graph"):
        update_index(index, other, graph)
    # Two pages of one graph with one draw code (here, one URL twice) cannot be told apart.
    twice = LinkGraph.from_edges([0, 1, 2], [1, 2, 0], 3, keys=["a", "b", "b"])
    with pytest.raises(ConfigurationError, match="share a draw code"):
        update_index(index, graph, twice)
    # Without keys a page is its number: a smaller graph lost its last pages.
    smaller = LinkGraph.from_edges([0], [1], 2)
    np.testing.assert_array_equal(update_index(index, graph, smaller).parent,
                                  fingerprint_index(smaller, "simrank", 2, 3, keep_walks=True).parent)
    assert isinstance(index.walks, WalkState) and index.walks.nbytes > 0


def keyed(graph: LinkGraph, names: list[str]) -> LinkGraph:
    source, target = graph.edges()
    return LinkGraph.from_edges(source, target, graph.n, keys=names)


def web_graph(rng: np.random.Generator, trial: int):
    """A random graph with URLs (skewed targets): ``(graph, names, source, target)``."""
    n = int(rng.integers(3, 200))
    m = int(rng.integers(n, 5 * n))
    source, target = rng.integers(0, n, m), (rng.pareto(1.2, m) * 4).astype(int) % n
    names = [f"https://example.org/{trial}/{p}" for p in range(n)]
    return keyed(LinkGraph.from_edges(source, target, n), names), names, source, target


def moved(rng: np.random.Generator, trial: int, names: list[str], source, target) -> LinkGraph:
    """The graph of ``names`` with some pages deleted and new ones placed anywhere in the order,
    then recrawled."""
    n = len(names)
    alive = rng.random(n) > 0.1
    new_names = [names[p] for p in range(n) if alive[p]]
    for k in range(int(rng.integers(0, 8))):
        new_names.insert(int(rng.integers(0, len(new_names) + 1)), f"https://example.org/{trial}/new{k}")
    place = {name: i for i, name in enumerate(new_names)}
    keep = alive[source] & alive[target]
    kept = LinkGraph.from_edges([place[names[s]] for s in source[keep]], [place[names[t]] for t in target[keep]],
                                len(new_names))
    return keyed(recrawl(kept, rng, float(rng.choice([0.05, 0.3]))), new_names)


@pytest.mark.parametrize("method", walking_methods())
def test_pages_added_and_deleted_anywhere_in_the_order_update_to_the_rebuild(method, reading) -> None:
    """A recrawl deletes pages no longer linked to and adds new ones, anywhere among the pages
    (Neo4j reuses the ids of deleted nodes): the update equals the rebuild on the new graph."""
    rng = np.random.default_rng(99)
    for trial in range(25):
        graph, names, source, target = web_graph(rng, trial)
        new = moved(rng, trial, names, source, target)
        fingerprints, length = int(rng.integers(1, 5)), int(rng.integers(1, 8))
        old = fingerprint_index(graph, method, fingerprints, length, seed=trial, keep_walks=True)
        assert_same(update_index(old, graph, new),
                    fingerprint_index(new, method, fingerprints, length, seed=trial, keep_walks=True))


def test_a_page_keeps_its_draws_wherever_the_order_puts_it() -> None:
    """Keyed by URL, a page's walks do not depend on its number: adding a page without links in
    front of all others changes no walk (SimRank's index of the others is the same, shifted)."""
    rng = np.random.default_rng(4)
    n = 120
    source, target = rng.integers(0, n, 600), rng.integers(0, n, 600)
    names = [f"https://example.org/{p}" for p in range(n)]
    graph = keyed(LinkGraph.from_edges(source, target, n), names)
    shifted = keyed(LinkGraph.from_edges(source + 1, target + 1, n + 1), ["https://example.org/new"] + names)
    a, b = fingerprint_index(graph, "simrank", 4, 6, seed=1), fingerprint_index(shifted, "simrank", 4, 6, seed=1)
    np.testing.assert_array_equal(np.where(a.parent >= 0, a.parent + 1, -1), b.parent[:, 1:])
    np.testing.assert_array_equal(a.label, b.label[:, 1:])
    unkeyed = fingerprint_index(LinkGraph.from_edges(source + 1, target + 1, n + 1), "simrank", 4, 6, seed=1)
    assert not np.array_equal(unkeyed.parent, b.parent)  # by number, the same shift changes the walks


def test_the_common_order_keeps_both_orders() -> None:
    old_at, new_at, size = common_order(["a", "b", "c", "d"], ["x", "b", "d", "y", "z"])
    assert size == 7
    assert (np.diff(old_at) > 0).all() and (np.diff(new_at) > 0).all()
    assert old_at[1] == new_at[1] and old_at[3] == new_at[2]  # b and d: one place each
    with pytest.raises(ConfigurationError, match="same order"):
        common_order(["a", "b"], ["b", "a"])


def test_an_updated_extended_jaccard_index_is_its_rebuild() -> None:
    """Extended Jaccard's min-hashes and inverted lists, updated after recrawls (pages kept in
    order, then added and deleted anywhere), equal the rebuild's bit for bit."""
    from linksim.fingerprints.minhash import build_minhash_index
    from linksim.fingerprints.update import update_minhash_index

    rng = np.random.default_rng(12)
    changed_somewhere = 0
    for trial in range(30):
        graph, names, source, target = web_graph(rng, trial)
        if trial % 2:  # pages kept in order, new ones after them
            new = recrawl(graph, rng, float(rng.choice([0.02, 0.2, 1.0])), int(rng.integers(0, 4)))
            new = keyed(new, names + [f"https://example.org/{trial}/new{k}" for k in range(new.n - graph.n)])
        else:  # pages deleted and added anywhere
            new = moved(rng, trial, names, source, target)
        fingerprints, length = int(rng.integers(1, 5)), int(rng.integers(1, 6))
        old = build_minhash_index(graph, fingerprints, length, seed=trial)
        old.inverted()
        updated = update_minhash_index(old, graph, new)
        rebuilt = build_minhash_index(new, fingerprints, length, seed=trial)
        assert updated.graph_fingerprint == rebuilt.graph_fingerprint
        np.testing.assert_array_equal(updated.values, rebuilt.values)
        for a, b in zip(updated.inverted(), rebuilt.inverted()):
            np.testing.assert_array_equal(a, b)
        changed_somewhere += updated.changed_pages > 0
    assert changed_somewhere >= 20
