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

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import njit

from linksim.cores import usable_cores
from linksim.errors import ConfigurationError
from linksim.allocator import new_array
from linksim.parameters import (
    Query, check_fingerprints_asked, check_page, check_parameters, sampled_parameters,
)
from linksim.ranking import top_pairs, top_scores
from linksim.ranking.reader import ListsOfAllPages
from linksim.arrays import read_only
from linksim.fingerprints.treescan import (NO_PAGE_MAJOR, NO_TWINS, _trees_of, label_blocks, page_major, query_of,
                                           scores_with, top_k_many, top_k_one, top_k_sampled, twin_arrays)

NO_PARENT = -1
_NO_BANDS = read_only(np.zeros((0, 0), dtype=np.int32))  # a query without first-step bands


@dataclass
class FingerprintIndex(ListsOfAllPages):
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
    walk : WalkKind or None
        How its walks chose (:mod:`linksim.fingerprints.kinds`), for its updates and
        explanations; None for an index gathered without it.
    reading : dict
        The method's own reading of its lists where it differs from the defaults below
        (:class:`linksim.methods.method.Method`'s ``reading``), set on the index when it is made.
    """

    parent: np.ndarray
    label: np.ndarray
    method: str
    length: int
    seed: int
    graph_fingerprint: str
    decay: float = 0.6
    directory: "Path | None" = field(default=None, repr=False, compare=False)  # built on disk there (its layout too)
    walk: object = field(default=None, compare=False)
    reading: dict = field(default_factory=dict, compare=False)
    _children: list = field(default_factory=list, repr=False, compare=False)
    _members: "TreeLayout | None" = field(default=None, repr=False, compare=False)
    _twins: dict = field(default_factory=dict, repr=False, compare=False)
    _twin_memo: tuple = field(default=(), repr=False, compare=False)
    _twin_reads: tuple = field(default=(), repr=False, compare=False)  # twin_arrays of all fingerprints' classes
    _scratch: threading.local = field(default_factory=threading.local, repr=False, compare=False)
    _query_arrays: tuple = field(default=(), repr=False, compare=False)  # preorder and label blocks (_tree)
    _bands: dict = field(default_factory=dict, repr=False, compare=False)  # first-step bands (first_step_bands)
    _page_major: tuple = field(default=NO_PAGE_MAJOR, repr=False, compare=False)  # see prepare_all_pages
    _use_twins = True  # answer a twin class's pages from one query (see twin_classes)
    _twin_candidates = True  # a sampled query counts a twin class as one candidate (see _sample_twins)
    _slice_min = 64  # mean range length from which members are copied as slices
    _candidate_limit = 2_000  # most pages a top-k query scores by Lemma 2 after its bound
    _rescore_cost = 5.0  # member reads that scoring one page in one fingerprint by Lemma 2 costs
    lists_sampled = 0  # top-k lists answered so far from a sample of the trees (this process)
    reads_sample = True
    sample = 16  # a top-k query's members read from a range of u's trees at step 1 (see related); 0: all
    _sample_candidates = 256  # pages of a sampled reading scored exactly
    _sample_finalists = 32  # pages scored again where every member was read (the sums are exact)
    _exact_members = 20_000  # a page whose trees hold at most this many members in all is read exactly
    _band_cap = 8_192  # pages read from one bucket of the first-step bands (a larger one: a sample)
    _band_sample = None  # pages read from a bucket above the cap (its systematic sample); None: the cap
    _band_candidates = 0  # pages sharing the most first-step buckets with u added to a sampled query's candidates
    # A method's own sampled reading (its ``reading``, linksim.methods) sets some of the knobs above
    # on each index it makes, by __post_init__. A bucket read whole costs little (band hits are two
    # bytes a page, a twin names its class), and the cap bounds a list's cost where a crawl's hub
    # buckets grow with it.
    bands = True  # False: sampled queries without the bands (a run whose index is built on disk)
    use_page_major = True  # False: prepare_all_pages makes no page-major copies
    page_major_folder = None  # a Path: where prepare_all_pages writes them, when not into memory
    _few_members = 16  # members below n / this are summed by sorting, not over all pages
    walks = None  # where the walks stood after each step (build_index(keep_walks=True)), for updates
    changed_pages = 0  # of an updated index: the pages whose links the update found changed

    def __post_init__(self) -> None:
        for name, value in self.reading.items():
            if not hasattr(type(self), name):
                raise ConfigurationError(f"{name!r} is no knob of a fingerprint index's reading")
            setattr(self, name, value)

    @classmethod
    def reading_value(cls, reading: dict, knob: str):
        """The value of the sampled reading's ``knob`` (an attribute above) under ``reading``."""
        return reading.get(knob, getattr(cls, knob))

    @property
    def updatable(self) -> bool:
        """Can a changed graph update it (:mod:`linksim.fingerprints.update`): built with its walk state."""
        return self.walks is not None

    @property
    def n_fingerprints(self) -> int:
        return self.parent.shape[0]

    @property
    def n(self) -> int:
        return self.parent.shape[1]

    @property
    def nbytes(self) -> int:
        return self.parent.nbytes + self.label.nbytes

    @property
    def parameters(self) -> dict:
        """What the index was built with (the store and a rebuild compare against these)."""
        return sampled_parameters(self)

    # The index store -------------------------------------------------------------------------
    def store_arrays(self) -> dict[str, np.ndarray]:
        layout = self.layout()
        arrays = {
            "parent": self.parent, "label": self.label,
            "layout_order": layout.order, "layout_position": layout.position,
            "layout_size": layout.size, "layout_label": layout.label, "layout_root": layout.root,
        }
        if self.walks is not None:  # what an update starts from (linksim.fingerprints.update)
            arrays.update(walks_offsets=self.walks.offsets, walks_representatives=self.walks.representatives,
                          walks_positions=self.walks.positions)
        return arrays

    @classmethod
    def from_store(cls, meta: dict, arrays: dict[str, np.ndarray], walk=None,
                   reading: dict | None = None) -> "FingerprintIndex":
        p = meta["parameters"]
        index = cls(arrays["parent"], arrays["label"], meta["method"], p["length"], p["seed"],
                    meta["graph"]["fingerprint"], p["decay"], walk=walk, reading=dict(reading or {}))
        index._members = TreeLayout(
            arrays["layout_order"], arrays["layout_position"], arrays["layout_size"],
            arrays["layout_label"], arrays["layout_root"],
        )
        if "walks_offsets" in arrays:
            from linksim.fingerprints.state import WalkState

            index.walks = WalkState(arrays["walks_offsets"], arrays["walks_representatives"],
                                    arrays["walks_positions"], p["length"])
        return index

    # Lemma 2 ---------------------------------------------------------------------------------
    def meeting_times(self, u: int, v: int, n_fingerprints: int | None = None) -> np.ndarray:
        """τ(u, v) in each fingerprint (``length + 1`` where they never meet)."""
        never = self.length + 1
        count = check_fingerprints_asked(n_fingerprints, self.n_fingerprints)
        check_page(u, self.n), check_page(v, self.n)
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

    def sim(self, u: int, v: int, decay: float | None = None, n_fingerprints: int | None = None) -> float:
        """The estimate of ``E[c^τ(u,v)]`` from (the first ``n_fingerprints``) fingerprints."""
        check_parameters(decay=decay)
        decay = self.decay if decay is None else decay
        times = self.meeting_times(u, v, n_fingerprints)
        return score_of_times(np.sort(times), self.powers(decay))

    def sims(self, u: int, pages: np.ndarray, n_fingerprints: int | None = None) -> np.ndarray:
        """:meth:`sim` of u with each of ``pages`` at once (float64, equal to :meth:`sim` bit for bit:
        the same terms in the same order; compiled, :func:`linksim.fingerprints.treescan.scores_with`)."""
        count = check_fingerprints_asked(n_fingerprints, self.n_fingerprints)
        check_page(u, self.n)
        pages = self._checked_pages(pages)
        return scores_with(int(u), read_only(pages), int(count), int(self.length), self.powers(self.decay),
                           *self._tree(), self._page_major)

    def powers(self, decay: float) -> np.ndarray:
        """c^t for t = 0..length, and 0 at length + 1 (never met): every score's terms."""
        table = decay ** np.arange(self.length + 2, dtype=float)
        table[self.length + 1] = 0.0
        return table

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

    def layout(self) -> "TreeLayout":
        """The trees in preorder (built once, on first use): what related() reads."""
        if self._members is None:
            self._members = TreeLayout.build(self.parent, self.label, self.directory)
        return self._members

    def _chain(self, u: int, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """u's ancestors a_0 = u, a_1, ... per fingerprint, the labels l_j into them, and which
        exist: three (L+1, count) arrays."""
        fingerprints = np.arange(count)
        chain, into = [np.full(count, u, dtype=np.int64)], [np.zeros(count, dtype=np.int64)]
        alive = [np.ones(count, dtype=bool)]
        x = chain[0]
        for _ in range(self.length):
            up = self.parent[fingerprints, x].astype(np.int64)
            ok = alive[-1] & (up != NO_PARENT)
            into.append(self.label[fingerprints, x].astype(np.int64))
            x = np.where(ok, up, x)
            chain.append(x)
            alive.append(ok)
        return np.array(chain), np.array(into), np.array(alive)

    def _ranges(self, u: int, count: int):
        """The ranges of the preorder that hold u's trees (u excluded): flat start, length,
        fingerprint, floor (the smallest τ in the range) and whether τ is the floor throughout.

        Labels grow strictly towards the root (a walk that met a later page's walk at time t was
        still unmerged at t), so τ(u, w) is the largest label on the tree path between u and w,
        and with each page's children laid out in increasing label order, the pages that meet u
        at each time form a few contiguous ranges of the preorder (see :class:`TreeLayout`):
        u's own subtree after u (τ = running max of labels); for each ancestor a_j, [a_j, a_{j-1})
        (children met before a_{j-1}'s branch: τ = l_j) and the part after a_{j-1}'s subtree
        (τ = max(l_j, running max of labels)).
        """
        layout = self.layout()
        fingerprints = np.arange(count)
        pos, size = layout.position, layout.size
        chain, into, alive = self._chain(u, count)
        starts, stops, owners, floors, flat = [], [], [], [], []
        p0 = pos[fingerprints, chain[0]].astype(np.int64)
        starts.append(p0 + 1); stops.append(p0 + size[fingerprints, chain[0]]); owners.append(fingerprints)
        floors.append(np.zeros(count, dtype=np.int64)); flat.append(np.zeros(count, dtype=bool))
        for j in range(1, self.length + 1):
            ok = alive[j]
            if not ok.any():
                break
            f = fingerprints[ok]
            a, below = chain[j][ok], chain[j - 1][ok]
            pa, pb = pos[f, a].astype(np.int64), pos[f, below].astype(np.int64)
            level = into[j][ok]
            starts += [pa, pb + size[f, below]]
            stops += [pb, pa + size[f, a]]
            owners += [f, f]
            floors += [level, level]
            flat += [np.ones(len(f), dtype=bool), np.zeros(len(f), dtype=bool)]
        start, stop = np.concatenate(starts), np.concatenate(stops)
        owner, floor, constant = np.concatenate(owners), np.concatenate(floors), np.concatenate(flat)
        lengths = np.maximum(stop - start, 0)
        keep = lengths > 0
        return owner[keep] * self.n + start[keep], lengths[keep], owner[keep], floor[keep], constant[keep]

    def _gather(self, begin, lengths, owner, floor, constant) -> "_Members":
        """The members of the given ranges with their meeting times."""
        layout = self.layout()
        # Long ranges are copied as slices (a memory copy), short ones gathered by index.
        index_type = np.int32 if self.n_fingerprints * self.n < 2**31 else np.int64
        first = np.cumsum(lengths) - lengths
        total = int(lengths.sum())
        order, label = layout.order.reshape(-1), layout.label.reshape(-1)
        if total > self._slice_min * len(lengths):
            bounds = list(zip(begin.tolist(), (begin + lengths).tolist()))
            pages = np.concatenate([order[a:b] for a, b in bounds]) if bounds else np.zeros(0, np.int32)
            labels = np.concatenate([label[a:b] for a, b in bounds]) if bounds else np.zeros(0, np.int8)
        else:
            where = np.repeat((begin - first).astype(index_type), lengths)
            where += np.arange(total, dtype=index_type)
            pages, labels = order[where], label[where]
        # τ: the running max of labels within each range, started at the range's floor l_j
        # (constant ranges: the head a_j counts as l_j and every label after it is <= l_j).
        # Range r's values are offset by r·(length+1) so one cumulative max serves all ranges.
        labels[first[constant]] = 0
        labels[first] = np.maximum(labels[first], floor)
        step = self.length + 1
        keyed = np.repeat((np.arange(len(lengths)) * step).astype(index_type), lengths)
        keyed += labels
        np.maximum.accumulate(keyed, out=keyed)
        return _Members(pages, keyed, lengths, owner, step)

    def _members_of(self, u: int, n_fingerprints: int | None = None) -> "_Members":
        """The pages of u's trees (u excluded) with their meeting times, range by range."""
        count = self.n_fingerprints if n_fingerprints is None else n_fingerprints
        return self._gather(*self._ranges(u, count))

    def meeting_times_many(self, u: int, pages: np.ndarray, n_fingerprints: int | None = None) -> np.ndarray:
        """τ(u, v) for many pages v at once: a (len(pages), count) array (length+1: never met).

        v's lowest ancestor on u's path is the smallest a_j whose preorder range holds v; τ is
        l_j if v is a_j, else the larger of l_j and the label of v's branch under a_j.
        """
        count = self.n_fingerprints if n_fingerprints is None else n_fingerprints
        layout = self.layout()
        pages = np.asarray(pages, dtype=np.int64)
        fingerprints = np.arange(count)
        chain, into, alive = self._chain(u, count)  # (L+1, count)
        position = layout.position[fingerprints[None, :], pages[:, None]].astype(np.int64)  # (m, count)
        low = layout.position[fingerprints[None, :], chain].astype(np.int64)  # (L+1, count)
        high = low + layout.size[fingerprints[None, :], chain]
        inside = alive[None] & (low[None] <= position[:, None]) & (position[:, None] < high[None])  # (m, L+1, count)
        found = inside.any(axis=1)
        level = inside.argmax(axis=1)  # the lowest such ancestor
        anchor = chain[level, fingerprints[None, :]]
        floor = into[level, fingerprints[None, :]]
        # Climb from v to the child of the anchor: its label is the branch's meeting time.
        branch = np.zeros_like(position)
        x = np.broadcast_to(pages[:, None], position.shape).copy()
        climbing = found & (x != anchor)
        for _ in range(self.length):
            if not climbing.any():
                break
            up = self.parent[fingerprints[None, :], x].astype(np.int64)
            arrived = climbing & (up == anchor)
            branch[arrived] = self.label[fingerprints[None, :], x][arrived]
            climbing &= ~arrived
            x = np.where(climbing, up, x)
        times = np.maximum(floor, branch)
        times[~found] = self.length + 1
        times[pages == u] = 0
        return times

    def related_all_times(
        self, u: int, n_fingerprints: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fingerprint, page, τ) for every page of u's trees (u excluded), all fingerprints at once."""
        members = self._members_of(u, n_fingerprints)
        base = np.repeat(np.arange(len(members.lengths)) * members.step, members.lengths)
        return np.repeat(members.owner, members.lengths), members.pages.astype(np.int64), members.keyed - base

    def read_lists_as(self, page_major: bool, folder, bands: bool) -> None:
        """A run that makes every page's list: page-major copies or not (:meth:`prepare_all_pages`,
        into ``folder`` when given), the first-step bands or not; the walk state (stored with the
        index for the next update) is never read by the lists and goes."""
        self.use_page_major = page_major
        self.page_major_folder = folder
        self.walks = None
        if not bands:
            self.bands = False

    def list_order(self, pages: np.ndarray) -> np.ndarray:
        """Each twin class's pages in a row (:meth:`twin_classes`, built here, before the workers
        fork), so that the class is queried once."""
        klass = self.twin_classes()[0]
        return pages[np.argsort(klass[pages], kind="stable")]

    def twin_classes(self, n_fingerprints: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pages whose walks meet at step 1 in every one of the first ``n_fingerprints``
        fingerprints (typically the pages with one in-link, from the same page): ``(klass,
        indptr, members)``, ``klass[u]`` the class of u or -1, class j's pages
        ``members[indptr[j]:indptr[j+1]]`` in increasing order. Built once per count.

        Twins u, u' share every score but their own: for any other v, τ(u, v) = τ(u', v), since
        from step 1 on the two walks are one. Between them τ = 1 everywhere, the score c, which
        no page outside the class reaches (it meets u later than step 1 in some fingerprint).
        """
        count = self.n_fingerprints if n_fingerprints is None else n_fingerprints
        if count not in self._twins:
            pages = np.arange(self.n, dtype=np.int64)

            def first_step(i: int) -> np.ndarray:  # the page standing for u's group after step 1
                return np.where(self.label[i] == 1, self.parent[i], pages)

            # Hash the N first-step groups of each page, then check every page against the first
            # page of its hash group exactly (a collision leaves it alone). The groups are derived
            # again for the check rather than kept: N x V of them would be as large as the index.
            multipliers = np.random.default_rng(0x7715).integers(1, 2**63, size=count, dtype=np.uint64) | 1
            key = np.zeros(self.n, dtype=np.uint64)
            for i in range(count):
                key += first_step(i).astype(np.uint64) * multipliers[i]  # modulo 2^64
            order = np.argsort(key, kind="stable")
            starts = np.r_[True, key[order][1:] != key[order][:-1]]
            head = np.empty(self.n, dtype=np.int64)  # per page: the first page of its hash group
            head[order] = order[np.flatnonzero(starts)][np.cumsum(starts) - 1]
            for i in range(count):
                step = first_step(i)
                head = np.where(step == step[head], head, pages)
            _, group, sizes = np.unique(head, return_inverse=True, return_counts=True)
            twin = sizes[group] > 1
            klass = np.where(twin, (np.cumsum(sizes > 1) - 1)[group], -1)
            members = np.flatnonzero(twin)
            members = members[np.argsort(klass[members], kind="stable")]  # by class, then page
            indptr = np.zeros(int((sizes > 1).sum()) + 1, dtype=np.int64)
            np.cumsum(np.bincount(klass[members], minlength=len(indptr) - 1), out=indptr[1:])
            self._twins[count] = (klass, indptr, members)
        return self._twins[count]

    def _related_twin(self, u: int, twins: np.ndarray, top_k: int, decay: float, similarity_cutoff: float,
                      count: int, sample: int) -> tuple[list[tuple[int, float]], bool]:
        """u's list from its twin class: the other twins first (score c, by page), then the
        pages outside the class as the class's first page sees them (one query per class)."""
        others = twins[twins != u]
        head = [(int(v), decay) for v in others[:top_k]]
        if len(head) == top_k:
            return head, False
        key = (int(twins[0]), top_k, decay, similarity_cutoff, count, sample)
        if not self._twin_memo or self._twin_memo[0] != key:
            wider, cut = self._related_one(int(twins[0]), top_k + len(others), decay, similarity_cutoff, count,
                                           sample)
            inside = set(twins.tolist())
            self._twin_memo = (key, [(v, s) for v, s in wider if v not in inside], cut)
        return head + self._twin_memo[1][: top_k - len(head)], self._twin_memo[2]

    def related(
        self, u: int, top_k: int | None = 10, decay: float | None = None, similarity_cutoff: float = 0.0,
        n_fingerprints: int | None = None, sample: int | None = None,
    ) -> list[tuple[int, float]]:
        """Pages most similar to ``u`` (u excluded), best first: [(page, score)], ties by page.

        A top-k query reads a **sample** of u's large trees (:func:`linksim.fingerprints.treescan.top_k_sampled`):
        each range of u's members that meets u from step t on is read whole if it holds at most
        ``ceil(sample · c^(t-1))`` members, else at that many positions of a systematic sample (a
        member of a range of P is read with probability q / P, independently between ranges); the
        256 pages read with the largest partial sums and, for PSimRank, the 128 that share the most
        buckets of the first-step bands with u (:mod:`linksim.ranking.bands`) are scored exactly by Lemma 2,
        a twin class (:meth:`twin_classes`) counting as one page there, its pages listed in page order at
        the score of its first. Every
        score is exact (the float :meth:`sim` gives); a list is the exact one when no range was
        sampled, otherwise a page of the exact list is missing only if no sample read it nor any of
        its twins (a page meeting u in m sampled ranges only, of P_j members each, with probability
        Π (1 − q_j / P_j)) or its partial sum was not among the 256 largest, and it shared too few
        buckets to be among the 128 (a bucket of more than 8,192 pages is read at 8,192 positions
        of a systematic sample). Lists answered from a sample are counted in
        ``lists_sampled``; a page whose trees hold at most 20,000 members in all is read exactly
        (that costs less than the sample). ``sample`` None: the index's (16; PSimRank's 8); 0: the
        **exact** reading, u's trees
        in increasing meeting time until a bound proves the answer
        (:func:`linksim.fingerprints.treescan.top_k_one`). Without ``top_k`` every member is read.
        ``similarity_cutoff`` drops scores at or below it. A top-k query for a page with twins (see
        :meth:`twin_classes`) is answered from its class.
        """
        return self.related_one(u, Query.checked(top_k, similarity_cutoff), decay=decay,
                                n_fingerprints=n_fingerprints, sample=sample)

    def related_one(self, u: int, query: Query, decay: float | None = None, n_fingerprints: int | None = None,
                    sample: int | None = None) -> list[tuple[int, float]]:
        """:meth:`related` of a checked ``query``."""
        top_k, similarity_cutoff = query.top_k, query.similarity_cutoff
        check_parameters(decay=decay)
        sample = self.sample if sample is None else check_parameters(sample=sample)["sample"]
        count = check_fingerprints_asked(n_fingerprints, self.n_fingerprints)
        check_page(u, self.n)
        decay = self.decay if decay is None else decay
        if top_k is not None and self._use_twins and similarity_cutoff < decay:
            klass, indptr, members = self.twin_classes(count)
            if klass[u] >= 0:
                twins = members[indptr[klass[u]] : indptr[klass[u] + 1]]
                found, sampled = self._related_twin(u, twins, top_k, decay, similarity_cutoff, count, sample)
                self.lists_sampled += sampled
                return found
        found, sampled = self._related_one(u, top_k, decay, similarity_cutoff, count, sample)
        self.lists_sampled += sampled
        return found

    def lists(self, pages: np.ndarray, query: Query, sample: int | None = None) -> list[list[tuple[int, float]]]:
        """:meth:`related` of each of ``pages`` (``query.top_k`` >= 1, all fingerprints, the index's
        decay): the same lists, the pages outside twin classes answered in one compiled call
        (:func:`linksim.fingerprints.treescan.top_k_many`) rather than one call a page."""
        top_k, similarity_cutoff = query.top_k, query.similarity_cutoff
        sample = self.sample if sample is None else check_parameters(sample=sample)["sample"]
        pages = self._checked_pages(pages)
        count = self.n_fingerprints
        alone = np.ones(len(pages), dtype=bool)
        if self._use_twins and similarity_cutoff < self.decay:
            alone = self.twin_classes(count)[0][pages] < 0
        lists: list = [None] * len(pages)
        for r in np.flatnonzero(~alone).tolist():
            lists[r] = self.related_one(int(pages[r]), query, sample=sample)
        if alone.any():
            lengths, found, scores, sampled = top_k_many(
                read_only(pages[alone]), query_of(top_k, count, self.length, self.powers(self.decay), similarity_cutoff),
                self._reading(top_k, sample), int(self._exact_members), int(self._candidate_limit),
                float(self._rescore_cost), *self._tree(), self._scratch_arrays(), self._bands_read(sample),
                self._page_major, self._sample_twins())
            self.lists_sampled += int(sampled)
            ends = np.cumsum(lengths)
            found, scores = found.tolist(), scores.tolist()
            for r, end, length in zip(np.flatnonzero(alone).tolist(), ends.tolist(), lengths.tolist()):
                lists[r] = list(zip(found[end - length:end], scores[end - length:end]))
        return lists

    def _related_one(self, u: int, top_k: int | None, decay: float, similarity_cutoff: float,
                     count: int, sample: int = 0) -> tuple[list[tuple[int, float]], bool]:
        """u's list, and whether it was read from a sample of u's trees."""
        powers = self.powers(decay)
        if top_k is not None:
            if sample and self.tree_members(u, count) > self._exact_members:
                pages, scores, sampled = self._top_k_sample(u, top_k, powers, similarity_cutoff, count, sample)
            else:
                pages, scores, _ = self._top_k_scan(u, top_k, powers, similarity_cutoff, count)
                sampled = False
            return top_pairs(pages, scores, u, top_k, similarity_cutoff), sampled
        # Every member: summed in increasing τ (stable), the order every other path sums in.
        owner, pages, times = self.related_all_times(u, count)
        by_time = np.argsort(times, kind="stable")
        pages, weights = pages[by_time], powers[times[by_time]]
        if len(pages) * self._few_members < self.n:  # few members: no pass over all pages
            unique, inverse = np.unique(pages, return_inverse=True)
            sums = np.bincount(inverse.ravel(), weights=weights, minlength=len(unique)) / count
            return top_pairs(unique, sums, u, top_k, similarity_cutoff), False
        scores = np.bincount(pages, weights=weights, minlength=self.n) / count
        return top_scores(scores, u, top_k, similarity_cutoff), False

    def exact_cut(self, u: int, top_k: int, n_fingerprints: int | None = None) -> tuple[float | None, np.ndarray]:
        """u's ``top_k``-th best score in the exact reading and every page scoring it within 1e-12
        (u excluded; int64, increasing): the pages among which an exact top-k list chooses by page
        number. ``(None, [])`` when the list has no choice to make (no page outside it scores its k-th
        best score, or at most ``top_k`` pages score above 0)."""
        top_k = Query.checked(top_k).top_k
        count = check_fingerprints_asked(n_fingerprints, self.n_fingerprints)
        check_page(u, self.n)
        pages, scores, _ = self._top_k_scan(u, top_k, self.powers(self.decay), 0.0, count)
        keep = pages != u
        pages, scores = pages[keep], scores[keep]
        if len(scores) <= top_k:
            return None, np.empty(0, dtype=np.int64)
        kth = float(np.sort(np.round(scores, 12))[::-1][top_k - 1])
        tied = np.sort(pages[np.abs(np.round(scores, 12) - kth) <= 1e-12]).astype(np.int64)
        return float(scores[pages == tied[0]][0]), tied

    def tree_members(self, u: int, count: int | None = None) -> int:
        """Members of u's trees in the first ``count`` fingerprints (u excluded), found as the
        compiled queries find them (:func:`linksim.fingerprints.treescan._tree_chain`): no subtree size is read."""
        count = self.n_fingerprints if count is None else count
        return int(_trees_of(int(u), count, self.length, *self._tree())[4])

    def query_arrays(self) -> tuple:
        """What a compiled score of page pairs reads (:func:`linksim.fingerprints.treescan.scores_with`):
        (tree, by_page, page-major rows), after :meth:`prepare_exact_scores` the rows :meth:`sims` reads."""
        return (*self._tree(), self._page_major)

    def _tree(self) -> tuple[tuple, bool]:
        """What the compiled queries read of the trees, and whether its positions are page-major:
        the preorder (pages, labels), the labels' block maxima (:func:`label_blocks`) and each
        page's position in every fingerprint, the page-major rows' where :meth:`prepare_all_pages`
        made them (the layout's (N, V) positions are then not read). Parents and subtree sizes are
        not read: u's ancestors and their subtrees are found from the labels."""
        if not self._query_arrays:
            layout = self.layout()
            self._query_arrays = (read_only(layout.order), read_only(layout.label), *label_blocks(layout.label))
        by_page = self._page_major[0].shape[0] > 0
        position = self._page_major[0] if by_page else read_only(self.layout().position)
        return (*self._query_arrays, position), by_page

    def _query_scratch(self):
        """This thread's scratch arrays."""
        scratch = self._scratch
        if getattr(scratch, "n", None) != self.n:
            scratch.acc = np.zeros(self.n, dtype=np.float64)
            scratch.seen = np.zeros(self.n, dtype=np.int32)
            scratch.touched = np.zeros(self.n, dtype=np.int32)
            scratch.hits = np.zeros(self.n, dtype=np.uint16)  # first-step bands shared (treescan._band_frequent)
            scratch.n = self.n
        return scratch

    def _top_k_scan(self, u: int, top_k: int, powers: np.ndarray, similarity_cutoff: float, count: int):
        """The exact level-by-level query (:func:`linksim.fingerprints.treescan.top_k_one`): pages, scores
        and the level that proved them."""
        return top_k_one(int(u), query_of(top_k, count, self.length, powers, similarity_cutoff),
                         int(self._candidate_limit), float(self._rescore_cost), *self._tree(), self._scratch_arrays(),
                         self._page_major)

    def first_step_bands(self) -> tuple:
        """The first-step bands of the fingerprints (:mod:`linksim.ranking.bands`), built once for
        the reading's ``_band_cap`` and ``_band_sample`` (a bucket above the cap holds its sample
        first): a twin's entry its class's representative, where a sampled query takes a class as
        one candidate (``_twin_candidates``). A reading of another cap or sample has bands of its
        own."""
        key = (bool(self._twin_candidates), *self._band_reads())
        if key not in self._bands:
            from linksim.ranking.bands import first_step_bands

            rep = self._sample_twins()[0] if key[0] else None
            self._bands[key] = tuple(read_only(a) for a in first_step_bands(self.parent, self.label, rep=rep,
                                                                            cap=key[1], sample=key[2]))
        return self._bands[key]

    def prepare_all_pages(self) -> None:
        """Before the lists of all pages: what the queries read besides the index, built once
        before workers fork: the first-step bands, the twin classes as the sampled queries read them,
        and (``use_page_major``, walks of at most 15
        steps) each page's position and path labels (the labels of the edges from it to its root,
        as bits) in every fingerprint side by side, (V, N) rows of 6 bytes a page and fingerprint:
        a candidate is scored exactly from its own row, a few cache lines, instead of a miss in
        every fingerprint and a walk up its ancestors (the same floats); into memory-mapped files
        in ``page_major_folder`` where that is set (a run whose budget does not hold them)."""
        if self.bands and self._band_candidates and \
                self.n_fingerprints * self.n > self._exact_members:
            self.first_step_bands()
        self._sample_twins()
        self.prepare_exact_scores()

    def prepare_exact_scores(self) -> None:
        """The page-major rows of :meth:`prepare_all_pages` alone (``use_page_major``, an index of
        more members than a query reads whole): what the exact score of a page pair reads
        (:meth:`sims`), where the pairs are not those of a scan of u's trees."""
        if self.use_page_major and self._page_major[0].shape[0] == 0 and self.n_fingerprints * self.n > self._exact_members:
            layout = self.layout()
            self._page_major = page_major(self.parent, self.label, layout.position, layout.order, self.length,
                                          self.page_major_folder)

    def _reading(self, top_k: int, sample: int) -> tuple[int, int, int]:
        """A sampled reading as the kernels take it: (sample, pages scored exactly, finalists)."""
        return (int(sample), int(max(self._sample_candidates, 2 * top_k)),
                int(max(self._sample_finalists, 2 * top_k)))

    def _scratch_arrays(self) -> tuple:
        """This thread's query scratch as the kernels take it: (acc, seen, touched, hits)."""
        scratch = self._query_scratch()
        return scratch.acc, scratch.seen, scratch.touched, scratch.hits

    def _bands_read(self, sample: int) -> tuple:
        """The first-step bands as a sampled reading takes them (:func:`treescan._band_frequent`):
        (order, start, stop, largest bucket read whole, pages read from a larger one, pages added)."""
        banded, bands = self._sample_bands() if sample else (0, (_NO_BANDS,) * 3)
        return (*bands, *self._band_reads(), int(banded))

    def _band_reads(self) -> tuple[int, int]:
        """(the largest bucket read whole, the pages read from a larger one)."""
        cap = int(self._band_cap)
        return cap, cap if self._band_sample is None else min(int(self._band_sample), cap)

    def _sample_bands(self) -> tuple[int, tuple]:
        """(pages a sampled query adds from the first-step bands, the bands' arrays): none for a
        method without band candidates or an index read without bands."""
        banded = self._band_candidates if self.bands else 0
        return banded, self.first_step_bands() if banded else (_NO_BANDS,) * 3

    def _checked_pages(self, pages) -> np.ndarray:
        """``pages`` as int64, each a page of this index (:func:`check_page` names the first wrong one)."""
        pages = np.asarray(pages, dtype=np.int64)
        if len(pages) and (pages.min() < 0 or pages.max() >= self.n):
            check_page(int(pages.min() if pages.min() < 0 else pages.max()), self.n)
        return pages

    def _top_k_sample(self, u: int, top_k: int, powers: np.ndarray, similarity_cutoff: float, count: int,
                      sample: int):
        """The sampled query (:func:`linksim.fingerprints.treescan.top_k_sampled`): pages, scores and
        whether a range was sampled. The bands are those of all the fingerprints, also when a query
        asks for fewer (a band is a hash of the walks, not a score)."""
        return top_k_sampled(int(u), query_of(top_k, count, self.length, powers, similarity_cutoff),
                             self._reading(top_k, sample), *self._tree(), self._scratch_arrays(),
                             self._bands_read(sample), self._page_major, self._sample_twins())

    def _sample_twins(self) -> tuple:
        """What a sampled query reads of the twin classes of all the fingerprints (valid for a
        query of fewer: pages that meet at step 1 in every fingerprint do in the first few), so
        that a class is one candidate (:func:`linksim.fingerprints.treescan._top_k_sampled`)."""
        if not self._twin_candidates:
            return NO_TWINS
        if not self._twin_reads:
            self._twin_reads = twin_arrays(*self.twin_classes(self.n_fingerprints))
        return self._twin_reads

    def tree_sizes(self, u: int | None = None) -> np.ndarray:
        """Sizes of all fingerprint trees (or of u's tree in each fingerprint)."""
        layout = self.layout()
        rows = np.arange(self.n_fingerprints)
        if u is not None:
            return layout.size[rows, layout.root[:, u]].astype(np.int64)
        return layout.size[self.parent == NO_PARENT].astype(np.int64)


def score_of_times(times: np.ndarray, powers: np.ndarray) -> float:
    """The score of one pair from its meeting times in increasing order: c^τ summed one term
    after another (a cumulative sum, not numpy's pairwise sum), divided by their count."""
    return float(np.cumsum(powers[times])[-1] / len(times)) if len(times) else 0.0


def tree_sizes_by_length(index: FingerprintIndex) -> dict[int, tuple[float, int]]:
    """(mean, max) fingerprint tree size for every walk length L' = 1..L of one index.

    The index of length L' is the one of length L with the edges labelled above L' removed
    (walks that meet later than L' are not joined), as in the 2005 paper's Fig. 5. The mean is
    over trees (components of the forest), a page alone being a tree of one.
    """
    count, n = index.parent.shape
    pages = np.arange(n)
    sizes: dict[int, list[np.ndarray]] = {cut: [] for cut in range(1, index.length + 1)}
    for i in range(count):
        parent, label = index.parent[i], index.label[i]
        for cut in range(1, index.length + 1):
            root = np.where((parent != NO_PARENT) & (label <= cut), parent, pages)
            for _ in range(int(np.ceil(np.log2(index.length + 1))) + 1):  # pointer doubling
                root = root[root]
            counts = np.bincount(root, minlength=n)
            sizes[cut].append(counts[counts > 0])
    result = {}
    for cut, parts in sizes.items():
        trees = np.concatenate(parts)
        result[cut] = (float(trees.mean()), int(trees.max()))
    return result


@dataclass
class _Members:
    pages: np.ndarray  # page of each member, range after range
    keyed: np.ndarray  # its meeting time plus range · step
    lengths: np.ndarray  # members per range
    owner: np.ndarray  # fingerprint of each range
    step: int


#: Pages times fingerprints from which the layout's build shows progress (some seconds and up).
LAYOUT_PROGRESS = 50_000_000


@dataclass
class TreeLayout:
    """Every fingerprint's forest in preorder, each page's children in increasing label order.

    A page's subtree is the range ``position[u] .. position[u] + size[u]`` of ``order``; within
    it, the children's subtrees follow one another by label. ``label`` is the label of the page
    at each position (of its edge to its parent). Arrays are (N, V).
    """

    order: np.ndarray
    position: np.ndarray
    size: np.ndarray
    label: np.ndarray
    root: np.ndarray

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.order, self.position, self.size, self.label, self.root))

    @classmethod
    def build(cls, parent: np.ndarray, label: np.ndarray, directory=None) -> "TreeLayout":
        """A fingerprint a thread, in compiled code (:func:`_lay_out`); with ``directory``, into
        memory-mapped files there. A layout of many pages shows its progress where linksim logs at
        info level. A forest of any depth is laid out."""
        import logging

        from linksim.progress import Progress

        count, n = parent.shape
        progress = Progress(count, "tree layout", "fingerprints", enabled=count * n >= LAYOUT_PROGRESS
                            and logging.getLogger("linksim").isEnabledFor(logging.INFO))
        shape = (count, n)
        order, position = new_array(directory, "layout_order", shape, np.int32), new_array(
            directory, "layout_position", shape, np.int32)
        size, ordered_label = new_array(directory, "layout_size", shape, np.int32), new_array(
            directory, "layout_label", shape, np.int8)
        roots = new_array(directory, "layout_root", shape, np.int32)

        # One fingerprint a thread (the kernel lets go of the GIL), each row written by its own.
        def lay_out(i: int) -> None:
            visited = _lay_out(np.asarray(parent[i]), np.asarray(label[i]), order[i], position[i], size[i],
                               ordered_label[i], roots[i])
            if visited != n:
                raise ValueError(f"fingerprint {i}'s parents are not a forest ({visited:,} of {n:,} pages reached)")

        threads = min(usable_cores(), count)
        if threads > 1:
            with ThreadPoolExecutor(threads) as pool:
                for _ in pool.map(lay_out, range(count)):
                    progress.update(1)
        else:
            for i in range(count):
                lay_out(i)
                progress.update(1)
        progress.close()
        return cls(order, position, size, ordered_label, roots)


