"""The default's index (spectral P-PSimRank, :mod:`linksim.spectral`) brought up to date with a
recrawl in a fraction of a rebuild, and the lists that the change can reach.

A rebuild computes the embedding's SVD again, and its basis moves everywhere when one link
changes: every page's nearest pages and every list would be made again. An update keeps the basis
and changes only what the recrawl touched:

- **the walks**: P-PSimRank's fingerprints updated bit for bit as the walking methods' are
  (:func:`linksim.fingerprints.update.update_index`);
- **the embedding**: the rows of the pages whose links changed (their in- or out-links: the rows
  of ``X = [W_in | W_out]`` that differ) are *folded in* to the stored basis (Berry, Dumais &
  O'Brien, *Using linear algebra for intelligent information retrieval*, SIAM Review 1995; the
  folding-in of latent semantic indexing): a changed row x is given ``x V``, where ``V = X^T U
  Σ^{-1}`` is the basis of the link features that the build's ``U Σ`` spans, found for only the
  features the changed rows hold (a feature's column of the old X, read from the old graph).
  Every other row keeps its value, so an unchanged page's cosines do not move;
- **the nearest pages**: in place. The rows of the changed pages are searched again (in their
  probed clusters of the stored centroids, as the build searches, or every page below
  :data:`linksim.spectral.ANN_PAGES`), and so is every row that held a deleted page (a delete),
  or below ANN_PAGES a changed one. Above, a row that holds a changed page keeps it, at its new
  cosine: a changed page that fell keeps its place against the row's runners-up, which only a
  search would find, a tail candidate kept for another within the clusters' own misses, where
  searching every such row searched several rows a changed page (issue 65). A row that
  a changed page now beats the last of takes it in (an insert: each changed page's cosines with
  the pages of its probed clusters against each one's last nearest cosine); both are ranked again;
- **the neighbour lists**: the new graph's (a pass over the links).

Folding-in keeps the basis of the build: what it leaves out is what the new links would have
moved it by. Zha & Simon (*On updating problems in latent semantic indexing*, SIAM J. Sci.
Comput. 1999) show its error grows with what is folded; so the update measures the drift, the
share of the link features' weight the embedding held at its build that it no longer holds
(folded rows that the basis does not span hold less), and counts the pages folded since the build:
beyond :data:`DRIFT_LIMIT` or :data:`FOLD_LIMIT`, it refuses and the caller builds again (the
cosine's share of the score stays the build's until then).

The lists a change can reach (:func:`lists_reach`): those of the changed pages; those that hold a
deleted page, or a page that may no longer be a candidate (it lost its last counted shared
neighbour with the page and is not among its nearest); those whose listed changed page's score
moved by more than the walks' noise; and those that a page can now enter (a new co-linked page
through a changed neighbour, a new nearest page, or a page co-linked with a changed page, whose
cosine with it moved): by the bound ``a · cos + (1 − a) · c`` first (c: P-PSimRank's largest
score between two pages), then by the pair's score itself, above the list's last score by more
than the walks' noise (:data:`NOISE_ERRORS` standard errors). A changed page co-linked with a
page before the change scored at most that page's last score then, and its cosine with it moved
by at most how far its row moved: where ``a`` times that is within the noise (on the labelled
generated crawl ``a`` is small enough that every changed page is), its co-linked pages are not
scored. A list outside that reach has the
same candidates and the same cosines; only P-PSimRank's walks through changed pages may move its
scores, by Monte Carlo noise (the relaxation of issue 65): its worth is judged against a rebuild's
by ``benchmarks/recrawl.py --default``.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from linksim.arrays import read_only
from linksim.cores import usable_cores
from linksim.embedding import FLOOR, FeatureWeights, _row_sums
from linksim.errors import ConfigurationError
from linksim.fingerprints.treescan import _exact_scores, _trees_of
from linksim.graph import LinkGraph
from linksim.ranking.colinked import colinked_scores
from linksim.ranking.combined import cosines
from linksim.spectral import Change, list_entries  # noqa: F401 - Change: what an update returns

log = logging.getLogger(__name__)

#: The share of the pages with links folded into the embedding since its build beyond which the
#: basis is computed again (a rebuild).
FOLD_LIMIT = 0.2
#: The loss of the share of the link features' weight the embedding holds (its build's minus now,
#: as a share of the weight) beyond which the basis is computed again (a rebuild).
DRIFT_LIMIT = 0.01


def new_numbers(old_codes: np.ndarray, new_codes: np.ndarray) -> np.ndarray:
    """Each old page's number in the new graph (matched by draw code), -1 where it is gone."""
    order = np.argsort(new_codes, kind="stable")
    ordered = np.asarray(new_codes)[order]
    at = np.minimum(np.searchsorted(ordered, old_codes), max(len(ordered) - 1, 0))
    found = np.full(len(old_codes), -1, dtype=np.int64)
    if len(ordered):
        hit = ordered[at] == old_codes
        found[hit] = order[at[hit]]
    return found


