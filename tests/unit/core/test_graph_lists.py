"""The both-ways neighbour lists of a LinkGraph, merged in place, against the COO matrix of both
directions that they replace."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from linksim.graph import LinkGraph


def _coo_both(graph: LinkGraph) -> sp.csr_matrix:
    """Both directions as a COO matrix summed and sorted: what both_lists must equal."""
    source, target = graph.edges()
    keep = source != target
    source, target = source[keep], target[keep]
    matrix = sp.csr_matrix((np.ones(2 * len(source)), (np.r_[source, target], np.r_[target, source])),
                           shape=(graph.n, graph.n))
    matrix.sum_duplicates()
    matrix.sort_indices()
    matrix.data[:] = 1.0
    return matrix


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("self_loops", [False, True])
def test_both_lists_are_the_union_of_in_and_out_links_without_self_links(seed: int, self_loops: bool) -> None:
    rng = np.random.default_rng(seed)
    n, m = 400, 3_000
    source = rng.integers(0, n, m)
    target = np.where(rng.random(m) < 0.2, source, rng.integers(0, n - 40, m))  # self-links; 40 pages without in-links
    back = rng.random(m) < 0.3  # reciprocal links: a page both parent and child counts once
    graph = LinkGraph.from_edges(np.r_[source, target[back]], np.r_[target, source[back]], n + 5,
                                 self_loops=self_loops)
    indptr, indices = graph.both_lists()
    expected = _coo_both(graph)
    assert indptr.dtype == np.int64 and indices.dtype == np.int32
    np.testing.assert_array_equal(indptr, expected.indptr)
    np.testing.assert_array_equal(indices, expected.indices)
    assert not any(u in indices[indptr[u]:indptr[u + 1]] for u in range(graph.n))
    assert (indptr[-6:] == indptr[-1]).all()  # the 5 pages without links have empty rows
    for u in rng.choice(graph.n, 30, replace=False).tolist():
        row = indices[indptr[u]:indptr[u + 1]]
        union = set(graph.out_links(u).tolist()) | set(graph.in_indices[graph.in_indptr[u]:graph.in_indptr[u + 1]].tolist())
        assert row.tolist() == sorted(union - {u})
    matrix = graph.neighbour_matrix("both")
    assert (matrix != expected).nnz == 0 and (matrix.data == 1.0).all()
