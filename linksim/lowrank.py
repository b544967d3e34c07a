"""The leading eigenvectors of a large positive semi-definite operator, in the memory of one
n x l float32 block: randomized subspace iteration.

Halko, Martinsson & Tropp, *Finding structure with randomness* (SIAM Review 2011): a Gaussian
block of l = k + p columns (p the oversampling), ``passes`` multiplications by the operator M, each
followed by re-orthonormalization (their Algorithm 4.4: without it the columns collapse onto the
first eigenvector in floating point), then Rayleigh-Ritz on the block (their Algorithm 5.3's
eigendecomposition of Q^T M Q). After q passes the error in the i-th direction falls like
(lambda_{l+1} / lambda_i)^q, so a few passes suffice where the spectrum falls away from the k-th
eigenvalue; block Krylov (Musco & Musco, NeurIPS 2015) converges faster in passes but keeps every
pass's block, q + 1 times the memory, which is what this module exists to avoid.

Memory: the block itself (n x l float32), updated in place a few columns at a time, so that the
operator's own scratch is n x ``block`` (:data:`BLOCK` columns) rather than another n x l; and
l x l float64 matrices. The orthonormalization is SVQB (Stathopoulos & Wu, SIAM J. Sci. Comput.
2002): the Gram matrix of the block, accumulated in float64 over row chunks, its eigenvectors
scaled by the inverse square roots of its eigenvalues; done twice, as CholeskyQR2 is, because one
pass in float32 leaves the columns orthonormal only to the square of the block's condition. A
direction of eigenvalue below :data:`DROP` of the largest is dropped rather than blown up, so an
operator of rank below l gives fewer columns, not noise.

Every step is a fixed sequence of float operations from the seed: the same operator and seed give
the same vectors on the same machine, whatever its number of cores. The dense products run on one
BLAS thread (:func:`one_blas_thread`): OpenBLAS splits a product's sums between its threads, so
that a Gram matrix computed on two threads differs in its last bits from one computed on one, and
Spark's executors (:mod:`linksim.spark_lowrank`), one thread each, compute the same products.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

#: Columns multiplied by the operator at once (its scratch is n x BLOCK): each multiplication
#: walks every link once a block, so a wider block walks them fewer times (a column's sums do not
#: depend on the block: the same vectors).
BLOCK = 32
CHUNK = 65_536  #: rows of the block converted to float64 at once for a Gram matrix or a rotation
#: A direction whose squared length in the block is below this share of the largest is dropped:
#: float32 columns are orthonormal to about 1e-7, so their Gram matrix's eigenvalues below 1e-10
#: of the largest are rounding.
DROP = 1e-10

#: ``apply(source, first, width, out, out_first)`` writes M @ source[:, first:first + width] into
#: out[:, out_first:out_first + width] (C-contiguous n x * float32 arrays; out may be source, the
#: same columns: they are read whole before any is written).
Operator = Callable[[np.ndarray, int, int, np.ndarray, int], None]


def one_blas_thread():
    """A context in which numpy's products run on one BLAS thread (their floats then do not depend
    on the cores a process may use)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _gram(block: np.ndarray) -> np.ndarray:
    """block^T block in float64, accumulated over row chunks."""
    columns = block.shape[1]
    gram = np.zeros((columns, columns))
    for start in range(0, len(block), CHUNK):
        rows = block[start : start + CHUNK].astype(np.float64)
        gram += rows.T @ rows
    return gram


def _rotate(work: np.ndarray, columns: int, rotation: np.ndarray) -> None:
    """work[:, :r] = work[:, :columns] @ rotation (columns x r), in place, a row chunk at a time."""
    r = rotation.shape[1]
    for start in range(0, len(work), CHUNK):
        rows = work[start : start + CHUNK, :columns].astype(np.float64)
        work[start : start + CHUNK, :r] = rows @ rotation


def _kept(values: np.ndarray) -> np.ndarray:
    """Which eigenvalues are above :data:`DROP` of the largest (the others are rounding)."""
    return values > DROP * max(values.max(initial=0.0), np.finfo(float).tiny)


