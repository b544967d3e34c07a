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

**Ties at the cut.** A Monte Carlo score is a sum of N terms c^τ / N, so many pages share the
k-th best score of a list (on the generated 10M-link crawl, often hundreds of pages that met u
once): the index cannot tell them apart, and the exact list takes the smaller page numbers, an
arbitrary choice that the judge still rewards or punishes. With the :class:`Cut` of each page
(the k-th best score of the exact reading and every page scoring it) a list's **tie-fair worth**
counts each of its pages at that score as the judge's mean over all of them, the worth a list
has on average when ties are broken at random; pages above or below the cut count as themselves.
A list that names other tied pages than the exact list then loses nothing, and one that misses a
page above the cut, or names one below it, loses what the judge says. Both figures are reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

Lists = Mapping[int, Sequence[tuple[int, float]]]
#: ``judge(u, pages)``: the judge's scores of u with each of ``pages`` (float array).
Judge = Callable[[int, np.ndarray], np.ndarray]
TIE = 1e-12  #: scores this close are equal (the ranking's own rule: :func:`linksim.ranking.top_pages`)
TIED_JUDGED = 1_000  #: tied pages the judge scores for their mean (a systematic sample of a larger group)


@dataclass(frozen=True)
class Cut:
    """The k-th best score of an index's exact list of a page and every page scoring it (u excluded)."""

    score: float
    tied: np.ndarray  # int64 pages

    def tied_mean(self, judge: Judge, u: int) -> float:
        """The judge's mean score over the tied pages (over an evenly spaced sample of
        :data:`TIED_JUDGED` of them when there are more)."""
        tied = self.tied
        if len(tied) > TIED_JUDGED:
            tied = tied[np.linspace(0, len(tied) - 1, TIED_JUDGED).astype(np.int64)]
        return float(np.asarray(judge(u, tied), dtype=np.float64).mean())


def cut_of(index, u: int, top_k: int) -> Cut | None:
    """u's :class:`Cut` in ``index``'s exact reading (a fingerprint index's ``exact_cut``), or None
    when its exact list has no choice to make (no page outside it scores its k-th best score)."""
    score, tied = index.exact_cut(u, top_k)
    return None if score is None else Cut(score, tied)


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


def fair_worth(judge: Judge, u: int, ranked: Sequence[tuple[int, float]], top_k: int, cut: Cut | None) -> float:
    """:func:`worth`, each of the first ``top_k`` pages scoring ``cut.score`` (within :data:`TIE`)
    counted as the judge's mean over the tied pages (the tie-fair worth; ``cut`` None: the worth)."""
    if cut is None:
        return worth(judge, u, ranked, top_k)
    chosen = [(v, s) for v, s in ranked if v != u][:top_k]
    if not chosen:
        return 0.0
    pages = np.array([v for v, _ in chosen], dtype=np.int64)
    at_cut = np.abs(np.array([s for _, s in chosen], dtype=np.float64) - cut.score) <= TIE
    value = float(np.asarray(judge(u, pages[~at_cut]), dtype=np.float64).sum()) if (~at_cut).any() else 0.0
    return value + (float(at_cut.sum()) * cut.tied_mean(judge, u) if at_cut.any() else 0.0)


def judged_quality(lists: Lists, exact: Lists, judge: Judge, pages: Sequence[int] | None = None,
                   top_k: int = 10, cuts: Mapping[int, Cut | None] | None = None,
                   exact_cuts: Mapping[int, Cut | None] | None = None) -> JudgedQuality:
    """The judged quality of ``lists`` against ``exact`` (both: page -> [(page, score)], best
    first) for ``pages`` (default: the pages of ``exact``). A page missing from ``lists`` has an
    empty list (worth 0). With ``cuts`` (page -> :class:`Cut` of the index whose scores ``lists``
    carry) and ``exact_cuts`` (those of the exact lists' index; default ``cuts``), the tie-fair
    quality: both lists' worths by :func:`fair_worth`."""
    pages = list(exact) if pages is None else list(pages)
    if cuts is not None and exact_cuts is None:
        exact_cuts = cuts
    values = []
    for u in pages:
        if cuts is None:
            reference = worth(judge, u, exact.get(u, ()), top_k)
        else:
            reference = fair_worth(judge, u, exact.get(u, ()), top_k, exact_cuts.get(u))
        if reference <= 0:
            continue
        mine = worth(judge, u, lists.get(u, ()), top_k) if cuts is None else fair_worth(
            judge, u, lists.get(u, ()), top_k, cuts.get(u))
        values.append(mine / reference)
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
