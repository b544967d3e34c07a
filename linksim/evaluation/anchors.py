"""The anchors related pages are measured against: what GDS, networkx and the search engines that
shipped related pages compute from the same links, for every page of a (labelled, small) crawl.

Every anchor gives each page its ``top`` best pages (positive scores, the page itself left out,
ties broken by the smaller page number, as :func:`linksim.evaluation.top_lists_from_matrix` does):

- ``jaccard-in``, ``jaccard-out``, ``jaccard-both``: 1-step Jaccard of the in-link sets, of the
  out-link sets, of the neighbour sets over links both ways (GDS ``nodeSimilarity`` on a
  REVERSE, NATURAL and UNDIRECTED projection);
- ``cocitation``: the number of pages linking to both (Small 1973);
- ``cosine-in``: the cosine of the in-link sets, ``|I(u) ∩ I(v)| / sqrt(|I(u)| |I(v)|)``: the website
  similarity of the Marginalia search engine (its "Creepy Website Similarity" note, 2022: the
  incident links of each site as a sparse vector, nearest neighbours by cosine), here on the host
  graph as on pages;
- ``adamic-adar``: shared neighbours (links both ways), each weighted ``1 / ln(its degree)``
  (Adamic & Adar 2003; networkx ``adamic_adar_index``);
- ``hub-cosine``: the related-sites measure of the Marginalia search engine: the shared neighbours
  (links both ways), each weighted ``1 / ln(2 + its degree)``, over ``sqrt(|N(u)| |N(v)|)``;
- ``cocitation-dh``: Dean & Henzinger's Cocitation algorithm (WWW 1999, Section 2.2): up to
  B = 2,000 parents of the page (drawn with a seed when it has more), from each parent up to BF = 8
  of its children around the link to the page (4 before, 4 after in the parent's link order, which
  here is the order of page numbers: a crawl keeps no link positions), ranked by how many of those
  parents link to them. The paper's fallback to the URL with a path element removed is not made.

Self-links are ignored. Scores come from sparse products: fine for the labelled crawls the
evaluation reads (thousands of pages); a crawl of millions of pages with hubs would need far more
memory (the products' entries grow with the square of the hubs' degrees).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp

from linksim.graph import LinkGraph

Lists = dict[int, list[tuple[int, float]]]


def neighbour_matrix(graph: LinkGraph, direction: str) -> sp.csr_matrix:
    """0/1 matrix of u's in-links, out-links or both (:meth:`LinkGraph.neighbour_matrix`)."""
    return graph.neighbour_matrix(direction)


def top_lists_from_sparse(scores: sp.spmatrix, top: int = 100, rows: np.ndarray | None = None) -> Lists:
    """Every row's ``top`` best positive entries, the row's own page left out, ties by the smaller
    column; row i is page ``rows[i]`` (default: page i)."""
    scores = sp.csr_matrix(scores)
    rows = np.arange(scores.shape[0]) if rows is None else np.asarray(rows)
    lists: Lists = {}
    for i, u in enumerate(rows.tolist()):
        begin, end = scores.indptr[i], scores.indptr[i + 1]
        columns, values = scores.indices[begin:end], scores.data[begin:end]
        keep = (values > 0) & (columns != u)
        columns, values = columns[keep], values[keep]
        order = np.lexsort((columns, -np.round(values, 12)))[:top]
        lists[u] = [(int(columns[i]), float(values[i])) for i in order]
    return lists


def _shared(matrix: sp.csr_matrix, rows: np.ndarray | None, weights: np.ndarray | None = None) -> sp.coo_matrix:
    """The rows ``rows`` (all: None) of ``matrix · W · matrix^T`` (W the diagonal of ``weights``)."""
    left = matrix if rows is None else matrix[rows]
    if weights is not None:
        left = left @ sp.diags(weights)
    return (left @ matrix.T).tocoo()


