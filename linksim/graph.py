"""The link graph in compressed sparse row form, as every algorithm of linksim reads it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from numba import njit

from linksim.errors import LinksimError


class GraphError(LinksimError):
    """A link graph that cannot be built from the arrays given."""


@dataclass(frozen=True)
class LinkGraph:
    """A directed graph of ``n`` pages, links stored by source (CSR) and by target (CSC).

    Build it with :meth:`from_edges`. Page ``i`` is row ``i``; ``keys[i]`` (optional) names it.

    Attributes
    ----------
    n : int
        Number of pages.
    out_indptr, out_indices : ndarray
        Out-links: the targets of page ``u`` are ``out_indices[out_indptr[u]:out_indptr[u+1]]``.
    in_indptr, in_indices : ndarray
        In-links: the sources of page ``v``, sorted.
    keys : sequence, optional
        An identifier per page (URL or id), kept for the write-back.
    draw_codes : ndarray, optional
        The pages' draw codes when given rather than hashed from the keys (see :attr:`codes`).
    """

    n: int
    out_indptr: np.ndarray
    out_indices: np.ndarray
    in_indptr: np.ndarray
    in_indices: np.ndarray
    keys: object = field(default=None, compare=False, repr=False)
    draw_codes: object = field(default=None, compare=False, repr=False)

    @classmethod
    def from_edges(
        cls,
        source: np.ndarray,
        target: np.ndarray,
        n: int | None = None,
        keys: object = None,
        self_loops: bool = False,
        codes: np.ndarray | None = None,
    ) -> "LinkGraph":
        """Build from parallel arrays of page indices (duplicates merged).

        Parameters
        ----------
        source, target : array of int
            One entry per link, indices in ``0 .. n-1``.
        n : int, optional
            Number of pages (pages without links count); default ``max index + 1``.
        keys : sequence, optional
            Identifier of each page.
        self_loops : bool
            Keep links from a page to itself (default: drop them, as the papers do).
        codes : ndarray of uint64, optional
            The pages' draw codes, when not those of ``keys`` (:attr:`codes`).
        """
        source = np.asarray(source, dtype=np.int64)
        target = np.asarray(target, dtype=np.int64)
        if source.shape != target.shape or source.ndim != 1:
            raise GraphError(
                f"source and target must be 1-d arrays of one length, got {source.shape} and {target.shape}"
            )
        if n is None:
            n = int(max(source.max(initial=-1), target.max(initial=-1))) + 1
        if len(source) and (min(source.min(), target.min()) < 0 or max(source.max(), target.max()) >= n):
            raise GraphError(f"page indices must lie in 0..{n - 1}")
        if keys is not None and len(keys) != n:  # type: ignore[arg-type]
            raise GraphError(f"{len(keys)} keys for {n} pages")  # type: ignore[arg-type]
        if not self_loops:
            keep = source != target
            source, target = source[keep], target[keep]
        ones = np.ones(len(source), dtype=np.int8)
        adjacency = sp.csr_matrix((ones, (source, target)), shape=(n, n))
        adjacency.sum_duplicates()
        adjacency.sort_indices()
        transposed = adjacency.tocsc()
        transposed.sort_indices()
        index_type = np.int32 if n < 2**31 and adjacency.nnz < 2**31 else np.int64
        return cls(
            n=n,
            out_indptr=adjacency.indptr.astype(np.int64),
            out_indices=adjacency.indices.astype(index_type),
            in_indptr=transposed.indptr.astype(np.int64),
            in_indices=transposed.indices.astype(index_type),
            keys=keys,
            draw_codes=None if codes is None else np.asarray(codes, dtype=np.uint64),
        )

    @classmethod
    def from_spool(cls, spool, n: int, keys: object = None, self_loops: bool = False) -> "LinkGraph":
        """Build from the pairs of a :class:`~linksim.store.spool.LinkSpool` (duplicates merged),
        the same graph as :meth:`from_edges` of those pairs, bit for bit. When the spool spilled to
        disk, memory holds the two index arrays it builds and one range of pairs at a time: the
        pairs are merged by source range on disk (the out-links, in order), and the reversed pairs
        go through a second spool merged by target range (the in-links)."""
        from linksim.store.spool import PARTITION_LINKS, LinkSpool

        if not spool.spilled:
            source, target = spool.held()
            return cls.from_edges(source, target, n, keys=keys, self_loops=self_loops)
        if keys is not None and len(keys) != n:  # type: ignore[arg-type]
            raise GraphError(f"{len(keys)} keys for {n} pages")  # type: ignore[arg-type]
        try:
            links = spool.aggregate(n)
        except IndexError as error:
            raise GraphError(str(error)) from None
        kept = len(links) - (0 if self_loops else links.self_loops)
        index_type = np.int32 if n < 2**31 and kept < 2**31 else np.int64
        out_degree = np.zeros(n, dtype=np.int64)
        out_indices = np.empty(kept, dtype=index_type)
        reversed_pairs = LinkSpool(root=spool.root)
        try:
            position = 0
            for source, target, _ in links.chunks(PARTITION_LINKS):
                if not self_loops:
                    keep = source != target
                    source, target = source[keep], target[keep]
                out_indices[position : position + len(target)] = target
                position += len(target)
                out_degree += np.bincount(source, minlength=n)
                reversed_pairs.extend(target, source)
            in_links = reversed_pairs.aggregate(n)
            in_indices = np.empty(kept, dtype=index_type)
            in_degree = np.zeros(n, dtype=np.int64)
            position = 0
            for target, source, _ in in_links.chunks(PARTITION_LINKS):
                in_indices[position : position + len(source)] = source
                position += len(source)
                in_degree += np.bincount(target, minlength=n)
        finally:
            reversed_pairs.close()
        out_indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(out_degree, out=out_indptr[1:])
        in_indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(in_degree, out=in_indptr[1:])
        return cls(n=n, out_indptr=out_indptr, out_indices=out_indices, in_indptr=in_indptr,
                   in_indices=in_indices, keys=keys)

    @cached_property
    def codes(self) -> np.ndarray:
        """The draw code of each page (uint64), which its random draws are keyed by
        (:mod:`linksim.fingerprints.randomness`): a hash of its key (URL) when the graph has keys,
        so that a page draws the same numbers wherever the page order puts it (a recrawl that
        adds or deletes pages moves the pages after them); else the page's number. Codes given
        when the graph was built (``draw_codes``) come first."""
        if self.draw_codes is not None:
            return self.draw_codes
        if self.keys is None:
            return np.arange(self.n, dtype=np.uint64)
        return key_codes(self.keys)

    @property
    def m(self) -> int:
        """Number of (distinct) links."""
        return len(self.out_indices)

    @property
    def out_degree(self) -> np.ndarray:
        return np.diff(self.out_indptr)

    @property
    def in_degree(self) -> np.ndarray:
        return np.diff(self.in_indptr)

    def both_lists(self) -> tuple[np.ndarray, np.ndarray]:
        """Every page's neighbours over links both ways, self-links aside, each row in increasing
        order (int64 ``indptr``, int32 ``indices``): the out-lists and in-lists merged row by row,
        compiled, in the memory of the result (at 10^8 links, a COO matrix of both directions and
        its conversion held several times that)."""
        out_indptr, in_indptr = self.out_indptr.astype(np.int64), self.in_indptr.astype(np.int64)
        counts = _merge_rows(out_indptr, self.out_indices, in_indptr, self.in_indices, np.zeros(0, dtype=np.int64),
                             np.zeros(0, dtype=np.int32))
        indptr = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        del counts
        indices = np.empty(int(indptr[-1]), dtype=np.int32)
        _merge_rows(out_indptr, self.out_indices, in_indptr, self.in_indices, indptr, indices)
        return indptr, indices

    def neighbour_matrix(self, direction: str):
        """0/1 CSR matrix whose row u holds u's in-links (``"in"``), out-links (``"out"``) or both
        (``"both"``), self-links left out."""
        import scipy.sparse as sp

        if direction == "both":
            indptr, indices = self.both_lists()
            return sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(self.n, self.n))
        source, target = self.edges()
        keep = source != target
        source, target = source[keep], target[keep]
        rows, columns = (target, source) if direction == "in" else (source, target)
        matrix = sp.csr_matrix((np.ones(len(rows)), (rows, columns)), shape=(self.n, self.n))
        matrix.sum_duplicates()
        matrix.data[:] = 1.0
        return matrix

    def linked(self) -> np.ndarray:
        """Which pages have at least one link other than to themselves (bool, one a page): the
        pages a related-pages list is owed to."""
        source, target = self.edges()
        other = source != target
        mask = np.zeros(self.n, dtype=bool)
        mask[source[other]] = True
        mask[target[other]] = True
        return mask

    def out_links(self, u: int) -> np.ndarray:
        return self.out_indices[self.out_indptr[u] : self.out_indptr[u + 1]]

    def in_links(self, v: int) -> np.ndarray:
        return self.in_indices[self.in_indptr[v] : self.in_indptr[v + 1]]

    def in_links_of(self, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(page, source) pairs of every in-link of the given pages, in one vectorised gather."""
        pages = np.asarray(pages, dtype=np.int64)
        starts = self.in_indptr[pages]
        lengths = self.in_indptr[pages + 1] - starts
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        return np.repeat(pages, lengths), self.in_indices[offsets].astype(np.int64)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(source, target) arrays of every link, sorted by source."""
        source = np.repeat(np.arange(self.n, dtype=np.int64), self.out_degree)
        return source, self.out_indices.astype(np.int64)

    def subgraph(self, keep: np.ndarray) -> tuple["LinkGraph", np.ndarray]:
        """The graph induced by the pages where ``keep`` is true, and their old indices."""
        old = np.flatnonzero(keep)
        new_of = np.full(self.n, -1, dtype=np.int64)
        new_of[old] = np.arange(len(old))
        source, target = self.edges()
        inside = keep[source] & keep[target]
        keys = None if self.keys is None else [self.keys[i] for i in old]  # type: ignore[index]
        codes = None if self.draw_codes is None else self.draw_codes[old]
        graph = LinkGraph.from_edges(new_of[source[inside]], new_of[target[inside]], len(old), keys, codes=codes)
        return graph, old


def key_codes(keys) -> np.ndarray:
    """The draw codes of pages named ``keys`` (:attr:`LinkGraph.codes`): the first 8 bytes of the
    BLAKE2b digest of each key's UTF-8 text, as a little-endian uint64 (a pure function of the
    key, computed alike wherever an index is built or explained)."""
    return np.fromiter(
        (int.from_bytes(hashlib.blake2b(str(key).encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
         for key in keys), dtype=np.uint64, count=len(keys))



@njit(cache=True, nogil=True)
def _merge_rows(a_indptr, a_indices, b_indptr, b_indices, indptr, out):
    """Per row u, the distinct pages of two sorted lists together, u aside, written in increasing
    order into ``out`` from ``indptr[u]`` (unless ``out`` is empty); returns how many each row holds."""
    n = len(a_indptr) - 1
    counts = np.zeros(n, dtype=np.int64)
    write = len(out) > 0
    for u in range(n):
        i, j, end_i, end_j = a_indptr[u], b_indptr[u], a_indptr[u + 1], b_indptr[u + 1]
        last, count = -1, 0
        while i < end_i or j < end_j:
            if j >= end_j or (i < end_i and a_indices[i] <= b_indices[j]):
                v = a_indices[i]
                i += 1
            else:
                v = b_indices[j]
                j += 1
            if v != last and v != u:
                if write:
                    out[indptr[u] + count] = v
                count += 1
            last = v
        counts[u] = count
    return counts
