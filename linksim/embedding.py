"""The link embedding of :mod:`linksim.spectral`: each page's row of a truncated SVD of its link
features, found in memory that grows with the pages times the rank, never with a Lanczos basis.

The features are ``X = [W_in | W_out]``: row u holds u's in-links and out-links (self-links
aside), each feature weighted ``ln(n / df) ** IDF_POWER`` (df: the pages that have it), rows of
unit length. Their left singular vectors are the eigenvectors of the n x n Gram matrix

    M = X X^T = N (W_in D_in² W_in^T + W_out D_out² W_out^T) N

(N the inverse row norms, D the feature weights), which :class:`LinkGram` multiplies a block of
columns by in four passes over the link lists (gathers: each page's row summed from its
neighbours' rows, so that no link list is written and the pages split between threads without
sharing a row). X itself, twice as wide as the crawl, is never formed. The eigenvectors are
:func:`linksim.lowrank.leading_eigenvectors`'s; a page's row of U Σ is U's row times the square
roots of the eigenvalues, then scaled to unit length.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from linksim.cores import usable_cores
from linksim.graph import LinkGraph
from linksim.lowrank import CHUNK, leading_eigenvectors

log = logging.getLogger(__name__)

RANK = 100  #: dimensions of the link embedding
IDF_POWER = 1.5  #: a feature's weight is ln(n / df) to this power (hub damping)
#: A page whose row of U Σ is shorter than this (its unit row of features all but orthogonal to the
#: embedding: on Wikispeedia 3 pages, at 1e-12, the next at 0.05) has no direction: scaled to unit
#: length, rounding noise would give it one that changes with the solver's start vector.
FLOOR = 1e-6
OVERSAMPLE = 10  #: columns of the block beyond the rank (Halko et al.'s p)
PASSES = 4  #: multiplications of the block by M before the Rayleigh-Ritz step (their q)


@njit(cache=True, nogil=True)
def _gather(indptr, indices, source, first_column, column_scale, row_scale, out, out_column, width,
            first, last, add):
    """out[i, out_column:+width] (+)= row_scale[i] · Σ_j column_scale[j] · source[j, first_column:+width]
    over the j of row i of the lists, for rows first..last-1, summed in float64."""
    total = np.zeros(width)
    for i in range(first, last):
        total[:] = 0.0
        for position in range(indptr[i], indptr[i + 1]):
            j = indices[position]
            scale = column_scale[j]
            for c in range(width):
                total[c] += scale * source[j, first_column + c]
        factor = row_scale[i]
        if add:
            for c in range(width):
                out[i, out_column + c] += factor * total[c]
        else:
            for c in range(width):
                out[i, out_column + c] = factor * total[c]


@njit(cache=True, nogil=True)
def _row_sums(indptr, indices, values):
    """Σ values[j] over the j of each row of the lists."""
    sums = np.zeros(len(indptr) - 1)
    for i in range(len(sums)):
        for position in range(indptr[i], indptr[i + 1]):
            sums[i] += values[indices[position]]
    return sums


@njit(cache=True, nogil=True)
def _self_links(indptr, indices):
    """How many rows of the lists hold their own page."""
    count = 0
    for i in range(len(indptr) - 1):
        for position in range(indptr[i], indptr[i + 1]):
            if indices[position] == i:
                count += 1
    return count


def _without_self_links(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lists as int64 offsets and int32 pages, a page's link to itself left out (the arrays
    themselves when there is none, as in a graph built without self-loops: no copy of the links)."""
    indptr = np.asarray(indptr, dtype=np.int64)
    if not _self_links(indptr, indices):
        return indptr, np.asarray(indices, dtype=np.int32)
    rows = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
    own = rows == indices
    kept = np.concatenate(([0], np.cumsum(np.bincount(rows[~own], minlength=len(indptr) - 1))))
    return kept.astype(np.int64), np.asarray(indices[~own], dtype=np.int32)


def unit_rows(rows: np.ndarray, scale: np.ndarray, featured: np.ndarray) -> np.ndarray:
    """A chunk of U's rows as rows of U Σ (``scale``: sqrt of the eigenvalues) scaled to unit length,
    float64; zero for a page without features or a row shorter than :data:`FLOOR`."""
    rows = rows.astype(np.float64) * scale
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    keep = (norms >= FLOOR) & featured[:, None]
    return np.divide(rows, norms, out=np.zeros_like(rows), where=keep)


