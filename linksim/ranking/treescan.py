"""Compiled top-k query of a fingerprint index, read level by level (numba).

One page u's trees are read in increasing meeting time: with each page's children laid out in
increasing label order (:class:`linksim.fingerprints.index.TreeLayout`) and labels growing towards
the root, the members of u's tree in fingerprint i, taken in the order

    u's subtree, then for each ancestor a_j: [a_j, a_{j-1}), then the rest of a_j's subtree,

have non-decreasing τ (u's subtree: the labels of u's children, all below l_1 = label(u); a_j's
part: l_j, then its later children's labels, all below l_{j+1}). A cursor per fingerprint reads
the members met at time t at level t. After level t every page not yet read meets u later than t
in every fingerprint, so scores at most c^(t+1); a read page v gains at most c^(t+1) for each
fingerprint it was not read in. Once the k-th partial score is above that bound, the top k are
among the read pages whose bound reaches it, and those are scored exactly by Lemma 2.

Scores are summed in increasing τ (all c^1 terms first, then c^2, ...), here as in
:meth:`FingerprintIndex.related` and :meth:`FingerprintIndex.sim`, so a score does not depend on
how its terms were found: the same page pair gets the same float from every path.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MARGIN = 1e-11  # float slack of the bounds (scores differ in the last bits only if summed apart)


def read_only(array: np.ndarray) -> np.ndarray:
    """A plain, read-only view, as every index array is passed here: indexes built in memory and
    indexes opened from the store (read-only memory maps) then call with the same argument types,
    so that numba compiles each function once per installation (its cache), not once per kind of
    array, each compilation holding the interpreter for 20 s or more."""
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view


@njit(cache=True, nogil=True)
def _chain(u, i, parent, plabel, length, chain, into):
    """u's ancestors a_0 = u, a_1, ... in fingerprint i and the labels l_j into them; returns J."""
    chain[0] = u
    into[0] = 0
    x = u
    depth = 0
    while depth < length and parent[i, x] >= 0:
        into[depth + 1] = plabel[i, x]
        x = parent[i, x]
        depth += 1
        chain[depth] = x
    return depth


@njit(cache=True, nogil=True)
def _segment(i, s, chain, into, position, size):
    """Segment s of u's members in fingerprint i: (start, stop, floor, constant)."""
    if s == 0:
        p = position[i, chain[0]]
        return p + 1, p + size[i, chain[0]], 0, False
    j = (s + 1) // 2
    pa, pb = position[i, chain[j]], position[i, chain[j - 1]]
    if s % 2 == 1:  # a_j and its children met before a_{j-1}'s branch: τ = l_j
        return pa, pb, into[j], True
    return pb + size[i, chain[j - 1]], pa + size[i, chain[j]], into[j], False


@njit(cache=True, nogil=True, inline="always")
def _add(w, value, acc, seen, touched, n_touched, best):
    """Page w meets u once more, adding ``value``: (pages touched, largest partial sum)."""
    if seen[w] == 0:
        touched[n_touched] = w
        n_touched += 1
    acc[w] += value
    seen[w] += 1
    return n_touched, max(best, acc[w])


@njit(cache=True, nogil=True)
def _exact_score(u, v, count, length, powers, parent, plabel, position, size, chains, intos, depths, times):
    """sim(u, v) by Lemma 2 in every fingerprint, terms summed in increasing τ."""
    never = length + 1
    for i in range(count):
        times[i] = never
        pv = position[i, v]
        for j in range(depths[i] + 1):
            a = chains[i, j]
            pa = position[i, a]
            if pa <= pv < pa + size[i, a]:
                if v == a:
                    times[i] = intos[i, j]
                else:
                    x = v
                    while parent[i, x] != a:
                        x = parent[i, x]
                    times[i] = max(intos[i, j], plabel[i, x])
                break
    times[:count].sort()
    total = 0.0
    for i in range(count):
        if times[i] == never:
            break
        total += powers[times[i]]
    return total / count


