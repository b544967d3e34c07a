"""Locality-sensitive hashing of the walks' first steps: the pages that meet a page at step 1 in
many fingerprints, found without reading its giant trees (issue 27).

Two walks meet at step 1 of fingerprint i exactly when they stand on the same page after one
step; in the fingerprint graph that group is a page p and its children whose edge is labelled 1
(labels grow towards the root, so those children are leaves). ``first[i, w]``, the group of w
(p, or w itself), is thus a hash of w's in-links that two pages share with the probability that
their walks meet at step 1: for PSimRank the Jaccard similarity of their in-link sets (its
min-hash), for SimRank ``|I(u) ∩ I(v)| / (|I(u)| |I(v)|)``. Banding, as LSH does with min-hashes
(Broder 1997; Indyk & Motwani 1998), joins ``rows`` fingerprints into one key: two pages fall
in the same bucket of a band with probability about ``p^rows``, so a page that shares most of
u's first steps shares most of its buckets, while the thousands of pages that met u once on a
hub seldom share a bucket twice. A sampled top-k query (:func:`linksim.fingerprints.treescan.top_k_sampled`)
adds the pages sharing the most buckets with u to its candidates.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ROWS = 2  #: fingerprints a band joins


def first_step_bands(parent: np.ndarray, label: np.ndarray, rows: int = ROWS, rep: np.ndarray | None = None,
                     cap: int = 0, sample: int | None = None):
    """``(order, start, stop)``, each (bands, V) int32: in band b (fingerprints ``b·rows`` ..
    ``b·rows + rows - 1``) the pages sorted by their first-step groups, and page u's bucket
    ``order[b, start[b, u]:stop[b, u]]`` (u included).

    With ``cap`` > 0, a bucket of more than ``cap`` pages holds first its systematic sample of
    ``sample`` pages (at most ``cap``; by default ``cap``), those at positions ``⌊k · size / sample⌋``
    (k < sample) of the sorted bucket, then the others: a query reads a large bucket's sample as
    neighbouring entries rather than entries spread over the whole bucket
    (:func:`linksim.fingerprints.treescan._band_frequent`).

    With ``rep`` (each page's twin class representative, or -1: :func:`linksim.fingerprints.treescan.twin_arrays`),
    the entry of a twin other than its class's representative is ``-(representative + 1)``:
    twins meet at step 1 in every fingerprint, so a class shares every bucket, and a query that
    counts a class once a band reads a bucket whole by its non-negative entries alone."""
    count, n = parent.shape
    bands = count // rows
    pages = np.arange(n, dtype=np.int64)
    order = np.empty((bands, n), dtype=np.int32)
    start = np.empty((bands, n), dtype=np.int32)
    stop = np.empty((bands, n), dtype=np.int32)
    entry = pages if rep is None else np.where((rep >= 0) & (rep != pages), -(rep.astype(np.int64) + 1), pages)
    for b in range(bands):
        key = np.zeros(n, dtype=np.int64)
        for i in range(b * rows, b * rows + rows):
            group = np.where(np.asarray(label[i]) == 1, np.asarray(parent[i]), pages).astype(np.int64)
            key = key * n + group if rows == 2 else (key * np.int64(0x9E3779B1) + group)  # exact for 2 rows
        by_key = np.argsort(key, kind="stable")
        sorted_key = key[by_key]
        new = np.r_[True, sorted_key[1:] != sorted_key[:-1]]
        bucket = np.cumsum(new) - 1
        firsts = np.flatnonzero(new)
        ends = np.r_[firsts[1:], n]
        order[b] = entry[by_key]
        start[b, by_key] = firsts[bucket]
        stop[b, by_key] = ends[bucket]
        if cap > 0:
            _sample_first(order[b], firsts, ends, cap, cap if sample is None else min(sample, cap))
    return order, start, stop


@njit(cache=True, nogil=True)
def _sample_first(row, firsts, ends, cap, sample):
    """Each bucket ``row[firsts[j]:ends[j]]`` of more than ``cap`` pages reordered in place: its
    systematic sample of ``sample`` (positions ``⌊k · size / sample⌋``), then the rest, each part in
    its former order."""
    for j in range(len(firsts)):
        start, size = firsts[j], ends[j] - firsts[j]
        if size <= cap:
            continue
        bucket = row[start : start + size].copy()
        picked = np.zeros(size, dtype=np.bool_)
        for k in range(sample):
            q = k * size // sample
            picked[q] = True
            row[start + k] = bucket[q]
        rest = start + sample
        for q in range(size):
            if not picked[q]:
                row[rest] = bucket[q]
                rest += 1
