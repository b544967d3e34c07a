"""PageRank by power iteration, after Haveliwala, *Efficient Computation of PageRank* (1999).

``Rank_{i+1} = c · M · Rank_i + (1 − c) · p``, where ``M`` spreads a page's rank evenly over its
out-links, ``c`` is the damping factor and ``p`` the teleport (personalization) vector, uniform by
default. Rank vectors are single precision (the paper's Section 4 shows that suffices) while
every sum — the dangling mass, the total rank, the residual — is accumulated in double precision.

Dangling pages (no out-links) are handled in one of two ways:

- ``"uniform"`` (default): their rank is spread over all pages as the teleport vector says
  (uniformly, or by the personalization vector), i.e. they link to every page;
- ``"remove"``: the paper's preprocessing: dangling pages are removed, repeatedly, until none is
  left; PageRank runs on what remains; the removed pages are then added back layer by layer in
  reverse order of removal, each receiving ``(1 − c)/N + c · Σ rank(u)/outdeg(u)`` from its
  ranked parents, and the whole vector is normalised to sum to 1.

Convergence is the L1 norm of ``Rank_{i+1} − Rank_i`` (the paper's residual), computed every
``check_every`` iterations; the result says whether ``tol`` was reached and after how many
iterations. See also :func:`pagerank_blocked` for the block-based strategy of the paper's
Section 3.2, and :mod:`linksim.ordering` for its convergence measures on induced orderings.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import numpy as np
import scipy.sparse as sp

from linksim.cores import usable_cores
from linksim.errors import ConfigurationError
from linksim.parameters import check_parameters
from linksim.graph import LinkGraph

log = logging.getLogger(__name__)

DANGLING = ("uniform", "remove")


@dataclass
class PageRankResult:
    """Ranks and how they were obtained.

    Attributes
    ----------
    ranks : ndarray
        One value per page, summing to 1 (float32 unless ``dtype`` said otherwise).
    iterations : int
        Power iterations run.
    converged : bool
        Whether the residual fell below ``tol`` within ``max_iter`` iterations.
    residual : float
        The last residual computed (L1).
    residuals : list of (iteration, residual)
        Every residual computed, for convergence plots.
    snapshots : dict
        Rank vectors kept at the iterations asked for (``snapshot_every``), for ordering analyses.
    parameters : dict
        The parameters of the run.
    """

    ranks: np.ndarray
    iterations: int
    converged: bool
    residual: float
    residuals: list[tuple[int, float]] = field(default_factory=list)
    snapshots: dict[int, np.ndarray] = field(default_factory=dict)
    parameters: dict[str, object] = field(default_factory=dict)


def _check(damping: float, tol: float, max_iter: int, dangling: str, check_every: int) -> None:
    check_parameters(damping=damping, tol=tol, max_iter=max_iter)
    if dangling not in DANGLING:
        raise ConfigurationError(f"dangling must be one of {', '.join(DANGLING)}, got {dangling!r}")
    if check_every < 1:
        raise ConfigurationError(f"check_every must be at least 1, got {check_every}")


def teleport_vector(n: int, personalization: Mapping[int, float] | np.ndarray | None) -> np.ndarray:
    """The teleport distribution (float64, sums to 1) from weights per page index, or uniform."""
    if personalization is None:
        return np.full(n, 1.0 / n)
    if isinstance(personalization, Mapping):
        vector = np.zeros(n)
        for page, weight in personalization.items():
            if not 0 <= int(page) < n:
                raise ConfigurationError(f"personalization names page {page}, outside 0..{n - 1}")
            vector[int(page)] += float(weight)
    else:
        vector = np.asarray(personalization, dtype=np.float64).copy()
        if vector.shape != (n,):
            raise ConfigurationError(f"personalization vector has shape {vector.shape}, expected ({n},)")
    if (vector < 0).any() or not np.isfinite(vector).all():
        raise ConfigurationError("personalization weights must be finite and non-negative")
    total = vector.sum()
    if total <= 0:
        raise ConfigurationError("personalization weights sum to 0: give at least one positive weight")
    return vector / total


def pagerank(
    graph: LinkGraph,
    damping: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    dangling: str = "uniform",
    personalization: Mapping[int, float] | np.ndarray | None = None,
    dtype: type = np.float32,
    check_every: int = 1,
    snapshot_every: int | None = None,
    threads: int | None = None,
    start: np.ndarray | None = None,
) -> PageRankResult:
    """PageRank of every page of ``graph`` by power iteration.

    Parameters
    ----------
    graph : LinkGraph
        The link graph (self-loops as it holds them; :meth:`LinkGraph.from_edges` drops them).
    damping : float
        The damping factor ``c`` (0 < c < 1), default 0.85.
    tol : float
        Stop when the L1 residual ``||Rank_{i+1} - Rank_i||_1`` is below ``tol`` (default 1e-6).
    max_iter : int
        At most this many iterations (default 100); the result says if it did not converge.
    dangling : {"uniform", "remove"}
        How pages without out-links are treated (see the module docstring).
    personalization : dict or array, optional
        Teleport weights per page index (normalised to sum 1); uniform if None. Dangling rank
        follows the same distribution.
    dtype : numpy float type
        Precision of the rank vectors: float32 (default, as in the paper) or float64.
    check_every : int
        Compute the residual every this many iterations (default 1).
    snapshot_every : int, optional
        Keep a copy of the rank vector every this many iterations (for ordering diagnostics).
    threads : int, optional
        Threads for the sparse product (default: the machine's cores, at most 8). The result
        does not depend on it: each row is summed by one thread in the same order.
    start : array, optional
        The vector to iterate from (normalised to sum 1), default the teleport vector. A warm
        start from the ranks of a graph that changed little (Haveliwala's Section 5 on a changing
        web) reaches the same tolerance in fewer iterations; the fixed point is the same, so
        the result differs from a cold start's by about the tolerance. ``NaN`` entries (pages
        new since) start at the teleport value.

    Returns
    -------
    PageRankResult

    Raises
    ------
    ConfigurationError
        A parameter is out of range.

    References
    ----------
    T. Haveliwala, Efficient Computation of PageRank, Stanford TR 1999-31.
    """
    _check(damping, tol, max_iter, dangling, check_every)
    parameters = {
        "damping": damping, "tol": tol, "max_iter": max_iter, "dangling": dangling,
        "dtype": np.dtype(dtype).name, "check_every": check_every,
        "personalized": personalization is not None,
    }
    if graph.n == 0:
        return PageRankResult(np.zeros(0, dtype=dtype), 0, True, 0.0, parameters=parameters)
    teleport = teleport_vector(graph.n, personalization)
    threads = default_threads() if threads is None else max(1, int(threads))
    if start is not None:
        start = start_vector(start, teleport)
        parameters["warm_start"] = True
    if dangling == "remove":
        return _pagerank_removing_dangling(
            graph, damping, tol, max_iter, teleport, dtype, check_every, snapshot_every, parameters,
            threads, start,
        )
    result = _power_iteration(
        graph, damping, tol, max_iter, teleport, dtype, check_every, snapshot_every, threads, start
    )
    result.parameters = parameters
    return result


class _RowBlocks:
    """The rows of the transition matrix in blocks of equal non-zeros, one thread each.

    scipy's sparse product releases the GIL, and so do numpy's ufuncs on large arrays: each
    thread computes its slice of the next vector — product, damping, teleport — and its share of
    the sums, so the whole iteration runs in parallel (on cnr-2000, two threads take the product
    from 5.5 ms to 2.1 ms: the halves also fit the caches better). A row is always summed by one
    thread in the same order, so the result does not depend on the number of threads.
    """

    def __init__(self, matrix: sp.csr_matrix, threads: int) -> None:
        bounds = np.searchsorted(matrix.indptr, np.linspace(0, matrix.nnz, threads + 1)[1:-1])
        self.rows = [0, *sorted({int(b) for b in bounds}), matrix.shape[0]]
        self.blocks = []
        for lo, hi in zip(self.rows, self.rows[1:]):
            a, b = matrix.indptr[lo], matrix.indptr[hi]
            self.blocks.append(sp.csr_matrix(
                (matrix.data[a:b], matrix.indices[a:b], matrix.indptr[lo : hi + 1] - a),
                shape=(hi - lo, matrix.shape[1]),
            ))
        self.pool = ThreadPoolExecutor(len(self.blocks)) if len(self.blocks) > 1 else None

    def map(self, function) -> list:
        """``function(k, rows)`` for every block, in parallel; results in block order."""
        slices = [slice(lo, hi) for lo, hi in zip(self.rows, self.rows[1:])]
        if self.pool is None:
            return [function(0, slices[0])]
        futures = [self.pool.submit(function, k, rows) for k, rows in enumerate(slices)]
        return [future.result() for future in futures]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def start_vector(start, teleport: np.ndarray) -> np.ndarray:
    """A warm start's vector: float64, NaN entries at the teleport value, summing to 1."""
    vector = np.asarray(start, dtype=np.float64).copy()
    if vector.shape != teleport.shape:
        raise ConfigurationError(f"start vector has shape {vector.shape}, expected {teleport.shape}")
    missing = np.isnan(vector)
    vector[missing] = teleport[missing]
    if (vector < 0).any() or not np.isfinite(vector).all() or vector.sum() <= 0:
        raise ConfigurationError("a start vector's ranks must be finite, non-negative and not all 0")
    return vector / vector.sum()