def _carried(graph: LinkGraph, new_of_old: np.ndarray, n: int) -> LinkGraph:
    """``graph``'s links between the pages the new graph keeps, in its page numbers."""
    source, target = graph.edges()
    source, target = new_of_old[source], new_of_old[target]
    kept = (source >= 0) & (target >= 0)
    return LinkGraph.from_edges(source[kept], target[kept], n)


@njit(cache=True, nogil=True)
def _carry_rows(old_rows, new_of_old, out):
    """out[new_of_old[i]] = old_rows[i] for each kept row i (one pass, no gathered copies)."""
    for i in range(len(new_of_old)):
        if new_of_old[i] >= 0:
            out[new_of_old[i]] = old_rows[i]


@njit(cache=True, nogil=True)
def _row_dots(rows, pages, others):
    """rows[pages[k]] · rows[others[k]] for each k (float32), read in place."""
    out = np.empty(len(pages), dtype=np.float32)
    for k in range(len(pages)):
        total = 0.0
        for d in range(rows.shape[1]):
            total += rows[pages[k], d] * rows[others[k], d]
        out[k] = total
    return out


@njit(cache=True, nogil=True)
def _basis_rows(features, indptr, indices, row_scale, scaled, column_scale, inverse_values):
    """Row j of V for each feature of ``features``: ``column_scale[f] / σ² ⊙ Σ row_scale[x] ·
    scaled[x]`` over the x of f's list (the old graph's column of feature f), float32."""
    rank = scaled.shape[1]
    out = np.zeros((len(features), rank), dtype=np.float32)
    total = np.zeros(rank)
    for k in range(len(features)):
        f = features[k]
        total[:] = 0.0
        for position in range(indptr[f], indptr[f + 1]):
            x = indices[position]
            weight = row_scale[x]
            for d in range(rank):
                total[d] += weight * scaled[x, d]
        for d in range(rank):
            out[k, d] = column_scale[f] * total[d] * inverse_values[d]
    return out


@njit(cache=True, nogil=True)
def _add_features(out, k, first, last, indices, weights, slot, rows):
    """out[k] += Σ weights[j] · rows[slot[j]] over the features j of indices[first:last]."""
    for position in range(first, last):
        j = indices[position]
        weight, row = weights[j], slot[j]
        for d in range(rows.shape[1]):
            out[k, d] += weight * rows[row, d]


@njit(cache=True, nogil=True)
def _fold(pages, in_indptr, in_indices, out_indptr, out_indices, parent, child, inverse_norm,
          parent_slot, parent_rows, child_slot, child_rows):
    """x_u V for each of ``pages`` (float64): u's features in the new graph (its parents, then
    its children), each weighted, times its row of V."""
    out = np.zeros((len(pages), parent_rows.shape[1]))
    for k in range(len(pages)):
        u = pages[k]
        _add_features(out, k, in_indptr[u], in_indptr[u + 1], in_indices, parent, parent_slot, parent_rows)
        _add_features(out, k, out_indptr[u], out_indptr[u + 1], out_indices, child, child_slot, child_rows)
        out[k] *= inverse_norm[u]
    return out


def fold_in(old: FeatureWeights, new: FeatureWeights, scaled: np.ndarray, values: np.ndarray, pages: np.ndarray,
            lengths: np.ndarray | None = None) -> np.ndarray:
    """The rows of U Σ of ``pages`` in the new graph's features, projected on the basis of the old
    embedding (``scaled``: its rows of U Σ, in the new page numbers, or its unit rows where
    ``lengths`` gives their lengths; ``values``: Σ²)."""
    n = len(new.featured)
    rank = scaled.shape[1]
    if not len(pages) or rank == 0:
        return np.zeros((len(pages), rank))
    inverse_values = 1.0 / values
    parents = np.unique(list_entries(new.in_indptr, new.in_indices, pages))
    children = np.unique(list_entries(new.out_indptr, new.out_indices, pages))
    # A parent w's column holds its children in the old graph, a child v's its parents.
    row_scale = old.inverse_norm if lengths is None else old.inverse_norm * lengths  # not an (n, rank) product
    kinds = [(parents, old.out_indptr, old.out_indices, old.parent),
             (children, old.in_indptr, old.in_indices, old.child)]
    with ThreadPoolExecutor(min(2, usable_cores())) as pool:  # the two kinds of features apart
        parent_rows, child_rows = pool.map(lambda kind: _basis_rows(*kind[:3], row_scale, scaled, kind[3],
                                                                    inverse_values), kinds)
    parent_slot = np.full(n, -1, dtype=np.int64)
    parent_slot[parents] = np.arange(len(parents))
    child_slot = np.full(n, -1, dtype=np.int64)
    child_slot[children] = np.arange(len(children))
    return _fold(np.asarray(pages, dtype=np.int64), new.in_indptr, new.in_indices, new.out_indptr, new.out_indices,
                 new.parent, new.child, new.inverse_norm, parent_slot, parent_rows, child_slot, child_rows)


