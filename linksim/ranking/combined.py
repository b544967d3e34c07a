"""Compiled lists of spectral P-PSimRank (:mod:`linksim.spectral`), a chunk of pages in one call.

A page's list is a few steps, each cheap: its co-linked pages' Adamic-Adar scores, the best
:data:`linksim.spectral.CANDIDATES` of them with its nearest pages of the embedding, their cosines,
P-PSimRank's score of those that can still reach the list (u's trees found once), the best by the
combined score. Called a page at a time from Python, the glue between the steps cost as much as
the steps; here a chunk of pages is one call. Each step gives the floats of its numpy form in
:mod:`linksim.spectral` (the ranking of :func:`linksim.ranking.top_pages`, ties by page on 12
decimals), so a list is the same whichever path made it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from linksim.ranking.targets import passing
from linksim.fingerprints.treescan import _exact_scores, _trees_of
from linksim.ranking.colinked import colinked_scores

TIE_DECIMALS = 1e12  #: scores ranked on 12 decimals, ties by page (linksim.ranking.top_pages)
TIE_SLACK = 1e-12  #: pages within this of the k-th score are ranked, not cut (linksim.ranking.top_pages)
#: The target filter arguments of :func:`combined_lists` for no filter.
NO_TARGETS = (-1, np.zeros(1, dtype=np.uint8), np.zeros(1, dtype=np.int32))


@njit(cache=True, nogil=True)
def cosines(embedding, u, pages):
    """max(0, cos(e_u, e_v)) for each of ``pages`` (float64; rows of unit length): a dot product of
    float64 terms summed in order of the dimensions."""
    rank = embedding.shape[1]
    row = np.empty(rank, dtype=np.float64)
    for d in range(rank):
        row[d] = np.float64(embedding[u, d])
    out = np.empty(len(pages), dtype=np.float64)
    for c in range(len(pages)):
        v = pages[c]
        total = 0.0
        for d in range(rank):
            total += np.float64(embedding[v, d]) * row[d]
        out[c] = max(total, 0.0)
    return out


@njit(cache=True, nogil=True)
def _ranked(pages, values, u, top_k, cutoff):
    """Indices of the best of (page, value) pairs above ``cutoff`` (u excluded), best first, ties
    by page on 12 decimals: :func:`linksim.ranking.top_pages` (``top_k`` < 0: all of them)."""
    keep = np.flatnonzero((values > cutoff) & (pages != u))
    if top_k >= 0 and len(keep) > top_k:
        kept = values[keep]
        kth = np.partition(kept, len(kept) - top_k)[len(kept) - top_k]
        keep = keep[kept >= kth - TIE_SLACK]
    keep = keep[np.argsort(pages[keep], kind="mergesort")]  # by page, then stably by rounded score
    rounded = np.rint(values[keep] * TIE_DECIMALS) / TIE_DECIMALS
    keep = keep[np.argsort(-rounded, kind="mergesort")]
    return keep if top_k < 0 else keep[:top_k]


@njit(cache=True, nogil=True)
def exact_nearest(embedding, u, pages, count, cutoff):
    """Of ``pages`` (u and repeats aside), the ``count`` of largest :func:`cosines` with u above
    ``cutoff`` (> 0), best first, ties by page on 12 decimals (:func:`linksim.spectral.nearest`)."""
    pages = np.unique(pages[(pages >= 0) & (pages != u)])
    return pages[_ranked(pages, cosines(embedding, u, pages), u, count, cutoff)]


@njit(cache=True, nogil=True)
def nearest_rows(embedding, us, found, count, cutoff, table):
    """table[u, :] = :func:`exact_nearest` of what a search found for u (row r of ``found`` for
    ``us[r]``), -1 past the last."""
    for r in range(len(us)):
        near = exact_nearest(embedding, us[r], found[r], count, cutoff)
        for c in range(len(near)):
            table[us[r], c] = near[c]


@njit(cache=True, nogil=True)
def _best_by_bound(pages, offset, weight, top_k, margin, count, length, powers, tree, by_page, page_major, trees):
    """:func:`best_by_bound` with u's trees given."""
    starts, stops, intos, depths = trees
    n = len(pages)
    bound = offset + weight * powers[1]
    order = np.argsort(-bound, kind="mergesort")  # stable: ties in the order of pages
    values = np.empty(n, dtype=np.float64)
    scored, batch = 0, 2 * top_k
    while True:
        end = min(n, scored + batch)
        walks = _exact_scores(pages[order[scored:end]], count, length, powers, tree, by_page, starts, stops, intos,
                              depths, page_major)
        for r in range(end - scored):
            values[scored + r] = offset[order[scored + r]] + weight * walks[r]
        scored = end
        if scored == n:
            break
        kth = np.partition(values[:scored], scored - top_k)[scored - top_k]
        if bound[order[scored]] < kth - margin:
            break
        batch *= 2
    return order[:scored], values[:scored]


@njit(cache=True, nogil=True)
def best_by_bound(u, pages, offset, weight, top_k, margin, count, length, powers, tree, by_page, page_major):
    """The pages that can be among the ``top_k`` best of ``pages`` (more than ``top_k`` >= 1) by
    ``offset + weight · sim(u, v)`` (weight >= 0), and those values: the pages scored in decreasing
    bound ``offset + weight · c`` (c = ``powers[1]``: v != u meets u at step 1 at the earliest), in
    batches that double from ``2 top_k``, until the next bound is more than ``margin`` below the
    k-th value found. The pages left unscored cannot enter the list nor tie, so the best of those
    returned are the best of all, float for float. u's trees are found once.

    Returns (the indices into ``pages`` scored, in decreasing bound; their values)."""
    starts, stops, intos, depths, _ = _trees_of(u, count, length, tree, by_page)
    return _best_by_bound(pages, offset, weight, top_k, margin, count, length, powers, tree, by_page, page_major,
                          (starts, stops, intos, depths))