@njit(cache=True, nogil=True)
def top_k_one(u, top_k, count, length, powers, similarity_cutoff, candidate_limit, rescore_cost, max_members,
              cut_candidates, parent, plabel, order, position, size, olabel, acc, seen, touched):
    """The pages that can be among u's ``top_k`` (u excluded) with their exact scores.

    Returns (pages, scores, level): every page whose score is above ``similarity_cutoff`` and within 1e-12 of
    the k-th best or better (ties at the k-th place all included; the caller ranks them), and
    the level after which the bound proved the answer (``length + 1``: every member was read).
    With ``max_members`` > 0, a page whose answer is not proven once that many members are read
    (checked after each fingerprint's part of a level) stops there, during level t, and gets the
    best of the ``cut_candidates`` read pages of largest partial score instead, each scored exactly
    (see :func:`_best_read`); the level comes back as -t. Every score returned is exact; a page not
    read meets u at t or later in every fingerprint it was not read in, so scores at most c^t.
    The bound stops the reading when at most ``candidate_limit`` pages can still enter and
    scoring them costs less than reading on (``rescore_cost`` member reads per fingerprint).
    ``acc`` (float64), ``seen`` (int32) and ``touched`` (int32), each of length V, are scratch:
    zero on entry, zero again on return.
    """
    chains = np.empty((count, length + 1), dtype=np.int64)
    intos = np.zeros((count, length + 1), dtype=np.int64)
    depths = np.empty(count, dtype=np.int64)
    seg = np.zeros(count, dtype=np.int64)  # cursor: segment, position, end, running max
    cur = np.empty(count, dtype=np.int64)
    end = np.empty(count, dtype=np.int64)
    run = np.empty(count, dtype=np.int64)
    const = np.zeros(count, dtype=np.bool_)
    members = 0  # in all of u's trees (u excluded); the root of each is the chain's top
    for i in range(count):
        depths[i] = _chain(u, i, parent, plabel, length, chains[i], intos[i])
        members += size[i, chains[i, depths[i]]] - 1
        start, stop, floor, constant = _segment(i, 0, chains[i], intos[i], position, size)
        cur[i], end[i], run[i], const[i] = start, stop, floor, constant
    n_touched = 0
    n_read = 0
    best = 0.0  # the largest partial sum
    found_pages = np.empty(0, dtype=np.int64)
    found_scores = np.empty(0, dtype=np.float64)
    done = False
    cut = False
    level = length + 1  # where the answer was proven (length + 1: every member read)
    # The budget is checked after each fingerprint's part of a level. (Shared out evenly, a few
    # members of every fingerprint, it found 40-60 % of the exact top 10 on a generated 10M-link
    # crawl instead of 60-73 %: the pages that meet u in the fingerprints read whole are better
    # candidates than the first members of every fingerprint.)
    for t in range(1, length + 1):
        for i in range(count):
            last_segment = 2 * depths[i]
            while seg[i] <= last_segment:
                q, stop = cur[i], end[i]
                if const[i]:
                    if run[i] > t:
                        break
                    tau = run[i]
                    n_read += stop - q
                    for r in range(q, stop):
                        n_touched, best = _add(order[i, r], powers[tau], acc, seen, touched, n_touched, best)
                else:
                    m = run[i]
                    while q < stop:
                        lab = olabel[i, q]
                        if lab > m:
                            m = lab
                        if m > t:
                            break
                        n_touched, best = _add(order[i, q], powers[m], acc, seen, touched, n_touched, best)
                        q += 1
                        n_read += 1
                    run[i] = m
                    if q < stop:
                        cur[i] = q
                        break
                seg[i] += 1
                if seg[i] <= last_segment:
                    start, stop, floor, constant = _segment(i, seg[i], chains[i], intos[i], position, size)
                    cur[i], end[i], run[i], const[i] = start, stop, floor, constant
            if 0 < max_members <= n_read < members:
                cut = True
                break
        if cut:  # the budget is spent: the best of the pages read, scored exactly
            found_pages, found_scores = _best_read(u, top_k, similarity_cutoff, count, length, powers, cut_candidates,
                                                   parent, plabel, position, size, chains, intos, depths,
                                                   acc, touched, n_touched)
            level = -t
            done = True
            break
        if t == length:
            break
        # Can the pages read so far hold the whole answer?
        bound = powers[t + 1]  # the most any page gains from one fingerprint it was not read in
        if similarity_cutoff < bound and best / count <= bound + MARGIN:
            continue  # not even the best partial score is above the bound
        if n_touched >= top_k:
            values = np.empty(n_touched, dtype=np.float64)
            for r in range(n_touched):
                values[r] = acc[touched[r]] / count
            kth = np.partition(values, n_touched - top_k)[n_touched - top_k]
        else:
            kth = -1.0
        floor_score = max(kth, similarity_cutoff)
        if not (kth > bound + MARGIN or similarity_cutoff >= bound):
            continue
        n_candidates = 0
        for r in range(n_touched):
            w = touched[r]
            if (acc[w] + (count - seen[w]) * bound) / count >= floor_score - MARGIN:
                n_candidates += 1
        # Scoring a candidate by Lemma 2 costs about `rescore_cost` member reads per fingerprint:
        # when reading the rest is cheaper, read on (the sums come out exact at the last level).
        if n_candidates > candidate_limit or n_candidates * count * rescore_cost > members - n_read:
            continue
        times = np.empty(count, dtype=np.int64)
        cand_pages = np.empty(n_candidates, dtype=np.int64)
        cand_scores = np.empty(n_candidates, dtype=np.float64)
        c = 0
        for r in range(n_touched):
            w = touched[r]
            if (acc[w] + (count - seen[w]) * bound) / count >= floor_score - MARGIN:
                cand_pages[c] = w
                cand_scores[c] = _exact_score(u, w, count, length, powers, parent, plabel, position, size,
                                              chains, intos, depths, times)
                c += 1
        found_pages, found_scores = _best(cand_pages, cand_scores, top_k, similarity_cutoff)
        level = t
        done = True
        break
    if not done:  # everything read: the sums are exact
        pages = np.empty(n_touched, dtype=np.int64)
        scores = np.empty(n_touched, dtype=np.float64)
        for r in range(n_touched):
            pages[r] = touched[r]
            scores[r] = acc[touched[r]] / count
        found_pages, found_scores = _best(pages, scores, top_k, similarity_cutoff)
    for r in range(n_touched):
        w = touched[r]
        acc[w] = 0.0
        seen[w] = 0
    return found_pages, found_scores, level


