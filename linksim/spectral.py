"""Spectral P-PSimRank: a page's co-linked pages and the nearest pages of its link embedding,
ranked by the cosine of the embeddings with P-PSimRank's score beside it.

Two stages, as search engines rank. The candidates of page u are

- its :data:`CANDIDATES` best **co-linked** pages: Adamic-Adar over links both ways, each shared
  neighbour w (a parent, a child, or both) worth ``1 / ln deg(w)``, a neighbour of more than
  :data:`HUB_DEGREE` links not counted at all (Dean & Henzinger's stoplist of pages of very high
  degree: a navigation page linking to everything says nothing, and skipping it bounds the work of
  a list by ``deg(u) · HUB_DEGREE``);
- the :data:`NEAREST` pages nearest to u in the link embedding (the pages whose links resemble
  u's without sharing one of them), found for every page when the index is built and stored with
  it (:func:`nearest_pages`: exact below :data:`ANN_PAGES` pages, from clusters of the embedding above), so
  that no query scans the pages;
- if both are empty, or none of them scores above 0, P-PSimRank's best pages
  (:mod:`linksim.methods.ppsimrank`): a page at the end of a short chain (on the najdisi.si host
  graph, 3 of 14,615 hosts with a link) has one co-linked page, too far for the embedding and
  too rarely met by the walks, and would otherwise get no list.

Each candidate v is scored by

    s(u, v) = a · max(0, cos(e_u, e_v)) + (1 − a) · ppsim(u, v)

where ``e_u`` is u's row of a rank-:data:`RANK` truncated SVD (latent semantic indexing, Deerwester
et al. 1990, here of links instead of words) of the link matrix ``X = [W_in | W_out]``: row u
holds u's in-links and out-links (two features per linked page, so that a shared parent and a
shared child are different evidence), each weighted by ``ln(n / df) ** 1.5``, df the number of
pages with that feature (a hub's links say little: the inverse document frequency of the
hub-weighted cosine of search engines, a little steeper), rows scaled to unit length. ``ppsim`` is
P-PSimRank's Monte Carlo score (in [0, 1]), the fingerprints' share: it keeps a link between u and
v as evidence. The cosine's share ``a`` is the crawl's, not a constant: the share of the link
features' weight that the embedding holds (:func:`cosine_share`; at most :data:`MAX_SHARE`). On a
crawl of a few topics a rank-100 embedding holds much of every page's links and its cosine ranks
best; on a crawl of thousands of sites it holds a small part (the sections of a site, tied by their
hub, are finer than 100 directions) and P-PSimRank's walks, which read every link, rank best. So s
is symmetric, in [0, 1], and s(u, u) = 1; the lists hold the best candidates by s. Only ppsim is
sampled: the candidates, the cosine and ``a`` are exact, so the Monte Carlo lists differ from the
exact ones by P-PSimRank's error times 1 − a.

Measured on Wikispeedia and WebKB (``benchmarks/quality.py``, seed 0): the co-linked candidates
hold the related pages (in Adamic-Adar's own order, hubs counted, precision@10 is 0.338), the
cosine picks a better first ten (0.523) and orders the rest far better (pooled sibling Γ 0.582, the
best anchor 0.435); the embedding alone, over all pages, finds the same first ten but orders the top
100 worse (Γ 0.32: it ranks pages the links never connect). P-PSimRank's 100 best pages as the
candidates gave 0.518 and Γ 0.44 with Monte Carlo, 0.384 exact: its sampled ties chose the
candidates. Hub damping is what makes the embedding work: precision@10 is 0.456 with unweighted
features, 0.510 with ln(n / df), 0.518 with its power 1.5.

The SVD is randomized subspace iteration (:mod:`linksim.embedding`, :mod:`linksim.lowrank`), in
memory of the pages times the rank, from a start block drawn with the index's seed: the same graph
and seed give the same embedding on the same machine; its last bits may differ between BLAS
builds, which is why the embedding is stored with the index, never recomputed for a query.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from linksim.embedding import (FLOOR, IDF_POWER, RANK, embedding_and_share, embedding_parts,  # noqa: F401
                               link_embedding, link_features)
from linksim.fingerprints.index import FingerprintIndex
from linksim.fingerprints.kinds import BOTH
from linksim.graph import LinkGraph
from linksim.parameters import Query, check_fingerprints_asked, check_page
from linksim.ranking import top_pages, top_pairs
from linksim.ranking.combined import exact_nearest, nearest_rows
from linksim.ranking.reader import ListsOfAllPages

log = logging.getLogger(__name__)

CANDIDATES = 100  #: co-linked pages each list is chosen from
NEAREST = 10  #: nearest pages of the embedding added to the candidates
HUB_DEGREE = 200  #: a shared neighbour of more links (both ways) than this is not counted
#: The cosine's share of the score is at most this (the rest: P-PSimRank's): where the embedding
#: holds all of the links, the walks still keep a link between two pages as evidence. An index
#: stored without its share (built before the share was the crawl's) scores with this one.
MAX_SHARE = 0.8
#: A candidate is left unscored only when its bound is this far below the k-th score found: far
#: above the last bits in which two sums of the same terms can differ, so no tie is cut.
PRUNE_MARGIN = 1e-9
WALK_METHOD = "ppsimrank"  #: whose fingerprint walks give the sampled share of the score (their index's name)
WALK = BOTH  #: how those walks choose
#: From this many pages, each page's nearest pages of the embedding (:func:`nearest_pages`, stored
#: with the index) are searched among the pages of a few clusters of the embedding
#: (:class:`EmbeddingClusters`) instead of a scan of every page.
ANN_PAGES = 100_000
#: Clusters searched for the pages of a cluster: its own and the nearest others by centroid. On the
#: labelled generated crawl, 8 found more of the exact nearest ten than an HNSW graph (faiss, M 32,
#: efConstruction 40, efSearch 128) in a fraction of its time (``benchmarks/nearest.py``,
#: ``benchmarks/results/nearest.json``).
PROBES = 8
#: Pages a cluster holds on average from ``PROBES · CLUSTER_PAGES²`` pages on: beyond, the clusters
#: grow in number, not in size, so that a page's search reads about as many pages at any size
#: (sqrt(PROBES · n) clusters, where assignment and search cost the same, grow n^1.5 in all).
CLUSTER_PAGES = 384
#: From this many clusters, a page is assigned in two steps (:class:`EmbeddingClusters`): its
#: nearest coarse centroid, then the nearest of that coarse cluster's own centroids.
FLAT_CLUSTERS = PROBES * CLUSTER_PAGES
CLUSTER_SAMPLE = 32  #: pages a cluster of the sample that k-means is trained on
KMEANS_STEPS = 10  #: Lloyd iterations of the spherical k-means
ASSIGN_BLOCK = 65_536  #: pages assigned to their nearest centroid at once
#: What one cluster's search holds at most, for the estimate: its pages' and its candidates' rows
#: and faiss's blocks of products (4,096 x 1,024 float32), for clusters of a few thousand pages.
SEARCH_BYTES = 256 << 20


def cosine_share(held: float) -> float:
    """The cosine's share of the score, from the share of the link features' weight the embedding
    holds (:func:`linksim.embedding.embedding_and_share`): that share, at most :data:`MAX_SHARE`."""
    return min(MAX_SHARE, max(0.0, float(held)))


def combined_score(cosine: np.ndarray, walks: np.ndarray, share: float) -> np.ndarray:
    """s = a · max(0, cos) + (1 − a) · ppsim, from max(0, cos), P-PSimRank's scores and a = ``share``."""
    return share * cosine + (1.0 - share) * walks


