"""Pages related to a set of pages together, from any similarity index with ``related(u, top_k, ...)``.

The combination (CombSUM of Fox & Shaw, *Combination of multiple searches*, TREC-2 1994, on the
members' lists): a page's score for the set ``S`` is

    score_S(v) = (1 / |S|) · Σ_{s in S} score_s(v)

where ``score_s(v)`` is v's score in the list of the ``pool`` pages most related to ``s`` (the list
``related`` gives), and 0 when v is not in it. It is the mean similarity of v to the members
wherever v is in every member's list; where it is not, the mean is at most higher by
``(1 / |S|) · Σ`` of the pool-th scores of the members whose lists miss v. The members themselves
are left out. A set of one page gives that page's own list.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from linksim.errors import ConfigurationError
from linksim.parameters import Query, check_parameters
from linksim.ranking import top_pages
from linksim.ranking.reader import lists_reader

#: How many of each member's related pages are combined (``pool``) by default.
POOL = 100


def related_to_set(index, pages: Sequence[int] | np.ndarray, top_k: int = 10, similarity_cutoff: float = 0.0,
                   pool: int | None = None, targets=None, **options) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``top_k`` pages related to ``pages`` together (see the module): three arrays, pages
    (int64), scores and, for each page, how many members' lists hold it; best first, ties by page.

    ``pool`` (at least ``top_k``): how many of each member's related pages are combined (default
    :data:`POOL`, or ``top_k`` if more);
    ``options`` go to each member's ``index.related`` (e.g. ``n_fingerprints``). A page given twice
    counts once. ``targets`` (:class:`linksim.ranking.targets.Targets`): each member's list is of the
    pages that pass for it, and the set's of those that pass for the set
    (:meth:`~linksim.ranking.targets.Targets.passes_set`: other hosts than all the members').

    Raises
    ------
    ConfigurationError
        No page given, or a parameter out of range.
    """
    pool = None if pool is None else check_parameters(pool=pool)["pool"]
    return set_list(index, pages, Query.checked(top_k, similarity_cutoff), pool, targets, **options)


def set_list(index, pages: Sequence[int] | np.ndarray, query: Query, pool: int | None = None, targets=None,
             **options) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`related_to_set` of a checked ``query`` (and ``pool``)."""
    top_k, similarity_cutoff = query.top_k, query.similarity_cutoff
    pool = max(POOL, top_k) if pool is None else pool
    if pool < top_k:
        raise ConfigurationError(f"pool must be at least top_k ({top_k}), got {pool}")
    members = np.unique(np.asarray(pages, dtype=np.int64))
    if not len(members):
        raise ConfigurationError("give at least one page")
    found, scores = [], []
    for s in members.tolist():
        if targets is None:
            listed = lists_reader(index).related_one(s, Query(pool), **options)
        else:
            from linksim.ranking.targets import ranked_within

            listed = ranked_within(index, np.array([s]), Query(pool), targets, **options)[0]
        found.append(np.fromiter((v for v, _ in listed), dtype=np.int64, count=len(listed)))
        scores.append(np.fromiter((score for _, score in listed), dtype=np.float64, count=len(listed)))
    candidates, inverse = np.unique(np.concatenate(found), return_inverse=True)
    # Summed in member order, one member at a time: a set of one page keeps its scores bit for bit.
    sums = np.zeros(len(candidates))
    counts = np.zeros(len(candidates), dtype=np.int64)
    start = 0
    for part in scores:
        where = inverse[start : start + len(part)]
        sums[where] += part
        counts[where] += 1
        start += len(part)
    keep = ~np.isin(candidates, members)
    if targets is not None:
        keep &= targets.passes_set(members, candidates)
    candidates, combined, counts = candidates[keep], sums[keep] / len(members), counts[keep]
    best, values = top_pages(candidates, combined, -1, top_k, similarity_cutoff)
    return best, values, counts[np.searchsorted(candidates, best)]