def _rescaled(shared: sp.coo_matrix, values: np.ndarray) -> sp.csr_matrix:
    return sp.csr_matrix((values, (shared.row, shared.col)), shape=shared.shape)


def _sizes(matrix: sp.csr_matrix) -> np.ndarray:
    return np.asarray(matrix.sum(axis=1)).ravel()


def _jaccard(matrix: sp.csr_matrix, rows: np.ndarray | None = None) -> sp.csr_matrix:
    shared = _shared(matrix, rows)
    sizes = _sizes(matrix)
    own = sizes if rows is None else sizes[rows]
    return _rescaled(shared, shared.data / (own[shared.row] + sizes[shared.col] - shared.data))


def _cosine(matrix: sp.csr_matrix, rows: np.ndarray | None, weights: np.ndarray | None = None) -> sp.csr_matrix:
    shared = _shared(matrix, rows, weights)
    sizes = _sizes(matrix)
    own = sizes if rows is None else sizes[rows]
    return _rescaled(shared, shared.data / np.sqrt(own[shared.row] * sizes[shared.col]))


def _degree(matrix: sp.csr_matrix) -> np.ndarray:
    return np.asarray(matrix.sum(axis=0)).ravel()


def jaccard_in(graph: LinkGraph, top: int, rows: np.ndarray | None = None) -> Lists:
    return top_lists_from_sparse(_jaccard(neighbour_matrix(graph, "in"), rows), top, rows)


def jaccard_out(graph: LinkGraph, top: int, rows: np.ndarray | None = None) -> Lists:
    return top_lists_from_sparse(_jaccard(neighbour_matrix(graph, "out"), rows), top, rows)


def jaccard_both(graph: LinkGraph, top: int, rows: np.ndarray | None = None) -> Lists:
    return top_lists_from_sparse(_jaccard(neighbour_matrix(graph, "both"), rows), top, rows)


def cocitation(graph: LinkGraph, top: int, rows: np.ndarray | None = None) -> Lists:
    return top_lists_from_sparse(_shared(neighbour_matrix(graph, "in"), rows), top, rows)


def cosine_in(graph: LinkGraph, top: int, rows: np.ndarray | None = None) -> Lists:
    return top_lists_from_sparse(_cosine(neighbour_matrix(graph, "in"), rows), top, rows)


def adamic_adar(graph: LinkGraph, top: int, rows: np.ndarray | None = None) -> Lists:
    both = neighbour_matrix(graph, "both")
    # A shared neighbour has degree 2 at least; the others never enter the product.
    weights = np.divide(1.0, np.log(np.maximum(_degree(both), 2.0)))
    return top_lists_from_sparse(_shared(both, rows, weights), top, rows)


def hub_cosine(graph: LinkGraph, top: int, rows: np.ndarray | None = None) -> Lists:
    both = neighbour_matrix(graph, "both")
    return top_lists_from_sparse(_cosine(both, rows, 1.0 / np.log(2.0 + _degree(both))), top, rows)


def dean_henzinger(graph: LinkGraph, top: int, parents_kept: int = 2000, siblings_per_parent: int = 8,
                   seed: int = 0) -> Lists:
    """Dean & Henzinger's Cocitation algorithm (see the module's docstring)."""
    parents_of = neighbour_matrix(graph, "in")
    children_of = neighbour_matrix(graph, "out")
    rng = np.random.default_rng(seed)
    half = siblings_per_parent // 2
    lists: Lists = {}
    for u in range(graph.n):
        parents = parents_of.indices[parents_of.indptr[u]:parents_of.indptr[u + 1]]
        if len(parents) > parents_kept:
            parents = np.sort(rng.choice(parents, parents_kept, replace=False))
        siblings = []
        for p in parents:
            children = children_of.indices[children_of.indptr[p]:children_of.indptr[p + 1]]
            at = int(np.searchsorted(children, u))
            around = np.concatenate([children[max(0, at - half):at], children[at + 1:at + 1 + half]])
            siblings.append(around)
        if not siblings:
            lists[u] = []
            continue
        candidates = np.unique(np.concatenate(siblings))
        if len(candidates) == 0:
            lists[u] = []
            continue
        # Degree of cocitation with u: how many of the parents kept link to the sibling.
        chosen = sp.csr_matrix((np.ones(len(parents)), (np.zeros(len(parents), dtype=np.int64), parents)),
                               shape=(1, graph.n))
        degree = np.asarray((chosen @ children_of[:, candidates]).todense()).ravel()
        order = np.lexsort((candidates, -degree))[:top]
        lists[u] = [(int(candidates[i]), float(degree[i])) for i in order if degree[i] > 0]
    return lists