@njit(cache=True, nogil=True)
def _best_read(u, top_k, similarity_cutoff, count, length, powers, n_chosen, parent, plabel, position, size,
               chains, intos, depths, acc, touched, n_touched):
    """The answer of a reading stopped by the member budget: the ``n_chosen`` read pages of
    largest partial score (ties: smaller page first) scored exactly, their best kept."""
    n = min(n_chosen, n_touched)
    chosen = np.empty(n, dtype=np.int64)
    if n == n_touched:
        for r in range(n):
            chosen[r] = touched[r]
    elif n > 0:
        values = np.empty(n_touched, dtype=np.float64)
        for r in range(n_touched):
            values[r] = acc[touched[r]]
        cut = np.partition(values, n_touched - n)[n_touched - n]  # the n-th largest
        c = 0
        tied = []
        for r in range(n_touched):
            w = touched[r]
            if acc[w] > cut:
                chosen[c] = w
                c += 1
            elif acc[w] == cut:
                tied.append(w)
        tied.sort()
        for w in tied[: n - c]:
            chosen[c] = w
            c += 1
    times = np.empty(count, dtype=np.int64)
    scores = np.empty(n, dtype=np.float64)
    for c in range(n):
        scores[c] = _exact_score(u, chosen[c], count, length, powers, parent, plabel, position, size, chains,
                                 intos, depths, times)
    return _best(chosen, scores, top_k, similarity_cutoff)


@njit(cache=True, nogil=True)
def _best(pages, scores, top_k, similarity_cutoff):
    """Pages above the similarity_cutoff scoring within 1e-12 of the k-th best or better."""
    keep = scores > similarity_cutoff
    pages, scores = pages[keep], scores[keep]
    if len(scores) > top_k:
        kth = np.partition(scores.copy(), len(scores) - top_k)[len(scores) - top_k]
        keep = scores >= kth - 1e-12
        pages, scores = pages[keep], scores[keep]
    return pages, scores


@njit(cache=True, nogil=True)
def pagesim_scores(sources, mine, source_indptr, source_indices, source_data, minmax, acc, touched):
    """PageSim of one page u with every page sharing a source: (pages, scores).

    ``sources`` / ``mine``: u's feature vector (source i, PG(i, u)) in increasing i; every page v
    of row i gains min(PG(i,u), PG(i,v))^2 / max(...) (``minmax``) or the min (the sum formula),
    added in increasing i as numpy's gather-and-bincount adds them, so the floats are the same.
    ``acc`` (float64) and ``touched`` (int32) of length V are scratch, zero on entry and return.
    """
    n_touched = 0
    for s in range(len(sources)):
        i = sources[s]
        a = mine[s]
        for e in range(source_indptr[i], source_indptr[i + 1]):
            v = source_indices[e]
            b = source_data[e]
            low, high = (a, b) if a < b else (b, a)
            if minmax:
                value = low * low / high if high > 0 else 0.0
            else:
                value = low
            if acc[v] == 0.0 and value != 0.0:
                touched[n_touched] = v
                n_touched += 1
            acc[v] += value
    pages = np.empty(n_touched, dtype=np.int64)
    scores = np.empty(n_touched, dtype=np.float64)
    for r in range(n_touched):
        pages[r] = touched[r]
        scores[r] = acc[touched[r]]
        acc[touched[r]] = 0.0
    return pages, scores


def warm_up() -> None:
    """Compile (or load from numba's cache) the queries for the argument types every index passes,
    on a two-page index: a run calls this before it takes a writer lock, so that a first
    compilation (20 s or more, holding the interpreter) cannot starve the lock's heartbeat."""
    parent = read_only(np.array([[-1, 0]], dtype=np.int32))
    label = read_only(np.array([[0, 1]], dtype=np.int8))
    order = read_only(np.array([[0, 1]], dtype=np.int32))
    position = read_only(np.array([[0, 1]], dtype=np.int32))
    size = read_only(np.array([[2, 1]], dtype=np.int32))
    powers = np.array([1.0, 0.5, 0.0])
    acc, seen, touched = np.zeros(2), np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.int32)
    top_k_one(0, 1, 1, 1, powers, 0.0, 10, 5.0, 0, 4, parent, label, order, position, size, label, acc, seen, touched)
    sources, values = read_only(np.array([0], dtype=np.int64)), read_only(np.array([0.5]))
    indptr, indices = read_only(np.array([0, 1], dtype=np.int64)), read_only(np.array([1], dtype=np.int32))
    pagesim_scores(sources, values, indptr, indices, values, True, np.zeros(2), np.zeros(2, dtype=np.int32))
