"""Spectral P-PSimRank: the P-PSimRank candidates of a page, ranked by the cosine of the pages'
link embeddings.

Two stages, as search engines rank: the fingerprint index of P-PSimRank
(:mod:`linksim.methods.ppsimrank`) finds a page's :data:`CANDIDATES` best pages (the pages its
walks meet early and often: both link directions, bounded work per page), and each candidate is
scored by

    s(u, v) = ALPHA · max(0, cos(e_u, e_v)) + (1 − ALPHA) · ppsim(u, v)

where ``e_u`` is u's row of a rank-:data:`RANK` truncated SVD (latent semantic indexing, Deerwester
et al. 1990, here of links instead of words) of the link matrix ``X = [W_in | W_out]``: row u
holds u's in-links and out-links (two features per linked page, so that a shared parent and a
shared child are different evidence), each weighted by ``ln(n / df) ** 1.5``, df the number of
pages with that feature (a hub's links say little: the inverse document frequency of the
hub-weighted cosine of search engines, a little steeper), rows scaled to unit length. ``ppsim`` is P-PSimRank's Monte Carlo score
(in [0, 1]): it keeps a link between u and v as evidence, and answers a page whose embedding is
empty. So s is symmetric, in [0, 1], and s(u, u) = 1.

Measured on Wikispeedia and WebKB (``benchmarks/quality.py``): the candidates of P-PSimRank hold
the related pages, the cosine orders them better (sibling Γ) and picks a better first ten than
P-PSimRank's 100-sample scores; the embedding alone, over all pages, finds the same first ten
but orders the top 100 worse (it ranks pages the links never connect). Hub damping is what makes
the embedding work: on Wikispeedia (seed 0) precision@10 is 0.456 with unweighted features, 0.504
with Marginalia's 1 / ln(2 + df), 0.510 with ln(n / df), 0.518 with its power 1.5 and 0.519 with
its square (WebKB: 0.458, 0.451, 0.449, 0.448, 0.437).

The SVD is scipy's ARPACK (``svds``) from a start vector drawn with the index's seed: the same
graph and seed give the same embedding on the same machine; its last bits may differ between BLAS
builds, which is why the embedding is stored with the index, never recomputed for a query.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linksim.fingerprints.index import FingerprintIndex
from linksim.graph import LinkGraph
from linksim.parameters import check_page
from linksim.ranking import top_pairs

RANK = 100  #: dimensions of the link embedding
CANDIDATES = 100  #: P-PSimRank's best pages each list is chosen from
ALPHA = 0.8  #: the cosine's share of the score (the rest: P-PSimRank's)
IDF_POWER = 1.5  #: a feature's weight is ln(n / df) to this power (hub damping)
WALK_METHOD = "ppsimrank"  #: whose fingerprint walks find the candidates


def link_features(graph: LinkGraph):
    """``X = [W_in | W_out]`` (n x 2n, CSR): u's in-links and out-links, self-links aside, each
    weighted ``ln(n / df) ** IDF_POWER``, rows of unit length (a page without links: a zero row)."""
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


def link_embedding(graph: LinkGraph, rank: int = RANK, seed: int = 0) -> np.ndarray:
    """Each page's row of the rank-``rank`` truncated SVD of :func:`link_features` (U Σ), scaled to
    unit length (float32; a zero row for a page without links)."""
    from scipy.sparse.linalg import svds

    features = link_features(graph)
    n = graph.n
    embedding = np.zeros((n, 0), dtype=np.float32)
    k = min(rank, min(features.shape) - 1)
    if n >= 3 and features.nnz and k >= 1:
        start = np.random.default_rng(seed).standard_normal(min(features.shape))
        left, values, _ = svds(features, k=k, v0=start)
        keep = values > 1e-10 * values.max()  # directions of a zero singular value are noise
        embedding = left[:, keep] * values[keep]
    embedding = embedding.astype(np.float64)
    embedding[np.diff(features.indptr) == 0] = 0.0  # a page without links has no direction
    norms = np.linalg.norm(embedding, axis=1, keepdims=True)
    embedding = np.divide(embedding, norms, out=np.zeros_like(embedding), where=norms > 0)
    return embedding.astype(np.float32)


@dataclass
class SpectralIndex:
    """A P-PSimRank fingerprint index and the pages' link embedding (:mod:`linksim.spectral`)."""

    fingerprints: FingerprintIndex
    embedding: np.ndarray  # (n, rank) float32, unit rows (zero without links)

    @property
    def graph_fingerprint(self) -> str:
        return self.fingerprints.graph_fingerprint

    @property
    def n(self) -> int:
        return self.fingerprints.n

    @property
    def nbytes(self) -> int:
        return self.fingerprints.nbytes + self.embedding.nbytes

    @property
    def parameters(self) -> dict:
        """The fingerprints' parameters: the embedding's are constants of this module."""
        return self.fingerprints.parameters

    def cosine(self, u: int, pages: np.ndarray) -> np.ndarray:
        """max(0, cos(e_u, e_v)) for each of ``pages`` (float64)."""
        row = self.embedding[u].astype(np.float64)
        return np.maximum(self.embedding[pages].astype(np.float64) @ row, 0.0)

    def combine(self, u: int, pages: np.ndarray, walks: np.ndarray) -> np.ndarray:
        return ALPHA * self.cosine(u, pages) + (1.0 - ALPHA) * walks

    def sim(self, u: int, v: int, n_fingerprints: int | None = None, **options) -> float:
        check_page(u, self.n), check_page(v, self.n)
        if u == v:
            return 1.0
        walks = self.fingerprints.sim(u, v, n_fingerprints=n_fingerprints)
        return float(self.combine(u, np.array([v]), np.array([walks]))[0])

    def related(self, u: int, top_k: int | None = 10, similarity_cutoff: float = 0.0,
                n_fingerprints: int | None = None, **options) -> list[tuple[int, float]]:
        """The best of P-PSimRank's :data:`CANDIDATES` best pages of u by the combined score."""
        check_page(u, self.n)
        found = self.fingerprints.related(u, top_k=max(CANDIDATES, top_k or 0), n_fingerprints=n_fingerprints)
        if not found:
            return []
        pages = np.array([v for v, _ in found], dtype=np.int64)
        walks = np.array([s for _, s in found], dtype=np.float64)
        return top_pairs(pages, self.combine(u, pages, walks), u, top_k, similarity_cutoff)

    # The index store -------------------------------------------------------------------------
    def store_arrays(self) -> dict[str, np.ndarray]:
        return dict(self.fingerprints.store_arrays(), embedding=self.embedding)

    @classmethod
    def from_store(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "SpectralIndex":
        fingerprints = FingerprintIndex.from_store(dict(meta, method=WALK_METHOD),
                                                   {k: v for k, v in arrays.items() if k != "embedding"})
        return cls(fingerprints, arrays["embedding"])


def build_spectral_index(graph: LinkGraph, n_fingerprints: int = 100, length: int = 3, seed: int = 0,
                         decay: float = 0.6, show_progress: bool = False) -> SpectralIndex:
    """P-PSimRank's fingerprints and the link embedding of ``graph``."""
    from linksim.fingerprints.walks import build_index

    fingerprints = build_index(graph, WALK_METHOD, n_fingerprints, length, seed, decay, show_progress=show_progress)
    return SpectralIndex(fingerprints, link_embedding(graph, RANK, seed))


def spectral_exact(graph: LinkGraph, decay: float = 0.6, length: int = 3, each=None, seed: int = 0,
                   candidates: int | None = CANDIDATES) -> np.ndarray:
    """The scores with P-PSimRank's exact scores in place of its Monte Carlo ones (dense, small
    graphs). With ``candidates`` (default :data:`CANDIDATES`), row u keeps only the pages of u's
    exact P-PSimRank top ``candidates`` (ties by page), zero elsewhere: the exact lists of the
    method; ``candidates=None``: every pair, what the index's ``sim`` estimates. ``each(k,
    scores)`` sees the scores with P-PSimRank truncated at every k on the way."""
    from linksim.fingerprints.exact import ppsimrank_exact

    embedding = link_embedding(graph, RANK, seed).astype(np.float64)
    cosine = ALPHA * np.maximum(embedding @ embedding.T, 0.0)

    def combined(walks: np.ndarray) -> np.ndarray:
        scores = cosine + (1.0 - ALPHA) * walks
        np.fill_diagonal(scores, 1.0)
        if candidates is not None:
            kept = np.zeros_like(scores, dtype=bool)
            for u in range(graph.n):
                row = walks[u].copy()
                row[u] = 0.0
                for v, _ in top_pairs(np.flatnonzero(row > 0), row[row > 0], u, candidates, 0.0):
                    kept[u, v] = True
            kept[np.diag_indices(graph.n)] = True
            scores = np.where(kept, scores, 0.0)
        return scores

    walks = ppsimrank_exact(graph, decay, length,
                            each=None if each is None else (lambda k, truncated: each(k, combined(truncated))))
    return combined(walks)