def update_spectral_index(before: LinkGraph, index, graph: LinkGraph, show_progress: bool = False,
                          max_share: float = 1.0, check_graph: bool = True):
    """The index of ``graph`` from ``index`` (built with ``keep_walks`` on ``before``): see the
    module. Its ``change`` (:class:`Change`) says what moved, ``changed_pages`` how many pages'
    links changed.

    Raises
    ------
    ConfigurationError
        The index keeps nothing to fold with (an older linksim's, or built on disk or on Spark),
        the walks cannot be updated (:func:`~linksim.fingerprints.update.update_index`), or the
        embedding drifted beyond :data:`DRIFT_LIMIT` or :data:`FOLD_LIMIT`: build it again.
    """
    from linksim.fingerprints.update import changed_pages, update_index
    from linksim.spectral import SpectralIndex, neighbour_lists

    if not getattr(index, "updatable", False):
        raise ConfigurationError("the spectral index keeps no walk state or embedding lengths (built by an older "
                                 "linksim, on disk or on Spark): it is built again")
    fingerprints = update_index(index.fingerprints, before, graph, show_progress=show_progress, max_share=max_share,
                                check_graph=check_graph)
    n = graph.n
    new_of_old = new_numbers(np.asarray(before.codes), np.asarray(graph.codes))
    kept = new_of_old >= 0
    carried = _carried(before, new_of_old, n)
    old = FeatureWeights(carried, before.n)
    new = FeatureWeights(graph, n)
    differs = (changed_pages(old.out_indptr, old.out_indices, new.out_indptr, new.out_indices, n)
               | changed_pages(old.in_indptr, old.in_indices, new.in_indptr, new.in_indices, n))
    folded = np.flatnonzero(differs)

    rank = index.embedding.shape[1]
    embedding = np.zeros((n, rank), dtype=np.float32)
    lengths = np.zeros(n, dtype=np.float32)
    _carry_rows(read_only(np.asarray(index.embedding, dtype=np.float32)), new_of_old, embedding)
    _carry_rows(read_only(np.asarray(index.lengths, dtype=np.float32)), new_of_old, lengths)
    rows = fold_in(old, new, embedding, np.asarray(index.eigenvalues), folded, lengths=lengths)
    norms = np.linalg.norm(rows, axis=1)
    keep = (norms >= FLOOR) & new.featured[folded]
    old_rows = embedding[folded].copy()
    embedding[folded] = np.divide(rows, norms[:, None], out=np.zeros_like(rows), where=keep[:, None])
    moved = np.linalg.norm(embedding[folded] - old_rows, axis=1)
    del old_rows
    lengths[folded] = np.where(keep, norms, 0.0)

    built_held, folded_before = (float(v) for v in index.fold_state)
    featured = max(int(new.featured.sum()), 1)
    held = float(np.square(lengths, dtype=np.float64).sum()) / featured
    folded_total = folded_before + len(folded)
    drift = built_held - held
    if folded_total > FOLD_LIMIT * featured:
        raise ConfigurationError(f"{int(folded_total):,} of {featured:,} pages with links were folded into the link "
                                 f"embedding since it was computed (more than {FOLD_LIMIT:.0%}): it is computed again")
    if drift > DRIFT_LIMIT:
        raise ConfigurationError(f"the link embedding drifted: it holds {held:.3f} of the link features' weight, "
                                 f"{built_held:.3f} when it was computed (more than {DRIFT_LIMIT} lost): it is "
                                 "computed again")

    nearest, page_cluster, nearest_changed, near_gained, near_lost = _update_nearest(index, embedding, new_of_old,
                                                                                    folded)
    indptr, indices = neighbour_lists(graph)
    old_indptr, old_indices = neighbour_lists(carried)
    del carried
    gained, lost = _colinked_changes(folded, old_indptr, old_indices, indptr, indices)
    gained = tuple(np.concatenate(pair) for pair in zip(gained, near_gained))
    lost = tuple(np.concatenate(pair) for pair in zip(lost, near_lost))
    updated = SpectralIndex(fingerprints, embedding, indptr, indices, nearest, share=index.share, lengths=lengths,
                            eigenvalues=np.asarray(index.eigenvalues), centroids=np.asarray(index.centroids),
                            page_cluster=page_cluster, fold_state=np.array([built_held, folded_total]))
    updated.changed_pages = fingerprints.changed_pages
    updated.change = Change(before=index.graph_fingerprint, folded=folded, gained=gained, lost=lost,
                            nearest_changed=nearest_changed, deleted=int((~kept).sum()), drift=drift,
                            folded_share=folded_total / featured, moved=moved)
    log.info("spectral update: %s pages folded into the link embedding (%.1f %% of the pages with links since it "
             "was computed, drift %.4f), %s rows of nearest pages changed", f"{len(folded):,}",
             100 * folded_total / featured, drift, f"{len(nearest_changed):,}")
    return updated