@njit(cache=True, nogil=True)
def combined_lists(us, top_k, cutoff, share, margin, candidates, neighbours, scratch, nearest, embedding, walks,
                   targets):
    """The lists of ``us`` (:meth:`linksim.spectral.SpectralIndex.related` with ``top_k`` >= 1):
    (lengths, pages, scores, pairs scored), the lists end to end, a length of -1 where a page's
    candidates gave nothing (the walks' best pages are its candidates then: the caller's).
    ``neighbours`` ``(indptr, indices, weights)`` and ``scratch`` ``(acc, touched)``: what
    :func:`colinked_scores` reads. ``walks``: ``(count, length, powers, tree, by_page,
    page_major)``, the fingerprint trees the scores read. ``targets``: a target filter's arrays
    ``(kind, allowed, hosts)`` (:attr:`linksim.ranking.targets.Targets.arrays`;
    :data:`NO_TARGETS`: none), applied to the candidates before the best of them are chosen."""
    indptr, indices, weights = neighbours
    acc, touched = scratch
    count, length, powers, tree, by_page, page_major = walks
    kind, allowed, hosts = targets
    found_pages = np.empty(len(us) * top_k, dtype=np.int64)
    found_scores = np.empty(len(us) * top_k, dtype=np.float64)
    lengths = np.empty(len(us), dtype=np.int64)
    filled = 0
    pairs = 0
    weight = 1.0 - share
    for k in range(len(us)):
        u = us[k]
        linked, scores = colinked_scores(u, indptr, indices, weights, acc, touched)
        close = nearest[u]
        close = close[close >= 0].astype(np.int64)
        if kind >= 0:
            keep = passing(u, linked, kind, allowed, hosts)
            linked, scores = linked[keep], scores[keep]
            close = close[passing(u, close, kind, allowed, hosts)]
        best = linked[_ranked(linked, scores, u, candidates, 0.0)]
        pages = np.unique(np.concatenate((best, close)))
        pages = pages[pages != u]
        if len(pages) == 0:
            lengths[k] = -1
            continue
        offset = share * cosines(embedding, u, pages)
        starts, stops, intos, depths, _ = _trees_of(u, count, length, tree, by_page)
        if len(pages) <= top_k:
            chosen = np.arange(len(pages))
            walks = _exact_scores(pages, count, length, powers, tree, by_page, starts, stops, intos, depths,
                                  page_major)
            values = offset + weight * walks
        else:
            chosen, values = _best_by_bound(pages, offset, weight, top_k, margin, count, length, powers, tree,
                                            by_page, page_major, (starts, stops, intos, depths))
        pairs += len(chosen)
        scored = pages[chosen]
        ranked = _ranked(scored, values, u, top_k, cutoff)
        if len(ranked) == 0:
            lengths[k] = -1
            continue
        lengths[k] = len(ranked)
        for r in range(len(ranked)):
            found_pages[filled + r] = scored[ranked[r]]
            found_scores[filled + r] = values[ranked[r]]
        filled += len(ranked)
    return lengths, found_pages[:filled], found_scores[:filled], pairs


def warm_up() -> None:
    """Compile (or load from numba's cache) the lists for the argument types an index passes, on a
    two-page index (see :func:`linksim.fingerprints.treescan.warm_up`), its arrays writable or read
    from the store's maps."""
    from linksim.arrays import read_only
    from linksim.fingerprints.treescan import NO_PAGE_MAJOR, label_blocks, page_major

    parent = read_only(np.array([[-1, 0]], dtype=np.int32))
    label = read_only(np.array([[0, 1]], dtype=np.int8))
    order = read_only(np.array([[0, 1]], dtype=np.int32))
    position = read_only(np.array([[0, 1]], dtype=np.int32))
    powers = np.array([1.0, 0.5, 0.0])
    indptr, indices = read_only(np.array([0, 1, 2], dtype=np.int64)), read_only(np.array([1, 0], dtype=np.int32))
    weights = read_only(np.array([0.5, 0.5]))
    pages = read_only(np.array([0, 1], dtype=np.int64))
    for rows in (page_major(parent, label, position, order, 1), NO_PAGE_MAJOR):
        by_page = rows[0].shape[0] > 0
        tree = (order, label, *label_blocks(label), rows[0] if by_page else position)
        for writable in (True, False):
            embedding = np.ones((2, 1), dtype=np.float32)
            nearest = np.full((2, 1), -1, dtype=np.int32)
            if not writable:
                embedding, nearest = read_only(embedding), read_only(nearest)
            combined_lists(pages, 1, 0.0, 0.5, 1e-9, 10, (indptr, indices, weights),
                           (np.zeros(2), np.zeros(2, dtype=np.int32)), nearest, embedding,
                           (1, 1, powers, tree, by_page, rows), NO_TARGETS)
            cosines(embedding, 0, pages)
            exact_nearest(embedding, 0, pages, 1, 1e-4)
            nearest_rows(embedding, pages, np.array([[1], [0]], dtype=np.int64), 1, 1e-4, np.full((2, 1), -1, np.int32))
        best_by_bound(0, pages, np.zeros(2), 0.5, 1, 1e-9, 1, 1, powers, tree, by_page, rows)
