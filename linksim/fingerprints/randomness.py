"""Random choices as pure functions of (seed, fingerprint, step, page).

Every random number of the fingerprint indexes is ``draw(stream_key(seed, fingerprint, step), code)``:
SplitMix64's finaliser (Steele, Lea & Flood 2014) applied to ``key + code·γ``, that is the
``code``-th output of a SplitMix64 generator started at ``key``, where the key itself mixes in
the seed, the fingerprint and the step, and ``code`` is the page's draw code
(:attr:`linksim.graph.LinkGraph.codes`): a 64-bit hash of its URL, or for a graph without keys its
number. Nothing depends on the order in which pages are visited, so a build that splits the pages
into partitions (Spark, :mod:`linksim.spark`) draws the very same numbers as the numpy build and
gives the same index bit for bit; and nothing depends on a page's place in the page order (only
the ties of two equal draws, broken by page number, follow the order), so a page keeps its draws
when a recrawl adds or deletes pages before it (:mod:`linksim.fingerprints.update`).

What the numbers choose (the single-machine kernels below and the Spark jobs implement exactly
this, on unsigned 64-bit words):

- SimRank, the in-neighbour ``q`` of ``p`` of smallest order key in ``p``'s own stream
  ``draw(key, code(p))``: a uniform choice (each in-neighbour first with probability 1 / degree),
  independent between pages (each page orders the pages its own way), and one that moves only
  when the change of ``p``'s in-links touches it (a new in-link comes first, or the first one
  goes), which index updates rely on (:mod:`linksim.fingerprints.update`); index format 5, where
  format 4 took the in-link at ``((h >> 32) · in_degree(p)) >> 32``, which any change moved;
- PSimRank, the in-neighbour ``q`` of smallest order key ``(draw(key, code(q)) >> 33) << 32 | q``:
  a random order of all pages (31 random bits, ties impossible: the page is in the low 32 bits),
  fresh at each step, in place of the 2005 paper's random permutation;
- P-PSimRank (both directions), at each (fingerprint, step) one coin for every walk,
  :func:`inward` (the top bit of ``draw(key, 2^32)``, one draw of the stream that is no page's): in-links when it
  is 0, out-links otherwise; then the page of smallest order key in the page's *closed*
  neighbourhood in that direction (the page itself and its in- or out-neighbours), so that a walk
  may stay where it is and never stops;
- extended Jaccard, the page of smallest order key among the pages reaching ``u`` in at most
  ``k`` links (a min-hash keeps the minimising page itself, the key's low 32 bits).

Pages are numbered below 2^31 (the index stores them as int32).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15  # 2^64 / golden ratio, SplitMix64's increment
MIX_1 = 0xBF58476D1CE4E5B9
MIX_2 = 0x94D049BB133111EB


def mix64(z: int) -> int:
    """SplitMix64's finaliser on a Python int (taken modulo 2^64)."""
    z &= MASK
    z = ((z ^ (z >> 30)) * MIX_1) & MASK
    z = ((z ^ (z >> 27)) * MIX_2) & MASK
    return z ^ (z >> 31)


def stream_key(seed: int, *parts: int) -> int:
    """The key of one stream of draws: ``stream_key(seed, fingerprint, step)``."""
    key = mix64(seed + GAMMA)
    for part in parts:
        key = mix64(key ^ ((part + 1) * GAMMA))
    return key


def signed(word: int) -> int:
    """An unsigned 64-bit word as the signed 64-bit integer of the same bits (Spark's long)."""
    return word - (1 << 64) if word >= 1 << 63 else word


@njit(inline="always")
def _mix(z):
    z = (z ^ (z >> uint64(30))) * uint64(MIX_1)
    z = (z ^ (z >> uint64(27))) * uint64(MIX_2)
    return z ^ (z >> uint64(31))


@njit(inline="always")
def _draw(key, page):
    return _mix(key + uint64(page) * uint64(GAMMA))


@njit(inline="always")
def _order_key(key, page, code):
    # 31 random bits above the page's 32: a random order of the pages with no ties, and a
    # non-negative signed 64-bit integer (Spark compares longs as signed).
    return np.int64(((_draw(key, code) >> uint64(33)) << uint64(32)) | uint64(page))


@njit(inline="always")
def page_stream(key, code):
    """SimRank's stream of the page of draw code ``code`` in the stream ``key``: its own random
    order of the pages, independent of every other page's."""
    return _draw(key, code)


@njit(cache=True, nogil=True)
def draws(key, codes):
    """``draw(key, code)`` for each of ``codes`` (uint64)."""
    out = np.empty(len(codes), dtype=np.uint64)
    k = uint64(key)
    for p in range(len(codes)):
        out[p] = _draw(k, uint64(codes[p]))
    return out