def neighbour_lists(graph: LinkGraph):
    """Every page's neighbours over links both ways, self-links aside (CSR: int64 ``indptr``, int32
    ``indices``, each row in increasing order): what the co-linked candidates are counted from."""
    return graph.both_lists()


def colink_weights(indptr: np.ndarray) -> np.ndarray:
    """A shared neighbour's worth: ``1 / ln deg`` (Adamic-Adar), 0 above :data:`HUB_DEGREE`."""
    degree = np.diff(indptr)
    weights = 1.0 / np.log(np.maximum(degree, 2).astype(np.float64))
    weights[degree > HUB_DEGREE] = 0.0
    return weights


def colinked(indptr: np.ndarray, indices: np.ndarray, weights: np.ndarray, u: int) -> tuple[np.ndarray, np.ndarray]:
    """(pages, Adamic-Adar scores) of every page sharing a counted neighbour with u (u aside): each
    neighbour's row read once, ``deg(u) · HUB_DEGREE`` entries at most. (The reference of
    :func:`linksim.ranking.colinked.colinked_scores`, which the index's queries call.)"""
    row = indices[indptr[u]:indptr[u + 1]]
    row = row[weights[row] > 0]
    if not len(row):
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    pages, inverse = np.unique(list_entries(indptr, indices, row), return_inverse=True)
    scores = np.bincount(inverse, weights=np.repeat(weights[row], indptr[row + 1] - indptr[row]))
    keep = pages != u
    return pages[keep].astype(np.int64), scores[keep]


def list_entries(indptr: np.ndarray, indices: np.ndarray, pages: np.ndarray) -> np.ndarray:
    """The entries of the lists of ``pages``, list after list (int64; repeats kept)."""
    if not len(pages):
        return np.zeros(0, dtype=np.int64)
    starts, lengths = indptr[pages], indptr[pages + 1] - indptr[pages]
    offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
    return np.asarray(indices[offsets], dtype=np.int64)


