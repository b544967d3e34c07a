"""Sampling the coalescing reversed random walks of SimRank and PSimRank, and building their
fingerprint graphs (Fogaras & Rácz 2005, Section 2.1.1; PSimRank's coupling, Section 3.1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from linksim.digest import graph_fingerprint
from linksim.errors import ConfigurationError
from linksim.allocator import new_array
from linksim.fingerprints.index import NO_PARENT, FingerprintIndex
from linksim.graph import LinkGraph
from linksim.parameters import check_parameters
from linksim.progress import Progress
from linksim.fingerprints.kinds import WalkKind
from linksim.fingerprints.randomness import stream_key


def step_choices(graph: LinkGraph, walk: WalkKind, seed: int, fingerprint: int, step: int) -> np.ndarray:
    """Where a walk standing on each page goes at ``step`` (1..L) of ``fingerprint`` (-1: no
    in-link, the walk stops): a pure function of (seed, fingerprint, step, page), see :mod:`linksim.fingerprints.randomness`."""
    return choices_of(graph, walk, stream_key(seed, fingerprint, step), np.arange(graph.n, dtype=np.int64))


def choices_of(graph: LinkGraph, walk: WalkKind, key: int, pages: np.ndarray) -> np.ndarray:
    """The choices of ``pages`` in the stream ``key`` (only the pages walks stand on are drawn)."""
    choice = np.empty(len(pages), dtype=np.int64)
    walk.draw(np.uint64(key), pages, graph, choice)
    return choice


def walk_choices(graph: LinkGraph, n_fingerprints: int, length: int, seed: int, walk: WalkKind):
    """Yield, per fingerprint, the list of its ``length`` choice arrays (same draws as the index)."""
    for i in range(n_fingerprints):
        yield [step_choices(graph, walk, seed, i, step) for step in range(1, length + 1)]


def build_index(
    graph: LinkGraph,
    walk: WalkKind,
    n_fingerprints: int = 100,
    length: int = 10,
    seed: int = 0,
    decay: float = 0.6,
    show_progress: bool = False,
    directory: Path | None = None,
    keep_walks: bool = False,
    method: str = "fingerprints",
    reading: dict | None = None,
) -> FingerprintIndex:
    """Build the fingerprint graphs (the 2005 paper's Algorithm 2, vectorised over all pages).

    Parameters
    ----------
    walk : WalkKind
        How a walk chooses its next page (:mod:`linksim.fingerprints.kinds`).
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
    keep_walks : bool
        Also keep where the walks stood after each step (:class:`linksim.fingerprints.state.WalkState`,
        as ``index.walks``): what :func:`linksim.fingerprints.update.update_index` needs to bring
        the index up to date with a changed graph without walking again. About one group a page
        and fingerprint over all steps (0.27 on the generated 10M-link crawl, 0.7-1.1 on
        cnr-2000, 0.6-2.0 on Wikispeedia: walks meet fast), 8 bytes each.
    method, reading : str, dict
        What the index is of (its name in progress lines and the store) and that method's own
        reading of its lists (:class:`FingerprintIndex`'s ``reading``).
    """
    if not isinstance(walk, WalkKind):
        raise ConfigurationError(f"walk must be a kind of walk (linksim.fingerprints.kinds), got {walk!r}")
    check_parameters(n_fingerprints=n_fingerprints, length=length, decay=decay)
    shape = (n_fingerprints, graph.n)
    parent = new_array(directory, "parent", shape, np.int32)
    label = new_array(directory, "label", shape, np.int8)
    progress = Progress(n_fingerprints, f"{method} fingerprints", "fingerprints", enabled=show_progress)
    groups = [] if keep_walks else None  # per fingerprint and step: (representatives, positions)
    for i in range(n_fingerprints):
        progress.update(1)
        row_parent = np.full(graph.n, NO_PARENT, dtype=np.int32)
        row_label = np.zeros(graph.n, dtype=np.int8)
        # Active walks: one per group of coalesced walks, represented by its smallest start page;
        # they stand on distinct pages, and only those pages' choices are drawn.
        active = np.arange(graph.n, dtype=np.int64)
        position = active.copy()
        for step in range(1, length + 1):
            position = choices_of(graph, walk, stream_key(seed, i, step), position)
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
            if groups is not None:
                groups.append((i, step, active.astype(np.int32), position.astype(np.int32)))
        parent[i], label[i] = row_parent, row_label
    progress.close()
    index = FingerprintIndex(parent, label, method, length, seed, graph_fingerprint(graph), decay, directory=directory,
                             walk=walk, reading=dict(reading or {}))
    if groups is not None:
        from linksim.fingerprints.state import WalkState

        index.walks = WalkState.from_groups(groups, n_fingerprints, length)
    return index
