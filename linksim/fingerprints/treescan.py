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

from pathlib import Path

import numpy as np
from numba import njit

from linksim.arrays import read_only
from linksim.fingerprints.randomness import GAMMA, _mix

MARGIN = 1e-11  # float slack of the bounds (scores differ in the last bits only if summed apart)


QUERY_BYTES = 9  #: what the compiled queries read of an index, a page and fingerprint: preorder, labels, position
QUERY_POSITION_BYTES = 4  #: of which the position, read from the page-major rows where they are made
QUERY_ORDER_BYTES = 4  #: of which the preorder's pages, read by the scans of a tree's members only
BLOCK = 64  #: positions of the preorder a first-level block of label maxima covers
SUPER = 4096  #: and a second-level block


def label_blocks(olabel: np.ndarray) -> tuple:
    """The largest key of each block of :data:`BLOCK` and of :data:`SUPER` positions of every
    fingerprint's preorder labels, (N, ceil(V / BLOCK)) and (N, ceil(V / SUPER)) uint8: what lets
    :func:`_tree_chain` find u's ancestors and their subtrees' ends, and :func:`_range_max` the
    label by which a page's path enters one of them, in a few block steps rather than a walk up
    parent pointers (1/64 byte a page and fingerprint). A label's key is the label less one, a
    root's (label 0) 255: larger than every label."""
    count, n = olabel.shape
    width = -(-n // SUPER) * SUPER
    block = np.zeros((count, width // BLOCK), dtype=np.uint8)
    top = np.zeros((count, width // SUPER), dtype=np.uint8)
    row = np.zeros(width, dtype=np.uint8)
    for i in range(count):
        row[:n] = np.asarray(olabel[i]).view(np.uint8) - np.uint8(1)  # 0 - 1 wraps to 255: roots
        row[n:] = 0
        block[i] = row.reshape(-1, BLOCK).max(axis=1)
        top[i] = block[i].reshape(-1, SUPER // BLOCK).max(axis=1)
    return read_only(block), read_only(top)


@njit(cache=True, nogil=True, inline="always")
def _key(olabel, i, q):
    """The label at position q as a key: the label less one, 255 for a root."""
    lab = olabel[i, q]
    return 255 if lab == 0 else lab - 1


@njit(cache=True, nogil=True)
def _next_at_least(i, q, x, olabel, block, top):
    """The first position r >= q of fingerprint i whose key is at least x (the preorder's length
    if none)."""
    n = olabel.shape[1]
    r = q
    while r < n:
        if r % SUPER == 0 and top[i, r // SUPER] < x:
            r += SUPER
        elif r % BLOCK == 0 and block[i, r // BLOCK] < x:
            r += BLOCK
        elif _key(olabel, i, r) >= x:
            return r
        else:
            r += 1
    return n


@njit(cache=True, nogil=True)
def _last_above(i, q, x, olabel, block, top):
    """The last position r <= q of fingerprint i whose key is above x (-1 if none)."""
    r = q
    while r >= 0:
        if (r + 1) % SUPER == 0 and top[i, r // SUPER] <= x:
            r -= SUPER
        elif (r + 1) % BLOCK == 0 and block[i, r // BLOCK] <= x:
            r -= BLOCK
        elif _key(olabel, i, r) > x:
            return r
        else:
            r -= 1
    return -1


@njit(cache=True, nogil=True)
def _range_max(i, a, b, olabel, block, top):
    """The largest label at positions a+1 .. b of fingerprint i (no root among them): the label of
    the edge by which the path of the page at b enters the page at a, its ancestor (children are
    laid out in increasing label order and every label below a child is smaller than its own)."""
    m = 0
    r = a + 1
    while r <= b:
        if r % SUPER == 0 and r + SUPER - 1 <= b:
            m = max(m, top[i, r // SUPER])
            r += SUPER
        elif r % BLOCK == 0 and r + BLOCK - 1 <= b:
            m = max(m, block[i, r // BLOCK])
            r += BLOCK
        else:
            m = max(m, _key(olabel, i, r))
            r += 1
    return m + 1


@njit(cache=True, nogil=True)
def _where(position, by_page, i, v):
    """Page v's position in fingerprint i: from (V, N) page-major rows or the (N, V) layout."""
    return position[v, i] if by_page else position[i, v]


@njit(cache=True, nogil=True)
def _tree_chain(u, count, length, tree, by_page, starts, stops, intos, depths):
    """u's ancestors a_0 = u, a_1, ... in each fingerprint as the ranges of the preorder their
    subtrees hold (``starts``, ``stops``: (count, length + 1)), the labels l_j into them
    (``intos``) and how many there are (``depths``), from the preorder labels alone. Labels grow
    strictly towards the root and each page's children are laid out in increasing label order,
    so every page between a_{j+1} and a_j in the preorder is a descendant of a_{j+1} with a label
    at most l_{j+1}: a_{j+1} is the last page before a_j labelled above l_{j+1}, a root (label 0)
    above every label; a_j's subtree ends at the first later page labelled at least a_j's own
    label. Returns the members of u's trees (u excluded)."""
    _, olabel, block, top, position = tree
    members = 0
    for i in range(count):
        p = _where(position, by_page, i, u)
        starts[i, 0] = p
        intos[i, 0] = 0
        lab = olabel[i, p]
        j = 0
        while lab != 0 and j < length:
            q = _last_above(i, starts[i, j] - 1, lab - 1, olabel, block, top)
            j += 1
            starts[i, j] = q
            intos[i, j] = lab
            lab = olabel[i, q]
        depths[i] = j
        r = p + 1
        for d in range(j + 1):
            r = _next_at_least(i, r, _key(olabel, i, starts[i, d]), olabel, block, top)
            stops[i, d] = r
        members += stops[i, j] - starts[i, j] - 1
    return members


@njit(cache=True, nogil=True, inline="always")
def _segment(i, s, starts, stops, intos):
    """Segment s of u's members in fingerprint i: (start, stop, floor, constant)."""
    if s == 0:
        return starts[i, 0] + 1, stops[i, 0], 0, False
    j = (s + 1) // 2
    if s % 2 == 1:  # a_j and its children met before a_{j-1}'s branch: τ = l_j
        return starts[i, j], starts[i, j - 1], intos[i, j], True
    return stops[i, j - 1], stops[i, j], intos[i, j], False


@njit(cache=True, nogil=True, inline="always")
def _add(w, value, acc, seen, touched, n_touched, best):
    """Page w meets u once more, adding ``value``: (pages touched, largest partial sum)."""
    if seen[w] == 0:
        touched[n_touched] = w
        n_touched += 1
    acc[w] += value
    seen[w] += 1
    return n_touched, max(best, acc[w])


@njit(cache=True, nogil=True, inline="always")
def _score_of(times, count, length, powers):
    """c^τ summed over the fingerprints in increasing τ, over ``count`` (the order and the floats
    of :func:`linksim.fingerprints.index.score_of_times` on the sorted times: each τ's terms are
    added one by one, the smaller τ first; a count per τ instead of a sort)."""
    per = np.zeros(length + 2, dtype=np.int64)
    for i in range(count):
        per[times[i]] += 1
    total = 0.0
    for tau in range(length + 1):
        term = powers[tau]
        for _ in range(per[tau]):
            total += term
    return total / count


@njit(cache=True, nogil=True)
def _exact_scores(pages, count, length, powers, tree, by_page, starts, stops, intos, depths, page_major):
    """sim(u, v) by Lemma 2 in every fingerprint for each v of ``pages``, terms summed in increasing
    τ (the floats :meth:`FingerprintIndex.sim` gives), u's trees given by :func:`_tree_chain`.

    With ``page_major`` (:func:`page_major` of the index: a page's position and path labels in
    every fingerprint side by side) each page is scored in turn from its own row alone, a few
    cache lines: the path labels give the label by which v's path enters u's ancestor
    (:func:`_time_by_path`). Without (its arrays of length 0), read fingerprint by fingerprint
    over the pages in increasing order, that label the largest between the ancestor and v in
    the preorder (:func:`_range_max`)."""
    order, olabel, block, top, position = tree
    n = len(pages)
    never = length + 1
    scores = np.empty(n, dtype=np.float64)
    position_t, path_t = page_major
    if position_t.shape[0] > 0:
        below = _below(count, depths, intos)
        row = np.empty(count, dtype=np.int64)
        for c in range(n):
            v = pages[c]
            for i in range(count):
                row[i] = _time_by_path(position_t[v, i], path_t[v, i], i, depths[i], never, intos, below, starts,
                                       stops)
            scores[c] = _score_of(row, count, length, powers)
        return scores
    by_order = np.argsort(pages)
    times = np.empty((n, count), dtype=np.int64)
    for i in range(count):
        for r in range(n):
            c = by_order[r]
            pv = _where(position, by_page, i, pages[c])
            j = _ancestor_holding(pv, i, depths[i], starts, stops)
            if j < 0:
                times[c, i] = never  # another tree
            elif pv == starts[i, j]:
                times[c, i] = intos[i, j]  # v is a_j
            else:
                times[c, i] = max(intos[i, j], _range_max(i, starts[i, j], pv, olabel, block, top))
    for c in range(n):
        scores[c] = _score_of(times[c], count, length, powers)
    return scores


@njit(cache=True, nogil=True, inline="always")
def _ancestor_holding(pv, i, depth, starts, stops):
    """The first j whose ancestor a_j of u holds position ``pv`` in its subtree (u's ancestors'
    subtrees are nested ranges of the preorder), or -1 if none does: another tree."""
    if pv < starts[i, depth] or pv >= stops[i, depth]:
        return -1
    for j in range(depth + 1):
        if starts[i, j] <= pv < stops[i, j]:
            return j
    return -1


@njit(cache=True, nogil=True, inline="always")
def _high_bit(bits):
    """The highest set bit's place (0 for none): the largest label of a set of path labels."""
    place = 0
    bits >>= 1
    while bits:
        bits >>= 1
        place += 1
    return place


@njit(cache=True, nogil=True)
def _below(count, depths, intos):
    """Per fingerprint i and ancestor a_j of u: the path labels below the edge a_j -> a_{j+1}
    (every label for the root). Labels grow towards the root, so the edge by which another page's
    path enters a_j carries the largest of that page's path labels below it."""
    below = np.empty((count, intos.shape[1]), dtype=np.int64)
    for i in range(count):
        for j in range(depths[i]):
            below[i, j] = (1 << intos[i, j + 1]) - 1
        below[i, depths[i]] = -1
    return below


@njit(cache=True, nogil=True, inline="always")
def _time_by_path(pv, bits, i, depth, never, intos, below, starts, stops):
    """τ(u, v) in fingerprint i from v's position ``pv`` and path labels ``bits`` alone: v lies in the subtree of u's ancestor a_j
    and not of a_{j-1}, and meets u at the later of the time u's walk enters a_j and the label
    of the edge by which v's path enters a_j, the largest of v's path labels below a_j's own
    edge (0 when v is a_j)."""
    j = _ancestor_holding(pv, i, depth, starts, stops)
    if j < 0:
        return never  # another tree
    return max(intos[i, j], _high_bit(np.int64(bits) & below[i, j]))


PATH_BITS = 15  #: the longest walks whose path labels fit the page-major rows (uint16, labels 1..L)


def path_dtype(length: int):
    """The path labels' integer for walks of ``length`` steps: a bit per label 1..L, uint8 up to 7
    steps (the default's walks of 3: a sixth less to read than uint16), else uint16."""
    return np.uint8 if length <= 7 else np.uint16


def page_major_bytes(length: int) -> int:
    """Of the page-major rows, a page and fingerprint: position (int32) and path labels."""
    return 4 + np.dtype(path_dtype(length)).itemsize



@njit(cache=True, nogil=True)
def _path_labels(parent, label, order, row, i):
    """Fingerprint i's path labels into ``row``: bit t set when the page's path to its root holds
    an edge labelled t. In preorder, a page's parent comes first."""
    for q in range(order.shape[1]):
        x = order[i, q]
        up = parent[i, x]
        row[x] = 0 if up < 0 else row[up] | (1 << label[i, x])


#: Pages a step of the transposition of the positions into page-major rows (64 MiB of int32 rows of
#: 100 fingerprints): bounded memory when the rows go to disk.
TRANSPOSE_PAGES = 1 << 18


def page_major(index_parent: np.ndarray, index_label: np.ndarray, position: np.ndarray, order: np.ndarray,
               length: int, directory: Path | None = None) -> tuple:
    """(position, path labels) of every page in every fingerprint, (V, N) each: the rows the exact
    scoring of a candidate reads, side by side (:func:`page_major_bytes` a page and fingerprint).
    The path labels of a page are the labels of the edges from it to its root as bits
    (:func:`path_dtype`: walks of at most ``PATH_BITS`` steps; longer ones get no rows,
    :data:`NO_PAGE_MAJOR`).

    ``directory``: the rows go to memory-mapped files there (the same values), built with the
    memory of 32 fingerprints' path labels and a step of the transposition; the queries then read
    them through the page cache, a candidate's row a page or two instead of a miss in every
    fingerprint."""
    from linksim.allocator import new_array

    if length > PATH_BITS:
        return NO_PAGE_MAJOR
    parent, label, order = read_only(index_parent), read_only(index_label), read_only(order)
    count, n = parent.shape
    paths = new_array(directory, "page_major_paths", (n, count), path_dtype(length))
    block = np.zeros((min(count, 32), n), dtype=path_dtype(length))  # 32 fingerprints: a cache line of each page's row
    for first in range(0, count, len(block)):
        rows = block[: min(len(block), count - first)]
        for r in range(len(rows)):
            _path_labels(parent, label, order, rows[r], first + r)
        paths[:, first : first + len(rows)] = rows.T
    del block
    rows = new_array(directory, "page_major_position", (n, count), np.int32)
    for first in range(0, n, TRANSPOSE_PAGES):
        rows[first : first + TRANSPOSE_PAGES] = position[:, first : first + TRANSPOSE_PAGES].T
    if directory is not None:  # written: read them back as the store's arrays are, read-only maps
        rows.flush()
        paths.flush()
        rows, paths = (np.load(Path(directory) / f"{name}.npy", mmap_mode="r")
                       for name in ("page_major_position", "page_major_paths"))
    return read_only(rows), read_only(paths)


NO_PAGE_MAJOR = tuple(read_only(np.zeros((0, 0), dtype=dtype)) for dtype in (np.int32, np.uint16))
#: A sampled query without twin classes: (class representative, class, class offsets, members).
NO_TWINS = tuple(read_only(np.zeros(0, dtype=dtype)) for dtype in (np.int32, np.int64, np.int64, np.int64))


def twin_arrays(klass: np.ndarray, indptr: np.ndarray, members: np.ndarray) -> tuple:
    """What a sampled query reads of the twin classes (:meth:`FingerprintIndex.twin_classes`):
    each page's representative (its class's first page, or -1 outside every class; int32: the one
    array a member read looks up), and the classes."""
    rep = np.full(len(klass), -1, dtype=np.int32)
    inside = klass >= 0
    rep[inside] = members[indptr[klass[inside]]]
    return tuple(read_only(a) for a in (rep, klass.astype(np.int64, copy=False),
                                        indptr.astype(np.int64, copy=False), members.astype(np.int64, copy=False)))


@njit(cache=True, nogil=True)
def scores_with(u, pages, count, length, powers, tree, by_page, page_major):
    """sim(u, v) for each of ``pages`` by Lemma 2 over the first ``count`` fingerprints (the floats
    :meth:`FingerprintIndex.sim` gives; u itself scores 1). ``tree``: the arrays the queries read,
    (order, preorder labels, :func:`label_blocks`, position), the position (V, N) when ``by_page``."""
    starts, stops, intos, depths, _ = _trees_of(u, count, length, tree, by_page)
    return _exact_scores(pages, count, length, powers, tree, by_page, starts, stops, intos, depths, page_major)


@njit(cache=True, nogil=True)
def _geometry(count, length):
    """Scratch of :func:`_tree_chain`: starts, stops, intos (count, length + 1), depths (count)."""
    return (np.empty((count, length + 1), dtype=np.int64), np.empty((count, length + 1), dtype=np.int64),
            np.zeros((count, length + 1), dtype=np.int64), np.empty(count, dtype=np.int64))


@njit(cache=True, nogil=True)
def _trees_of(u, count, length, tree, by_page):
    """:func:`_tree_chain` of u into new arrays: (starts, stops, intos, depths, members)."""
    starts, stops, intos, depths = _geometry(count, length)
    members = _tree_chain(u, count, length, tree, by_page, starts, stops, intos, depths)
    return starts, stops, intos, depths, members


def query_of(top_k: int, count: int, length: int, powers: np.ndarray, similarity_cutoff: float) -> tuple:
    """What a list asks of the trees, as the kernels take it (one numba type whatever the values)."""
    return int(top_k), int(count), int(length), powers, float(similarity_cutoff)


@njit(cache=True, nogil=True)
def top_k_one(u, query, candidate_limit, rescore_cost, tree, by_page, scratch, page_major):
    """:func:`_top_k_one` of u, its trees found by :func:`_tree_chain`."""
    count, length = query[1], query[2]
    starts, stops, intos, depths, members = _trees_of(u, count, length, tree, by_page)
    return _top_k_one(u, query, candidate_limit, rescore_cost, tree, by_page, scratch, page_major,
                      (starts, stops, intos, depths), members)


@njit(cache=True, nogil=True)
def _top_k_one(u, query, candidate_limit, rescore_cost, tree, by_page, scratch, page_major, trees, members):
    """The pages that can be among u's ``top_k`` (u excluded) with their exact scores. ``query``:
    ``(top_k, count, length, powers, similarity_cutoff)`` (:func:`query_of`); ``scratch``:
    ``(acc, seen, touched, hits)``; ``trees``: u's ``(starts, stops, intos, depths)``.

    Returns (pages, scores, level): every page whose score is above ``similarity_cutoff`` and within 1e-12 of
    the k-th best or better (ties at the k-th place all included; the caller ranks them), and
    the level after which the bound proved the answer (``length + 1``: every member was read).
    The bound stops the reading when at most ``candidate_limit`` pages can still enter and
    scoring them costs less than reading on (``rescore_cost`` member reads per fingerprint).
    ``acc`` (float64), ``seen`` (int32) and ``touched`` (int32), each of length V, are scratch:
    zero on entry, zero again on return. ``members``: of u's trees, u excluded.
    """
    top_k, count, length, powers, similarity_cutoff = query
    acc, seen, touched = scratch[0], scratch[1], scratch[2]
    starts, stops, intos, depths = trees
    order, olabel = tree[0], tree[1]
    seg = np.zeros(count, dtype=np.int64)  # cursor: segment, position, end, running max
    cur = np.empty(count, dtype=np.int64)
    end = np.empty(count, dtype=np.int64)
    run = np.empty(count, dtype=np.int64)
    const = np.zeros(count, dtype=np.bool_)
    for i in range(count):
        start, stop, floor, constant = _segment(i, 0, starts, stops, intos)
        cur[i], end[i], run[i], const[i] = start, stop, floor, constant
    n_touched = 0
    n_read = 0
    best = 0.0  # the largest partial sum
    found_pages = np.empty(0, dtype=np.int64)
    found_scores = np.empty(0, dtype=np.float64)
    done = False
    level = length + 1  # where the answer was proven (length + 1: every member read)
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
                    start, stop, floor, constant = _segment(i, seg[i], starts, stops, intos)
                    cur[i], end[i], run[i], const[i] = start, stop, floor, constant
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
        cand_pages = np.empty(n_candidates, dtype=np.int64)
        c = 0
        for r in range(n_touched):
            w = touched[r]
            if (acc[w] + (count - seen[w]) * bound) / count >= floor_score - MARGIN:
                cand_pages[c] = w
                c += 1
        cand_scores = _exact_scores(cand_pages, count, length, powers, tree, by_page, starts, stops, intos, depths,
                                    page_major)
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


@njit(cache=True, nogil=True, inline="always")
def _meet(w, acc, value, touched, n_touched):
    if acc[w] == 0.0:
        touched[n_touched] = w
        n_touched += 1
    acc[w] += value
    return n_touched


@njit(cache=True, nogil=True, inline="always")
def _meet_once(w, value, mark, acc, seen, touched, n_touched, twins, own):
    """:func:`_meet` of w, or, for a twin outside u's class (``own``: that class's representative,
    or -1), of its class's representative once a ``mark`` (a fingerprint, a band: twins meet u at
    the same time, in the same bucket)."""
    if twins[0].shape[0] > 0:
        r = twins[0][w]
        if r >= 0 and r != own:
            w = r
            if seen[w] == mark:
                return n_touched
            seen[w] = mark
    return _meet(w, acc, value, touched, n_touched)


@njit(cache=True, nogil=True)
def top_k_sampled(u, query, reading, tree, by_page, scratch, bands, page_major, twins):
    """:func:`_top_k_sampled` of u, its trees found by :func:`_tree_chain`."""
    starts, stops, intos, depths, _ = _trees_of(u, query[1], query[2], tree, by_page)
    return _top_k_sampled(u, query, reading, tree, by_page, scratch, bands, page_major, twins,
                          (starts, stops, intos, depths))


@njit(cache=True, nogil=True)
def _top_k_sampled(u, query, reading, tree, by_page, scratch, bands, page_major, twins, trees):
    """u's ``top_k`` from a sample of its large trees' members, each listed page scored exactly.
    ``query`` and ``scratch`` as :func:`_top_k_one` takes them; ``reading``: ``(sample,
    n_candidates, n_finalists)``; ``bands``: ``(band_order, band_start, band_stop, band_cap,
    band_sample, n_band_candidates)`` (:func:`_band_frequent`).

    Each range of u's members (a fingerprint's part of u's tree that meets u from one time t on,
    see :func:`_segment`) is read whole if it holds at most ``q_t = ceil(sample · c^(t-1))``
    members, else at ``q_t`` positions of a systematic sample (stride P / q_t from an offset drawn
    by hashing u, the fingerprint and the range): each member is read with probability q_t / P,
    independently between ranges. A page read adds c^τ to its partial sum; the ``n_candidates``
    pages of largest partial sum (ties: the page read first) are scored by Lemma 2, in increasing τ:
    the float :meth:`FingerprintIndex.sim` gives. (If no range was sampled the partial sums are the
    scores, and only the ``n_finalists`` best are scored again.) Returns (pages, scores, sampled): the pages within
    1e-12 of the k-th best score or better, and whether any range was sampled (if none was, every
    member was read and the answer is the exact reading's). ``acc`` (float64), ``seen`` and
    ``touched`` (int32) and ``hits`` (uint16, for the bands: :func:`_band_frequent`) of length V
    are scratch, zero on entry and on return.

    With ``twins`` (:func:`twin_arrays`; empty: none), a twin class outside u's own is one
    candidate, read as one page: its pages meet u at the same time in every fingerprint, so the
    first of them read in a fingerprint adds c^τ to its representative's partial sum and the
    others read there add nothing (``seen``), and in each band the class's bucket counts once; a
    representative scored exactly brings its class's next pages with the same score (twins'
    terms, and so their floats, are the same), at most ``top_k - 1`` of them (ties go to the
    smaller page). So a class of a thousand twins takes one of the ``n_candidates`` places, not
    a thousand, and is found if any of its pages is read.
    """
    top_k, count, length, powers, similarity_cutoff = query
    sample, n_candidates, n_finalists = reading
    acc, seen, touched, hits = scratch
    band_order, band_start, band_stop, band_cap, band_sample, n_band_candidates = bands
    starts, stops, intos, depths = trees
    order, olabel, block, top = tree[0], tree[1], tree[2], tree[3]
    paired = twins[0].shape[0] > 0
    own = twins[0][u] if paired else -1  # u's class (its representative): its pages stand for themselves
    n_touched = 0
    sampled = False
    path_t = page_major[1]
    paged = path_t.shape[0] > 0
    below = _below(count, depths, intos)
    for i in range(count):
        for s in range(2 * depths[i] + 1):
            start, stop, floor, constant = _segment(i, s, starts, stops, intos)
            members = stop - start
            if members <= 0:
                continue
            first = floor if floor > 0 else 1  # u's own subtree meets u from step 1 on
            quota = int(np.ceil(sample * powers[first] / powers[1]))
            if members <= quota:
                m = floor
                for q in range(start, stop):
                    if not constant and olabel[i, q] > m:
                        m = olabel[i, q]
                    n_touched = _meet_once(order[i, q], powers[m], i + 1, acc, seen, touched, n_touched, twins, own)
                continue
            sampled = True
            stride = members / quota
            key = _mix(np.uint64(u) * np.uint64(GAMMA) + np.uint64(i * (2 * length + 1) + s))
            offset = (key >> np.uint64(11)) * (1.0 / 9007199254740992.0) * stride  # uniform in [0, stride)
            anchor = (s + 1) // 2  # the ancestor a_j whose subtree holds the range
            for r in range(quota):
                q = min(start + int(offset + r * stride), stop - 1)
                w = order[i, q]
                tau = floor
                if not constant:  # τ: the label into the anchor's child on w's path (labels grow upwards)
                    if paged:  # the largest of w's path labels below the anchor's own edge
                        lab = _high_bit(np.int64(path_t[w, i]) & below[i, anchor])
                    else:  # the largest label between a_j and w in the preorder
                        lab = _range_max(i, starts[i, anchor], q, olabel, block, top)
                    if lab > tau:
                        tau = lab
                n_touched = _meet_once(w, powers[tau], i + 1, acc, seen, touched, n_touched, twins, own)
    # Every member read: the partial sums are the scores (summed in another order), their best are final.
    # (Ties of a sample: the page read first. On a generated 1M-link crawl that judged 0.996 / 0.847,
    # ties by page 0.986 / 0.797: the pages read first meet u in the first ranges of its trees.)
    chosen = _largest(acc, touched, n_touched, n_candidates if sampled else n_finalists, not sampled)
    for r in range(n_touched):
        acc[touched[r]] = 0.0
        seen[touched[r]] = 0
    if sampled and n_band_candidates > 0:  # and the pages that share u's first steps most often
        frequent = _band_frequent(u, band_order, band_start, band_stop, band_cap, band_sample, n_band_candidates,
                                  hits, seen, touched, twins, own)
        for c in range(len(chosen)):
            acc[chosen[c]] = 1.0
        extra = 0
        for c in range(len(frequent)):
            if acc[frequent[c]] == 0.0:
                frequent[extra] = frequent[c]
                extra += 1
        for c in range(len(chosen)):
            acc[chosen[c]] = 0.0
        chosen = np.concatenate((chosen, frequent[:extra]))
    scores = _exact_scores(chosen, count, length, powers, tree, by_page, starts, stops, intos, depths, page_major)
    if paired:
        chosen, scores = _with_twins(chosen, scores, top_k, twins, own)
    pages, scores = _best(chosen, scores, top_k, similarity_cutoff)
    return pages, scores, sampled


@njit(cache=True, nogil=True)
def _with_twins(chosen, scores, top_k, twins, own):
    """``chosen`` and their ``scores``, each representative followed by the next pages of its
    class at its score: ``top_k - 1`` of them, less the other pages of u's own class (which stand
    for themselves and score above any other page: a twin's list asks for them besides its k)."""
    rep, klass, indptr, members = twins
    if own >= 0:
        top_k = max(1, top_k - (indptr[klass[own] + 1] - indptr[klass[own]] - 1))
    pages = np.empty(len(chosen) * top_k, dtype=np.int64)  # at most top_k a representative
    values = np.empty(len(chosen) * top_k, dtype=np.float64)
    n = 0
    for c in range(len(chosen)):
        w = chosen[c]
        pages[n] = w
        values[n] = scores[c]
        n += 1
        if rep[w] == w and w != own:
            k = klass[w]
            for q in range(indptr[k] + 1, min(indptr[k + 1], indptr[k] + top_k)):
                pages[n] = members[q]
                values[n] = scores[c]
                n += 1
    pages, values = pages[:n], values[:n]
    return pages, values


@njit(cache=True, nogil=True)
def _ranked(pages, scores, u, top_k, similarity_cutoff):
    """:func:`linksim.ranking.top_pages` compiled: the best ``top_k`` of (page, score) above
    ``similarity_cutoff``, u excluded, best first, ties (on 12 decimals) by the smaller page."""
    keep = (scores > similarity_cutoff) & (pages != u)
    pages, scores = pages[keep], scores[keep]
    if len(pages) > top_k:
        kth = np.partition(scores.copy(), len(scores) - top_k)[len(scores) - top_k]
        keep = scores >= kth - 1e-12
        pages, scores = pages[keep], scores[keep]
    by_page = np.argsort(pages, kind="mergesort")
    keys = -np.round(scores[by_page], 12)
    ranking = by_page[np.argsort(keys, kind="mergesort")][:top_k]
    return pages[ranking], scores[ranking]


@njit(cache=True, nogil=True)
def top_k_many(us, query, reading, exact_members, candidate_limit, rescore_cost, tree, by_page, scratch, bands,
               page_major, twins):
    """Each page of ``us``'s list, as :meth:`FingerprintIndex.related` gives it one page at a time
    (without twin classes): a page whose trees hold more than ``exact_members`` members (u
    excluded) is read from a sample (``reading``'s ``sample`` > 0, :func:`top_k_sampled`), any
    other exactly (:func:`top_k_one`). Returns (lengths, pages, scores, sampled): the lists one
    after another, best first, and how many were read from a sample."""
    top_k, count, length, similarity_cutoff, sample = query[0], query[1], query[2], query[4], reading[0]
    lengths = np.zeros(len(us), dtype=np.int64)
    out_pages = np.empty(len(us) * top_k, dtype=np.int64)
    out_scores = np.empty(len(us) * top_k, dtype=np.float64)
    n_out = 0
    n_sampled = 0
    starts, stops, intos, depths = _geometry(count, length)
    for r in range(len(us)):
        u = us[r]
        members = _tree_chain(u, count, length, tree, by_page, starts, stops, intos, depths)
        if sample > 0 and members > exact_members:
            pages, scores, sampled = _top_k_sampled(u, query, reading, tree, by_page, scratch, bands, page_major,
                                                    twins, (starts, stops, intos, depths))
            n_sampled += sampled
        else:
            pages, scores, _ = _top_k_one(u, query, candidate_limit, rescore_cost, tree, by_page, scratch, page_major,
                                          (starts, stops, intos, depths), members)
        pages, scores = _ranked(pages, scores, u, top_k, similarity_cutoff)
        lengths[r] = len(pages)
        out_pages[n_out : n_out + len(pages)] = pages
        out_scores[n_out : n_out + len(pages)] = scores
        n_out += len(pages)
    return lengths, out_pages[:n_out], out_scores[:n_out], n_sampled


@njit(cache=True, nogil=True)
def _band_frequent(u, band_order, band_start, band_stop, cap, sample, n, hits, seen, touched, twins, own):
    """The ``n`` pages sharing the most first-step buckets with u (ties: the page read first).
    For each band, the pages of u's bucket (at most ``cap``; of a larger one its systematic sample
    of ``sample`` pages, which :func:`linksim.ranking.bands.first_step_bands` stores first in the
    bucket, so that it is read in neighbouring entries) gain 1 in ``hits``, a twin class once, for
    its representative; the ``n`` most hit are chosen from a histogram of the counts. With
    ``twins``, a twin's entry in the bands is its class's representative, negated
    (:func:`linksim.ranking.bands.first_step_bands`): a bucket read whole
    counts a class by its representative's entry and skips the others' without a look-up; a
    sampled one maps a twin's entry to its class and marks the class read in this band
    (``seen``: scratch). The pages of u's own class (``own``: its representative), which stand
    for themselves and share every bucket with u, gain one a band before the bands are read.
    ``hits`` (uint16, at least as many as bands) is two bytes a page rather than ``acc``'s eight,
    so that the counts of large buckets read whole stay in cache. ``hits``, ``seen``: zero on
    return."""
    n_touched = 0
    bands = band_order.shape[0]
    paired = twins[0].shape[0] > 0
    if own >= 0:
        klass = twins[1][u]
        for c in range(twins[2][klass], twins[2][klass + 1]):
            w = twins[3][c]
            if w != u:
                touched[n_touched] = w
                n_touched += 1
                hits[w] = bands
    for b in range(bands):
        start, stop = band_start[b, u], band_stop[b, u]
        size = stop - start
        if size <= 1:
            continue
        if size <= cap:
            for q in range(start, stop):
                w = band_order[b, q]
                if w < 0 or w == u or w == own:
                    continue
                if hits[w] == 0:
                    touched[n_touched] = w
                    n_touched += 1
                hits[w] += 1
            continue
        mark = b + 1
        for q in range(start, start + sample):  # the bucket's sample, stored first (first_step_bands)
            w = band_order[b, q]
            if w < 0:
                w = -w - 1
            if w == u or w == own:
                continue
            if paired and twins[0][w] >= 0:
                if seen[w] == mark:
                    continue
                seen[w] = mark
            if hits[w] == 0:
                touched[n_touched] = w
                n_touched += 1
            hits[w] += 1
    histogram = np.zeros(bands + 2, dtype=np.int64)
    for r in range(n_touched):
        histogram[hits[touched[r]]] += 1
    need = n
    cut = bands + 1
    while cut > 1 and need > histogram[cut]:
        need -= histogram[cut]
        cut -= 1
    chosen = np.empty(min(n, n_touched), dtype=np.int64)
    k = 0
    for r in range(n_touched):
        if k < len(chosen) and hits[touched[r]] > cut:
            chosen[k] = touched[r]
            k += 1
    for r in range(n_touched):
        w = touched[r]
        if k < len(chosen) and hits[w] == cut:
            chosen[k] = w
            k += 1
        hits[w] = 0
        seen[w] = 0
    return chosen[:k]


@njit(cache=True, nogil=True)
def _largest(acc, touched, n_touched, n, by_page):
    """The ``n`` touched pages of largest ``acc`` (on 9 decimals); ties: the smaller page first
    (``by_page``) or the page read first."""
    if n_touched <= n:
        return touched[:n_touched].astype(np.int64)
    pages = touched[:n_touched].astype(np.int64)
    keys = np.empty(n_touched, dtype=np.float64)
    for r in range(n_touched):
        keys[r] = -np.round(acc[pages[r]], 9)
    cut = np.partition(keys.copy(), n - 1)[n - 1]  # the n-th largest, negated
    inside = pages[keys < cut]
    tied = pages[keys == cut]
    if by_page:
        tied = np.sort(tied)
    return np.concatenate((inside, tied[: n - len(inside)]))


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


def warm_up() -> None:
    """Compile (or load from numba's cache) the queries for the argument types every index passes,
    on a two-page index: a run calls this before it takes a writer lock, so that a first
    compilation (20 s or more, holding the interpreter) cannot starve the lock's heartbeat."""
    parent = read_only(np.array([[-1, 0]], dtype=np.int32))
    label = read_only(np.array([[0, 1]], dtype=np.int8))
    order = read_only(np.array([[0, 1]], dtype=np.int32))
    position = read_only(np.array([[0, 1]], dtype=np.int32))
    powers = np.array([1.0, 0.5, 0.0])
    acc, seen, touched = np.zeros(2), np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.int32)
    hits = np.zeros(2, dtype=np.uint16)
    bands = read_only(np.zeros((1, 2), dtype=np.int32))
    for rows in (NO_PAGE_MAJOR, page_major(parent, label, position, order, 1)):
        by_page = rows[0].shape[0] > 0
        tree = (order, label, *label_blocks(label), rows[0] if by_page else position)
        query, scratch = query_of(1, 1, 1, powers, 0.0), (acc, seen, touched, hits)
        banded = (bands, bands, bands, 4, 4, 4)
        top_k_one(0, query, 10, 5.0, tree, by_page, scratch, rows)
        for twins in (NO_TWINS, twin_arrays(np.array([0, 0]), np.array([0, 2]), np.array([0, 1]))):
            top_k_sampled(0, query, (1, 4, 2), tree, by_page, scratch, banded, rows, twins)
        scores_with(0, read_only(np.array([1], dtype=np.int64)), 1, 1, powers, tree, by_page, rows)
        for sampled in (0, 1):
            top_k_many(read_only(np.array([0, 1], dtype=np.int64)), query, (sampled, 4, 2), 0, 10, 5.0, tree, by_page,
                       scratch, banded, rows, NO_TWINS)