@njit(cache=True, nogil=True)
def _pairs_through(pages, old_indptr, old_indices, new_indptr, new_indices, hub, fill, gained_u, gained_v,
                   lost_u, lost_v):
    """The co-linked pairs that the changed neighbour lists of ``pages`` make and break: through a
    page w that counts as a shared neighbour (``hub`` links or fewer), each neighbour it gained
    with each of its other neighbours (gained, both ways; through the new lists), each neighbour
    it lost with each of its other old neighbours (lost, both ways). ``fill`` False: only counts
    them ``(gained, lost)``; True: writes them into the arrays. (A pair that w's new degree only
    re-weighs is left: its Adamic-Adar score moves the 100th candidate at most, not a score.)"""
    gained, lost = 0, 0
    for w in pages:
        a0, a1 = new_indptr[w], new_indptr[w + 1]
        b0, b1 = old_indptr[w], old_indptr[w + 1]
        if a1 - a0 <= hub:
            gained = _pairs_of_new(new_indices[a0:a1], old_indices[b0:b1], fill, gained_u, gained_v, gained)
        if b1 - b0 <= hub:
            lost = _pairs_of_new(old_indices[b0:b1], new_indices[a0:a1], fill, lost_u, lost_v, lost)
    return gained, lost


@njit(cache=True, nogil=True)
def _pairs_of_new(row, other, fill, out_u, out_v, at):
    """Each page of ``row`` not in ``other`` with each other page of ``row``, both ways, written
    from ``at`` (``fill``) or only counted; returns the count after them."""
    for x in row:
        if (other == x).any():
            continue
        for u in row:
            if u == x:
                continue
            if fill:
                out_u[at], out_v[at] = u, x
                out_u[at + 1], out_v[at + 1] = x, u
            at += 2
    return at


