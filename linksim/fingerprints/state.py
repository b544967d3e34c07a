"""Where a fingerprint build's groups of coalesced walks stood after each step: stored with the
index (:mod:`linksim.fingerprints.index` restores it), made by the build
(:mod:`linksim.fingerprints.walks`) and read by the update (:mod:`linksim.fingerprints.update`).
A module of its own so that all three read it and none of them imports another for it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class WalkState:
    """Where the groups of coalesced walks stood after each step of each fingerprint.

    Step ``t`` (1..L) of fingerprint ``i`` is entry ``k = i * L + t - 1``: the pages its groups
    stand on (increasing: after a step no two groups share a page) are
    ``positions[offsets[k]:offsets[k + 1]]`` and their representatives (each group's smallest
    start page) ``representatives[...]`` (int32 both). Before the first step every page is its
    own group, on itself.
    """

    offsets: np.ndarray
    representatives: np.ndarray
    positions: np.ndarray
    length: int

    @classmethod
    def from_groups(cls, groups, n_fingerprints: int, length: int) -> "WalkState":
        """From the build's ``(fingerprint, step, representatives, positions)`` of every step walked
        (steps after the last walk stopped hold no group)."""
        sizes = np.zeros(n_fingerprints * length, dtype=np.int64)
        for i, step, representatives, _ in groups:
            sizes[i * length + step - 1] = len(representatives)
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        representatives = np.empty(offsets[-1], dtype=np.int32)
        positions = np.empty(offsets[-1], dtype=np.int32)
        for i, step, active, position in groups:
            k = i * length + step - 1
            order = np.argsort(position, kind="stable")
            representatives[offsets[k] : offsets[k + 1]] = active[order]
            positions[offsets[k] : offsets[k + 1]] = position[order]
        return cls(offsets, representatives, positions, length)

    def at(self, fingerprint: int, step: int) -> tuple[np.ndarray, np.ndarray]:
        """The positions and representatives of the groups after ``step`` (>= 1) of ``fingerprint``."""
        k = fingerprint * self.length + step - 1
        begin, end = self.offsets[k], self.offsets[k + 1]
        return self.positions[begin:end], self.representatives[begin:end]

    @property
    def nbytes(self) -> int:
        return self.offsets.nbytes + self.representatives.nbytes + self.positions.nbytes
