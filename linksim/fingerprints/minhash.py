"""Extended Jaccard by min-hashing (Fogaras & Rácz 2005, Algorithm 3)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linksim.digest import graph_fingerprint
from linksim.graph import LinkGraph
from linksim.progress import Progress
from linksim.fingerprints.randomness import order_keys, spread_min, stream_key
from linksim.parameters import check_fingerprints_asked, check_page, check_parameters, check_query, sampled_parameters
from linksim.ranking import top_scores


@dataclass
class MinHashIndex:
    """Min-hash fingerprints ``fp_k`` (k = 1..length) of every page (2005 paper, Algorithm 3).

    ``values[i, k-1, u]`` is the page of ``I_k(u)`` first in the random order σ_i (its
    ``argmin``; two pages share a min-hash exactly when they share it), where ``I_k(u)`` holds
    the pages that reach ``u`` in at most ``k`` links, ``u`` itself included (papers README). Then
    ``xjac(u, v) = E[Σ_k c^k (1 − c) · 1{fp_k(u) = fp_k(v)}]``.

    The inverted index (``order``, ``indptr``: per fingerprint and k, the pages sorted by value and
    where each value starts) makes the pages sharing u's value one contiguous range, so related(u) reads only the
    pages it scores.
    """

    values: np.ndarray  # (N, length, V) int32
    length: int
    seed: int
    graph_fingerprint: str
    decay: float = 0.6
    order: np.ndarray | None = field(default=None, repr=False, compare=False)
    indptr: np.ndarray | None = field(default=None, repr=False, compare=False)

    method = "xjaccard"
    updatable = True  # the values are all an update starts from (linksim.fingerprints.update)
    changed_pages = 0  # of an updated index: the pages whose min-hashes changed

    @property
    def n_fingerprints(self) -> int:
        return self.values.shape[0]

    @property
    def n(self) -> int:
        return self.values.shape[2]

    @property
    def nbytes(self) -> int:
        return self.values.nbytes

    @property
    def parameters(self) -> dict:
        """What the index was built with (the store and a rebuild compare against these)."""
        return sampled_parameters(self)

    def store_arrays(self) -> dict[str, np.ndarray]:
        order, indptr = self.inverted()
        return {"values": self.values, "order": order, "indptr": indptr}

    @classmethod
    def from_store(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "MinHashIndex":
        p = meta["parameters"]
        return cls(arrays["values"], p["length"], p["seed"], meta["graph"]["fingerprint"], p["decay"],
                   arrays["order"], arrays["indptr"])

    def inverted(self) -> tuple[np.ndarray, np.ndarray]:
        """(order, indptr): per row ``i·length + k``, the pages sorted by value, and where each
        value's pages start in that order (CSR over the values ``0..V-1``)."""
        if self.order is None:
            rows = self.values.reshape(-1, self.n)
            self.order = np.argsort(rows, axis=1, kind="stable").astype(np.int32).reshape(self.values.shape)
            counts = np.zeros((rows.shape[0], self.n + 1), dtype=np.int32)
            np.add.at(counts, (np.arange(rows.shape[0])[:, None], rows.astype(np.int64) + 1), 1)
            self.indptr = np.cumsum(counts, axis=1, dtype=np.int32).reshape(self.values.shape[:2] + (self.n + 1,))
        return self.order, self.indptr

    def _weights(self, decay: float | None) -> np.ndarray:
        c = self.decay if decay is None else decay
        return c ** np.arange(1, self.length + 1) * (1.0 - c)

    def sim(self, u: int, v: int, decay: float | None = None, n_fingerprints: int | None = None) -> float:
        check_query(decay=decay)
        count = check_fingerprints_asked(n_fingerprints, self.n_fingerprints)
        check_page(u, self.n), check_page(v, self.n)
        equal = self.values[:count, :, u] == self.values[:count, :, v]
        return float((equal * self._weights(decay)).sum(axis=1).mean())

    def related(self, u: int, top_k: int | None = 10, decay: float | None = None, similarity_cutoff: float = 0.0,
                n_fingerprints: int | None = None) -> list[tuple[int, float]]:
        """Pages most similar to ``u`` (u excluded), best first, ties by page."""
        check_query(top_k, similarity_cutoff, decay)
        count = check_fingerprints_asked(n_fingerprints, self.n_fingerprints)
        check_page(u, self.n)
        weights = self._weights(decay)
        order, indptr = self.inverted()
        rows = np.arange(count * self.length)
        mine = self.values[:count, :, u].reshape(-1).astype(np.int64)
        flat_ptr = indptr.reshape(-1, self.n + 1)
        lo, hi = flat_ptr[rows, mine].astype(np.int64), flat_ptr[rows, mine + 1].astype(np.int64)
        sizes = hi - lo
        begin = rows * self.n + lo - (np.cumsum(sizes) - sizes)
        where = np.repeat(begin, sizes) + np.arange(int(sizes.sum()))
        pages = order.reshape(-1)[where]
        member_weights = np.repeat(np.tile(weights, count), sizes)
        scores = np.bincount(pages, weights=member_weights, minlength=self.n) / count
        return top_scores(scores, u, top_k, similarity_cutoff)


def build_minhash_index(
    graph: LinkGraph, n_fingerprints: int = 100, length: int = 4, seed: int = 0, decay: float = 0.6,
    show_progress: bool = False,
) -> MinHashIndex:
    """``fp_k(u) = min(fp_{k-1}(u), min over in-neighbours of fp_{k-1})``, one edge scan a step."""
    check_parameters(n_fingerprints=n_fingerprints, length=length, decay=decay, seed=seed)
    values = np.empty((n_fingerprints, length, graph.n), dtype=np.int32)
    progress = Progress(n_fingerprints, "xjaccard fingerprints", "fingerprints", enabled=show_progress)
    for i in range(n_fingerprints):
        progress.update(1)
        # σ: the random order of fingerprint i drawn page by page (linksim.fingerprints.randomness), so that a
        # partitioned build (Spark) draws the same; a key's low 32 bits are its page.
        current = order_keys(np.uint64(stream_key(seed, i, 0)), graph.codes)
        for k in range(length):
            following = np.empty_like(current)
            spread_min(graph.in_indptr, graph.in_indices, current, following)
            values[i, k] = following & 0xFFFFFFFF  # the minimising page itself
            current = following
    progress.close()
    return MinHashIndex(values, length, seed, graph_fingerprint(graph), decay)
