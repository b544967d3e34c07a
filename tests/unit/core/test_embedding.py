"""The link embedding's solver: the Gram operator against the features it stands for, randomized
subspace iteration against dense eigendecompositions, its bound-free guarantees (near-optimal
low-rank error), and the same vectors from the same seed."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.embedding import FLOOR, LinkGram, link_embedding, link_features
from linksim.graph import LinkGraph
from linksim.lowrank import leading_eigenvectors


def random_graph(seed: int, n: int, m: int, self_loops: bool = False) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n, self_loops=self_loops)


def dense_operator(matrix: np.ndarray):
    def apply(source, first, width, out, out_first):
        out[:, out_first : out_first + width] = matrix @ source[:, first : first + width].astype(np.float64)
    return apply


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("self_loops", [False, True])
def test_the_gram_operator_multiplies_by_the_features_gram_matrix(threads, self_loops) -> None:
    graph = random_graph(5, 300, 1_800, self_loops)
    features = link_features(graph)
    gram = (features @ features.T).toarray()
    operator = LinkGram(graph, threads=threads)
    block = np.random.default_rng(0).standard_normal((graph.n, 20)).astype(np.float32)
    expected = gram @ block[:, 3:10].astype(np.float64)
    out = np.zeros((graph.n, 9), dtype=np.float32)
    operator(block, 3, 7, out, 2)
    np.testing.assert_allclose(out[:, 2:9], expected, rtol=0, atol=2e-5)
    assert not out[:, :2].any()
    operator(block, 3, 7, block, 3)  # in place: the columns read before any is written
    np.testing.assert_array_equal(block[:, 3:10], out[:, 2:9])
    np.testing.assert_array_equal(operator.featured, np.asarray(features.getnnz(axis=1)) > 0)
    operator.close()


def test_a_spectrum_with_a_gap_gives_the_leading_eigenpairs() -> None:
    rng = np.random.default_rng(1)
    n = 400
    basis, _ = np.linalg.qr(rng.standard_normal((n, n)))
    values = np.concatenate([np.linspace(20, 10, 12), np.linspace(1, 0.01, n - 12)])
    matrix = (basis * values) @ basis.T
    vectors, found = leading_eigenvectors(dense_operator(matrix), n, rank=12, oversample=8, passes=6, seed=3)
    assert vectors.shape == (n, 12) and vectors.dtype == np.float32 and vectors.flags.c_contiguous
    np.testing.assert_allclose(found, values[:12], rtol=1e-5)
    np.testing.assert_allclose(vectors.T.astype(float) @ vectors.astype(float), np.eye(12), atol=1e-5)
    # the same subspace: each leading eigenvector lies in it
    inside = np.linalg.norm(vectors.T.astype(float) @ basis[:, :12], axis=0)
    np.testing.assert_allclose(inside, 1.0, atol=1e-5)


def test_an_operator_of_low_rank_gives_fewer_directions_not_noise() -> None:
    rng = np.random.default_rng(2)
    n = 200
    factor = rng.standard_normal((n, 5))
    vectors, values = leading_eigenvectors(dense_operator(factor @ factor.T), n, rank=30, seed=0)
    assert vectors.shape == (n, 5) and len(values) == 5
    np.testing.assert_allclose(np.sort(values)[::-1], np.sort(np.linalg.eigvalsh(factor.T @ factor))[::-1],
                               rtol=1e-4)
    zero, none = leading_eigenvectors(dense_operator(np.zeros((n, n))), n, rank=4, seed=0)
    assert zero.shape == (n, 0) and len(none) == 0


def test_the_rank_k_approximation_is_near_the_best_one() -> None:
    """Halko et al.'s guarantee, not convergence: the features projected on the embedding's span
    lose at most a little more than the truncated SVD's optimal rank-k error (Frobenius)."""
    graph = random_graph(7, 600, 4_000)
    features = link_features(graph).toarray()
    rank = 40
    vectors, values = leading_eigenvectors(LinkGram(graph), graph.n, rank, seed=0)
    singular = np.linalg.svd(features, compute_uv=False)
    optimal = (singular[rank:] ** 2).sum()
    basis = vectors.astype(np.float64)
    residual = np.linalg.norm(features - basis @ (basis.T @ features)) ** 2
    assert optimal <= residual <= 1.05 * optimal
    assert np.all(values <= singular[: len(values)] ** 2 * (1 + 1e-6))  # Ritz values never overshoot


def test_the_embedding_rows_are_unit_or_zero_and_the_same_from_the_same_seed() -> None:
    graph = random_graph(8, 500, 2_500)
    first = link_embedding(graph, 30, seed=4)
    again = link_embedding(graph, 30, seed=4)
    other = link_embedding(graph, 30, seed=5)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    norms = np.linalg.norm(first.astype(np.float64), axis=1)
    linked = graph.neighbour_matrix("both").getnnz(axis=1) > 0
    np.testing.assert_allclose(norms[linked & (norms > 0)], 1.0, atol=1e-6)
    assert not first[~linked].any()
    # After Rayleigh-Ritz, Q^T M Q is diagonal: the rows of Q Λ^½ have the inner products of the
    # rows of Q Q^T X, the features projected on the block's span, so the embedding's cosines are theirs.
    features = link_features(graph).toarray()
    vectors, _ = leading_eigenvectors(LinkGram(graph), graph.n, 30, seed=4)
    basis = vectors.astype(np.float64)
    projected = basis @ (basis.T @ features)
    lengths = np.linalg.norm(projected, axis=1)
    kept = lengths >= FLOOR
    np.testing.assert_array_equal(norms > 0, kept)
    unit = projected[kept] / lengths[kept, None]
    mine = first[kept].astype(np.float64)
    np.testing.assert_allclose(mine @ mine.T, unit @ unit.T, atol=2e-4)