def _colinked_changes(folded: np.ndarray, old_indptr, old_indices, indptr, indices):
    """``(gained, lost)`` co-linked pairs (:func:`_pairs_through`) of the folded pages' changes."""
    from linksim.spectral import HUB_DEGREE

    pages = np.asarray(folded, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    gained, lost = _pairs_through(pages, old_indptr, old_indices, indptr, indices, HUB_DEGREE, False,
                                  empty, empty, empty, empty)
    arrays = [np.empty(gained, dtype=np.int64), np.empty(gained, dtype=np.int64),
              np.empty(lost, dtype=np.int64), np.empty(lost, dtype=np.int64)]
    _pairs_through(pages, old_indptr, old_indices, indptr, indices, HUB_DEGREE, True, *arrays)
    return (arrays[0], arrays[1]), (arrays[2], arrays[3])


def _update_nearest(index, embedding: np.ndarray, new_of_old: np.ndarray, folded: np.ndarray):
    """The nearest pages of the updated embedding, in place (see the module): ``(table, each
    page's cluster, the pages whose row changed, (u, v) pairs of a page v that became or stays
    among u's nearest pages with a new cosine, (u, v) pairs of a page v no longer among them)``."""
    from linksim.ranking.combined import nearest_rows
    from linksim.spectral import NEAR_COSINE, SCAN_BLOCK, SCAN_MARGIN, scan_rows

    n, count = len(embedding), index.nearest.shape[1]
    kept = new_of_old >= 0
    old_table = np.asarray(index.nearest)
    mapped = np.where(old_table >= 0, new_of_old[np.maximum(old_table, 0)], -1)
    table = np.full((n, count), -1, dtype=np.int32)
    table[new_of_old[kept]] = mapped[kept]
    before = table.copy()
    directed = embedding.any(axis=1)
    is_folded = np.zeros(n, dtype=bool)
    is_folded[folded] = True
    dirty = is_folded.copy()
    lost = ((old_table >= 0) & (mapped < 0)).any(axis=1)
    dirty[new_of_old[kept & lost]] = True

    clusters = _Clusters(index, embedding, new_of_old, folded)
    holding = ((table >= 0) & is_folded[np.maximum(table, 0)]).any(axis=1)
    if clusters.clusters is None:
        dirty |= holding  # every page one pool: a search is exact, and cheap below ANN_PAGES
    # Above, a row holding a folded page keeps its pages, the folded ones at their new cosines
    # (re-ranked below): only a page of the old row's runners-up (below its last cosine) could
    # beat a folded page that fell, a tail candidate traded for another, where the clusters' search
    # itself misses some of the nearest pages; so the row is not searched again.
    holders = np.flatnonzero(holding & ~dirty)
    # Inserts: a folded page into the rows of the pages of its probed clusters whose last cosine it
    # beats. Rows are ranked, so that is the cosine with the row's last page; in a row holding
    # folded pages, with its last other page (a folded page that fell is below that line, kept for
    # the runners-up no search looks for), or the smallest of all where every page is folded.
    line = table[:, -1].astype(np.int64)
    full = line >= 0
    rows = table[holders].astype(np.int64)
    other = np.where((rows >= 0) & ~is_folded[np.maximum(rows, 0)], np.arange(count), -1).max(axis=1)
    line[holders] = np.where(other >= 0, rows[np.arange(len(holders)), np.maximum(other, 0)], line[holders])
    threshold = np.full(n, NEAR_COSINE, dtype=np.float32)
    owners = np.flatnonzero(full)
    threshold[owners] = np.maximum(_row_dots(embedding, owners, line[owners]), NEAR_COSINE)
    alone = holders[(other < 0) & full[holders]]
    if len(alone):
        members = table[alone].astype(np.int64)
        threshold[alone] = np.maximum(np.einsum("ijk,ik->ij", embedding[members], embedding[alone]).min(axis=1),
                                      NEAR_COSINE)
    # Deletes and the changed pages' own rows are searched again as the build searches; the
    # folded pages among them take their inserts from the same products.
    table[dirty] = -1
    searched = np.flatnonzero(dirty & directed)
    inserted_u, inserted_x, inserted_p = [], [], []
    if clusters.clusters is None:
        scan_rows(embedding, searched, table)
    width = 2 * count + 1
    for group, pool in clusters.groups(searched):
        for start in range(0, len(group), SCAN_BLOCK):
            block = group[start : start + SCAN_BLOCK]
            products = embedding[block] @ embedding[pool].T
            turned = is_folded[block]
            x, v = np.nonzero(products[turned] >= threshold[pool] - SCAN_MARGIN)
            inserted_u.append(pool[v])
            inserted_x.append(block[turned][x])
            inserted_p.append(products[turned][x, v])
            if clusters.clusters is None:
                continue
            # The build's search: each page's 2 count + 1 best by float32 product among its probed
            # clusters, ranked by exact cosine (faiss's threads cost more than they save here).
            found = np.full((len(block), width), -1, dtype=np.int64)
            if len(pool) > width:
                found[:] = pool[np.argpartition(-products, width - 1, axis=1)[:, :width]]
            else:
                found[:, : len(pool)] = pool[None, :]
            nearest_rows(embedding, block, found, count, NEAR_COSINE, table)
    inserted_u, inserted_x, inserted_p = (np.concatenate(a) if a else np.zeros(0) for a in
                                          (inserted_u, inserted_x, inserted_p))
    inserted_u, inserted_x = inserted_u.astype(np.int64), inserted_x.astype(np.int64)
    keep = ~dirty[inserted_u] & (inserted_u != inserted_x)
    inserted_u, inserted_x, inserted_p = inserted_u[keep], inserted_x[keep], inserted_p[keep]
    patched = np.union1d(holders, inserted_u)
    if len(patched):
        # each patched row: its pages and the best of those inserted into it (a row's count at
        # most: a row whose folded page fell takes in all that beat it), ranked by exact cosine
        order = np.lexsort((-inserted_p, inserted_u))
        inserted_u, inserted_x = inserted_u[order], inserted_x[order]
        slot = np.searchsorted(patched, inserted_u)
        within = np.arange(len(slot)) - np.searchsorted(slot, slot)
        best = within < count
        slot, within, inserted_x = slot[best], within[best], inserted_x[best]
        found = np.full((len(patched), count + (int(within.max()) + 1 if len(within) else 0)), -1, dtype=np.int64)
        found[:, :count] = table[patched]
        found[slot, count + within] = inserted_x
        table[patched] = -1
        parts = np.array_split(np.arange(len(patched)), usable_cores())
        _on_threads([(nearest_rows, embedding, patched[part], found[part], count, NEAR_COSINE, table)
                     for part in parts if len(part)])  # rows apart: each thread writes its own
    log.info("nearest pages: %s rows searched again, %s re-ranked or given an insert", f"{len(searched):,}",
             f"{len(patched):,}")
    changed = np.flatnonzero((table != before).any(axis=1))
    new_rows, old_rows = table[changed], before[changed]
    added = (new_rows >= 0) & ~(new_rows[:, :, None] == old_rows[:, None, :]).any(axis=2)
    removed = (old_rows >= 0) & ~(old_rows[:, :, None] == new_rows[:, None, :]).any(axis=2)
    owner = np.repeat(changed[:, None], count, axis=1)
    # a folded page among a row's nearest pages: its cosine moved
    holds = (table >= 0) & is_folded[np.maximum(table, 0)]
    holder = np.repeat(np.arange(n)[:, None], count, axis=1)
    gained = (np.concatenate([owner[added], holder[holds]]), np.concatenate([new_rows[added], table[holds]]).astype(np.int64))
    lost = (owner[removed], old_rows[removed].astype(np.int64))
    return table, clusters.page_cluster, changed, gained, lost


class _Clusters:
    """The stored clusters of the nearest pages in the new page numbers, the folded pages assigned
    to their nearest centroid (:meth:`linksim.spectral.EmbeddingClusters.from_assignment`); below
    :data:`linksim.spectral.ANN_PAGES` (no centroids) one pool of every page with a direction."""

    def __init__(self, index, embedding: np.ndarray, new_of_old: np.ndarray, folded: np.ndarray) -> None:
        self.n = len(embedding)
        centroids = np.asarray(index.centroids)
        if not len(centroids):
            self.clusters = None
            self.pool = np.flatnonzero(embedding.any(axis=1))
            return
        import faiss

        from linksim.spectral import EmbeddingClusters

        kept = new_of_old >= 0
        cluster = np.full(self.n, -1, dtype=np.int64)
        cluster[new_of_old[kept]] = np.asarray(index.page_cluster)[kept]
        centroids = np.ascontiguousarray(centroids, dtype=np.float32)
        cluster[folded] = -1
        moved = folded[embedding[folded].any(axis=1)]
        if len(moved):
            cluster[moved] = faiss.knn(np.ascontiguousarray(embedding[moved]), centroids, 1,
                                       metric=faiss.METRIC_INNER_PRODUCT)[1][:, 0]
        self.clusters = EmbeddingClusters.from_assignment(embedding, centroids, cluster)

    @property
    def page_cluster(self) -> np.ndarray:
        """Each page's cluster as the index stores it (int32, -1 for none)."""
        if self.clusters is None:
            return np.full(self.n, -1, dtype=np.int32)
        return self.clusters.cluster.astype(np.int32)

    def groups(self, pages: np.ndarray):
        """(pages of one cluster, the pages of its probed clusters) for ``pages`` (with a direction)."""
        if self.clusters is None:
            if len(pages):
                yield pages, self.pool
            return
        of = self.clusters.cluster[pages]
        order = np.argsort(of, kind="stable")
        pages, of = pages[order], of[order]
        starts = np.flatnonzero(np.r_[True, of[1:] != of[:-1]]) if len(of) else np.zeros(0, dtype=np.int64)
        for first, end in zip(starts, np.r_[starts[1:], len(of)]):
            c = int(of[first])
            yield pages[first:end], np.concatenate([self.clusters.of(int(p)) for p in self.clusters.probes[c]])


def page_lists(sources: np.ndarray, indptr: np.ndarray, targets: np.ndarray, scores: np.ndarray,
               codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lists by page code (:class:`linksim.ranking.lists.CodedLists`' arrays) as lists by page
    number of the graph of draw codes ``codes``: ``(indptr, targets, scores)``, a row a page
    (none for a page without a list), -1 for a target the graph no longer has."""
    n = len(codes)
    number = new_numbers(np.asarray(sources), codes)
    lengths = np.diff(indptr)
    present = number >= 0
    counts = np.zeros(n, dtype=np.int64)
    counts[number[present]] = lengths[present]
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=new_indptr[1:])
    # each kept entry's place: its list's new start plus its place in the list
    owner = np.repeat(np.arange(len(lengths)), lengths)
    within = np.arange(int(indptr[-1])) - np.repeat(np.asarray(indptr[:-1], dtype=np.int64), lengths)
    kept = present[owner]
    at = new_indptr[number[owner[kept]]] + within[kept]
    out_targets = np.full(int(new_indptr[-1]), -1, dtype=np.int64)
    out_scores = np.zeros(int(new_indptr[-1]))
    out_targets[at] = new_numbers(np.asarray(targets)[kept], codes)
    out_scores[at] = np.asarray(scores)[kept]
    return new_indptr, out_targets, out_scores


#: A pair's new score must beat a list's last score by this many of P-PSimRank's standard errors
#: (``(1 - a) · c / (2 sqrt N)``: a score of N fingerprints of at most c each) for the list to be
#: made again, and a listed page's score must move by as much: a rebuild with another seed moves
#: scores by that much, so a list within it is as good as a rebuild's (its judged worth, not its
#: floats: ``benchmarks/recrawl.py --default``).
NOISE_ERRORS = 3.0


def lists_reach(index, lists: tuple[np.ndarray, np.ndarray, np.ndarray], top_k: int,
                report: dict | None = None) -> np.ndarray:
    """The pages whose list (of ``top_k``) the update that made ``index`` can have changed beyond
    the Monte Carlo noise of a rebuild, from the lists before it (:func:`page_lists`): see the
    module. Increasing page numbers. ``report``, if given, receives how many lists each cause
    added, in the order they are looked at."""
    counted = report if report is not None else {}

    def note(cause: str) -> None:
        counted[cause] = int(reach.sum()) - sum(counted.values())

    from linksim.spectral import PRUNE_MARGIN

    change = index.change
    n = index.n
    indptr, targets, scores = lists
    reach = np.zeros(n, dtype=bool)
    reach[change.folded] = True
    note("folded")
    is_folded = np.zeros(n, dtype=bool)
    is_folded[change.folded] = True
    lengths = np.diff(indptr)
    owner = np.repeat(np.arange(n), lengths)
    # A list that holds a deleted page, or one that may no longer be a candidate.
    reach[owner[targets < 0]] = True
    note("deleted listed")
    listed = np.sort(owner * np.int64(n) + np.maximum(targets, 0))
    u, v = change.lost
    pair = u * np.int64(n) + v
    at = np.minimum(np.searchsorted(listed, pair), max(len(listed) - 1, 0))
    if len(listed):
        hit = listed[at] == pair
        u, v = u[hit], v[hit]
        # a page that still shares a counted neighbour with u, or is one of its nearest, stays a candidate
        gone = ~_still_candidate(u, v, *index._neighbours, np.asarray(index.nearest))
        reach[u[gone]] = True
    note("lost listed")
    last = np.zeros(n)
    full = lengths >= top_k
    last[full] = scores[indptr[1:][full] - 1]
    walks = index.fingerprints
    share = float(index.share)
    noise = NOISE_ERRORS * (1.0 - share) * float(walks.powers(walks.decay)[1]) / (2.0 * np.sqrt(walks.n_fingerprints))
    index.prepare_all_pages()  # the page-major rows the lists read (made once, kept for them)
    arguments = (index.embedding, share, reach, *index._walk_arguments(None))
    # A listed page that was folded in: its score moved; made again where it moved beyond the noise.
    moved = is_folded[np.maximum(targets, 0)] & (targets >= 0) & ~reach[owner]
    pair_u, pair_v, old = owner[moved], targets[moved], scores[moved]
    order = np.argsort(pair_v, kind="stable")
    _mark_moved(*_grouped(pair_v[order], pair_u[order]), old[order], noise + PRUNE_MARGIN, *arguments)
    note("listed moved")
    # Pages that became candidates (co-linked through a changed page, or nearest), and the pages
    # co-linked with a folded page (their cosine with it moved): scored where the bound reaches.
    cap = float(walks.powers(walks.decay)[1])
    u, v = change.gained
    order = np.argsort(v, kind="stable")
    threshold = last + noise - PRUNE_MARGIN
    xs, offsets, pages = _grouped(v[order], u[order])
    # On every core: a page reached by one thread is reached whichever, so the set is the same.
    spans = np.linspace(0, len(xs), usable_cores() + 1).astype(np.int64)
    _on_threads([(_mark_entering, xs[a:b], offsets[a:b + 1], pages, threshold, cap, *arguments)
                 for a, b in zip(spans[:-1], spans[1:]) if b > a])
    note("gained entering")
    # A folded page x that was a candidate of v and not in its list scored at most its last: its
    # cosine with v moved by at most ``moved``, and only that counts beyond the walks' noise.
    # A page that became a candidate came through a changed page (``gained``, above).
    turned = np.asarray(change.folded, dtype=np.int64)[share * np.asarray(change.moved) > noise - PRUNE_MARGIN]
    _on_threads([(_mark_colinked, part, *index._neighbours, np.zeros(n), np.zeros(n, dtype=np.int32), threshold, cap,
                  *arguments) for part in np.array_split(turned, usable_cores()) if len(part)])
    note("co-linked entering")
    return np.flatnonzero(reach)


def _on_threads(jobs: list) -> None:
    """Run each ``(kernel, *arguments)`` (compiled, ``nogil``) on a thread of its own."""
    if len(jobs) <= 1:
        for kernel, *arguments in jobs:
            kernel(*arguments)
        return
    with ThreadPoolExecutor(len(jobs)) as pool:
        for done in [pool.submit(kernel, *arguments) for kernel, *arguments in jobs]:
            done.result()


def _grouped(keys: np.ndarray, values: np.ndarray):
    """(each key once, offsets into values, values) of pairs sorted by key."""
    keys, values = np.asarray(keys, dtype=np.int64), np.asarray(values, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, dtype=np.int64)
    return keys[starts], np.r_[starts, len(keys)].astype(np.int64), values


@njit(cache=True, nogil=True)
def _still_candidate(us, vs, indptr, indices, weights, nearest):
    """For each pair, is v still a candidate of u: one of u's nearest pages, or a page sharing a
    neighbour with u that counts (weight above 0)? (Both neighbour rows are sorted.)"""
    out = np.zeros(len(us), dtype=np.bool_)
    for k in range(len(us)):
        u, v = us[k], vs[k]
        for c in range(nearest.shape[1]):
            if nearest[u, c] == v:
                out[k] = True
        if out[k]:
            continue
        a, a_end, b, b_end = indptr[u], indptr[u + 1], indptr[v], indptr[v + 1]
        while a < a_end and b < b_end:
            x, y = indices[a], indices[b]
            if x == y:
                if weights[x] > 0.0:
                    out[k] = True
                    break
                a += 1
                b += 1
            elif x < y:
                a += 1
            else:
                b += 1
    return out


@njit(cache=True, nogil=True)
def _scores_with(x, pages, embedding, share, count, length, powers, tree, by_page, page_major):
    """The combined scores of x with ``pages`` as the lists compute them (:mod:`linksim.ranking.combined`;
    P-PSimRank's estimate and the cosine are symmetric, so x's trees serve every page)."""
    starts, stops, intos, depths, _ = _trees_of(x, count, length, tree, by_page)
    walked = _exact_scores(pages, count, length, powers, tree, by_page, starts, stops, intos, depths, page_major)
    return share * cosines(embedding, x, pages) + (1.0 - share) * walked


@njit(cache=True, nogil=True)
def _enter(x, pages, threshold, cap, embedding, share, reach, count, length, powers, tree, by_page, page_major):
    """Mark each of ``pages`` whose score with x beats its ``threshold``: first by the bound
    ``a · cos + (1 - a) · cap``, then by the score itself."""
    keep = np.empty(len(pages), dtype=np.bool_)
    for r in range(len(pages)):
        keep[r] = not reach[pages[r]] and pages[r] != x
    pages = pages[keep]
    if not len(pages):
        return
    bound = share * cosines(embedding, x, pages) + (1.0 - share) * cap
    pages = pages[bound > threshold[pages]]
    if not len(pages):
        return
    score = _scores_with(x, pages, embedding, share, count, length, powers, tree, by_page, page_major)
    for r in range(len(pages)):
        if score[r] > threshold[pages[r]]:
            reach[pages[r]] = True


@njit(cache=True, nogil=True)
def _mark_entering(xs, offsets, pages, threshold, cap, embedding, share, reach, count, length, powers, tree,
                   by_page, page_major):
    for k in range(len(xs)):
        _enter(xs[k], pages[offsets[k]:offsets[k + 1]], threshold, cap, embedding, share, reach, count, length,
               powers, tree, by_page, page_major)


@njit(cache=True, nogil=True)
def _mark_colinked(xs, indptr, indices, weights, acc, touched, threshold, cap, embedding, share, reach, count,
                   length, powers, tree, by_page, page_major):
    for x in xs:
        pages, _ = colinked_scores(x, indptr, indices, weights, acc, touched)
        _enter(x, pages, threshold, cap, embedding, share, reach, count, length, powers, tree, by_page, page_major)


@njit(cache=True, nogil=True)
def _mark_moved(xs, offsets, pages, old, margin, embedding, share, reach, count, length, powers, tree, by_page,
                page_major):
    """Mark each page whose listed score with x (``old``) moved by more than ``margin``."""
    for k in range(len(xs)):
        first, end = offsets[k], offsets[k + 1]
        score = _scores_with(xs[k], pages[first:end], embedding, share, count, length, powers, tree, by_page,
                             page_major)
        for r in range(end - first):
            if abs(score[r] - old[first + r]) > margin:
                reach[pages[first + r]] = True


def warm_up() -> None:
    """Compile (or load from numba's cache) the update's kernels on a three-page graph."""
    pages = np.array([0, 1], dtype=np.int64)
    indptr = np.array([0, 1, 2, 2], dtype=np.int64)
    indices = np.array([1, 2], dtype=np.int32)
    weights = np.ones(3)
    scaled = np.ones((3, 2), dtype=np.float32)
    _row_sums(indptr, indices, weights)
    rows = _basis_rows(pages, indptr, indices, weights, scaled, weights, np.ones(2))
    slot = np.array([0, 1, -1], dtype=np.int64)
    _fold(pages, indptr, indices, indptr, indices, weights, weights, weights, slot, rows, slot, rows)
    _carry_rows(read_only(scaled), slot, np.zeros_like(scaled))
    _row_dots(np.zeros((3, 2), dtype=np.float32), pages, pages)
    _carry_rows(read_only(scaled[:, 0].copy()), slot, np.zeros(3, dtype=np.float32))
    empty = np.zeros(0, dtype=np.int64)
    _pairs_through(pages, indptr, indices, indptr, indices, 200, False, empty, empty, empty, empty)
    _still_candidate(pages, pages, indptr, indices, weights, np.zeros((3, 1), dtype=np.int32))
