"""Explanations: the terms add up to the score, the walks are the build's, every path is links."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.errors import ConfigurationError, LinksimError
from linksim.explain import explain, walks
from linksim.fingerprints.randomness import choose, inward, stream_key
from linksim.fingerprints.kinds import UNIFORM
from linksim.fingerprints.walks import step_choices
from linksim.graph import LinkGraph
from linksim.methods import METHODS

N = 70


def random_graph(seed: int) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, N, 300), rng.integers(0, N, 300), N)


def neighbours_of(graph: LinkGraph):
    def read(pages, inward_links):
        indptr, indices = (graph.in_indptr, graph.in_indices) if inward_links else (graph.out_indptr, graph.out_indices)
        return {p: sorted(indices[indptr[p] : indptr[p + 1]].tolist()) for p in pages}
    return read


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
def test_one_page_choices_are_the_builds(method: str) -> None:
    graph = random_graph(4)
    read = neighbours_of(graph)
    walk = METHODS[method].walk
    for fingerprint in range(3):
        for step in (1, 2, 5):
            key = stream_key(7, fingerprint, step)
            expected = step_choices(graph, walk, 7, fingerprint, step)
            inward_links = not walk.closed or inward(key)
            got = [choose(walk, key, p, read([p], inward_links)[p]) for p in range(N)]
            assert got == expected.tolist()


def linked(graph: LinkGraph, a: int, b: int) -> bool:
    return b in graph.out_indices[graph.out_indptr[a] : graph.out_indptr[a + 1]].tolist()


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank", "spectral", "xjaccard", "pagesim"])
def test_the_terms_add_up_to_the_score_and_every_path_is_made_of_links(method: str) -> None:
    graph = random_graph(5)
    given = {"n_fingerprints": 60, "seed": 2} if METHODS[method].samples else {}
    index = METHODS[method].build_index(graph, **given)
    read = neighbours_of(graph)
    rng = np.random.default_rng(1)
    pairs = 0
    for u, v in rng.integers(0, N, (400, 2)).tolist():
        if u == v:
            continue
        score = index.sim(u, v)
        terms = explain(index, u, v, read)
        assert sum(term.share for term in terms) == pytest.approx(score, abs=1e-12)
        pairs += score > 0
        assert [t.share for t in terms] == sorted((t.share for t in terms), reverse=True)
        for term in terms:
            assert term.share > 0
            if term.kind == "meeting":
                for path, start in ((term.path_a, u), (term.path_b, v)):
                    assert path[0] == start and path[-1] == term.page and len(path) == term.step + 1
                    for here, following in zip(path, path[1:]):
                        if method in ("simrank", "psimrank"):
                            assert linked(graph, following, here)  # an in-link, followed backwards
                        else:
                            assert following == here or linked(graph, following, here) or linked(graph, here, following)
                assert not set(zip(term.path_a[:-1], term.path_b[:-1])) & {(x, x) for x in range(N)}
            elif term.kind == "shared in-neighbourhood":
                for path, end in ((term.path_a, u), (term.path_b, v)):
                    assert path[0] == term.page and path[-1] == end and len(path) - 1 <= term.step
                    assert all(linked(graph, x, y) for x, y in zip(path, path[1:]))
            elif term.kind == "source":
                assert term.received_a > 0 and term.received_b > 0
    assert pairs >= 20  # the pairs explained include related ones


def test_walks_stop_where_a_page_has_no_in_link() -> None:
    graph = LinkGraph.from_edges(np.array([0, 1]), np.array([1, 2]), 4)  # 0 -> 1 -> 2; 3 alone
    paths = walks(UNIFORM, 0, {0: 2, 1: 3}, 5, neighbours_of(graph))
    assert paths == {0: [2, 1, 0], 1: [3]}


def test_explain_refuses_a_page_with_itself_and_a_graph_that_is_not_the_indexs() -> None:
    graph = random_graph(6)
    index = METHODS["simrank"].build_index(graph, n_fingerprints=40, seed=1)
    with pytest.raises(ConfigurationError, match="two different pages"):
        explain(index, 3, 3, neighbours_of(graph))
    other = neighbours_of(random_graph(7))
    related = [(u, v) for u in range(N) for v in range(u + 1, N) if index.sim(u, v) > 0]
    with pytest.raises(LinksimError, match="do not meet"):
        for u, v in related:
            explain(index, u, v, other)