def link_features(graph: LinkGraph):
    """``X = [W_in | W_out]`` (n x 2n, CSR): u's in-links and out-links, self-links aside, each
    weighted ``ln(n / df) ** IDF_POWER``, rows of unit length (a page without links: a zero row).
    The reference :class:`LinkGram` is checked against: the embedding never builds it."""
    import scipy.sparse as sp

    n = graph.n
    blocks = []
    for direction in ("in", "out"):  # in-links of the row, then its out-links
        block = graph.neighbour_matrix(direction)
        frequency = np.asarray(block.sum(axis=0)).ravel()
        weights = np.log(n / np.maximum(frequency, 1.0)) ** IDF_POWER
        blocks.append(block @ sp.diags(weights))
    features = sp.hstack(blocks).tocsr()
    norms = np.sqrt(np.asarray(features.multiply(features).sum(axis=1)).ravel())
    return sp.diags(np.divide(1.0, norms, out=np.zeros(n), where=norms > 0)) @ features


class FeatureWeights:
    """The link features' weights of a graph: its lists without self-links, each page's idf weight
    as a parent (a feature of its children's rows, df its out-degree) and as a child (of its
    parents' rows, df its in-degree), which pages have features, each row's inverse norm.
    ``pages``: the n of ``ln(n / df)`` (default the graph's)."""

    def __init__(self, graph: LinkGraph, pages: int | None = None) -> None:
        n = graph.n if pages is None else pages
        self.out_indptr, self.out_indices = _without_self_links(graph.out_indptr, graph.out_indices)
        self.in_indptr, self.in_indices = _without_self_links(graph.in_indptr, graph.in_indices)
        out_degree, in_degree = np.diff(self.out_indptr), np.diff(self.in_indptr)
        self.parent = np.log(n / np.maximum(out_degree, 1.0)) ** IDF_POWER
        self.child = np.log(n / np.maximum(in_degree, 1.0)) ** IDF_POWER
        squared = (_row_sums(self.in_indptr, self.in_indices, self.parent * self.parent)
                   + _row_sums(self.out_indptr, self.out_indices, self.child * self.child))
        self.featured = squared > 0  #: pages with a row of features
        self.inverse_norm = np.divide(1.0, np.sqrt(squared), out=np.zeros(len(squared)), where=self.featured)


class LinkGram:
    """M = X X^T of the link features (see the module) as an operator on n x b float32 blocks."""

    def __init__(self, graph: LinkGraph, threads: int | None = None) -> None:
        n = graph.n
        self.n = n
        weights = FeatureWeights(graph)
        self.out_indptr, self.out_indices = weights.out_indptr, weights.out_indices
        self.in_indptr, self.in_indices = weights.in_indptr, weights.in_indices
        self.parent_squared, self.child_squared = weights.parent * weights.parent, weights.child * weights.child
        self.featured = weights.featured  #: pages with a row of features
        self.inverse_norm = weights.inverse_norm
        self.ones = np.ones(n)
        threads = threads or usable_cores()
        # Row ranges of about as many links each, one a thread: a gather writes only its own rows.
        self._spans = {name: self._split(indptr, threads) for name, indptr in
                       (("out", self.out_indptr), ("in", self.in_indptr))}
        self._pool = ThreadPoolExecutor(threads) if threads > 1 else None
        self._scratch = None

    @staticmethod
    def _split(indptr: np.ndarray, threads: int) -> list[tuple[int, int]]:
        n = len(indptr) - 1
        work = indptr + np.arange(n + 1)  # a row costs its links and itself
        bounds = np.searchsorted(work, np.linspace(0, work[-1], threads + 1)).clip(0, n)
        bounds[0], bounds[-1] = 0, n
        return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]

    def _run(self, lists: str, source, first_column, column_scale, row_scale, out, out_column, width, add):
        indptr, indices = (self.out_indptr, self.out_indices) if lists == "out" else (self.in_indptr, self.in_indices)
        jobs = [(indptr, indices, source, first_column, column_scale, row_scale, out, out_column, width, a, b, add)
                for a, b in self._spans[lists]]
        if self._pool is None:
            for job in jobs:
                _gather(*job)
        else:
            for done in [self._pool.submit(_gather, *job) for job in jobs]:
                done.result()

    def __call__(self, source: np.ndarray, first_column: int, width: int, out: np.ndarray, out_column: int) -> None:
        """out[:, out_column:+width] = M @ source[:, first_column:+width] (C-contiguous float32
        arrays; out may be source, columns in place: source's columns are read before any is
        written)."""
        if self._scratch is None or self._scratch[0].shape[1] < width:
            self._scratch = tuple(np.empty((self.n, width), dtype=np.float32) for _ in range(2))
        parents, children = self._scratch
        # W_in^T N Q: a parent's sum over its children; W_out^T N Q: a child's over its parents.
        self._run("out", source, first_column, self.inverse_norm, self.parent_squared, parents, 0, width, False)
        self._run("in", source, first_column, self.inverse_norm, self.child_squared, children, 0, width, False)
        self._run("in", parents, 0, self.ones, self.inverse_norm, out, out_column, width, False)
        self._run("out", children, 0, self.ones, self.inverse_norm, out, out_column, width, True)

    def close(self) -> None:
        self._scratch = None
        if self._pool is not None:
            self._pool.shutdown()


