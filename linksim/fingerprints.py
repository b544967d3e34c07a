"""Monte Carlo SimRank and PSimRank by fingerprint graphs (Fogaras & Rácz 2004, 2005).

``sim(u, v) = E[c^τ]`` where ``τ`` is the first meeting time of two reversed random walks of at
most ``length`` steps started from ``u`` and ``v`` (``c^τ = 0`` if they do not meet). For each of
``n_fingerprints`` independent samples, every page starts a walk; at each step one choice is drawn
per page and every walk standing on that page takes it, so walks that meet move together from then
on (*coalescing* walks):

- SimRank: the choice is a uniform random in-neighbour;
- PSimRank: the in-neighbour of smallest index under a fresh random permutation of all pages, so
  that two walks at ``u'`` and ``v'`` meet in one step with probability
  ``|I(u') ∩ I(v')| / |I(u') ∪ I(v')|``.

A walk on a page without in-links stops (it meets nobody after). The meetings of one sample are
stored as its *fingerprint graph* (2005 paper, Section 2.1.1): for each page ``u`` at most one
edge to the smallest page ``v < u`` that ``u``'s walk met first, labelled with that meeting time.
The graph is a forest; ``τ(u, v)`` is read back by Lemma 2: follow the paths from ``u`` and ``v`` to
their first common vertex and take the larger of the two last edge labels (0 for a path of no
edge). The index is two small integers per page and fingerprint: ``2·N·V`` in all.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from linksim.errors import ConfigurationError
from linksim.graph import LinkGraph

METHODS = ("simrank", "psimrank")
NO_PARENT = -1


def graph_fingerprint(graph: LinkGraph) -> str:
    """A digest of the link structure: an index answers only for the graph it was built from."""
    digest = hashlib.sha256()
    digest.update(np.int64(graph.n).tobytes())
    digest.update(np.ascontiguousarray(graph.out_indptr, dtype=np.int64).tobytes())
    digest.update(np.ascontiguousarray(graph.out_indices, dtype=np.int64).tobytes())
    return digest.hexdigest()


def _check(n_fingerprints: int, length: int, method: str) -> None:
    if n_fingerprints < 1:
        raise ConfigurationError(f"n_fingerprints must be at least 1, got {n_fingerprints}")
    if not 1 <= length <= 127:
        raise ConfigurationError(f"length must lie in 1..127, got {length}")
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


@dataclass
class FingerprintIndex:
    """Fingerprint graphs of a SimRank-family method.

    Attributes
    ----------
    parent : ndarray (N, V) of int32
        ``parent[i, u]``: the page ``u`` points to in fingerprint graph ``i``, or -1.
    label : ndarray (N, V) of int8
        The meeting time on that edge (1..length), 0 where there is no edge.
    method, length, seed : as built
    graph_fingerprint : str
        Digest of the graph the index was built from.
    """

    parent: np.ndarray
    label: np.ndarray
    method: str
    length: int
    seed: int
    graph_fingerprint: str
    _children: list = field(default_factory=list, repr=False, compare=False)
    _members: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def n_fingerprints(self) -> int:
        return self.parent.shape[0]

    @property
    def n(self) -> int:
        return self.parent.shape[1]

    @property
    def nbytes(self) -> int:
        return self.parent.nbytes + self.label.nbytes

    # Lemma 2 ---------------------------------------------------------------------------------
    def meeting_times(self, u: int, v: int, n_fingerprints: int | None = None) -> np.ndarray:
        """τ(u, v) in each fingerprint (``length + 1`` where they never meet)."""
        never = self.length + 1
        count = self.n_fingerprints if n_fingerprints is None else n_fingerprints
        times = np.full(count, never, dtype=np.int64)
        if u == v:
            times[:] = 0
            return times
        for i in range(count):
            parent, label = self.parent[i], self.label[i]
            # Labels into each vertex on u's path: the meeting time of u's walk with that vertex.
            on_path = {u: 0}
            x = u
            while parent[x] != NO_PARENT:
                on_path[int(parent[x])] = int(label[x])
                x = parent[x]
            x, last = v, 0
            while x not in on_path:
                if parent[x] == NO_PARENT:
                    break
                last = int(label[x])
                x = parent[x]
            else:
                times[i] = max(on_path[x], last)
        return times

    def sim(self, u: int, v: int, decay: float = 0.6, n_fingerprints: int | None = None) -> float:
        """The estimate of ``E[c^τ(u,v)]`` from (the first ``n_fingerprints``) fingerprints."""
        times = self.meeting_times(u, v, n_fingerprints)
        return float(np.where(times <= self.length, decay ** times.astype(float), 0.0).mean())

    # related(u): walk u's tree in each fingerprint graph --------------------------------------
    def _children_of(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        if not self._children:
            self._children = [None] * self.n_fingerprints
        if self._children[i] is None:
            parent = self.parent[i]
            has = np.flatnonzero(parent != NO_PARENT)
            order = has[np.argsort(parent[has], kind="stable")]
            indptr = np.zeros(self.n + 1, dtype=np.int64)
            np.cumsum(np.bincount(parent[has], minlength=self.n), out=indptr[1:])
            self._children[i] = (indptr, order)
        return self._children[i]

    def related_times(self, u: int, i: int) -> dict[int, int]:
        """τ(u, w) for every page ``w ≠ u`` of u's tree in fingerprint graph ``i``."""
        parent, label = self.parent[i], self.label[i]
        indptr, children = self._children_of(i)
        times: dict[int, int] = {}
        previous, x, into_x = -1, u, 0  # into_x: label of u's path edge into x (0 at u)
        while True:
            if x != u:
                times[x] = into_x
            for child in children[indptr[x] : indptr[x + 1]]:
                if child == previous:
                    continue
                value = max(into_x, int(label[child]))
                stack = [int(child)]
                while stack:  # the whole subtree of this child meets u at time `value`
                    w = stack.pop()
                    times[w] = value
                    stack.extend(int(c) for c in children[indptr[w] : indptr[w + 1]])
            if parent[x] == NO_PARENT:
                break
            previous, into_x, x = x, int(label[x]), int(parent[x])
        return times

    def _tree_members(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per fingerprint: the root of every page, and the pages grouped by root (CSR)."""
        if self._members is None:
            rows = np.arange(self.n_fingerprints)[:, None]
            root = np.where(self.parent == NO_PARENT, np.arange(self.n), self.parent).astype(np.int64)
            for _ in range(self.length + 1):  # paths have at most `length` edges (Lemma 2)
                root = root[rows, root]
            order = np.argsort(root, axis=1, kind="stable").astype(np.int32)
            counts = np.zeros((self.n_fingerprints, self.n + 1), dtype=np.int64)
            np.add.at(counts, (rows, root + 1), 1)
            starts = np.cumsum(counts, axis=1)
            self._members = (root, order, starts)
        return self._members

    def related_all_times(self, u: int, n_fingerprints: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fingerprint, page, τ) for every page of u's trees (u excluded), all fingerprints at once."""
        count = self.n_fingerprints if n_fingerprints is None else n_fingerprints
        root, order, starts = self._tree_members()
        fingerprints = np.arange(count)
        tree = root[fingerprints, u]
        begin, end = starts[fingerprints, tree], starts[fingerprints, tree + 1]
        sizes = end - begin
        owner = np.repeat(fingerprints, sizes)
        offsets = np.repeat(begin - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        pages = order[owner, offsets].astype(np.int64)
        # u's path in each fingerprint graph, keyed (fingerprint, vertex) -> label into the vertex.
        keys, labels = [fingerprints * self.n + u], [np.zeros(count, dtype=np.int64)]
        x = np.full(count, u, dtype=np.int64)
        alive = np.ones(count, dtype=bool)
        for _ in range(self.length):
            up = self.parent[fingerprints, x]
            alive &= up != NO_PARENT
            keys.append(np.where(alive, fingerprints * self.n + up, -1))
            labels.append(self.label[fingerprints, x].astype(np.int64))
            x = np.where(alive, up, x)
        keys_flat, labels_flat = np.concatenate(keys), np.concatenate(labels)
        valid = keys_flat >= 0
        path_order = np.argsort(keys_flat[valid])
        path_keys, path_labels = keys_flat[valid][path_order], labels_flat[valid][path_order]
        # Climb from every member until its path reaches u's path: τ = max(u's label, its last label).
        times = np.full(len(pages), -1, dtype=np.int64)
        at, last = pages.copy(), np.zeros(len(pages), dtype=np.int64)
        searching = np.ones(len(pages), dtype=bool)
        for _ in range(self.length + 1):
            key = owner * self.n + at
            where = np.searchsorted(path_keys, key)
            found = searching & (where < len(path_keys)) & (path_keys[np.minimum(where, len(path_keys) - 1)] == key)
            times[found] = np.maximum(path_labels[where[found]], last[found])
            searching &= ~found
            if not searching.any():
                break
            last = np.where(searching, self.label[owner, at].astype(np.int64), last)
            at = np.where(searching, self.parent[owner, at].astype(np.int64), at)
        keep = pages != u
        return owner[keep], pages[keep], times[keep]

    def related(
        self, u: int, top_k: int | None = 10, decay: float = 0.6, threshold: float = 0.0,
        n_fingerprints: int | None = None,
    ) -> list[tuple[int, float]]:
        """Pages most similar to ``u`` (u excluded), best first: [(page, score)], ties by page.

        All of u's trees (one per fingerprint) are gathered and decoded at once; time is linear
        in their total size. ``threshold`` drops scores at or below it.
        """
        count = self.n_fingerprints if n_fingerprints is None else n_fingerprints
        _, pages, times = self.related_all_times(u, count)
        if len(pages) == 0:
            return []
        candidates, inverse = np.unique(pages, return_inverse=True)
        scores = np.bincount(inverse, weights=decay ** times.astype(float), minlength=len(candidates)) / count
        keep = scores > threshold
        candidates, scores = candidates[keep], scores[keep]
        ranking = np.lexsort((candidates, -scores))
        if top_k is not None:
            ranking = ranking[:top_k]
        return [(int(candidates[i]), float(scores[i])) for i in ranking]

    def tree_sizes(self, u: int | None = None) -> np.ndarray:
        """Sizes of all fingerprint trees (or of u's tree in each fingerprint)."""
        root, _, starts = self._tree_members()
        counts = np.diff(starts, axis=1)  # pages per root, per fingerprint
        if u is not None:
            return counts[np.arange(self.n_fingerprints), root[:, u]]
        return counts[counts > 0]


def build_index(
    graph: LinkGraph,
    method: str = "simrank",
    n_fingerprints: int = 100,
    length: int = 10,
    seed: int = 0,
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
    """
    _check(n_fingerprints, length, method)
    parent = np.full((n_fingerprints, graph.n), NO_PARENT, dtype=np.int32)
    label = np.zeros((n_fingerprints, graph.n), dtype=np.int8)
    for i, steps in enumerate(walk_choices(graph, n_fingerprints, length, seed, method)):
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
            parent[i, active[met]] = representative[met]
            label[i, active[met]] = step
            active, position = active[~met], position[~met]
    return FingerprintIndex(parent, label, method, length, seed, graph_fingerprint(graph))


# Exact references for small graphs --------------------------------------------------------------
def simrank_exact(graph: LinkGraph, decay: float = 0.6, length: int = 10) -> np.ndarray:
    """Truncated SimRank by iteration: ``s_{k+1}(u,v) = c/(|I(u)||I(v)|) Σ s_k(u',v')``."""
    n = graph.n
    weights = np.zeros((n, n))
    in_degree = graph.in_degree
    for v in range(n):
        if in_degree[v]:
            np.add.at(weights[v], graph.in_links(v), 1.0 / in_degree[v])
    scores = np.eye(n)
    for _ in range(length):
        scores = decay * weights @ scores @ weights.T
        np.fill_diagonal(scores, 1.0)
    return scores


def psimrank_exact(graph: LinkGraph, decay: float = 0.6, length: int = 10) -> np.ndarray:
    """Truncated PSimRank by the iteration of the 2005 paper (Section 2.2.2, averages as in the
    papers README), for small graphs."""
    n = graph.n
    sets = [set(graph.in_links(v).tolist()) for v in range(n)]
    scores = np.eye(n)
    for _ in range(length):
        following = np.eye(n)
        for u in range(n):
            for v in range(u + 1, n):
                a, b = sets[u], sets[v]
                if not a or not b:
                    continue
                union = len(a | b)
                value = len(a & b) / union
                only_a, only_b = sorted(a - b), sorted(b - a)
                if only_a:
                    value += len(only_a) / union * scores[np.ix_(only_a, sorted(b))].mean()
                if only_b:
                    value += len(only_b) / union * scores[np.ix_(sorted(a), only_b)].mean()
                following[u, v] = following[v, u] = decay * value
        scores = following
    return scores


# Extended Jaccard ----------------------------------------------------------------------------
@dataclass
class MinHashIndex:
    """Min-hash fingerprints ``fp_k`` (k = 1..length) of every page (2005 paper, Algorithm 3).

    ``values[i, k-1, u] = min σ_i over I_k(u)``, where ``I_k(u)`` holds the pages that reach ``u``
    in at most ``k`` links, ``u`` itself included (papers README). Then
    ``xjac(u, v) = E[Σ_k c^k (1 − c) · 1{fp_k(u) = fp_k(v)}]``.
    """

    values: np.ndarray  # (N, length, V) int32
    length: int
    seed: int
    graph_fingerprint: str

    @property
    def n_fingerprints(self) -> int:
        return self.values.shape[0]

    def sim(self, u: int, v: int, decay: float = 0.6, n_fingerprints: int | None = None) -> float:
        count = self.n_fingerprints if n_fingerprints is None else n_fingerprints
        weights = decay ** np.arange(1, self.length + 1) * (1.0 - decay)
        equal = self.values[:count, :, u] == self.values[:count, :, v]
        return float((equal * weights).sum(axis=1).mean())

    def related(self, u: int, top_k: int | None = 10, decay: float = 0.6, threshold: float = 0.0,
                n_fingerprints: int | None = None) -> list[tuple[int, float]]:
        """Pages most similar to ``u`` (u excluded), best first, ties by page."""
        count = self.n_fingerprints if n_fingerprints is None else n_fingerprints
        weights = decay ** np.arange(1, self.length + 1) * (1.0 - decay)
        scores = np.zeros(self.values.shape[2])
        for i in range(count):
            for k in range(self.length):
                row = self.values[i, k]
                scores[row == row[u]] += weights[k]
        scores /= count
        scores[u] = 0.0
        candidates = np.flatnonzero(scores > threshold)
        ranked = sorted(((int(w), float(scores[w])) for w in candidates), key=lambda item: (-item[1], item[0]))
        return ranked if top_k is None else ranked[:top_k]


def build_minhash_index(graph: LinkGraph, n_fingerprints: int = 100, length: int = 4, seed: int = 0) -> MinHashIndex:
    """``fp_k(u) = min(fp_{k-1}(u), min over in-neighbours of fp_{k-1})``, one edge scan a step."""
    if n_fingerprints < 1:
        raise ConfigurationError(f"n_fingerprints must be at least 1, got {n_fingerprints}")
    if length < 1:
        raise ConfigurationError(f"length must be at least 1, got {length}")
    rng = np.random.default_rng(seed)
    values = np.empty((n_fingerprints, length, graph.n), dtype=np.int32)
    source, target = graph.edges()
    for i in range(n_fingerprints):
        current = rng.permutation(graph.n).astype(np.int32)  # σ: page -> rank in a random order
        for k in range(length):
            following = current.copy()
            np.minimum.at(following, target, current[source])
            values[i, k] = following
            current = following
    return MinHashIndex(values, length, seed, graph_fingerprint(graph))


def xjaccard_exact(graph: LinkGraph, decay: float = 0.6, length: int = 4) -> np.ndarray:
    """``Σ_k c^k (1 − c) · |I_k(u) ∩ I_k(v)| / |I_k(u) ∪ I_k(v)|`` from exact neighbourhoods."""
    n = graph.n
    reach = np.eye(n, dtype=bool)  # reach[u, w]: w reaches u in at most k links
    adjacency = np.zeros((n, n), dtype=bool)
    source, target = graph.edges()
    adjacency[target, source] = True
    scores = np.zeros((n, n))
    for k in range(1, length + 1):
        reach = reach | (adjacency.astype(np.int64) @ reach.astype(np.int64) > 0)
        counts = reach.astype(np.int64)
        inter = counts @ counts.T
        sizes = counts.sum(axis=1)
        union = sizes[:, None] + sizes[None, :] - inter
        scores += decay**k * (1.0 - decay) * inter / union
    return scores
