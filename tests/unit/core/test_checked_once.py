"""A list's ``top_k`` is checked once on every path (linksim.parameters): by the facade it enters
through, which makes it a Query; the layers below take the Query and check nothing again."""

from __future__ import annotations

import numpy as np
import pytest

from linksim import parameters
from linksim.errors import ConfigurationError
from linksim.graph import LinkGraph
from linksim.methods import METHODS
from linksim.parameters import Query
from linksim.ranking.sets import related_to_set, set_list
from linksim.ranking.targets import Targets, ranked_within
from linksim.ranking.topk import lists_of_all, top_k_all


class Counted:
    """The top_k parameter, counting its checks."""

    def __init__(self, real) -> None:
        self.real, self.checks = real, 0

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def check(self, value):
        self.checks += 1
        return self.real.check(value)


@pytest.fixture
def counted(monkeypatch) -> Counted:
    counting = Counted(parameters.PARAMETERS["top_k"])
    monkeypatch.setitem(parameters.PARAMETERS, "top_k", counting)
    return counting


def built(name: str):
    rng = np.random.default_rng(5)
    graph = LinkGraph.from_edges(rng.integers(0, 40, 240), rng.integers(0, 40, 240), 40)
    entry = METHODS[name]
    chosen = entry.parameters_for(n_fingerprints=20, seed=3) if entry.samples else entry.parameters_for()
    return entry.build(graph, chosen)


@pytest.mark.parametrize("name", list(METHODS))
def test_each_facade_checks_top_k_once_and_the_layers_below_never(name: str, counted: Counted) -> None:
    index = built(name)
    pages = np.arange(index.n)
    every_other = Targets.of_pages("even", np.arange(index.n) % 2 == 0)
    facades = [
        lambda: index.related(3, top_k=5),
        lambda: index.related_many(pages, top_k=5),
        lambda: top_k_all(index, top_k=5, workers=1, show_progress=False),
        lambda: top_k_all(index, top_k=5, workers=1, show_progress=False, targets=every_other),
        lambda: related_to_set(index, [1, 2, 3], top_k=5),
    ]
    for facade in facades:
        before = counted.checks
        facade()
        assert counted.checks == before + 1
    query = Query(5)  # as a facade made it: below it, nothing checks top_k
    before = counted.checks
    index.related_one(3, query)
    index.lists(pages, query)
    lists_of_all(index, query, workers=1, show_progress=False)
    ranked_within(index, pages, query, every_other)
    set_list(index, [1, 2, 3], query)
    assert counted.checks == before


@pytest.mark.parametrize("name", list(METHODS))
def test_the_facades_refuse_a_bad_top_k_naming_the_option(name: str) -> None:
    index = built(name)
    for bad in (0, -1, 100_001, 2.5):
        for facade in (lambda: index.related(3, top_k=bad), lambda: index.related_many(np.arange(4), top_k=bad),
                       lambda: top_k_all(index, top_k=bad, workers=1, show_progress=False),
                       lambda: related_to_set(index, [1, 2], top_k=bad)):
            with pytest.raises(ConfigurationError, match=r"--top-k \(top_k\)"):
                facade()


def test_a_query_is_frozen() -> None:
    query = Query.checked(7, 0.25)
    assert (query.top_k, query.similarity_cutoff) == (7, 0.25)
    with pytest.raises(AttributeError):
        query.top_k = 0  # type: ignore[misc]
