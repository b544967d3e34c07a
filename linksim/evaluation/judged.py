"""Judged quality: how much a method's top-k lists are worth against its exact lists, judged by an
independent, more accurate index (issue 27).

A top-k list of page u is worth the sum of the judge's scores of its pages:
``worth(L) = Σ_{v ∈ L} judge(u, v)``. A list's **judged quality** is its worth over the worth of
the exact list of the same index (the per-page reading that scores every page of u's trees), so
1.0 is "as good as exact", and a list that swaps a good page for a worse one loses exactly what the
judge says the swap costs. The judge is an index of the same method with more fingerprints and
another seed: its errors are independent of the lists' own, so it does not reward a list for
repeating the sampling noise of the index that made it.

Beside a method's figures, the **noise floor**: the exact lists of another seed at the same N,
judged the same way. Monte Carlo lists cannot be judged better than exact lists of their own N
on average; a faster reading of the trees is as good as exact where its quality is at the floor.

Pages whose exact list is worth nothing to the judge (no page the judge scores above 0) say
nothing about a list and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

Lists = Mapping[int, Sequence[tuple[int, float]]]
#: ``judge(u, pages)``: the judge's scores of u with each of ``pages`` (float array).
Judge = Callable[[int, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class JudgedQuality:
    mean: float
    p5: float  # the 5th percentile over the pages
    pages: int  # pages judged (their exact list is worth something)
    values: np.ndarray  # one quality a judged page, in the order of the pages given

    def as_dict(self) -> dict:
        return {"mean": self.mean, "p5": self.p5, "pages": self.pages}


def worth(judge: Judge, u: int, ranked: Sequence[tuple[int, float]], top_k: int) -> float:
    """The judge's scores of the first ``top_k`` pages of ``ranked`` (u itself left out), summed."""
    pages = np.array([v for v, _ in ranked if v != u][:top_k], dtype=np.int64)
    return float(np.asarray(judge(u, pages), dtype=np.float64).sum()) if len(pages) else 0.0


def judged_quality(lists: Lists, exact: Lists, judge: Judge, pages: Sequence[int] | None = None,
                   top_k: int = 10) -> JudgedQuality:
    """The judged quality of ``lists`` against ``exact`` (both: page -> [(page, score)], best
    first) for ``pages`` (default: the pages of ``exact``). A page missing from ``lists`` has an
    empty list (worth 0)."""
    pages = list(exact) if pages is None else list(pages)
    values = []
    for u in pages:
        reference = worth(judge, u, exact.get(u, ()), top_k)
        if reference <= 0:
            continue
        values.append(worth(judge, u, lists.get(u, ()), top_k) / reference)
    array = np.array(values, dtype=np.float64)
    if not len(array):
        return JudgedQuality(float("nan"), float("nan"), 0, array)
    return JudgedQuality(float(array.mean()), float(np.percentile(array, 5)), len(array), array)


def index_judge(index) -> Judge:
    """A judge from an index with ``sims(u, pages)`` (a fingerprint index) or ``sim(u, v)``."""
    if hasattr(index, "sims"):
        return lambda u, pages: index.sims(u, pages)
    return lambda u, pages: np.array([index.sim(u, int(v)) for v in pages], dtype=np.float64)


def matrix_judge(scores: np.ndarray) -> Judge:
    """A judge from a dense matrix of scores (an exact reference on a small graph)."""
    return lambda u, pages: scores[u, pages]
