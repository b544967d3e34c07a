"""Sampling the coalescing reversed random walks of SimRank and PSimRank, and building their
fingerprint graphs (Fogaras & Rácz 2005, Section 2.1.1; PSimRank's coupling, Section 3.1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from linksim.digest import graph_fingerprint
from linksim.errors import ConfigurationError
from linksim.fingerprint_index import NO_PARENT, FingerprintIndex
from linksim.graph import LinkGraph
from linksim.parameters import check_parameters
from linksim.progress import Progress

METHODS = ("simrank", "psimrank")


def _check(n_fingerprints: int, length: int, decay: float, method: str) -> None:
    check_parameters(n_fingerprints=n_fingerprints, length=length, decay=decay)
    if method not in METHODS:
        raise ConfigurationError(f"method must be one of {', '.join(METHODS)}, got {method!r}")


def _choices(graph: LinkGraph, rng: np.random.Generator, method: str) -> np.ndarray:
    """One step's choice per page: where a walk standing on the page goes (-1: no in-link)."""
    in_degree = graph.in_degree
    choice = np.full(graph.n, NO_PARENT, dtype=np.int64)
    has = np.flatnonzero(in_degree > 0)
    if method == "simrank":
        offsets = (rng.random(len(has)) * in_degree[has]).astype(np.int64)
        choice[has] = graph.in_indices[graph.in_indptr[has] + offsets]
        return choice
    order = rng.permutation(graph.n)  # σ(page) = its position in a random order
    keys = order[graph.in_indices]
    starts = graph.in_indptr[has]
    smallest = np.minimum.reduceat(keys, starts)  # segments of pages with in-links are non-empty
    inverse = np.empty(graph.n, dtype=np.int64)
    inverse[order] = np.arange(graph.n)
    choice[has] = inverse[smallest]
    return choice


def walk_choices(graph: LinkGraph, n_fingerprints: int, length: int, seed: int, method: str):
    """Yield, per fingerprint, the list of its ``length`` choice arrays (same draws as the index)."""
    rng = np.random.default_rng(seed)
    for _ in range(n_fingerprints):
        yield [_choices(graph, rng, method) for _ in range(length)]


def build_index(
    graph: LinkGraph,
    method: str = "simrank",
    n_fingerprints: int = 100,
    length: int = 10,
    seed: int = 0,
    decay: float = 0.6,
    show_progress: bool = False,
    directory: Path | None = None,
) -> FingerprintIndex:
    """Build the fingerprint graphs (the 2005 paper's Algorithm 2, vectorised over all pages).

    Parameters
    ----------
    method : {"simrank", "psimrank"}
    n_fingerprints : int
        N, independent samples (default 100).
    length : int
        L, steps per walk (default 10).
    seed : int
        Same seed, same graph -> same index, bit for bit.
    decay : float
        c, kept with the index as the default of its queries (the walks do not depend on it).
    directory : Path, optional
        Build on disk: the fingerprint graphs (and, when first asked for, their tree layout) go
        to memory-mapped ``.npy`` files there, one fingerprint at a time, so that memory holds
        one fingerprint's walks, not the N x V arrays. The same arrays as in memory, bit for bit.
    """
    _check(n_fingerprints, length, decay, method)
    shape = (n_fingerprints, graph.n)
    parent = new_array(directory, "parent", shape, np.int32)
    label = new_array(directory, "label", shape, np.int8)
    progress = Progress(n_fingerprints, f"{method} fingerprints", "fingerprints", enabled=show_progress)
    for i, steps in enumerate(walk_choices(graph, n_fingerprints, length, seed, method)):
        progress.update(1)
        row_parent = np.full(graph.n, NO_PARENT, dtype=np.int32)
        row_label = np.zeros(graph.n, dtype=np.int8)
        # Active walks: one per group of coalesced walks, represented by its smallest start page.
        active = np.arange(graph.n, dtype=np.int64)
        position = active.copy()
        for step, choice in enumerate(steps, start=1):
            position = choice[position]
            moving = position != NO_PARENT
            active, position = active[moving], position[moving]
            if len(active) == 0:
                break
            # Walks on the same page now meet: the smallest start page of each group goes on,
            # the others get their fingerprint-graph edge to it, labelled with this step.
            smallest = np.full(graph.n, graph.n, dtype=np.int64)
            np.minimum.at(smallest, position, active)
            representative = smallest[position]
            met = representative != active
            row_parent[active[met]] = representative[met]
            row_label[active[met]] = step
            active, position = active[~met], position[~met]
        parent[i], label[i] = row_parent, row_label
    progress.close()
    index = FingerprintIndex(parent, label, method, length, seed, graph_fingerprint(graph), decay)
    index._directory = directory
    return index


def new_array(directory: Path | None, name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
    """An array to fill: in memory, or a memory-mapped ``name.npy`` in ``directory``."""
    if directory is None:
        return np.empty(shape, dtype=dtype)
    from numpy.lib.format import open_memmap

    return open_memmap(Path(directory) / f"{name}.npy", mode="w+", dtype=dtype, shape=shape)
