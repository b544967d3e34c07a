"""Co-linked pages' scores, compiled: Adamic-Adar of a page with every page sharing a counted
neighbour (spectral P-PSimRank's candidates, :func:`linksim.spectral.colinked`), and the spreading
step it shares with PageSim's push."""

from __future__ import annotations

import numpy as np
from numba import njit

from linksim.arrays import read_only


@njit(cache=True, nogil=True)
def spread(begin, end, indices, source, carried, into, seen, n_seen):
    """Add ``carried`` to ``into`` at the links ``indices[begin:end]`` other than ``source``,
    listing in ``seen`` the pages ``into`` held nothing for; returns how many ``seen`` holds."""
    for f in range(begin, end):
        page = indices[f]
        if page == source:
            continue
        if into[page] == 0.0:
            seen[n_seen] = page
            n_seen += 1
        into[page] += carried
    return n_seen


@njit(cache=True, nogil=True)
def colinked_scores(u, indptr, indices, weights, acc, touched):
    """Adamic-Adar of u with every page sharing a counted neighbour (:func:`linksim.spectral.colinked`):
    (pages in increasing order, scores). Each neighbour w of u with a weight above 0 adds
    ``weights[w]`` to every other neighbour of w, in the order numpy's gather-and-bincount adds,
    so the floats are the same. ``acc`` (float64) and ``touched`` (int32) of length V are
    scratch, zero on entry and return."""
    n_touched = 0
    for e in range(indptr[u], indptr[u + 1]):
        w = indices[e]
        weight = weights[w]
        if weight <= 0.0:
            continue
        n_touched = spread(indptr[w], indptr[w + 1], indices, u, weight, acc, touched, n_touched)
    pages = np.sort(touched[:n_touched]).astype(np.int64)
    scores = np.empty(n_touched, dtype=np.float64)
    for r in range(n_touched):
        scores[r] = acc[pages[r]]
        acc[pages[r]] = 0.0
    return pages, scores


def warm_up() -> None:
    """Compile (or load from numba's cache) :func:`colinked_scores` for the argument types an index
    passes."""
    both_ways = read_only(np.array([0, 1, 2], dtype=np.int64)), read_only(np.array([1, 0], dtype=np.int32))
    colinked_scores(0, *both_ways, read_only(np.array([0.5, 0.5])), np.zeros(2), np.zeros(2, dtype=np.int32))
