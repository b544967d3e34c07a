"""The papers' experiments, as data: Γ against L, N and c (Fogaras & Rácz 2005, Fig. 4), tree
sizes against L (Fig. 5), PageRank convergence (Haveliwala 1999), Δ(A, T) (Lin, King & Lyu 2006).

Everything here is computed from a :class:`~linksim.graph.LinkGraph` whose ``keys`` name the
pages, and category classes / texts keyed the same way; :mod:`linksim.report` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linksim.evaluation import GammaReport, sibling_gamma, top_lists_from_matrix
from linksim.fingerprints.index import tree_sizes_by_length
from linksim.graph import LinkGraph
from linksim.methods import method as registered
from linksim.pagerank import pagerank
from linksim.ranking.topk import top_k_all
from linksim.methods import fingerprint_index, walking_methods


def monte_carlo_index(graph: LinkGraph, method: str, **parameters):
    """The index of a Monte Carlo method, the papers' defaults for the parameters not given."""
    return registered(method).build_index(graph, **parameters)


def exact_matrix(graph: LinkGraph, method: str, length: int, decay: float, each=None) -> np.ndarray:
    """The exact reference of ``method``; ``each(k, matrix)`` sees every truncation k on the way."""
    return registered(method).exact(graph, decay, length, each=each)


def lists_of(index, top: int = 100, workers: int | None = None, targets=None) -> dict[int, list[tuple[int, float]]]:
    """Every page's ``top`` list (of the pages that pass ``targets``, :mod:`linksim.ranking.targets`)."""
    source, target, score, _ = top_k_all(index, top_k=top, workers=workers, show_progress=False, targets=targets)
    lists: dict[int, list[tuple[int, float]]] = {}
    for s, t, v in zip(source.tolist(), target.tolist(), score.tolist()):
        lists.setdefault(s, []).append((t, v))
    return lists


@dataclass
class Curve:
    method: str
    parameter: str  # "length", "n_fingerprints" or "decay"
    values: list
    monte_carlo: list[GammaReport] = field(default_factory=list)
    exact: list[GammaReport] = field(default_factory=list)  # same values (empty for N)


def gamma_curve(
    graph: LinkGraph,
    classes: dict[int, frozenset[str]],
    method: str,
    parameter: str,
    values: list,
    top: int = 100,
    seed: int = 0,
    with_exact: bool = True,
) -> Curve:
    """Γ of the Monte Carlo index (and of the exact reference, except against N) as one
    parameter varies, the others at the papers' defaults."""
    curve = Curve(method, parameter, list(values))
    if with_exact and parameter == "length":  # one exact iteration gives every truncation
        found: dict[int, GammaReport] = {}

        def grade(k: int, matrix: np.ndarray) -> None:
            if k in values:
                found[k] = sibling_gamma(top_lists_from_matrix(matrix, top), classes, top)

        exact_matrix(graph, method, max(values), float(registered(method).defaults["decay"]), each=grade)
        curve.exact = [found[v] for v in values]
        with_exact = False
    for value in values:
        params = dict(registered(method).defaults, seed=seed, **{parameter: value})
        index = monte_carlo_index(graph, method, **params)
        curve.monte_carlo.append(sibling_gamma(lists_of(index, top), classes, top))
        if with_exact and parameter != "n_fingerprints":
            matrix = exact_matrix(graph, method, int(params["length"]), float(params["decay"]))
            curve.exact.append(sibling_gamma(top_lists_from_matrix(matrix, top), classes, top))
    return curve


def tree_size_curves(graph: LinkGraph, length: int = 10, n_fingerprints: int = 100, seed: int = 0):
    """{method: {L: (mean, max)}} for SimRank and PSimRank (Fig. 5)."""
    return {
        method: tree_sizes_by_length(fingerprint_index(graph, method, n_fingerprints, length, seed))
        for method in walking_methods()
    }


@dataclass
class Convergence:
    iterations: list[int]
    residuals: list[float]
    overlap: dict[int, list[float]]  # |A∩B| / |A∪B| of the top-n sets and the converged ranking's, per iteration
    rank_changes: list[float]  # mean |position change| of the pages either ranking puts in its top 100


def pagerank_convergence(graph: LinkGraph, damping: float = 0.85, max_iter: int = 60,
                         top_n: tuple[int, ...] = (10, 100, 1000)) -> Convergence:
    """Residual and the convergence of the induced ordering per iteration, by the measures of
    Haveliwala 1999, Section 5 (:mod:`linksim.ordering`)."""
    from linksim.ordering import position_differences, top_n_similarity

    final = pagerank(graph, damping=damping, tol=1e-12, max_iter=1000, dtype=np.float64).ranks
    run = pagerank(graph, damping=damping, tol=1e-300, max_iter=max_iter, check_every=1, snapshot_every=1)
    iterations = sorted(run.snapshots)
    overlap: dict[int, list[float]] = {n: [] for n in top_n}
    changes = []
    for it in iterations:
        for n, similarity in zip(top_n, top_n_similarity(run.snapshots[it], final, list(top_n))):
            overlap[n].append(float(similarity))
        changes.append(float(position_differences(run.snapshots[it], final, 100).mean()))
    residual_of = dict(run.residuals)
    return Convergence(iterations, [residual_of.get(it, float("nan")) for it in iterations], overlap, changes)