@njit(cache=True, nogil=True)
def order_keys(key, codes):
    """The places of the pages ``0 .. len(codes) - 1`` (draw codes ``codes``) in the random order
    of stream ``key``: ``(draw >> 33) << 32 | page`` (int64; the page is the low 32 bits)."""
    out = np.empty(len(codes), dtype=np.int64)
    k = uint64(key)
    for p in range(len(codes)):
        out[p] = _order_key(k, p, uint64(codes[p]))
    return out


@njit(inline="always")
def _first(key, begin, end, indices, codes):
    """The page of ``indices[begin:end]`` (not empty) first in the random order of stream ``key``."""
    q = indices[begin]
    best = _order_key(key, q, codes[q])
    for i in range(begin + 1, end):
        q = indices[i]
        o = _order_key(key, q, codes[q])
        if o < best:
            best = o
    return best & np.int64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def uniform_choices(key, pages, in_indptr, in_indices, codes, choice):
    """SimRank: for each of ``pages``, one uniform in-neighbour (``choice``, -1 without in-link):
    the first in the page's own random order (:func:`page_stream`)."""
    k = uint64(key)
    for j in range(len(pages)):
        p = pages[j]
        begin, end = in_indptr[p], in_indptr[p + 1]
        choice[j] = -1 if begin == end else _first(page_stream(k, codes[p]), begin, end, in_indices, codes)


@njit(cache=True, nogil=True)
def smallest_choices(key, pages, in_indptr, in_indices, codes, choice):
    """PSimRank: for each of ``pages``, the in-neighbour first in the random order of this stream
    (:func:`order_keys`), -1 without in-link."""
    k = uint64(key)
    for j in range(len(pages)):
        p = pages[j]
        begin, end = in_indptr[p], in_indptr[p + 1]
        choice[j] = -1 if begin == end else _first(k, begin, end, in_indices, codes)


#: The page number of the direction coin's draw: above every page (pages are below 2^31).
DIRECTION_DRAW = 1 << 32


def order_key(key: int, page: int, code: int | None = None) -> int:
    """:func:`_order_key` on Python ints: ``(draw(key, code) >> 33) << 32 | page`` (``code``: the
    page's draw code, by default its number)."""
    code = page if code is None else int(code)
    return ((mix64(key + code * GAMMA) >> 33) << 32) | page


def choose(walk, key: int, page: int, neighbours, codes=None) -> int:
    """Where a walk on ``page`` goes in the stream ``key``, one page at a time (what the kernels
    :func:`uniform_choices`, :func:`smallest_choices` and :func:`closed_smallest_choices` compute
    for many): ``walk`` is the method's kind of walk (:mod:`linksim.fingerprints.kinds`),
    ``neighbours`` the page's in-links in increasing page order (a ``closed`` walk: its in-links
    if :func:`inward` says so, else its out-links), ``codes`` the draw codes of the page and its
    neighbours (a mapping; by default each page's number). -1: no in-link, the walk stops. For
    explanations, which read a walk's few pages from the database rather than the whole graph."""
    code = (lambda q: q) if codes is None else (lambda q: int(codes[q]))
    neighbours = [int(q) for q in neighbours]
    if walk.closed:
        return min([order_key(key, page, code(page))] + [order_key(key, q, code(q)) for q in neighbours]) & 0xFFFFFFFF
    if not neighbours:
        return -1
    if walk.own_stream:
        key = mix64(key + code(page) * GAMMA)  # the page's own stream (page_stream)
    return min(order_key(key, q, code(q)) for q in neighbours) & 0xFFFFFFFF


def inward(key: int) -> bool:
    """P-PSimRank: do the walks of stream ``key`` follow in-links (True) or out-links? Probability
    1/2 each, one coin for every walk of the stream (P-Rank's weighting, lambda = 1/2)."""
    return (mix64(key + DIRECTION_DRAW * GAMMA) >> 63) == 0


@njit(cache=True, nogil=True)
def closed_smallest_choices(key, pages, indptr, indices, codes, choice):
    """P-PSimRank: for each of ``pages``, the page first in the random order of this stream among
    the page itself and its neighbours ``indices[indptr[p]:indptr[p + 1]]`` (never -1)."""
    k = uint64(key)
    for j in range(len(pages)):
        p = pages[j]
        best = _order_key(k, p, codes[p])
        for i in range(indptr[p], indptr[p + 1]):
            q = indices[i]
            o = _order_key(k, q, codes[q])
            if o < best:
                best = o
        choice[j] = best & np.int64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def spread_min(in_indptr, in_indices, current, following):
    """``following[p] = min(current[p], current[q] for every in-neighbour q of p)``."""
    for p in range(len(in_indptr) - 1):
        best = current[p]
        for i in range(in_indptr[p], in_indptr[p + 1]):
            value = current[in_indices[i]]
            if value < best:
                best = value
        following[p] = best