def link_embedding(graph: LinkGraph, rank: int = RANK, seed: int = 0, passes: int = PASSES,
                   oversample: int = OVERSAMPLE) -> np.ndarray:
    """Each page's row of the rank-``rank`` truncated SVD of the link features (U Σ), scaled to
    unit length (float32, n x r, r <= rank: fewer where the features have fewer directions; a zero
    row for a page without links or one shorter than :data:`FLOOR`)."""
    return embedding_and_share(graph, rank, seed, passes, oversample)[0]


def embedding_and_share(graph: LinkGraph, rank: int = RANK, seed: int = 0, passes: int = PASSES,
                        oversample: int = OVERSAMPLE) -> tuple[np.ndarray, float]:
    """(:func:`link_embedding`, the share of the features' weight it holds): the sum of the
    eigenvalues found over the trace of X X^T (the pages with features, each row of unit length),
    that is the mean over those pages of the squared length of their row of U Σ before it is
    scaled, in [0, 1]; 0 without features. Rounded to float32, as a Spark build carries it."""
    return embedding_parts(graph, rank, seed, passes, oversample)[:2]


def embedding_parts(graph: LinkGraph, rank: int = RANK, seed: int = 0, passes: int = PASSES,
                    oversample: int = OVERSAMPLE) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """(:func:`embedding_and_share`'s two, each page's length of its row of U Σ before it was
    scaled (float32), the eigenvalues Σ² (float64)): with the unit rows, U Σ itself, what a
    fold-in of changed pages projects onto (:mod:`linksim.spectral_update`)."""
    n = graph.n
    if n < 3 or rank < 1:
        return np.zeros((n, 0), dtype=np.float32), 0.0, np.zeros(n, dtype=np.float32), np.zeros(0)
    gram = LinkGram(graph)
    try:
        featured = int(gram.featured.sum())
        if not featured:
            return np.zeros((n, 0), dtype=np.float32), 0.0, np.zeros(n, dtype=np.float32), np.zeros(0)
        vectors, values = leading_eigenvectors(gram, n, min(rank, n - 1), oversample, passes, seed,
                                               progress=log.info)
        # U Σ, rows to unit length, in place a chunk of rows at a time.
        scale = np.sqrt(values)
        lengths = np.zeros(n, dtype=np.float32)
        for start in range(0, n, CHUNK):
            rows = vectors[start : start + CHUNK].astype(np.float64) * scale
            lengths[start : start + CHUNK] = np.linalg.norm(rows, axis=1)
            vectors[start : start + CHUNK] = unit_rows(vectors[start : start + CHUNK], scale,
                                                       gram.featured[start : start + CHUNK])
    finally:
        gram.close()
    return vectors, float(np.float32(min(1.0, float(values.sum()) / featured))), lengths, values
