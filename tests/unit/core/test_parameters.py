"""Every argument of an index query is checked where it enters: a clear ConfigurationError naming
the value and the valid range, never a numpy error, a silently ignored value or a wrong answer."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.errors import ConfigurationError
from linksim.fingerprints.minhash import build_minhash_index
from linksim.methods import fingerprint_index
from linksim.graph import LinkGraph
from linksim.pagesim import build_pagesim_index
from linksim.parameters import PARAMETERS, check_parameters


def graph() -> LinkGraph:
    rng = np.random.default_rng(4)
    return LinkGraph.from_edges(rng.integers(0, 40, 150), rng.integers(0, 40, 150), 40)


INDEXES = {
    "simrank": lambda g: fingerprint_index(g, "simrank", n_fingerprints=12, seed=1),
    "psimrank": lambda g: fingerprint_index(g, "psimrank", n_fingerprints=12, seed=1),
    "xjaccard": lambda g: build_minhash_index(g, n_fingerprints=12, seed=1),
}


@pytest.mark.parametrize("method", sorted(INDEXES))
@pytest.mark.parametrize("call, message", [
    (lambda i: i.related(3, top_k=0), r"--top-k \(top_k\) must be an integer in 1..100,000, got 0"),
    (lambda i: i.related(3, top_k=-1), "got -1"),
    (lambda i: i.related(3, n_fingerprints=0), r"--fingerprints \(n_fingerprints\) must be an integer in 1..100,000, got 0"),
    (lambda i: i.related(3, n_fingerprints=13), "must lie in 1..12 for this index .* got 13; build one with more"),
    (lambda i: i.sim(1, 2, n_fingerprints=-3), "got -3"),
    (lambda i: i.sim(1, 2, decay=1.5), r"--decay \(decay\) must be a number in \(0, 1\), got 1.5"),
    (lambda i: i.related(3, similarity_cutoff=-0.5), r"--similarity-cutoff \(similarity_cutoff\) must be a number in \[0, 1\)"),
    (lambda i: i.related(-1), r"page -1 is not a page of this index \(0..39\)"),
    (lambda i: i.sim(0, 40), "page 40 is not a page of this index"),
])
def test_bad_query_arguments_are_refused(method, call, message) -> None:
    index = INDEXES[method](graph())
    with pytest.raises(ConfigurationError, match=message):
        call(index)


def test_pagesim_refuses_what_does_not_apply_to_it() -> None:
    index = build_pagesim_index(graph(), radius=2)
    with pytest.raises(ConfigurationError, match="does not apply to PageSim"):
        index.related(3, n_fingerprints=50)  # was silently ignored
    with pytest.raises(ConfigurationError, match="--top-k"):
        index.related(3, top_k=0)
    assert index.related(3, top_k=None) == index.related(3, top_k=None, similarity_cutoff=0.0)


def test_every_range_says_what_it_accepts() -> None:
    assert check_parameters(top_k="7", decay="0.25", seed=np.int64(3)) == {"top_k": 7, "decay": 0.25, "seed": 3}
    for value in (True, "1.5", float("inf"), 2.5):
        with pytest.raises(ConfigurationError):
            PARAMETERS["top_k"].check(value)
    with pytest.raises(ConfigurationError, match="unknown parameter 'topk'"):
        check_parameters(topk=3)
    assert PARAMETERS["tol"].describe() == "a number in (0, 1]"
    assert PARAMETERS["length"].describe() == "an integer in 1..127"


def test_the_registry_fills_the_papers_defaults_and_checks_what_is_given() -> None:
    from linksim.methods import DEFAULT_METHOD, METHODS, method

    assert list(METHODS) == ["simrank", "psimrank", "xjaccard", "pagesim", "ppsimrank", "spectral"]
    assert DEFAULT_METHOD == "spectral"
    simrank = method("simrank").parameters_for(n_fingerprints=100.0, decay="0.5")
    assert simrank == {"n_fingerprints": 100, "length": 10, "decay": 0.5, "seed": 0}
    assert type(simrank["n_fingerprints"]) is int  # the store's key is a hash of these values
    assert method("ppsimrank").parameters_for()["length"] == 3
    assert method("xjaccard").parameters_for()["length"] == 4 and method("pagesim").parameters_for()["radius"] == 3
    with pytest.raises(ConfigurationError, match="pagesim takes no parameter 'n_fingerprints'"):
        method("pagesim").parameters_for(n_fingerprints=10)
    with pytest.raises(ConfigurationError, match="method must be one of simrank, psimrank, xjaccard, pagesim, ppsimrank, spectral"):
        method("pagerank")
    index = method("psimrank").build_index(graph(), n_fingerprints=5, seed=2)
    assert index.parameters == {"n_fingerprints": 5, "length": 10, "decay": 0.6, "seed": 2}
