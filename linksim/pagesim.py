"""PageSim (Lin, King & Lyu 2006): PageRank score propagation along paths, feature vectors.

Every page ``u`` propagates its PageRank along the *simple* paths of at most ``radius`` links
that leave it, losing a factor ``decay`` per link and splitting at every page by its out-degree
(papers README: the decay applies at every hop)::

    PG(u, v) = PR(u) · Σ_{simple paths p: u → v, 1 <= len(p) <= r} d^len(p) / Π_{w ∈ p, w ≠ v} |O(w)|
    PG(u, u) = PR(u)

The feature vector of ``v`` is ``FV(v) = (PG(i, v))_i``; the similarity of two pages compares
their feature vectors entry by entry:

- ``minmax`` (2006 paper, default): ``PS(u, v) = Σ_i min(PG(i,u), PG(i,v))² / max(PG(i,u), PG(i,v))``;
- ``sum`` (the term paper): ``PS(u, v) = Σ_i min(PG(i,u), PG(i,v))``.

The propagation is stored as one sparse matrix ``G`` with ``G[i, v] = PG(i, v)`` (row i: where
page i's score went; column v: the feature vector of v). For ``radius <= 3`` each page's row is
pushed along its walks hop by hop with the walks that repeat a page taken out exactly, into
arrays sized first by the pages within reach (the sparse matrix products, which hold about three
copies, are the tests' reference); for a larger radius by enumerating the paths (small graphs). ``related(u)`` is the paper's online query: the
candidates are the pages reached from a source that reaches ``u``, O(C²) for C = the size of a
feature vector.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numba import njit

from linksim.errors import ConfigurationError
from linksim.graph import LinkGraph
from linksim.parameters import Query, check_page
from linksim.ranking.reader import ListsOfAllPages
from linksim.arrays import read_only
from linksim.ranking.colinked import spread


FORMULAS = ("minmax", "sum")


def _check(radius: int, decay: float, formula: str) -> None:
    if radius < 1:
        raise ConfigurationError(f"radius must be at least 1, got {radius}")
    if not 0.0 < decay <= 1.0:
        raise ConfigurationError(f"decay must lie in (0, 1], got {decay}")
    if formula not in FORMULAS:
        raise ConfigurationError(f"formula must be one of {', '.join(FORMULAS)}, got {formula!r}")


def _transition(graph: LinkGraph) -> sp.csr_matrix:
    """P[u, v] = 1/|O(u)| for every link u -> v (self-loops and duplicates are not in the graph)."""
    degree = np.diff(graph.out_indptr)
    data = np.repeat(1.0 / np.maximum(degree, 1), degree)
    return sp.csr_matrix((data, graph.out_indices, graph.out_indptr), shape=(graph.n, graph.n))


def _simple_path_sums(graph: LinkGraph, radius: int, decay: float) -> sp.csr_matrix:
    """H[u, v] = Σ over simple paths u -> v (v ≠ u) of length 1..r of d^len / Π |O(w)|."""
    if radius > 3:
        return _enumerated_path_sums(graph, radius, decay)
    P = _transition(graph)
    total = decay * P
    if radius >= 2:
        P2 = (P @ P).tocsr()  # walks u -> a -> v: simple whenever v ≠ u (no self-loops)
        total = total + decay**2 * P2
    if radius >= 3:
        # Walks u -> a -> b -> v with v ≠ u repeat a page only if b = u (u -> a -> u -> v) or
        # a = v (u -> v -> b -> v); both at once is u -> v -> u -> v.
        P3 = (P2 @ P).tocsr()
        back = P2.diagonal()  # Σ_a P[x,a] P[a,x]: leave x and come straight back
        repeat_start = sp.diags(back) @ P  # b = u
        repeat_end = P @ sp.diags(back)  # a = v
        both = P.multiply(P.multiply(P.T.tocsr()))  # P[u,v]² P[v,u]
        total = total + decay**3 * (P3 - repeat_start - repeat_end + both)
    total = total.tocsr()
    total.setdiag(0.0)
    total.eliminate_zeros()
    # Cancellation leaves rounding residue where every walk repeated a page: drop it.
    total.data[np.abs(total.data) < 1e-15] = 0.0
    total.eliminate_zeros()
    return total


def _enumerated_path_sums(graph: LinkGraph, radius: int, decay: float) -> sp.csr_matrix:
    """The same sums by listing every simple path, length by length (vectorised; small graphs)."""
    degree = np.diff(graph.out_indptr).astype(float)
    # A path is a row of `nodes` (its pages so far) with its weight d^len / Π |O(w)|.
    nodes = np.arange(graph.n, dtype=np.int64)[:, None]
    weight = np.ones(graph.n)
    rows, cols, vals = [], [], []
    for _ in range(radius):
        last = nodes[:, -1]
        fan = graph.out_indptr[last + 1] - graph.out_indptr[last]
        parent = np.repeat(np.arange(len(nodes)), fan)
        offsets = np.arange(fan.sum()) - np.repeat(np.cumsum(fan) - fan, fan)
        step = graph.out_indices[graph.out_indptr[last][parent] + offsets]
        simple = ~(nodes[parent] == step[:, None]).any(axis=1)
        parent, step = parent[simple], step[simple]
        weight = weight[parent] * decay / degree[nodes[parent, -1]]
        nodes = np.column_stack([nodes[parent], step])
        rows.append(nodes[:, 0])
        cols.append(step)
        vals.append(weight)
        if len(nodes) == 0:
            break
    matrix = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(graph.n, graph.n)
    )
    matrix.sum_duplicates()
    return matrix


@njit(cache=True, nogil=True)
def _row_sums(i, indptr, indices, radius, decay, prune, acc, touched, arrived, reached):
    """The path sums of row ``i`` (:func:`_simple_path_sums`' H, radius <= 3), pruned: returns
    how many pages ``touched`` lists, each ``v`` of them (never ``i``) with its sum in ``acc[v]``,
    which the caller sets back to zero. Each source pushes its unit of score along its simple
    paths hop by hop; a page whose arriving mass at a hop is below ``prune`` pushes nothing
    further, and an entry below ``prune`` is dropped (by the caller). So a row loses at most its
    dropped entries, ``decay`` times the hop-2 mass of the pages that did not push, and, where the
    first hop's share ``decay / |O(i)|`` is below ``prune``, the whole of hops 2 and 3
    (``decay**2 + decay**3``); it keeps at most ``(decay + decay**2 + decay**3) / prune`` entries.
    ``prune`` 0: every page within ``radius`` links of ``i`` is touched, once. ``acc`` (float64),
    ``arrived`` (float64), ``touched`` and ``reached`` (int32) of length V are scratch, zero on
    entry and return (``acc`` at the touched pages excepted).

    Walks that repeat a page are not pushed: hop 2 never returns to the source; hop 3 never
    leaves from the source (i -> a -> i -> v) and takes out i -> v -> b -> v for each b the pushed
    hop-2 mass of i -> v -> b reached (those walks are in ``arrived[b]`` only when b pushed)."""
    n_touched = 0
    degree_i = indptr[i + 1] - indptr[i]
    if degree_i > 0:
        step1 = decay / degree_i
        n_touched = spread(indptr[i], indptr[i + 1], indices, i, step1, acc, touched, n_touched)  # hop 1: i -> a
        if radius >= 2 and step1 >= prune:
            n_reached = 0
            # hop 2: i -> a -> b, b != i
            for e in range(indptr[i], indptr[i + 1]):
                a = indices[e]
                degree_a = indptr[a + 1] - indptr[a]
                if degree_a == 0:
                    continue
                n_reached = spread(indptr[a], indptr[a + 1], indices, i, step1 * decay / degree_a, arrived,
                                    reached, n_reached)
            for r in range(n_reached):
                b = reached[r]
                if acc[b] == 0.0:
                    touched[n_touched] = b
                    n_touched += 1
                acc[b] += arrived[b]
            if radius >= 3:
                # hop 3: i -> a -> b -> v, b != i (never pushed), v != i, a != v
                for r in range(n_reached):
                    b = reached[r]
                    mass = arrived[b]
                    degree_b = indptr[b + 1] - indptr[b]
                    if mass < prune or degree_b == 0:
                        continue
                    n_touched = spread(indptr[b], indptr[b + 1], indices, i, mass * decay / degree_b, acc,
                                        touched, n_touched)
                # take out i -> v -> b -> v (a = v) where b pushed
                for e in range(indptr[i], indptr[i + 1]):
                    v = indices[e]
                    degree_v = indptr[v + 1] - indptr[v]
                    for f in range(indptr[v], indptr[v + 1]):
                        b = indices[f]
                        if b == i or arrived[b] < prune:
                            continue
                        degree_b = indptr[b + 1] - indptr[b]
                        lo, hi = indptr[b], indptr[b + 1]
                        while lo < hi:  # is v among b's out-links (sorted)?
                            mid = (lo + hi) // 2
                            if indices[mid] < v:
                                lo = mid + 1
                            else:
                                hi = mid
                        if lo < indptr[b + 1] and indices[lo] == v:
                            acc[v] -= step1 * decay / degree_v * decay / degree_b
            for r in range(n_reached):
                arrived[reached[r]] = 0.0
    return n_touched


@njit(cache=True, nogil=True)
def _pruned_rows(first, last, indptr, indices, radius, decay, prune, acc, touched, arrived, reached, diagonal):
    """Rows ``first..last - 1`` of :func:`_row_sums`, the entries below ``prune`` dropped: (entries
    per row, columns, values); ``diagonal``: each row's own unit first."""
    counts = np.zeros(last - first, dtype=np.int64)
    columns = []
    values = []
    for i in range(first, last):
        kept = 0
        if diagonal:
            columns.append(i)
            values.append(1.0)
            kept += 1
        n_touched = _row_sums(i, indptr, indices, radius, decay, prune, acc, touched, arrived, reached)
        for t in range(n_touched):
            v = touched[t]
            value = acc[v]
            acc[v] = 0.0
            if value >= prune and value > 1e-15 and v != i:
                columns.append(v)
                values.append(value)
                kept += 1
        counts[i - first] = kept
    out_columns = np.empty(len(columns), dtype=np.int32)
    out_values = np.empty(len(values), dtype=np.float64)
    for k in range(len(columns)):
        out_columns[k] = columns[k]
        out_values[k] = values[k]
    return counts, out_columns, out_values


@njit(cache=True, nogil=True)
def _filled_rows(indptr, indices, radius, decay, row_pointer, out_columns, out_values, acc, touched, arrived,
                 reached):
    """Every row of :func:`_row_sums`, nothing pruned, written where ``row_pointer`` (the pages
    within ``radius`` links of each page, :func:`reach`) says, each row's own unit first; returns
    the first row whose entries do not fill its room, or -1. A sum below zero is rounding (every
    page within reach has a simple path to it): it is written as zero."""
    for i in range(len(indptr) - 1):
        at = row_pointer[i]
        out_columns[at] = i
        out_values[at] = 1.0
        at += 1
        n_touched = _row_sums(i, indptr, indices, radius, decay, 0.0, acc, touched, arrived, reached)
        if at + n_touched != row_pointer[i + 1]:
            return i
        for t in range(n_touched):
            v = touched[t]
            out_columns[at] = v
            out_values[at] = max(acc[v], 0.0)
            acc[v] = 0.0
            at += 1
    return -1


@njit(cache=True, nogil=True)
def _ball_sizes(indptr, indices, radius, sources):
    """The pages within ``radius`` links of each of ``sources``, itself included (a breadth-first search)."""
    n = len(indptr) - 1
    sizes = np.ones(len(sources), dtype=np.int64)
    mark = np.full(n, -1, dtype=np.int64)
    frontier = np.empty(n, dtype=np.int32)
    following = np.empty(n, dtype=np.int32)
    for r in range(len(sources)):
        i = sources[r]
        mark[i] = i
        frontier[0] = i
        width = 1
        count = 1
        for _ in range(radius):
            found = 0
            for k in range(width):
                u = frontier[k]
                for e in range(indptr[u], indptr[u + 1]):
                    v = indices[e]
                    if mark[v] != i:
                        mark[v] = i
                        following[found] = v
                        found += 1
            if found == 0:
                break
            count += found
            frontier, following = following, frontier
            width = found
        sizes[r] = count
    return sizes


def reach(graph: LinkGraph, radius: int, pages: np.ndarray | None = None) -> np.ndarray:
    """The pages within ``radius`` links of each page (itself included), or of ``pages``: the
    entries of its row of the propagation, the size of PageSim's index (:func:`propagation_matrix`)."""
    pages = np.arange(graph.n, dtype=np.int64) if pages is None else np.asarray(pages, dtype=np.int64)
    return _ball_sizes(graph.out_indptr.astype(np.int64, copy=False), graph.out_indices.astype(np.int32, copy=False),
                       int(radius), pages)


#: Pages whose reach is counted to estimate the total of a larger crawl (:func:`reach_estimate`).
REACH_SAMPLE = 20_000


def reach_estimate(graph: LinkGraph, radius: int, decay: float = 0.5, prune: float = 0.0,
                   seed: int = 0) -> tuple[int, float]:
    """(the entries of the propagation, its relative standard error): each page's reach
    (:func:`reach`), or with ``prune`` > 0 the entries its pruned row keeps (:func:`_kept_sizes`),
    summed over every page where the crawl has at most :data:`REACH_SAMPLE` pages (error 0), else
    over a uniform sample of that many pages and scaled (counting every page costs about what the
    build's first pass does, minutes at 10^7 links)."""
    pages = None
    if graph.n > REACH_SAMPLE:
        pages = np.sort(np.random.default_rng(seed).choice(graph.n, REACH_SAMPLE, replace=False))
    if prune > 0:
        indptr = graph.out_indptr.astype(np.int64, copy=False)
        indices = graph.out_indices.astype(np.int32, copy=False)
        chosen = np.arange(graph.n, dtype=np.int64) if pages is None else pages.astype(np.int64)
        sizes = _kept_sizes(chosen, indptr, indices, int(radius), float(decay), float(prune), *_scratch(graph.n))
    else:
        sizes = reach(graph, radius, pages)
    if pages is None:
        return int(sizes.sum()), 0.0
    mean = float(sizes.mean())
    error = float(sizes.std(ddof=1) / np.sqrt(len(sizes)) / mean) if mean > 0 else 0.0
    return int(round(mean * graph.n)), error


def _kept_sizes(sources, indptr, indices, radius, decay, prune, acc, touched, arrived, reached) -> np.ndarray:
    """The entries each of ``sources``' pruned rows keeps, its own included: :func:`_pruned_rows`
    of each, one row at a time."""
    return np.array([_pruned_rows(i, i + 1, indptr, indices, radius, decay, prune, acc, touched, arrived, reached,
                                  True)[0][0] for i in np.asarray(sources).tolist()], dtype=np.int64)


#: Rows of the pruned propagation computed by one call of the kernel.
PRUNE_BLOCK = 4096


def _scratch(n: int) -> tuple[np.ndarray, ...]:
    """``acc``, ``touched``, ``arrived``, ``reached`` of :func:`_row_sums`."""
    return np.zeros(n), np.zeros(n, dtype=np.int32), np.zeros(n), np.zeros(n, dtype=np.int32)


def _pruned_path_sums(graph: LinkGraph, radius: int, decay: float, prune: float,
                      diagonal: bool = False) -> sp.csr_matrix:
    """:func:`_simple_path_sums` with the walks of less than ``prune`` of a source's unit left out
    (:func:`_row_sums`); radius at most 3. ``diagonal``: with each page's own unit."""
    n = graph.n
    indptr = graph.out_indptr.astype(np.int64, copy=False)
    indices = graph.out_indices.astype(np.int32, copy=False)
    acc, touched, arrived, reached = _scratch(n)
    counts, columns, values = [], [], []
    for first in range(0, n, PRUNE_BLOCK):
        c, col, val = _pruned_rows(first, min(n, first + PRUNE_BLOCK), indptr, indices, radius, decay, prune,
                                   acc, touched, arrived, reached, diagonal)
        counts.append(c), columns.append(col), values.append(val)
    row_pointer = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64), out=row_pointer[1:])
    matrix = sp.csr_matrix((np.concatenate(values) if values else np.zeros(0),
                            np.concatenate(columns) if columns else np.zeros(0, dtype=np.int32), row_pointer),
                           shape=(n, n))
    matrix.sort_indices()
    return matrix