def svqb_rotation(gram: np.ndarray) -> np.ndarray | None:
    """The rotation (columns x kept) that makes a block of Gram matrix ``gram`` orthonormal: its
    kept eigenvectors, largest first, scaled by the inverse square roots of their eigenvalues
    (SVQB); None when no direction is kept."""
    values, vectors = np.linalg.eigh(gram)
    keep = _kept(values)
    if not keep.any():
        return None
    return vectors[:, keep][:, ::-1] / np.sqrt(values[keep][::-1])


def ritz_pairs(projected: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """(values, vectors): the at most ``rank`` leading kept eigenpairs of Q^T M Q, decreasing."""
    values, vectors = np.linalg.eigh((projected + projected.T) / 2)
    order = np.argsort(-values, kind="stable")[:rank]
    values, vectors = values[order], vectors[:, order]
    keep = _kept(values)
    return values[keep], vectors[:, keep]


def _orthonormalize(work: np.ndarray, columns: int) -> int:
    """Orthonormalize work[:, :columns] in place (SVQB, twice); returns how many columns remain."""
    for _ in range(2):
        rotation = svqb_rotation(_gram(work[:, :columns]))
        if rotation is None:
            return 0
        _rotate(work, columns, rotation)
        columns = rotation.shape[1]
    return columns


def _multiply(apply: Operator, work: np.ndarray, columns: int, block: int) -> None:
    """work[:, :columns] = M @ work[:, :columns], in place, ``block`` columns at a time."""
    for start in range(0, columns, block):
        apply(work, start, min(block, columns - start), work, start)


def _compact(work: np.ndarray, columns: int) -> np.ndarray:
    """work[:, :columns] moved to the front of work's buffer, as a C-contiguous n x columns view
    (a row moves to an offset no later than its own, so rows not yet moved are never overwritten)."""
    flat = work.reshape(-1)
    for start in range(0, len(work), CHUNK):
        rows = work[start : start + CHUNK, :columns]
        flat[start * columns : (start + len(rows)) * columns] = rows.reshape(-1)  # overlap: numpy buffers
    return flat[: len(work) * columns].reshape(len(work), columns)


def leading_eigenvectors(apply: Operator, n: int, rank: int, oversample: int = 10, passes: int = 4,
                         seed: int = 0, block: int = BLOCK, progress: Callable[[str], None] | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """The (at most) ``rank`` leading eigenpairs of the n x n symmetric positive semi-definite
    operator M that ``apply`` multiplies by: (vectors, n x r float32 with orthonormal columns, a
    C-contiguous view of the one block this allocates; values, r float64, decreasing), r <= rank, fewer when
    M has fewer eigenvalues above :data:`DROP` of its largest. ``passes`` + 1 multiplications of
    the block."""
    with one_blas_thread():
        return _leading_eigenvectors(apply, n, rank, oversample, passes, seed, block, progress)


def _leading_eigenvectors(apply: Operator, n: int, rank: int, oversample: int, passes: int, seed: int, block: int,
                          progress: Callable[[str], None] | None) -> tuple[np.ndarray, np.ndarray]:
    width = min(n, rank + oversample)
    if width < 1:
        return np.zeros((n, 0), dtype=np.float32), np.zeros(0)
    work = np.empty((n, width), dtype=np.float32)
    generator = np.random.default_rng(seed)
    for start in range(0, n, CHUNK):
        rows = work[start : start + CHUNK]
        rows[:] = generator.standard_normal(rows.shape, dtype=np.float32)
    columns = _orthonormalize(work, width)
    for step in range(passes):
        if progress:
            progress(f"subspace iteration {step + 1} of {passes} ({columns} columns)")
        _multiply(apply, work, columns, block)
        columns = _orthonormalize(work, columns)
        if not columns:
            return np.zeros((n, 0), dtype=np.float32), np.zeros(0)
    # Rayleigh-Ritz: T = Q^T M Q, block columns at a time, M Q never stored whole.
    projected = np.zeros((columns, columns))
    out = np.empty((n, min(block, columns)), dtype=np.float32)
    for start in range(0, columns, block):
        width = min(block, columns - start)
        apply(work, start, width, out, 0)
        for first in range(0, n, CHUNK):
            projected[:, start : start + width] += (work[first : first + CHUNK, :columns].astype(np.float64).T
                                                    @ out[first : first + CHUNK, :width].astype(np.float64))
    del out
    values, vectors = ritz_pairs(projected, rank)
    _rotate(work, columns, vectors)
    return _compact(work, len(values)), values