@njit(cache=True, nogil=True)
def _lay_out(up, label, order, position, size, ordered_label, root) -> int:
    """One fingerprint's forest (``up``: each page's parent, NO_PARENT at a root) in preorder: the
    roots by page, each page's children by (label, page), as counting sorts; the subtree sizes
    summed in reverse preorder. Returns the pages laid out (n in a forest)."""
    n = len(up)
    # Children by label (stable over pages), then by parent (stable): by (parent, label, page).
    start = np.zeros(257, dtype=np.int64)
    for u in range(n):
        if up[u] != NO_PARENT:
            start[np.int64(label[u]) + 129] += 1
    for k in range(256):
        start[k + 1] += start[k]
    by_label = np.empty(start[256], dtype=np.int32)
    for u in range(n):
        if up[u] != NO_PARENT:
            k = np.int64(label[u]) + 128
            by_label[start[k]] = u
            start[k] += 1
    first = np.zeros(n + 1, dtype=np.int64)
    for u in by_label:
        first[up[u] + 1] += 1
    for u in range(n):
        first[u + 1] += first[u]
    children = np.empty(len(by_label), dtype=np.int32)
    fill = first[:-1].copy()
    for u in by_label:
        p = up[u]
        children[fill[p]] = u
        fill[p] += 1
    # Preorder by an explicit stack: children pushed last first, so the first is taken next.
    stack = np.empty(n, dtype=np.int32)
    at = 0
    for r in range(n):
        if up[r] != NO_PARENT:
            continue
        stack[0] = r
        top = 1
        while top > 0:
            top -= 1
            u = stack[top]
            order[at] = u
            position[u] = at
            ordered_label[at] = label[u]
            root[u] = u if up[u] == NO_PARENT else root[up[u]]
            at += 1
            for k in range(first[u + 1] - 1, first[u] - 1, -1):
                stack[top] = children[k]
                top += 1
    for u in range(n):
        size[u] = 1
    for k in range(at - 1, -1, -1):
        u = order[k]
        if up[u] != NO_PARENT:
            size[up[u]] += size[u]
    return at