def default_threads() -> int:
    return min(usable_cores(), 8)


def _power_iteration(
    graph: LinkGraph,
    damping: float,
    tol: float,
    max_iter: int,
    teleport: np.ndarray,
    dtype: type,
    check_every: int,
    snapshot_every: int | None,
    threads: int = 1,
    start: np.ndarray | None = None,
) -> PageRankResult:
    out_degree = graph.out_degree
    dangling = np.flatnonzero(out_degree == 0)
    inverse_degree = np.zeros(graph.n, dtype=dtype)
    linked = out_degree > 0
    inverse_degree[linked] = 1.0 / out_degree[linked]
    # M = Aᵀ·D⁻¹ with the 1/outdegree of each source folded into the matrix: one product per step.
    matrix = sp.csr_matrix(
        (inverse_degree[graph.in_indices], graph.in_indices, graph.in_indptr), shape=(graph.n, graph.n)
    )
    blocks = _RowBlocks(matrix, threads)
    base = ((1.0 - damping) * teleport).astype(dtype)
    spread = teleport.astype(dtype)
    ranks = (teleport if start is None else start).astype(dtype)
    following = np.empty_like(ranks)
    difference = np.empty_like(ranks)
    residuals: list[tuple[int, float]] = []
    snapshots: dict[int, np.ndarray] = {}
    residual = float("inf")
    converged = False
    iteration = 0
    dangling_share = 0.0

    def step(k: int, rows: slice) -> float:
        """This block's rows of c·M·x + (1−c)·p + c·(dangling mass)·p; returns their sum."""
        part = following[rows]
        part[:] = blocks.blocks[k] @ ranks
        part *= damping
        part += base[rows]
        if dangling_share:
            part += dangling_share * spread[rows]
        return float(part.sum(dtype=np.float64))

    def normalise(total: float, measure: bool):
        def work(k: int, rows: slice) -> float:
            # Keep the total at exactly 1 despite single-precision rounding (double-precision sum).
            following[rows] /= total
            if not measure:
                return 0.0
            np.subtract(following[rows], ranks[rows], out=difference[rows])
            np.abs(difference[rows], out=difference[rows])
            return float(difference[rows].sum(dtype=np.float64))
        return work

    try:
        for iteration in range(1, max_iter + 1):
            dangling_share = damping * float(ranks[dangling].sum(dtype=np.float64))
            total = sum(blocks.map(step))
            measure = iteration % check_every == 0 or iteration == max_iter
            partial = blocks.map(normalise(total, measure))
            if measure:
                residual = sum(partial)
                residuals.append((iteration, residual))
            ranks, following = following, ranks
            if snapshot_every and iteration % snapshot_every == 0:
                snapshots[iteration] = ranks.copy()
            if residual < tol:
                converged = True
                break
    finally:
        blocks.close()
    if not converged:
        log.warning(
            "PageRank did not converge: residual %.3g after %d iterations (tol %.3g)",
            residual, iteration, tol,
        )
    return PageRankResult(ranks, iteration, converged, residual, residuals, snapshots)