#: The anchors by name: (what it is, lists(graph, top)).
ANCHORS: dict[str, tuple[str, Callable[..., Lists]]] = {
    "jaccard-in": ("1-step Jaccard of in-links (GDS nodeSimilarity, REVERSE)", jaccard_in),
    "jaccard-out": ("1-step Jaccard of out-links (GDS nodeSimilarity, NATURAL)", jaccard_out),
    "jaccard-both": ("1-step Jaccard, links both ways (GDS nodeSimilarity, UNDIRECTED)", jaccard_both),
    "cocitation": ("co-citation: pages linking to both", cocitation),
    "cosine-in": ("cosine of the in-link sets (Marginalia's website similarity)", cosine_in),
    "adamic-adar": ("Adamic-Adar, links both ways", adamic_adar),
    "hub-cosine": ("cosine, links both ways, shared neighbours weighted 1/ln(2+degree) (Marginalia)", hub_cosine),
    "cocitation-dh": ("Dean & Henzinger's Cocitation algorithm (B = 2000, BF = 8)", dean_henzinger),
}


#: Pages whose rows of a product one step of :func:`anchor_lists` computes for a set of pages.
ROWS_A_STEP = 256


def anchor_lists(graph: LinkGraph, name: str, top: int = 100, pages=None) -> Lists:
    """The lists of anchor ``name`` (:data:`ANCHORS`) for every page of ``graph``, or for
    ``pages`` only: their rows of the products, :data:`ROWS_A_STEP` pages at a time, so that a
    sample of a crawl of millions of pages with hubs is graded in the memory of a few rows (the
    same lists as for every page; Dean & Henzinger's draws parents for every page and takes no set)."""
    if pages is None:
        return ANCHORS[name][1](graph, top)
    if name == "cocitation-dh":
        raise ValueError("cocitation-dh lists every page; it takes no set of pages")
    pages = np.unique(np.asarray(pages, dtype=np.int64))
    lists: Lists = {}
    for start in range(0, len(pages), ROWS_A_STEP):
        lists.update(ANCHORS[name][1](graph, top, pages[start : start + ROWS_A_STEP]))
    return lists


#: Rows of vectors one step of :func:`nearest_lists` compares with every row.
VECTOR_ROWS_A_STEP = 1024


def nearest_lists(vectors: np.ndarray, top: int = 100) -> Lists:
    """Each row's ``top`` rows of largest positive cosine (exact kNN of an embedding: the anchor
    of an embedding a server computes, as GDS's FastRP), the row itself left out, ties by the
    smaller row; a zero row gets and gives no list entry."""
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    unit = np.divide(vectors, norms[:, None], out=np.zeros_like(vectors), where=norms[:, None] > 0)
    lists: Lists = {}
    for start in range(0, len(unit), VECTOR_ROWS_A_STEP):
        cosines = unit[start : start + VECTOR_ROWS_A_STEP] @ unit.T
        for i, row in enumerate(cosines):
            u = start + i
            row[u] = 0.0
            columns = np.flatnonzero(row > 0)
            order = np.lexsort((columns, -np.round(row[columns], 12)))[:top]
            lists[u] = [(int(columns[j]), float(row[columns[j]])) for j in order]
    return lists