def _filled_path_sums(graph: LinkGraph, radius: int, decay: float) -> sp.csr_matrix:
    """:func:`_simple_path_sums` plus the identity, pushed row by row (radius at most 3) into
    arrays sized by :func:`reach` first: the matrix is the only copy made (the sparse products
    hold about three, and take twice as long)."""
    n = graph.n
    indptr = graph.out_indptr.astype(np.int64, copy=False)
    indices = graph.out_indices.astype(np.int32, copy=False)
    row_pointer = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(reach(graph, radius), out=row_pointer[1:])
    columns = np.empty(row_pointer[-1], dtype=np.int32)
    values = np.empty(row_pointer[-1], dtype=np.float64)
    wrong = _filled_rows(indptr, indices, radius, decay, row_pointer, columns, values, *_scratch(n))
    if wrong >= 0:
        raise AssertionError(f"the propagation of page {wrong} does not fill the pages within its reach")
    matrix = sp.csr_matrix((values, columns, row_pointer), shape=(n, n))
    matrix.sort_indices()
    return matrix


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


@njit(cache=True, nogil=True)
def _scale_rows(indptr, data, ranks):
    for i in range(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            data[k] *= ranks[i]


def propagation_matrix(graph: LinkGraph, ranks: np.ndarray, radius: int = 3, decay: float = 0.5,
                       prune: float = 0.0) -> sp.csr_matrix:
    """``G[i, v] = PG(i, v)`` for every pair, PageRank ``ranks`` given (diagonal: ``PR(i)``).
    Radius at most 3: pushed row by row (:func:`_row_sums`), one copy in memory; ``prune`` > 0:
    the walks that carry less than ``prune`` of their source's score are left out, so that a row
    holds at most ``(decay + decay**2 + decay**3) / prune`` entries besides its diagonal."""
    _check(radius, decay, "minmax")
    ranks = np.asarray(ranks, dtype=np.float64)
    if prune > 0 and radius > 3:
        raise ConfigurationError(f"pruning (prune) applies to a radius of at most 3, got {radius}")
    if radius > 3:
        matrix = (sp.diags(ranks) @ _enumerated_path_sums(graph, radius, decay) + sp.diags(ranks)).tocsr()
    else:
        matrix = (_pruned_path_sums(graph, radius, decay, prune, diagonal=True) if prune > 0
                  else _filled_path_sums(graph, radius, decay))
        _scale_rows(matrix.indptr, matrix.data, ranks)
    matrix.eliminate_zeros()
    matrix.sort_indices()
    return matrix


def _row_entries(matrix: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``matrix.indices`` / ``matrix.data`` of the given rows' entries, row after row,
    and each row's number of entries."""
    begin, end = matrix.indptr[rows], matrix.indptr[rows + 1]
    sizes = end - begin
    return np.repeat(begin - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum())), sizes


def _combine(a: np.ndarray, b: np.ndarray, formula: str) -> np.ndarray:
    low, high = np.minimum(a, b), np.maximum(a, b)
    if formula == "sum":
        return low
    return np.divide(low * low, high, out=np.zeros_like(low), where=high > 0)


def _no_fingerprints(n_fingerprints: int | None) -> None:
    if n_fingerprints is not None:
        raise ConfigurationError("--fingerprints (n_fingerprints) does not apply to PageSim, which samples nothing")


@dataclass
class PageSimIndex(ListsOfAllPages):
    """The propagation of every page's PageRank, by rows (sources) and by columns (features)."""

    by_source: sp.csr_matrix  # row i: PG(i, ·)
    by_page: sp.csr_matrix  # row v: FV(v) = PG(·, v)
    ranks: np.ndarray
    radius: int
    decay: float
    damping: float
    formula: str
    graph_fingerprint: str
    prune: float = 0.0  # walks carrying less than this share of their source's score left out (0: none)
    _scratch: threading.local = field(default_factory=threading.local, repr=False, compare=False)
    _query_arrays: tuple = field(default=(), repr=False, compare=False)  # by_source as _scan passes it

    method = "pagesim"

    @property
    def n(self) -> int:
        return self.by_source.shape[0]

    @property
    def nbytes(self) -> int:
        return sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in (self.by_source, self.by_page))

    def feature_vector_sizes(self) -> np.ndarray:
        """Entries of each page's feature vector (its own PageRank included)."""
        return np.diff(self.by_page.indptr)

    def feature_vector(self, v: int) -> dict[int, float]:
        start, stop = self.by_page.indptr[v], self.by_page.indptr[v + 1]
        return dict(zip(self.by_page.indices[start:stop].tolist(), self.by_page.data[start:stop].tolist()))

    def sim(self, u: int, v: int, formula: str | None = None, n_fingerprints: int | None = None) -> float:
        """PS(u, v)."""
        _no_fingerprints(n_fingerprints)
        check_page(u, self.n), check_page(v, self.n)
        formula = self.formula if formula is None else formula
        a, b = self.by_page[u], self.by_page[v]
        common, at_a, at_b = np.intersect1d(a.indices, b.indices, assume_unique=True, return_indices=True)
        if len(common) == 0:
            return 0.0
        return float(_combine(a.data[at_a], b.data[at_b], formula).sum())

    def _gather_rows(self, sources: np.ndarray, mine: np.ndarray, formula: str) -> tuple[np.ndarray, np.ndarray]:
        """(page, contribution) of every entry of the given source rows, for u's values ``mine``."""
        where, sizes = _row_entries(self.by_source, sources)
        pages = self.by_source.indices[where]
        return pages, _combine(np.repeat(mine, sizes), self.by_source.data[where], formula)

    def related(self, u: int, top_k: int | None = 10, similarity_cutoff: float = 0.0, formula: str | None = None,
                n_fingerprints: int | None = None) -> list[tuple[int, float]]:
        """Pages most similar to ``u`` (u excluded), best first, ties by page: the paper's online
        query over the pages reached from the sources of u's feature vector (every entry of
        those sources' rows is read: time linear in their total size)."""
        return self.related_one(u, Query.checked(top_k, similarity_cutoff), formula=formula,
                                n_fingerprints=n_fingerprints)

    def related_one(self, u: int, query: Query, formula: str | None = None,
                    n_fingerprints: int | None = None) -> list[tuple[int, float]]:
        """:meth:`related` of a checked ``query``."""
        from linksim.ranking import top_pairs, top_scores

        top_k, similarity_cutoff = query.top_k, query.similarity_cutoff
        _no_fingerprints(n_fingerprints)
        check_page(u, self.n)
        formula = self.formula if formula is None else formula
        start, stop = self.by_page.indptr[u], self.by_page.indptr[u + 1]
        sources, mine = self.by_page.indices[start:stop], self.by_page.data[start:stop]
        if top_k is None:
            pages, values = self._gather_rows(sources, mine, formula)
            return top_scores(np.bincount(pages, weights=values, minlength=self.n), u, top_k, similarity_cutoff)
        pages, scores = self._scan(sources, mine, formula)
        return top_pairs(pages, scores, u, top_k, similarity_cutoff)

    def _scan(self, sources: np.ndarray, mine: np.ndarray, formula: str) -> tuple[np.ndarray, np.ndarray]:
        """The compiled gather (:func:`pagesim_scores`): the same sums as numpy's."""
        scratch = self._scratch
        if getattr(scratch, "n", None) != self.n:
            scratch.acc, scratch.touched, scratch.n = np.zeros(self.n), np.zeros(self.n, dtype=np.int32), self.n
        if not self._query_arrays:  # converted once, not per query
            m = self.by_source
            self._query_arrays = tuple(read_only(a) for a in (
                m.indptr.astype(np.int64, copy=False), m.indices.astype(np.int32, copy=False), m.data))
        return pagesim_scores(read_only(sources.astype(np.int64)), read_only(mine), *self._query_arrays,
                              formula == "minmax", scratch.acc, scratch.touched)

    # The index store --------------------------------------------------------------------------
    @property
    def parameters(self) -> dict:
        """What the index was built with (the store and a rebuild compare against these)."""
        return {"radius": self.radius, "decay": self.decay, "damping": self.damping, "formula": self.formula,
                "prune": self.prune}

    def store_arrays(self) -> dict[str, np.ndarray]:
        return {
            "source_indptr": self.by_source.indptr, "source_indices": self.by_source.indices,
            "source_data": self.by_source.data, "page_indptr": self.by_page.indptr,
            "page_indices": self.by_page.indices, "page_data": self.by_page.data, "ranks": self.ranks,
        }

    @classmethod
    def from_store(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "PageSimIndex":
        n = len(arrays["ranks"])
        by_source = sp.csr_matrix((arrays["source_data"], arrays["source_indices"], arrays["source_indptr"]), shape=(n, n))
        by_page = sp.csr_matrix((arrays["page_data"], arrays["page_indices"], arrays["page_indptr"]), shape=(n, n))
        p = meta["parameters"]
        return cls(by_source, by_page, np.asarray(arrays["ranks"]), p["radius"], p["decay"], p["damping"],
                   p["formula"], meta["graph"]["fingerprint"], prune=float(p.get("prune", 0.0)))


def build_pagesim_index(
    graph: LinkGraph,
    radius: int = 3,
    decay: float = 0.5,
    damping: float = 0.85,
    formula: str = "minmax",
    ranks: np.ndarray | None = None,
    prune: float = 0.0,
) -> PageSimIndex:
    """Propagate every page's PageRank (computed here with ``damping`` unless ``ranks`` given);
    ``prune`` > 0: the walks that carry less than that share of their source's score left out
    (:func:`propagation_matrix`)."""
    from linksim.digest import graph_fingerprint
    from linksim.pagerank import pagerank

    _check(radius, decay, formula)
    if ranks is None:
        ranks = pagerank(graph, damping=damping, tol=1e-10, max_iter=1000, dtype=np.float64).ranks
    matrix = propagation_matrix(graph, ranks, radius, decay, prune)
    by_page = matrix.T.tocsr()
    by_page.sort_indices()
    return PageSimIndex(matrix, by_page, np.asarray(ranks, dtype=np.float64), radius, float(decay),
                        float(damping), formula, graph_fingerprint(graph), prune=float(prune))


def pagesim_brute_force(graph: LinkGraph, ranks: np.ndarray, radius: int, decay: float,
                        formula: str = "minmax") -> tuple[np.ndarray, np.ndarray]:
    """(PG, PS) as dense matrices by a depth-first listing of every simple path (tiny graphs)."""
    n = graph.n
    degree = np.diff(graph.out_indptr)
    pg = np.zeros((n, n))
    for source in range(n):
        pg[source, source] = ranks[source]
        stack = [(source, (source,), 1.0)]
        while stack:
            page, path, weight = stack.pop()
            if len(path) - 1 == radius:
                continue
            for nxt in graph.out_indices[graph.out_indptr[page] : graph.out_indptr[page + 1]].tolist():
                if nxt in path:
                    continue
                carried = weight * decay / degree[page]
                pg[source, nxt] += ranks[source] * carried
                stack.append((nxt, path + (nxt,), carried))
    ps = np.zeros((n, n))
    for u in range(n):
        for v in range(n):
            ps[u, v] = _combine(pg[:, u], pg[:, v], formula).sum()
    return pg, ps


def warm_up() -> None:
    """Compile (or load from numba's cache) the query's gather for the argument types an index
    passes."""
    sources, values = read_only(np.array([0], dtype=np.int64)), read_only(np.array([0.5]))
    indptr, indices = read_only(np.array([0, 1], dtype=np.int64)), read_only(np.array([1], dtype=np.int32))
    pagesim_scores(sources, values, indptr, indices, values, True, np.zeros(2), np.zeros(2, dtype=np.int32))