def dangling_layers(graph: LinkGraph) -> list[np.ndarray]:
    """Pages removed by the paper's iterative removal, pass by pass (first pass first)."""
    out_degree = graph.out_degree.astype(np.int64).copy()
    alive = np.ones(graph.n, dtype=bool)
    layers = []
    current = np.flatnonzero(out_degree == 0)
    while len(current):
        layers.append(current)
        alive[current] = False
        _, parents = graph.in_links_of(current)
        np.subtract.at(out_degree, parents, 1)  # each removed page costs its parents one link
        candidates = np.unique(parents)
        current = candidates[(out_degree[candidates] == 0) & alive[candidates]]
    return layers


def _pagerank_removing_dangling(
    graph, damping, tol, max_iter, teleport, dtype, check_every, snapshot_every, parameters, threads, start=None
) -> PageRankResult:
    layers = dangling_layers(graph)
    removed = np.concatenate(layers) if layers else np.zeros(0, dtype=np.int64)
    keep = np.ones(graph.n, dtype=bool)
    keep[removed] = False
    ranks = np.zeros(graph.n, dtype=np.float64)
    if keep.any():
        core, old = graph.subgraph(keep)
        core_teleport = teleport[old] / teleport[old].sum() if teleport[old].sum() > 0 else None
        core_start = start[old] / start[old].sum() if start is not None and start[old].sum() > 0 else None
        result = _power_iteration(
            core, damping, tol, max_iter,
            core_teleport if core_teleport is not None else np.full(len(old), 1.0 / len(old)),
            dtype, check_every, snapshot_every, threads, core_start,
        )
        ranks[old] = result.ranks
    else:
        result = PageRankResult(np.zeros(0, dtype=dtype), 0, True, 0.0)
    out_degree = graph.out_degree
    ranked = keep.copy()
    for layer in reversed(layers):
        pages, parents = graph.in_links_of(layer)
        inside = ranked[parents]
        received = np.zeros(graph.n)
        np.add.at(received, pages[inside], ranks[parents[inside]] / out_degree[parents[inside]])
        ranks[layer] = (1.0 - damping) * teleport[layer] + damping * received[layer]
        ranked[layer] = True
    ranks /= ranks.sum()
    parameters = dict(parameters, removed_dangling=int(len(removed)), removal_passes=len(layers))
    return PageRankResult(
        ranks.astype(dtype), result.iterations, result.converged, result.residual,
        result.residuals, result.snapshots, parameters,
    )