def cluster_count(pages: int) -> int:
    """How many clusters :class:`EmbeddingClusters` makes of ``pages`` pages with a direction:
    sqrt(PROBES · pages), or ``pages / CLUSTER_PAGES`` where that is more."""
    return max(1, min(pages, max(int(round(np.sqrt(PROBES * pages))), pages // CLUSTER_PAGES)))


def _spherical_kmeans(rows: np.ndarray, count: int, seed: int) -> np.ndarray:
    """``count`` unit centroids of ``rows`` (float32): faiss's seeded spherical k-means,
    :data:`KMEANS_STEPS` Lloyd iterations on at most :data:`CLUSTER_SAMPLE` rows a centroid."""
    import faiss

    kmeans = faiss.Kmeans(rows.shape[1], count, niter=KMEANS_STEPS, seed=seed, spherical=True,
                          max_points_per_centroid=CLUSTER_SAMPLE, min_points_per_centroid=1)
    kmeans.train(rows)
    return kmeans.centroids


def _closest(rows: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Each row's centroid of largest inner product (int64)."""
    import faiss

    return faiss.knn(rows, centroids, 1, metric=faiss.METRIC_INNER_PRODUCT)[1][:, 0]


#: A page is assigned to the nearest of the clusters of its this many nearest coarse centroids: a
#: page near the border of two coarse clusters may be nearest to a cluster of the other.
COARSE_PROBES = 3


def _closest_two_level(rows: np.ndarray, coarse: np.ndarray, centroids: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Each row's centroid of largest inner product among the centroids of its
    :data:`COARSE_PROBES` coarse centroids of largest inner product (coarse cluster j's centroids
    are ``centroids[first[j]:first[j + 1]]``); ties to the smaller centroid."""
    import faiss

    probed = faiss.knn(rows, coarse, min(COARSE_PROBES, len(coarse)), metric=faiss.METRIC_INNER_PRODUCT)[1]
    best = np.full(len(rows), -np.inf, dtype=np.float32)
    chosen = np.zeros(len(rows), dtype=np.int64)
    flat, which = probed.ravel(), np.repeat(np.arange(len(rows)), probed.shape[1])
    by_coarse = np.argsort(flat, kind="stable")
    ends = np.searchsorted(flat[by_coarse], np.arange(len(coarse) + 1))
    for j in np.flatnonzero(np.diff(ends)).tolist():  # in increasing j: a tie keeps the smaller centroid
        mine = which[by_coarse[ends[j] : ends[j + 1]]]
        values, found = faiss.knn(np.ascontiguousarray(rows[mine]), centroids[first[j] : first[j + 1]], 1,
                                  metric=faiss.METRIC_INNER_PRODUCT)
        better = values[:, 0] > best[mine]
        best[mine[better]] = values[better, 0]
        chosen[mine[better]] = first[j] + found[better, 0]
    return chosen


class EmbeddingClusters:
    """The embedding's pages with a direction (unit rows; a zero row, a page without links or with
    features all but orthogonal to the embedding, is nobody's nearest page) in clusters, for an
    all-pages search of nearest pages whose work is a few dense products (Jégou, Douze & Schmid's
    inverted file, IEEE TPAMI 2011, read the other way round: since every page is a query, a
    cluster's pages are searched together among the pages of its :data:`PROBES` clusters of nearest
    centroid, one matrix product each instead of a walk of a graph per page, reading each
    candidate once for all of them).

    :func:`cluster_count` clusters, their centroids a spherical k-means (faiss) of a sample drawn
    with ``seed``, :data:`CLUSTER_SAMPLE` pages a cluster. Up to :data:`FLAT_CLUSTERS`, one k-means
    and each page assigned to its nearest centroid, where assigning the pages and searching the
    clusters cost about the same. Beyond, assignment against every centroid would cost more than
    the search: the centroids are two-level (Nistér & Stewénius' vocabulary tree, CVPR 2006, of
    two levels; the coarse quantizer of Babenko & Lempitsky's inverted multi-index, CVPR 2012):
    sqrt(count) coarse centroids of the sample, then each coarse cluster's sample split into its
    share of the clusters, and a page assigned to the nearest of the clusters of its
    :data:`COARSE_PROBES` nearest coarse centroids; the probed clusters are still the nearest by
    centroid among all of them. The
    work of a page is then the same at any size. The same embedding and seed give the same
    clusters and the same pages found on the same machine (each product is fixed by its operands)."""

    def __init__(self, embedding: np.ndarray, seed: int = 0) -> None:
        self.embedding = embedding
        pages = np.flatnonzero(embedding.any(axis=1))
        self.pages = pages
        count = cluster_count(len(pages))
        drawn = np.sort(np.random.default_rng(seed).choice(len(pages), min(len(pages), count * CLUSTER_SAMPLE),
                                                           replace=False))
        sample = np.ascontiguousarray(embedding[pages[drawn]], dtype=np.float32)
        del drawn
        if count <= FLAT_CLUSTERS:
            coarse, centroids, first = None, _spherical_kmeans(sample, count, seed), None
        else:
            coarse = _spherical_kmeans(sample, int(round(np.sqrt(count))), seed)
            of = _closest(sample, coarse)
            # Each coarse cluster's share of the clusters, by its share of the sample, at least one.
            sizes = np.bincount(of, minlength=len(coarse))
            shares = np.maximum(1, np.round(sizes * (count / len(sample))).astype(np.int64))
            shares = np.minimum(shares, np.maximum(sizes, 1))
            parts = [_spherical_kmeans(np.ascontiguousarray(sample[of == j]), int(shares[j]), seed)
                     if sizes[j] else coarse[j : j + 1] for j in range(len(coarse))]
            first = np.concatenate(([0], np.cumsum([len(part) for part in parts]))).astype(np.int64)
            centroids = np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
            count = len(centroids)
        self.centroids = centroids  # kept with the index: an update assigns changed pages to them
        del sample
        cluster = np.empty(len(pages), dtype=np.int64)
        for start in range(0, len(pages), ASSIGN_BLOCK):
            rows = np.ascontiguousarray(embedding[pages[start : start + ASSIGN_BLOCK]], dtype=np.float32)
            if coarse is None:
                cluster[start : start + len(rows)] = _closest(rows, centroids)
                continue
            cluster[start : start + len(rows)] = _closest_two_level(rows, coarse, centroids, first)
        self._arrange(cluster)

    @classmethod
    def from_assignment(cls, embedding: np.ndarray, centroids: np.ndarray, cluster: np.ndarray) -> "EmbeddingClusters":
        """The clusters of stored ``centroids`` with each page's ``cluster`` given (-1: none), as an
        update of the default keeps them (:mod:`linksim.spectral_update`): no k-means, no assignment."""
        clusters = cls.__new__(cls)
        clusters.embedding = embedding
        clusters.centroids = np.ascontiguousarray(centroids, dtype=np.float32)
        clusters.pages = np.flatnonzero(np.asarray(cluster) >= 0)
        clusters._arrange(np.asarray(cluster)[clusters.pages].astype(np.int64))
        return clusters

    def _arrange(self, cluster: np.ndarray) -> None:
        """The members, bounds and probes of ``self.pages`` assigned to ``cluster`` (one each)."""
        import faiss

        count, pages = len(self.centroids), self.pages
        order = np.argsort(cluster, kind="stable")
        self.members = pages[order]  # the pages cluster after cluster, each cluster's in increasing order
        self.bounds = np.searchsorted(cluster[order], np.arange(count + 1))
        del order
        self.cluster = np.full(len(self.embedding), -1, dtype=np.int64)
        self.cluster[pages] = cluster
        probes = faiss.knn(self.centroids, self.centroids, min(PROBES, count), metric=faiss.METRIC_INNER_PRODUCT)[1]
        # its own cluster first, whatever rounding says of a centroid's product with itself
        self.probes = [np.r_[c, [p for p in row if 0 <= p != c]].astype(np.int64) for c, row in enumerate(probes)]

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def of(self, c: int) -> np.ndarray:
        """The pages of cluster c, in increasing order."""
        return self.members[self.bounds[c] : self.bounds[c + 1]]

    def search(self, c: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(cluster c's pages, for each the ``count`` pages of largest float32 inner product
        among the pages of its probed clusters, itself included: int64, -1 past the last)."""
        import faiss

        mine = self.of(c)
        among = np.concatenate([self.of(int(p)) for p in self.probes[c]])
        found = np.full((len(mine), count), -1, dtype=np.int64)
        if len(mine):
            _, at = faiss.knn(np.ascontiguousarray(self.embedding[mine], dtype=np.float32),
                              np.ascontiguousarray(self.embedding[among], dtype=np.float32), min(count, len(among)),
                              metric=faiss.METRIC_INNER_PRODUCT)
            found[:, : at.shape[1]] = np.where(at >= 0, among[np.maximum(at, 0)], -1)
        return mine, found

    def found(self, u: int, count: int) -> np.ndarray:
        """What :meth:`search` finds for page u (none for a page without a direction)."""
        if self.cluster[u] < 0:
            return np.full(count, -1, dtype=np.int64)
        mine, found = self.search(int(self.cluster[u]), count)
        return found[int(np.searchsorted(mine, u))]


def _nearest_of_found(embedding: np.ndarray, u: int, found: np.ndarray, count: int) -> np.ndarray:
    """Of the pages a search found for u (-1: none; u itself and repeats aside), the ``count`` of
    largest exact cosine above :data:`NEAR_COSINE`, as :func:`nearest` ranks them (the search may
    miss a page :func:`nearest` finds, never reorder them)."""
    return _by_exact_cosine(embedding, u, np.asarray(found, dtype=np.int64), count)


#: The nearest pages are those of cosine above this (a smaller one is the truncated SVD's noise).
NEAR_COSINE = 1e-4
#: float32 products of unit rows of RANK values are within 1e-5 of the exact ones (100 roundings
#: of at most 2^-24 each): a page whose float32 cosine lies this far below the count-th largest
#: cannot be among the nearest, whichever product computed it.
SCAN_MARGIN = 1e-4


def nearest(embedding: np.ndarray, u: int, count: int = NEAREST) -> np.ndarray:
    """The ``count`` pages of largest cosine with u in ``embedding`` above :data:`NEAR_COSINE` (u
    aside, ties by the smaller page; none for a page without links).

    A float32 product over every page keeps the pages within :data:`SCAN_MARGIN` of its
    ``count``-th largest; their exact (float64) cosines rank them. So the answer is the exact one,
    the same pages whichever BLAS kernel computed the scan (gemv for one page, gemm for several
    differ in the last bits) and the same order as the clusters' search gives."""
    if count <= 0 or not embedding[u].any():
        return np.zeros(0, dtype=np.int64)
    return _nearest_of_scan(embedding, u, (embedding @ embedding[u]).astype(np.float32, copy=False), count)


def _nearest_of_scan(embedding: np.ndarray, u: int, values: np.ndarray, count: int) -> np.ndarray:
    """:func:`nearest` from ``values``, u's float32 cosines with every page (overwritten)."""
    values[u] = -np.inf
    kth = np.partition(values, len(values) - count)[len(values) - count] if len(values) > count else values.min()
    pages = np.flatnonzero(values >= max(float(kth), NEAR_COSINE) - SCAN_MARGIN)
    return _by_exact_cosine(embedding, u, pages, count)


#: Pages whose nearest pages one scan of :func:`nearest_pages` finds: SCAN_BLOCK x n float32 cosines.
SCAN_BLOCK = 256


def nearest_pages(embedding: np.ndarray, count: int = NEAREST, show_progress: bool = False, seed: int = 0,
                  clusters_out: dict | None = None) -> np.ndarray:
    """Every page's ``count`` nearest pages, stored with the index so that no query scans: row u
    holds :func:`nearest` of u (int32, best first, -1 past the last). From :data:`ANN_PAGES`
    pages they are found among the pages of a few clusters (:class:`EmbeddingClusters`, drawn with
    ``seed``: the search may miss one of the exact nearest pages, the order stays exact), each
    page's ``2 · count + 1`` best by float32 product ranked by exact cosine; below, from scans of
    every page, several pages a product. The same embedding and seed give the same array.
    ``clusters_out``: given a dict, the clusters' ``centroids`` and each page's ``cluster`` (int32,
    -1 for a page without a direction) are put in it (none below :data:`ANN_PAGES`), for updates."""
    from linksim.progress import Progress

    n = len(embedding)
    table = np.full((n, count), -1, dtype=np.int32)
    directed = np.flatnonzero(embedding.any(axis=1)) if count > 0 else np.zeros(0, dtype=np.int64)
    if n >= ANN_PAGES and len(directed):
        clusters = EmbeddingClusters(embedding, seed)
        if clusters_out is not None:
            clusters_out.update(centroids=clusters.centroids, cluster=clusters.cluster.astype(np.int32))
        log.info("nearest pages: %s pages with a direction in %s clusters", f"{len(directed):,}", f"{len(clusters):,}")
        with Progress(len(directed), "nearest pages", "pages", enabled=show_progress) as progress:
            for c in range(len(clusters)):
                pages, found = clusters.search(c, 2 * count + 1)
                nearest_rows(embedding, pages, found, count, NEAR_COSINE, table)
                progress.update(len(pages))
        return table
    with Progress(len(directed), "nearest pages", "pages", enabled=show_progress) as progress:
        scan_rows(embedding, directed, table, progress.update)
    return table


def scan_rows(embedding: np.ndarray, pages: np.ndarray, table: np.ndarray, done=None) -> None:
    """``table[u]`` = :func:`nearest` of each of ``pages`` (pages with a direction), from scans of
    every page, :data:`SCAN_BLOCK` pages a product; ``done(pages)`` after each block."""
    count = table.shape[1]
    for start in range(0, len(pages), SCAN_BLOCK):
        block = pages[start : start + SCAN_BLOCK]
        scans = (embedding[block] @ embedding.T).astype(np.float32, copy=False)
        for row, u in enumerate(block.tolist()):
            near = _nearest_of_scan(embedding, u, scans[row], count)
            table[u, : len(near)] = near
        if done is not None:
            done(len(block))


#: A target filter's nearest pages come from a search this many times deeper than the nearest
#: pages' (:func:`nearest_pages_within`): most of a page's nearest pages may not pass.
FILTERED_SEARCH = 8


def nearest_pages_within(embedding: np.ndarray, targets, pages: np.ndarray, table: np.ndarray,
                         count: int = NEAREST, seed: int = 0) -> None:
    """``table[u]`` = u's ``count`` nearest pages among the pages that pass ``targets`` (a
    :class:`linksim.ranking.targets.Targets`) for each of ``pages``, ranked as :func:`nearest`
    ranks them. A few pages, or a graph of fewer than :data:`ANN_PAGES`: each page's scan of every
    page, those that do not pass left out (the exact answer). Every page of a larger graph: the
    clusters' search of :func:`nearest_pages`, :data:`FILTERED_SEARCH` times deeper, then the
    filter (a page whose probed clusters hold no page that passes gets none)."""
    n = len(embedding)
    pages = np.asarray(pages, dtype=np.int64)
    pages = pages[embedding[pages].any(axis=1)] if len(pages) else pages
    if n >= ANN_PAGES and len(pages) > n // 2:
        clusters = EmbeddingClusters(embedding, seed)
        width = min(FILTERED_SEARCH * (2 * count + 1), n)
        for c in range(len(clusters)):
            mine, found = clusters.search(c, width)
            for row, u in enumerate(mine.tolist()):
                keep = found[row] >= 0
                keep[keep] = targets.passes(u, found[row][keep])
                found[row][~keep] = -1
            nearest_rows(embedding, mine, found, count, NEAR_COSINE, table)
        return
    everyone = np.arange(n)
    for start in range(0, len(pages), SCAN_BLOCK):
        block = pages[start : start + SCAN_BLOCK]
        scans = (embedding[block] @ embedding.T).astype(np.float32, copy=False)
        for row, u in enumerate(block.tolist()):
            values = scans[row]
            values[~targets.passes(u, everyone)] = -np.inf
            near = _nearest_of_scan(embedding, u, values, count)
            table[u, : len(near)] = near


def _by_exact_cosine(embedding: np.ndarray, u: int, pages: np.ndarray, count: int) -> np.ndarray:
    """Of ``pages``, the ``count`` of largest float64 cosine with u above :data:`NEAR_COSINE`."""
    return exact_nearest(embedding, int(u), np.asarray(pages, dtype=np.int64), int(count), NEAR_COSINE)


@dataclass
class Change:
    """What the update that made an index changed, in its graph's page numbers: what
    :func:`linksim.spectral_update.lists_reach` reads. Stored with the index, so that a run that
    finds the index already updated (the one that updated it was killed before its lists were
    written) still makes only the lists within reach."""

    before: str  # the digest of the graph the index was updated from
    folded: np.ndarray  # pages whose row of the embedding was folded in (their links changed), increasing
    # (u, v): v became a candidate of u (co-linked through a changed page, or one of u's nearest
    # pages): u's list changes if v's bound beats its last score
    gained: tuple[np.ndarray, np.ndarray]
    # (u, v): v may no longer be a candidate of u: u's list changes if it holds v
    lost: tuple[np.ndarray, np.ndarray]
    nearest_changed: np.ndarray  # pages whose nearest pages differ from before
    deleted: int  # pages of the old graph that the new one has not
    drift: float  # the share of the features' weight the build's embedding held that it no longer holds
    folded_share: float  # the pages folded since the build, of the pages with links
    # how far each folded page's row moved (the norm of new minus old, unit rows; 2 where not
    # known): its cosine with any page moved by at most that much
    moved: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.moved is None:
            self.moved = np.full(len(self.folded), 2.0, dtype=np.float32)

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays the store keeps it as (:meth:`of_arrays` reads them back)."""
        return {"change_before": np.frombuffer(self.before.encode(), dtype=np.uint8),
                "change_folded": np.asarray(self.folded, dtype=np.int64),
                "change_gained": np.stack([np.asarray(a, dtype=np.int64) for a in self.gained]),
                "change_lost": np.stack([np.asarray(a, dtype=np.int64) for a in self.lost]),
                "change_nearest": np.asarray(self.nearest_changed, dtype=np.int64),
                "change_figures": np.array([self.deleted, self.drift, self.folded_share], dtype=np.float64),
                "change_moved": np.asarray(self.moved, dtype=np.float32)}

    @classmethod
    def of_arrays(cls, arrays: dict) -> "Change | None":
        """The change kept in ``arrays`` (:meth:`arrays`), None if they hold none."""
        if any(f"change_{name}" not in arrays for name in CHANGE_ARRAYS):
            return None
        gained, lost, figures = (np.asarray(arrays[f"change_{k}"]) for k in ("gained", "lost", "figures"))
        return cls(before=bytes(np.asarray(arrays["change_before"])).decode(),
                   folded=np.asarray(arrays["change_folded"]), gained=(gained[0], gained[1]), lost=(lost[0], lost[1]),
                   nearest_changed=np.asarray(arrays["change_nearest"]), deleted=int(figures[0]),
                   drift=float(figures[1]), folded_share=float(figures[2]),
                   moved=np.asarray(arrays["change_moved"]) if "change_moved" in arrays else None)


#: The arrays a stored change needs (an older linksim's holds no ``change_moved``: every row moved).
CHANGE_ARRAYS = ("before", "folded", "gained", "lost", "nearest", "figures")


@dataclass
class SpectralIndex(ListsOfAllPages):
    """A P-PSimRank fingerprint index, the pages' link embedding and their neighbours
    (:mod:`linksim.spectral`)."""

    fingerprints: FingerprintIndex
    embedding: np.ndarray  # (n, rank) float32, unit rows (zero without links)
    neighbour_indptr: np.ndarray  # (n + 1,) int64: page u's neighbours, links both ways,
    neighbour_indices: np.ndarray  # are neighbour_indices[indptr[u]:indptr[u + 1]] (int32)
    nearest: np.ndarray  # (n, NEAREST) int32: row u, u's nearest pages (nearest_pages), -1 past the last
    share: float = MAX_SHARE  # the cosine's share of the score (cosine_share)
    # What an update folds changed pages in with (linksim.spectral_update); None in an index
    # stored without them (built by an older linksim or on Spark): it is built again instead.
    lengths: np.ndarray | None = None  # (n,) float32: each row of U Σ's length before it was scaled
    eigenvalues: np.ndarray | None = None  # (rank,) float64: Σ²
    centroids: np.ndarray | None = None  # (clusters, rank) float32: the nearest pages' clusters (none below ANN_PAGES)
    page_cluster: np.ndarray | None = None  # (n,) int32: each page's cluster, -1 without one
    # (the share of the features' weight the build's embedding held, pages folded in since)
    fold_state: np.ndarray | None = None
    change: Change | None = None  # what the update that made this index changed, kept in the store
    pairs_scored = 0  # candidates whose P-PSimRank score the lists computed (this process)

    def __post_init__(self) -> None:
        from linksim.arrays import read_only

        self._weights = colink_weights(self.neighbour_indptr)
        self._neighbours = tuple(read_only(a) for a in (self.neighbour_indptr, self.neighbour_indices, self._weights))
        self._scratch = threading.local()
        self._within = None  # (a target filter's digest, its nearest pages, the rows found)

    def nearest_within(self, targets, pages: np.ndarray) -> np.ndarray:
        """The table of nearest pages among those that pass ``targets``, its rows of ``pages``
        found (:func:`nearest_pages_within`); kept for the filter, each row found once."""
        key = targets.digest()
        if self._within is None or self._within[0] != key:
            self._within = (key, np.full(self.nearest.shape, -1, dtype=np.int32), np.zeros(self.n, dtype=bool))
        _, table, found = self._within
        missing = np.asarray(pages, dtype=np.int64)
        missing = np.unique(missing[~found[missing]])
        if len(missing):
            nearest_pages_within(self.embedding, targets, missing, table, self.nearest.shape[1],
                                 int(self.parameters.get("seed", 0)))
            found[missing] = True
        return table

    def prepare_targets(self, targets) -> None:
        """Before the filtered lists of all pages (once, before workers fork): every page's nearest
        pages among those that pass."""
        self.nearest_within(targets, np.arange(self.n))

    method = "spectral"

    def read_lists_as(self, page_major: bool, folder, bands: bool) -> None:
        """Its walks' trees as :meth:`FingerprintIndex.read_lists_as` says, their state and bands as built."""
        self.fingerprints.use_page_major = page_major
        self.fingerprints.page_major_folder = folder

    def prepare_all_pages(self) -> None:
        """Before the lists of all pages (built once before workers fork): the walks' page-major
        rows, from which a candidate's P-PSimRank score reads a few cache lines instead of a miss in
        every fingerprint (:meth:`FingerprintIndex.prepare_exact_scores`)."""
        self.fingerprints.prepare_exact_scores()

    @property
    def graph_fingerprint(self) -> str:
        return self.fingerprints.graph_fingerprint

    @graph_fingerprint.setter
    def graph_fingerprint(self, value: str) -> None:  # set by the Spark build once the graph is known
        self.fingerprints.graph_fingerprint = value

    @property
    def n(self) -> int:
        return self.fingerprints.n

    @property
    def nbytes(self) -> int:
        return self.fingerprints.nbytes + sum(a.nbytes for a in self._own_arrays().values())

    @property
    def updatable(self) -> bool:
        """Can an update fold changed pages in (:mod:`linksim.spectral_update`)? Its walks' state
        and the embedding's lengths kept; the store then keeps the graph with it."""
        return self.fingerprints.updatable and self.lengths is not None

    @property
    def parameters(self) -> dict:
        """The fingerprints' parameters: the embedding's and the candidates' are constants of this module."""
        return self.fingerprints.parameters

    def cosine(self, u: int, pages: np.ndarray) -> np.ndarray:
        """max(0, cos(e_u, e_v)) for each of ``pages`` (float64; compiled, the floats the lists use:
        :func:`linksim.ranking.combined.cosines`)."""
        from linksim.ranking.combined import cosines

        return cosines(self.embedding, int(u), np.asarray(pages, dtype=np.int64))

    def combine(self, u: int, pages: np.ndarray, walks: np.ndarray) -> np.ndarray:
        return combined_score(self.cosine(u, pages), walks, self.share)

    def sim(self, u: int, v: int, n_fingerprints: int | None = None, **options) -> float:
        check_page(u, self.n), check_page(v, self.n)
        if u == v:
            return 1.0
        walks = self.fingerprints.sim(u, v, n_fingerprints=n_fingerprints)
        return float(self.combine(u, np.array([v]), np.array([walks]))[0])

    def candidates(self, u: int, n_fingerprints: int | None = None, targets=None) -> np.ndarray:
        """u's candidates (see the module), in increasing order: the co-linked and nearest pages,
        or P-PSimRank's best pages when there are none. With ``targets``
        (:class:`linksim.ranking.targets.Targets`) only the pages that pass are candidates: the
        best :data:`CANDIDATES` co-linked pages among those that pass, and the nearest pages among
        them (:meth:`nearest_within`)."""
        pages, scores = self._colinked(u)
        close = self.nearest[u] if targets is None else self.nearest_within(targets, np.array([u]))[u]
        close = close[close >= 0].astype(np.int64)
        if targets is not None:  # the nearest pages among those that pass, the co-linked that pass
            keep = targets.passes(u, pages)
            pages, scores = pages[keep], scores[keep]
        best = top_pages(pages, scores, u, CANDIDATES, 0.0)[0]
        found = np.union1d(best, close)
        return found if len(found) else self._walk_candidates(u, n_fingerprints, targets)

    def _walk_candidates(self, u: int, n_fingerprints: int | None, targets=None) -> np.ndarray:
        """P-PSimRank's :data:`CANDIDATES` best pages (of those that pass ``targets``), in increasing order."""
        if targets is None:
            found = self.fingerprints.related_one(u, Query(CANDIDATES), n_fingerprints=n_fingerprints)
        else:
            from linksim.ranking.targets import ranked_within

            options = {} if n_fingerprints is None else {"n_fingerprints": n_fingerprints}
            found = ranked_within(self.fingerprints, np.array([u]), Query(CANDIDATES), targets, **options)[0]
        return np.array(sorted(v for v, _ in found), dtype=np.int64)

    def _colinked(self, u: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`colinked`, compiled (:func:`linksim.ranking.colinked.colinked_scores`): the same floats."""
        from linksim.ranking.colinked import colinked_scores

        scratch = self._colinked_scratch()
        return colinked_scores(int(u), *self._neighbours, scratch.acc, scratch.touched)

    def _colinked_scratch(self):
        """This thread's scratch of the co-linked scores (zero between calls)."""
        scratch = self._scratch
        if getattr(scratch, "n", None) != self.n:
            scratch.acc, scratch.touched, scratch.n = np.zeros(self.n), np.zeros(self.n, dtype=np.int32), self.n
        return scratch

    #: Filters its candidates by a target filter itself (:func:`linksim.ranking.targets.ranked_within`).
    filters_targets = True

    def related(self, u: int, top_k: int | None = 10, similarity_cutoff: float = 0.0,
                n_fingerprints: int | None = None, targets=None, **options) -> list[tuple[int, float]]:
        """The best of u's candidates by the combined score. A top-k list scores P-PSimRank (the
        costly share: a walk of its trees in each fingerprint) only for the candidates that can
        still reach the k-th score, by the bound ``a cos + (1 - a) c``: the list is the one
        of every candidate scored, float for float. The bound prunes where the cosine weighs: with
        a share of 0.8 about a third of the candidates were scored on the generated 10M-link crawl;
        where the share is small, most of them are.

        When no co-linked or nearest page scores above 0 (a page at the end of a chain of a few
        pages: its one co-linked page is too far for the embedding and too rarely met by the
        walks), P-PSimRank's best pages are the candidates, so that a page whose walks meet
        another's gets a list.

        A top-k list is :meth:`lists`', compiled; :meth:`related_by_steps` makes the same
        list step by step. ``targets``: only the pages that pass are candidates
        (:meth:`candidates`)."""
        return self.related_one(u, Query.checked(top_k, similarity_cutoff), n_fingerprints, targets)

    def related_one(self, u: int, query: Query, n_fingerprints: int | None = None,
                    targets=None) -> list[tuple[int, float]]:
        """:meth:`related` of a checked ``query``."""
        check_page(u, self.n)
        if query.top_k is not None:
            return self.lists(np.array([u]), query, n_fingerprints, targets)[0]
        return self.related_by_steps(u, None, query.similarity_cutoff, n_fingerprints, targets)

    def lists(self, pages: np.ndarray, query: Query, n_fingerprints: int | None = None,
              targets=None) -> list[list[tuple[int, float]]]:
        """:meth:`related` of each of ``pages`` (``query.top_k`` >= 1), the same lists, in one compiled
        call (:func:`linksim.ranking.combined.combined_lists`) but for a page whose candidates give
        nothing (its list then is the walks' best pages', :meth:`related_by_steps`)."""
        from linksim.ranking.combined import NO_TARGETS, combined_lists

        top_k, similarity_cutoff = query.top_k, query.similarity_cutoff
        pages = self.fingerprints._checked_pages(pages)
        scratch = self._colinked_scratch()
        lengths, found, scores, pairs = combined_lists(
            pages, int(top_k), float(similarity_cutoff), float(self.share), PRUNE_MARGIN, CANDIDATES,
            self._neighbours, (scratch.acc, scratch.touched),
            self.nearest if targets is None else self.nearest_within(targets, pages), self.embedding,
            self._walk_arguments(n_fingerprints), NO_TARGETS if targets is None else targets.arrays)
        self.pairs_scored += int(pairs)
        lists, end = [], 0
        found, scores = found.tolist(), scores.tolist()
        for u, length in zip(pages.tolist(), lengths.tolist()):
            if length < 0:
                lists.append(self.related_by_steps(u, top_k, similarity_cutoff, n_fingerprints, targets))
            else:
                lists.append(list(zip(found[end:end + length], scores[end:end + length])))
                end += length
        return lists

    def _walk_arguments(self, n_fingerprints: int | None) -> tuple:
        """What the compiled lists read of the walks: (fingerprints used, length, c^t, the query arrays)."""
        walks = self.fingerprints
        count = check_fingerprints_asked(n_fingerprints, walks.n_fingerprints)
        return int(count), int(walks.length), walks.powers(walks.decay), *walks.query_arrays()

    def related_by_steps(self, u: int, top_k: int | None = 10, similarity_cutoff: float = 0.0,
                         n_fingerprints: int | None = None, targets=None) -> list[tuple[int, float]]:
        """:meth:`related`, a step at a time in numpy: the candidates, then the best of them."""
        check_page(u, self.n)
        pages = self.candidates(u, n_fingerprints, targets)
        found = self._best(u, pages, top_k, similarity_cutoff, n_fingerprints)
        if found or top_k == 0:
            return found
        if similarity_cutoff > 0 and self._best(u, pages, 1, 0.0, n_fingerprints):
            return found  # the candidates score above 0, only not above the cutoff
        walked = self._walk_candidates(u, n_fingerprints, targets)
        walked = np.setdiff1d(walked, pages)  # those scored already score 0
        return self._best(u, walked, top_k, similarity_cutoff, n_fingerprints)

    def _best(self, u: int, pages: np.ndarray, top_k: int | None, similarity_cutoff: float,
              n_fingerprints: int | None) -> list[tuple[int, float]]:
        """The best of ``pages`` by the combined score (see :meth:`related`)."""
        pages = pages[pages != u]
        if not len(pages) or top_k == 0:
            return []
        cosine = self.cosine(u, pages)
        if top_k is None or len(pages) <= top_k:
            walks = self.fingerprints.sims(u, pages, n_fingerprints=n_fingerprints)
            self.pairs_scored += len(pages)
            return top_pairs(pages, combined_score(cosine, walks, self.share), u, top_k, similarity_cutoff)
        # P-PSimRank's score of a page v != u is at most c (every walk meets u at step 1 or later),
        # so v's combined score is at most a cos + (1 - a) c: the candidates are scored in
        # decreasing bound until the next bound is below the k-th score found (the pages left
        # unscored cannot enter the list nor tie: the list of all candidates scored, float for float).
        from linksim.ranking.combined import best_by_bound

        chosen, values = best_by_bound(int(u), pages.astype(np.int64), self.share * cosine, 1.0 - self.share, int(top_k),
                                       PRUNE_MARGIN, *self._walk_arguments(n_fingerprints))
        self.pairs_scored += len(chosen)
        return top_pairs(pages[chosen], values, u, top_k, similarity_cutoff)

    # The index store -------------------------------------------------------------------------
    def layout(self):
        """The fingerprint trees' layout (:meth:`FingerprintIndex.layout`), built on disk with them."""
        return self.fingerprints.layout()

    def _own_arrays(self) -> dict[str, np.ndarray]:
        arrays = dict(embedding=self.embedding, neighbour_indptr=self.neighbour_indptr,
                      neighbour_indices=self.neighbour_indices, nearest=self.nearest,
                      cosine_share=np.array([self.share]))
        arrays.update({name: getattr(self, name) for name in _FOLDING if getattr(self, name) is not None})
        return arrays

    def store_arrays(self) -> dict[str, np.ndarray]:
        arrays = dict(self.fingerprints.store_arrays(), **self._own_arrays())
        if self.change is not None:
            arrays.update(self.change.arrays())
        return arrays

    @classmethod
    def from_store(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "SpectralIndex":
        own = ("embedding", "neighbour_indptr", "neighbour_indices", "nearest")
        fingerprints = FingerprintIndex.from_store(dict(meta, method=WALK_METHOD),
                                                   {k: v for k, v in arrays.items()
                                                    if k not in (*own, *_FOLDING, "cosine_share")
                                                    and not k.startswith("change_")}, walk=WALK)
        share = float(arrays["cosine_share"][0]) if "cosine_share" in arrays else MAX_SHARE
        folding = {name: arrays[name] for name in _FOLDING if name in arrays}
        if len(folding) != len(_FOLDING):
            folding = {}  # all or none: an update needs every one of them
        return cls(fingerprints, *(arrays[name] for name in own), share=share, **folding,
                   change=Change.of_arrays(arrays))


#: The arrays an update folds changed pages in with (:class:`SpectralIndex`).
_FOLDING = ("lengths", "eigenvalues", "centroids", "page_cluster", "fold_state")


def build_spectral_index(graph: LinkGraph, n_fingerprints: int = 100, length: int = 3, seed: int = 0,
                         decay: float = 0.6, show_progress: bool = False,
                         directory: Path | None = None, keep_walks: bool = False) -> SpectralIndex:
    """P-PSimRank's fingerprints, the link embedding, the neighbour lists and the nearest pages of ``graph``.
    ``directory``: the fingerprints (the largest part) built into memory-mapped files there, one
    fingerprint at a time (:func:`linksim.fingerprints.walks.build_index`), the same arrays bit for bit.
    ``keep_walks``: keep the walks' state, and the embedding's lengths and clusters, that an update
    starts from (:mod:`linksim.spectral_update`)."""
    from linksim.fingerprints.walks import build_index

    embedding, held, lengths, values = embedding_parts(graph, RANK, seed)
    log.info("link embedding: rank %d, %.3f of the link features' weight", embedding.shape[1], held)
    clusters: dict = {}
    nearest = nearest_pages(embedding, show_progress=show_progress, seed=seed,  # its clusters freed before the walks
                            clusters_out=clusters)
    fingerprints = build_index(graph, WALK, n_fingerprints, length, seed, decay, show_progress=show_progress,
                               directory=directory, method=WALK_METHOD, keep_walks=keep_walks and directory is None)
    folding = {}
    if keep_walks and directory is None:
        rank = embedding.shape[1]
        folding = dict(lengths=lengths, eigenvalues=values,
                       centroids=clusters.get("centroids", np.zeros((0, rank), dtype=np.float32)),
                       page_cluster=clusters.get("cluster", np.full(graph.n, -1, dtype=np.int32)),
                       fold_state=np.array([held, 0.0]))
    return SpectralIndex(fingerprints, embedding, *neighbour_lists(graph), nearest, share=cosine_share(held),
                         **folding)


def spectral_exact(graph: LinkGraph, decay: float = 0.6, length: int = 3, each=None, seed: int = 0,
                   candidates: bool = True) -> np.ndarray:
    """The scores with P-PSimRank's exact scores in place of its Monte Carlo ones (dense, small
    graphs). With ``candidates`` (default), row u keeps only u's candidates (zero elsewhere): the
    exact lists of the method, the candidates counted here from dense matrices (where P-PSimRank's
    best pages stand in for none, its exact best); ``candidates=False``: every pair, what the
    index's ``sim`` estimates. ``each(k, scores)`` sees the scores with P-PSimRank truncated at
    every k on the way."""
    from linksim.fingerprints.exact import ppsimrank_exact

    n = graph.n
    embedding, held = embedding_and_share(graph, RANK, seed)
    share = cosine_share(held)
    cosines = embedding.astype(np.float64) @ embedding.astype(np.float64).T
    cosine = share * np.maximum(cosines, 0.0)
    both = graph.neighbour_matrix("both").toarray()
    degree = both.sum(axis=0)
    worth = np.where(degree > HUB_DEGREE, 0.0, 1.0 / np.log(np.maximum(degree, 2.0)))
    colink = (both * worth) @ both.T  # Adamic-Adar of the counted shared neighbours

    chosen = [[v for v, _ in top_pairs(np.arange(n), colink[u], u, CANDIDATES, 0.0)] + nearest(embedding, u).tolist()
              for u in range(n)]

    def kept_by(walks: np.ndarray) -> np.ndarray:
        kept = np.eye(n, dtype=bool)
        for u in range(n):
            kept[u, chosen[u] or [v for v, _ in top_pairs(np.arange(n), walks[u], u, CANDIDATES, 0.0)]] = True
        return kept

    def combined(walks: np.ndarray) -> np.ndarray:
        scores = cosine + (1.0 - share) * walks
        np.fill_diagonal(scores, 1.0)
        return np.where(kept_by(walks), scores, 0.0) if candidates else scores

    walks = ppsimrank_exact(graph, decay, length,
                            each=None if each is None else (lambda k, truncated: each(k, combined(truncated))))
    return combined(walks)
