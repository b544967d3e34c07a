"""The anchors of the evaluation against their definitions, pair by pair, on small random graphs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linksim.evaluation.anchors import ANCHORS, anchor_lists, dean_henzinger
from linksim.graph import LinkGraph


def random_graph(seed: int, n: int = 30, m: int = 110) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)


def neighbours(graph: LinkGraph):
    ins = [set(graph.in_links(v).tolist()) - {v} for v in range(graph.n)]
    outs = [set(graph.out_links(v).tolist()) - {v} for v in range(graph.n)]
    both = [ins[v] | outs[v] for v in range(graph.n)]
    return ins, outs, both


def by_definition(graph: LinkGraph, name: str) -> np.ndarray:
    ins, outs, both = neighbours(graph)
    degree = [len(b) for b in both]
    scores = np.zeros((graph.n, graph.n))
    for u in range(graph.n):
        for v in range(graph.n):
            if u == v:
                continue
            if name.startswith("jaccard"):
                sets = {"jaccard-in": ins, "jaccard-out": outs, "jaccard-both": both}[name]
                union = sets[u] | sets[v]
                scores[u, v] = len(sets[u] & sets[v]) / len(union) if union else 0.0
            elif name == "cocitation":
                scores[u, v] = len(ins[u] & ins[v])
            elif name == "cosine-in":
                shared = len(ins[u] & ins[v])
                scores[u, v] = shared / math.sqrt(len(ins[u]) * len(ins[v])) if shared else 0.0
            elif name == "adamic-adar":
                scores[u, v] = sum(1 / math.log(degree[x]) for x in both[u] & both[v])
            elif name == "hub-cosine":
                shared = sum(1 / math.log(2 + degree[x]) for x in both[u] & both[v])
                scores[u, v] = shared / math.sqrt(degree[u] * degree[v]) if shared else 0.0
    return scores


@pytest.mark.parametrize("name", [a for a in ANCHORS if a != "cocitation-dh"])
@pytest.mark.parametrize("seed", [1, 2])
def test_each_anchor_equals_its_definition(name: str, seed: int) -> None:
    graph = random_graph(seed)
    expected = by_definition(graph, name)
    lists = anchor_lists(graph, name, top=graph.n)
    for u in range(graph.n):
        want = sorted(((v, expected[u, v]) for v in range(graph.n) if expected[u, v] > 0),
                      key=lambda item: (-round(item[1], 12), item[0]))
        assert [v for v, _ in lists[u]] == [v for v, _ in want]
        assert [s for _, s in lists[u]] == pytest.approx([s for _, s in want], abs=1e-12)
    top = anchor_lists(graph, name, top=3)
    assert all(top[u] == lists[u][:3] for u in range(graph.n))


@pytest.mark.parametrize("name", [a for a in ANCHORS if a != "cocitation-dh"])
def test_an_anchor_for_a_set_of_pages_gives_their_lists_of_every_page(name: str, monkeypatch) -> None:
    # A set of pages is graded a few rows of the products at a time: the same lists, ties included.
    from linksim.evaluation import anchors

    graph = random_graph(3)
    every = anchor_lists(graph, name, top=5)
    monkeypatch.setattr(anchors, "ROWS_A_STEP", 3)  # several steps, one of them short
    pages = [17, 2, 9, 2, 0, 25, 11]
    some = anchor_lists(graph, name, top=5, pages=pages)
    assert sorted(some) == sorted(set(pages))
    assert all(some[u] == every[u] for u in pages)


def test_dean_henzinger_takes_no_set_of_pages() -> None:
    with pytest.raises(ValueError, match="no set of pages"):
        anchor_lists(random_graph(1), "cocitation-dh", pages=[1, 2])


def test_dean_henzinger_takes_the_siblings_around_the_link_and_ranks_them_by_cocitation() -> None:
    # Parent 0 links to 1..12 (page 6 is u); parent 13 links to 6 and 11; parent 14 links to 6, 11 and 2.
    source = [0] * 12 + [13, 13, 14, 14, 14]
    target = list(range(1, 13)) + [6, 11, 6, 11, 2]
    graph = LinkGraph.from_edges(np.array(source), np.array(target), 15)
    ranked = dean_henzinger(graph, top=100)[6]
    # From parent 0, the 8 children around 6 are 2, 3, 4, 5 and 7, 8, 9, 10 (not 1, 11, 12); from
    # 13, 11; from 14, 11 and 2. Degree of cocitation: 11 has 3 parents in common with 6... counted over
    # the parents kept: 0, 13 and 14 all link to 11, and 0 and 14 to 2.
    assert ranked[0] == (11, 3.0) and ranked[1] == (2, 2.0)
    assert {v for v, _ in ranked} == {2, 3, 4, 5, 7, 8, 9, 10, 11}
    assert all(score == 1.0 for v, score in ranked[2:])
    assert dean_henzinger(graph, top=100)[0] == []  # no parent: no sibling
    few = dean_henzinger(graph, top=100, parents_kept=1, seed=3)[6]
    assert len({v for v, _ in few}) <= 8  # one parent kept: at most BF siblings


def test_linked_pages_are_those_with_a_link_to_or_from_another_page() -> None:
    # 0 -> 1, 2 -> 2 (a self-link only), 3 -> 0; page 4 has no link.
    graph = LinkGraph.from_edges(np.array([0, 2, 3]), np.array([1, 2, 0]), 5)
    assert graph.linked().tolist() == [True, True, False, True, False]


def test_the_nearest_rows_of_an_embedding_are_its_exact_cosine_neighbours(monkeypatch) -> None:
    from linksim.evaluation import anchors
    from linksim.evaluation.anchors import nearest_lists

    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(40, 6))
    vectors[7] = 0.0  # a page FastRP gives no direction: no list, in no list
    vectors[12] = 2.5 * vectors[3]  # the same direction: cosine 1
    monkeypatch.setattr(anchors, "VECTOR_ROWS_A_STEP", 16)  # several steps, the last one short
    lists = nearest_lists(vectors, top=5)
    for u in range(40):
        cosines = [(v, float(vectors[u] @ vectors[v] / np.linalg.norm(vectors[u]) / np.linalg.norm(vectors[v])))
                   for v in range(40) if v != u and vectors[v].any() and vectors[u].any()]
        want = sorted(((v, c) for v, c in cosines if c > 0), key=lambda item: (-round(item[1], 12), item[0]))[:5]
        assert [v for v, _ in lists[u]] == [v for v, _ in want]
        assert [c for _, c in lists[u]] == pytest.approx([c for _, c in want], abs=1e-12)
    assert lists[7] == [] and all(v != 7 for u in lists for v, _ in lists[u])
    assert lists[3][0] == (12, pytest.approx(1.0))
