"""Extended Jaccard by min-hashing (Fogaras & Rácz 2005, Algorithm 3)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from linksim.digest import graph_fingerprint
from linksim.graph import LinkGraph
from linksim.progress import Progress
from linksim.fingerprints.randomness import order_keys, spread_min, stream_key
from linksim.parameters import Query, check_fingerprints_asked, check_page, check_parameters, sampled_parameters
from linksim.ranking import top_pages, top_scores
from linksim.ranking.reader import ListsOfAllPages


@njit(cache=True, nogil=True)
def _shared_weights(flat, u, pages, rows, row_weights, sums):
    """``sums[j]`` += the weight of each of ``rows`` where ``pages[j]``'s min-hash is u's (a row at a
    time: its values are contiguous, so the ascending pages are read in one pass)."""
    for r in range(rows.shape[0]):
        row = rows[r]
        mine = flat[row, u]
        for j in range(pages.shape[0]):
            if flat[row, pages[j]] == mine:
                sums[j] += row_weights[r]


@dataclass
class MinHashIndex(ListsOfAllPages):
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
    lists_sampled = 0  # top-k lists answered so far from a sample of u's large buckets (this process)
    reads_sample = True
    sample = 16  # a top-k query's members read from each large bucket (see related); 0: all
    _exact_members = 20_000  # u's buckets hold at most this many members in all: read whole
    # A bucket of more members is read from a sample, where u's hold more than the above (on Wikispeedia's
    # top 100 lists a cap of 256 lost sibling Γ against the exact lists, 1,024 did not: benchmarks/quality.py).
    _bucket_cap = 1_024
    _sample_candidates = 256  # pages of a sampled reading scored exactly
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
            # A row at a time: sorting every row at once held int64 copies of all the values (twice
            # the index; cnr-2000's build peaked 1.5x over its estimate), a row's are a few MB.
            rows = self.values.reshape(-1, self.n)
            order = np.empty(rows.shape, dtype=np.int32)
            indptr = np.zeros((rows.shape[0], self.n + 1), dtype=np.int32)
            for r in range(rows.shape[0]):
                order[r] = np.argsort(rows[r], kind="stable")
                np.cumsum(np.bincount(rows[r], minlength=self.n), dtype=np.int32, out=indptr[r, 1:])
            self.order = order.reshape(self.values.shape)
            self.indptr = indptr.reshape(self.values.shape[:2] + (self.n + 1,))
        return self.order, self.indptr

    def _weights(self, decay: float | None) -> np.ndarray:
        c = self.decay if decay is None else decay
        return c ** np.arange(1, self.length + 1) * (1.0 - c)

    def sim(self, u: int, v: int, decay: float | None = None, n_fingerprints: int | None = None) -> float:
        check_parameters(decay=decay)
        count = check_fingerprints_asked(n_fingerprints, self.n_fingerprints)
        check_page(u, self.n), check_page(v, self.n)
        equal = self.values[:count, :, u] == self.values[:count, :, v]
        return float((equal * self._weights(decay)).sum(axis=1).mean())

    def related(self, u: int, top_k: int | None = 10, decay: float | None = None, similarity_cutoff: float = 0.0,
                n_fingerprints: int | None = None, sample: int | None = None) -> list[tuple[int, float]]:
        """Pages most similar to ``u`` (u excluded), best first, ties by page.

        Where u's buckets hold more than 20,000 members in all (a site's navigation hub is the
        first page of every page's k-step neighbourhood, so one bucket a row holds nearly the whole
        site), a top-k query reads each bucket of over 1,024 members at ``sample`` positions of a
        systematic sample, scores its 256 best candidates exactly from their min-hashes, and
        counts the list in ``lists_sampled`` unless no page left out can reach its k-th score
        (then it is the exact list). ``sample`` None: the index's (16); 0: every member read.
        """
        query = Query.checked(top_k, similarity_cutoff)
        return self.related_one(u, query, decay=decay, n_fingerprints=n_fingerprints, sample=sample)

    def related_one(self, u: int, query: Query, decay: float | None = None, n_fingerprints: int | None = None,
                    sample: int | None = None) -> list[tuple[int, float]]:
        """:meth:`related` of a checked ``query``: u's buckets read whole, or the large ones sampled."""
        check_parameters(decay=decay)
        count = check_fingerprints_asked(n_fingerprints, self.n_fingerprints)
        top_k, similarity_cutoff = query.top_k, query.similarity_cutoff
        check_page(u, self.n)
        sample = self.sample if sample is None else check_parameters(sample=sample)["sample"]
        order, indptr = self.inverted()
        rows = np.arange(count * self.length)
        mine = self.values[:count, :, u].reshape(-1).astype(np.int64)
        flat_ptr = indptr.reshape(-1, self.n + 1)
        lo, hi = flat_ptr[rows, mine].astype(np.int64), flat_ptr[rows, mine + 1].astype(np.int64)
        row_weights = np.tile(self._weights(decay), count) / count
        starts = rows * self.n + lo  # where each bucket begins in the flat order
        if not sample or top_k is None or int((hi - lo).sum()) <= self._exact_members:
            return top_scores(self._summed(order, starts, hi - lo, row_weights), u, top_k, similarity_cutoff)
        large = (hi - lo) > max(self._bucket_cap, sample)
        sizes = np.where(large, 0, hi - lo)
        read = self._summed(order, starts, sizes, row_weights)  # the small buckets: exact
        picks = ((np.arange(sample) + 0.5) / sample)  # a systematic sample's positions in a bucket
        at = (starts[large, None] + (picks[None, :] * (hi - lo)[large, None]).astype(np.int64)).reshape(-1)
        estimate = read + np.bincount(order.reshape(-1)[at], weights=np.repeat(row_weights[large], sample),
                                      minlength=self.n)
        estimate[u] = 0.0
        candidates = np.flatnonzero(estimate)
        wanted = max(self._sample_candidates, 2 * top_k)
        if len(candidates) > wanted:
            candidates = np.sort(candidates[np.argpartition(-estimate[candidates], wanted - 1)[:wanted]])
        scores = read[candidates] + self._large_sums(u, candidates, rows[large], row_weights[large])
        pages, values = top_pages(candidates, scores, u, top_k, similarity_cutoff)
        # A page left out scores at most its small buckets' sum and every large bucket's weight.
        read[candidates], read[u] = 0.0, 0.0
        bound = read.max() + row_weights[large].sum()
        if not (bound < values[-1] - 1e-12 if len(pages) == top_k else bound <= similarity_cutoff):
            self.lists_sampled += 1
        return list(zip(pages.tolist(), values.tolist()))

    def _summed(self, order: np.ndarray, starts: np.ndarray, sizes: np.ndarray, row_weights: np.ndarray) -> np.ndarray:
        """Every page's summed weight over the buckets (``starts`` in the flat order, ``sizes``)."""
        where = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))
        return np.bincount(order.reshape(-1)[where], weights=np.repeat(row_weights, sizes), minlength=self.n)

    def _large_sums(self, u: int, pages: np.ndarray, rows: np.ndarray, row_weights: np.ndarray) -> np.ndarray:
        """Each of ``pages``' summed weight over the buckets of u's ``rows`` it shares (its min-hash is u's)."""
        sums = np.zeros(len(pages))
        _shared_weights(self.values.reshape(-1, self.n), u, pages, rows, row_weights, sums)
        return sums


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