def pagerank_exact(
    graph: LinkGraph,
    damping: float = 0.85,
    personalization: Mapping[int, float] | np.ndarray | None = None,
) -> np.ndarray:
    """The exact PageRank (``dangling="uniform"``) by a dense linear solve, for small graphs.

    Solves ``(I − c·(M + s·dᵀ)) x = (1 − c)·p`` where ``d`` marks dangling pages and ``s = p``.
    """
    n = graph.n
    teleport = teleport_vector(n, personalization)
    out_degree = graph.out_degree
    matrix = np.zeros((n, n))
    source, target = graph.edges()
    np.add.at(matrix, (target, source), 1.0 / out_degree[source])
    matrix += np.outer(teleport, (out_degree == 0).astype(float))
    solution = np.linalg.solve(np.eye(n) - damping * matrix, (1.0 - damping) * teleport)
    return solution / solution.sum()


def pagerank_blocked(
    graph: LinkGraph,
    damping: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    personalization: Mapping[int, float] | np.ndarray | None = None,
    memory_limit: int = 64 << 20,
    check_every: int = 1,
    workdir: str | os.PathLike | None = None,
    block_size: int | None = None,
) -> PageRankResult:
    """The block-based strategy of the paper's Section 3.2: the same vector, bounded memory.

    The Dest vector is split into blocks that fit in ``memory_limit`` bytes; the links are
    partitioned by destination block into files on disk (sorted by source), and Source and Dest
    live in files too. Each iteration reads, per block, the Source file and that block's links
    sequentially, accumulates the block of Dest in memory and writes it out. Dangling pages
    spread their rank as the teleport vector says (``dangling="uniform"``).

    Parameters
    ----------
    memory_limit : int
        Bytes for one Dest block plus the read buffers (default 64 MiB); decides the number of blocks.
    workdir : path, optional
        Where the link partitions and rank files go (default: a temporary folder, removed after).
    block_size : int, optional
        Pages per Dest block, overriding the size derived from ``memory_limit``.
    Other parameters as in :func:`pagerank`.
    """
    _check(damping, tol, max_iter, "uniform", check_every)
    if memory_limit < 1 << 16:
        raise ConfigurationError(f"memory_limit must be at least 64 KiB, got {memory_limit}")
    n = graph.n
    teleport = teleport_vector(n, personalization)
    # A Dest block takes 8 bytes a page (float64 accumulator); a quarter of the budget is for the
    # buffers that stream the Source vector and the links.
    if block_size is None:
        block_size = (memory_limit * 3 // 4) // 8
    block_size = max(1, min(n, block_size))
    chunk = max(1024, (memory_limit // 4) // 16)
    owned = workdir is None
    folder = Path(tempfile.mkdtemp(prefix="linksim-blocked-") if owned else workdir)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        blocks = _partition_links(graph, block_size, folder)
        out_degree = graph.out_degree
        source_file = np.lib.format.open_memmap(folder / "source.npy", "w+", np.float32, (n,))
        dest_file = np.lib.format.open_memmap(folder / "dest.npy", "w+", np.float32, (n,))
        source_file[:] = teleport.astype(np.float32)
        residuals: list[tuple[int, float]] = []
        residual, converged, iteration = float("inf"), False, 0
        for iteration in range(1, max_iter + 1):
            dangling_mass = 0.0
            for start in range(0, n, chunk):
                part = slice(start, start + chunk)
                dangling_mass += float(source_file[part][out_degree[part] == 0].sum(dtype=np.float64))
            total = 0.0
            for b, (begin, end, links_path) in enumerate(blocks):
                accumulator = np.zeros(end - begin)
                links = np.load(links_path, mmap_mode="r")
                for start in range(0, len(links), chunk):
                    sources = links[start : start + chunk, 0]
                    targets = links[start : start + chunk, 1]
                    contribution = source_file[sources].astype(np.float64) / out_degree[sources]
                    accumulator += np.bincount(targets, weights=contribution, minlength=end - begin)
                block = damping * accumulator + (1.0 - damping) * teleport[begin:end]
                block += damping * dangling_mass * teleport[begin:end]
                dest_file[begin:end] = block.astype(np.float32)
                total += float(block.sum())
            for start in range(0, n, chunk):
                dest_file[start : start + chunk] /= np.float32(total)
            if iteration % check_every == 0 or iteration == max_iter:
                residual = 0.0
                for start in range(0, n, chunk):
                    residual += float(
                        np.abs(dest_file[start : start + chunk] - source_file[start : start + chunk]).sum(dtype=np.float64)
                    )
                residuals.append((iteration, residual))
            source_file[:] = dest_file  # Source = Dest
            if residual < tol:
                converged = True
                break
        if not converged:
            log.warning("blocked PageRank did not converge: residual %.3g after %d iterations", residual, iteration)
        ranks = np.array(source_file, dtype=np.float32)
        del source_file, dest_file
    finally:
        if owned:
            shutil.rmtree(folder, ignore_errors=True)
    parameters = {
        "damping": damping, "tol": tol, "max_iter": max_iter, "dangling": "uniform",
        "dtype": "float32", "check_every": check_every, "personalized": personalization is not None,
        "blocks": len(blocks), "block_size": block_size, "memory_limit": memory_limit,
    }
    return PageRankResult(ranks, iteration, converged, residual, residuals, {}, parameters)


def _partition_links(graph: LinkGraph, block_size: int, folder: Path) -> list[tuple[int, int, Path]]:
    """Write the links of each destination block, sorted by source, as ``(source, local dest)``."""
    source, target = graph.edges()  # sorted by source already
    blocks = []
    for number, begin in enumerate(range(0, graph.n, block_size)):
        end = min(begin + block_size, graph.n)
        inside = (target >= begin) & (target < end)
        pairs = np.column_stack([source[inside], target[inside] - begin]).astype(np.int64)
        path = folder / f"links-{number}.npy"
        np.save(path, pairs)
        blocks.append((begin, end, path))
    return blocks
