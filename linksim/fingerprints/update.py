"""Bringing a fingerprint index up to date with a changed graph: the index a rebuild on the new
graph gives, bit for bit, from the walks that the change touches (issue 28, recrawls).

Why it can be done: every choice of a walk is a pure function of (seed, fingerprint, step, page)
and of the page's own links (:mod:`linksim.fingerprints.randomness`), so between two graphs the
choices differ only on the pages whose links changed (their in-links; for P-PSimRank, the links
of the direction that the step's coin chose). And walks meet fast: on the generated 10M-link crawl
0.2 groups of coalesced walks per page are left after the first step, 0.06 after the second, so
the build's state after each step (:class:`WalkState`, about 1.3 groups a page over all steps) is
a fraction of the index.

The update replays the build (:func:`linksim.fingerprints.walks.build_index`) step by step,
fingerprint by fingerprint, but only where something differs. At step ``t`` a group of coalesced
walks (its representative, its smallest start page, and the page it stands on) is *clean* when
the old state had it too, on the same page, and its next page is the same on both graphs (the
choice is drawn again only where the page's links changed: a min-hash choice mostly stays). A
clean group goes where it went before, which the stored state and the old fingerprint graph say
(the group the old walks formed on that page, or the representative it met). Every other group,
and every group that the old state had but the new one has not, *touches* the page it goes to and
the page it went to. On a page no one touches the groups arriving are the old ones, so the old
meeting stands: its fingerprint-graph edges and the group leaving it are kept as they were. On a
touched page the arrivals are met again as the build meets them: the smallest representative goes
on, the others point to it with label ``t``. A representative that goes on, or a walk that stops,
loses the old edge of a later meeting (its label is checked at every step). Cost: every group of
every step is looked at (vectorised), choices are drawn only for the groups on changed pages and
the dirty groups.

Pages come and go: a recrawl adds pages and deletes pages no longer linked to, anywhere in the
page order. A page's draws are keyed by its URL (:attr:`linksim.graph.LinkGraph.codes`), not its
number, so the update works in a page order holding the pages of both graphs (:func:`common_order`),
where a page of one graph only has no links in the other, and carries the result to the new
graph's order.
"""

from __future__ import annotations

import queue
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit, uint64

from linksim.digest import graph_fingerprint
from linksim.errors import ConfigurationError
from linksim.fingerprints.index import NO_PARENT, FingerprintIndex
from linksim.fingerprints.kinds import WalkKind
from linksim.fingerprints.state import WalkState
from linksim.fingerprints.randomness import _first, _order_key, inward, page_stream, stream_key
from linksim.graph import LinkGraph
from linksim.progress import Progress
from linksim.arrays import read_only
from linksim.cores import usable_cores


def changed_pages(old: np.ndarray, old_indices: np.ndarray, new: np.ndarray, new_indices: np.ndarray,
                  n_new: int) -> np.ndarray:
    """Which pages' neighbour lists (CSR ``indptr``/``indices``, old and new) differ: a bool per
    page of the new graph, True for every page the old graph did not have."""
    n_old = len(old) - 1
    changed = np.ones(n_new, dtype=bool)
    old_degree, new_degree = np.diff(old), np.diff(new[: n_old + 1])
    same_degree = old_degree == new_degree
    changed[:n_old] = ~same_degree
    # Pages of one degree: compare their lists link by link (a link differs -> its page changed).
    pages = np.flatnonzero(same_degree & (old_degree > 0))
    if len(pages):
        lengths = old_degree[pages]
        owner = np.repeat(pages, lengths)
        within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        differs = old_indices[old[owner] + within] != new_indices[new[owner] + within]
        changed[np.unique(owner[differs])] = True
    return changed


@njit(cache=True, nogil=True)
def _deltas(pages, n, old_indptr, old_indices, new_indptr, new_indices):
    """For each of ``pages`` (increasing), the neighbours its list gained and lost between the
    old and new CSR lists (both sorted): ``(added_indptr, added, removed_indptr, removed)``,
    indptrs a page of the new graph (``n``)."""
    n_old = len(old_indptr) - 1
    added_count = np.zeros(n + 1, dtype=np.int64)
    removed_count = np.zeros(n + 1, dtype=np.int64)
    capacity = 0
    for p in pages:
        capacity += new_indptr[p + 1] - new_indptr[p]
        if p < n_old:
            capacity += old_indptr[p + 1] - old_indptr[p]
    added = np.empty(capacity, dtype=np.int64)
    removed = np.empty(capacity, dtype=np.int64)
    n_added = n_removed = 0
    added_at = np.empty(len(pages), dtype=np.int64)
    removed_at = np.empty(len(pages), dtype=np.int64)
    for j in range(len(pages)):
        p = pages[j]
        a, a_end = (old_indptr[p], old_indptr[p + 1]) if p < n_old else (0, 0)
        b, b_end = new_indptr[p], new_indptr[p + 1]
        added_at[j], removed_at[j] = n_added, n_removed
        while a < a_end or b < b_end:
            if b == b_end or (a < a_end and old_indices[a] < new_indices[b]):
                removed[n_removed] = old_indices[a]
                n_removed += 1
                a += 1
            elif a == a_end or new_indices[b] < old_indices[a]:
                added[n_added] = new_indices[b]
                n_added += 1
                b += 1
            else:
                a += 1
                b += 1
        added_count[p + 1] = n_added - added_at[j]
        removed_count[p + 1] = n_removed - removed_at[j]
    return np.cumsum(added_count), added[:n_added], np.cumsum(removed_count), removed[:n_removed]


def update_index(index: FingerprintIndex, old_graph: LinkGraph, new_graph: LinkGraph,
                 show_progress: bool = False, max_share: float = 1.0, check_graph: bool = True) -> FingerprintIndex:
    """The index of ``index``'s method and parameters on ``new_graph``, equal bit for bit to
    :func:`~linksim.fingerprints.walks.build_index` there (``keep_walks=True``: the walk state
    comes updated too), computed from ``index`` (built on ``old_graph`` with its walk state) and
    the pages whose links changed.

    Pages are matched by their draw codes (:attr:`LinkGraph.codes`: a hash of the URL, or the
    page's number in a graph without keys), which are all the update reads of them. Pages that
    the new graph adds or no longer has may come anywhere in the page order: the pages of both
    keep their order (a page's number is its place among the database's internal ids, which a
    page keeps) and their draws. The index is then carried to a page order holding the pages of
    both graphs, where a page of one graph only is a page without links in the other, updated
    there, and carried to the new graph's order.

    ``max_share``: the share of the pages whose links may have changed (beyond, the update would
    cost about a build: it refuses). The updated index's ``changed_pages`` says how many did.
    ``check_graph``: compare the digest of ``old_graph`` with the index's (False: the caller
    knows it is the graph the index was built from, as the store keeps it beside the index).

    Raises
    ------
    ConfigurationError
        The index has no walk state or was not built on ``old_graph``; or the pages the two graphs
        share are not in the same order, or two pages of a graph share a code; or more than
        ``max_share`` of the pages changed: rebuild.
    """
    walk = index.walk
    if walk is None:
        raise ConfigurationError(f"the {index.method} index does not know how its walks chose: rebuild it")
    if index.walks is None:
        raise ConfigurationError("the index was built without its walk state (build_index(keep_walks=True))")
    if check_graph and index.graph_fingerprint != graph_fingerprint(old_graph):
        raise ConfigurationError("the index was not built on the old graph given")
    if _old_pages_first(old_graph, new_graph):
        updated = _update(index, old_graph, new_graph, walk, show_progress, max_share)
    else:
        updated = _update_renumbered(index, old_graph, new_graph, walk, show_progress, max_share)
    updated.graph_fingerprint = graph_fingerprint(new_graph)
    return updated


def common_order(old_keys, new_keys) -> tuple[np.ndarray, np.ndarray, int]:
    """A page order holding the pages of two graphs, named by their keys (draw codes, or any
    sortable values), in which both graphs' pages keep their order: ``(old_at, new_at, size)``,
    the place of each old and each new page (a page of both has one place). A page of one graph
    only comes right after the last page of both before it (old ones first).

    Raises
    ------
    ConfigurationError
        The pages of both graphs are not in the same order in each, or two pages of a graph
        share a key.
    """
    old_keys, new_keys = np.asarray(old_keys), np.asarray(new_keys)
    by_key = np.argsort(old_keys, kind="stable")
    ordered = old_keys[by_key]
    if (ordered[1:] == ordered[:-1]).any() or len(np.unique(new_keys)) != len(new_keys):
        raise ConfigurationError("two pages of a graph share a draw code: rebuild")
    found = np.minimum(np.searchsorted(ordered, new_keys), max(len(ordered) - 1, 0))
    new_to_old = np.full(len(new_keys), -1, dtype=np.int64)
    if len(ordered):
        hit = ordered[found] == new_keys
        new_to_old[hit] = by_key[found[hit]]
    shared = new_to_old >= 0
    if not (np.diff(new_to_old[shared]) > 0).all():
        raise ConfigurationError("the pages of both graphs are not in the same order: rebuild")
    n_old = len(old_keys)
    # Sort keys (old place of the last shared page at or before, 0 old / 1 new only, new place).
    last_shared = np.maximum.accumulate(np.where(shared, new_to_old, -1))
    added = np.flatnonzero(~shared)
    first = np.concatenate([np.arange(n_old), last_shared[added]])
    second = np.concatenate([np.zeros(n_old, dtype=np.int64), np.ones(len(added), dtype=np.int64)])
    third = np.concatenate([np.zeros(n_old, dtype=np.int64), added])
    order = np.lexsort((third, second, first))
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    old_at = place[:n_old]
    new_at = np.empty(len(new_keys), dtype=np.int64)
    new_at[shared] = old_at[new_to_old[shared]]
    new_at[added] = place[n_old:]
    return old_at, new_at, len(order)


def _with_arrays(index: FingerprintIndex, parent: np.ndarray, label: np.ndarray) -> FingerprintIndex:
    """A new index of ``index``'s method and parameters holding ``parent`` and ``label`` (nothing
    derived from the old arrays, such as their tree layout, is carried over)."""
    return FingerprintIndex(parent, label, index.method, index.length, index.seed, index.graph_fingerprint,
                            index.decay, walk=index.walk, reading=dict(index.reading))


def _old_pages_first(old_graph: LinkGraph, new_graph: LinkGraph) -> bool:
    """Does the new graph hold the old one's pages first, in their order (the same codes)?"""
    return new_graph.n >= old_graph.n and np.array_equal(old_graph.codes, new_graph.codes[: old_graph.n])


def _both_graphs(old_graph: LinkGraph, new_graph: LinkGraph):
    """The two graphs in an order holding the pages of both (:func:`common_order`), where a page
    of one graph only has no links in the other: ``(old_at, new_at, size, old, new)``."""
    old_at, new_at, size = common_order(old_graph.codes, new_graph.codes)
    codes = np.empty(size, dtype=np.uint64)
    codes[old_at], codes[new_at] = old_graph.codes, new_graph.codes
    return old_at, new_at, size, _carried(old_graph, old_at, size, codes), _carried(new_graph, new_at, size, codes)


def _carried(graph: LinkGraph, at: np.ndarray, size: int, codes: np.ndarray) -> LinkGraph:
    source, target = graph.edges()
    return LinkGraph.from_edges(at[source], at[target], size, codes=codes)


def _update_renumbered(index: FingerprintIndex, old_graph: LinkGraph, new_graph: LinkGraph, walk: WalkKind,
                       show_progress: bool, max_share: float) -> FingerprintIndex:
    old_at, new_at, size, old, new = _both_graphs(old_graph, new_graph)
    # The old index in the common order: the new graph's own pages are pages without links there,
    # whose walks stop at once (or, P-PSimRank's, stay where they are and meet no one).
    carried = _renumbered(index, old_at, size, walk.closed)
    updated = _update(carried, old, new, walk, show_progress, max_share)
    # And in the new graph's order: the old graph's own pages are pages without links now.
    place = np.full(size, -1, dtype=np.int64)
    place[new_at] = np.arange(new_graph.n)
    renumbered = _renumbered(updated, place, new_graph.n, False, keep=new_at)
    renumbered.changed_pages = updated.changed_pages
    return renumbered


def _renumbered(index: FingerprintIndex, at: np.ndarray, size: int, alone_stay: bool,
                keep: np.ndarray | None = None) -> FingerprintIndex:
    """``index`` with page ``p`` numbered ``at[p]`` among ``size`` pages (``at`` increasing where
    it is not -1), the pages given no number (-1) left out: their walks met no one. ``keep``: the
    pages that stay (default: all). ``alone_stay``: the pages that get no page of the index (they
    have no links) stand on themselves at every step (P-PSimRank's walks never stop)."""
    keep = np.arange(index.n) if keep is None else keep
    parent = np.full((index.n_fingerprints, size), NO_PARENT, dtype=np.int32)
    label = np.zeros((index.n_fingerprints, size), dtype=np.int8)
    targets = at[keep]
    for i in range(index.n_fingerprints):
        row = np.asarray(index.parent[i])[keep]
        has = row >= 0
        mapped = np.full(len(keep), NO_PARENT, dtype=np.int64)
        mapped[has] = at[row[has]]
        parent[i, targets] = mapped
        label[i, targets] = np.asarray(index.label[i])[keep]
    walks = index.walks
    representatives = at[walks.representatives]
    positions = at[walks.positions]
    kept = representatives >= 0
    length, segments = walks.length, len(walks.offsets) - 1
    segment = np.repeat(np.arange(segments), np.diff(walks.offsets))[kept]
    representatives, positions = representatives[kept], positions[kept]
    if alone_stay:
        alone = np.setdiff1d(np.arange(size), targets)
        segment = np.concatenate([segment, np.repeat(np.arange(segments), len(alone))])
        representatives = np.concatenate([representatives, np.tile(alone, segments)])
        positions = np.concatenate([positions, np.tile(alone, segments)])
        order = np.lexsort((positions, segment))
        segment, representatives, positions = segment[order], representatives[order], positions[order]
    offsets = np.zeros(segments + 1, dtype=np.int64)
    np.cumsum(np.bincount(segment, minlength=segments), out=offsets[1:])
    carried = _with_arrays(index, parent, label)
    carried.walks = WalkState(offsets, representatives.astype(np.int32), positions.astype(np.int32), length)
    return carried


def _update(index: FingerprintIndex, old_graph: LinkGraph, new_graph: LinkGraph, walk: WalkKind,
            show_progress: bool, max_share: float = 1.0) -> FingerprintIndex:
    """:func:`update_index` where the new graph holds the old one's pages first, in their order."""
    changed_in = changed_pages(old_graph.in_indptr, old_graph.in_indices, new_graph.in_indptr,
                               new_graph.in_indices, new_graph.n)
    changed_out = None
    if walk.closed:
        changed_out = changed_pages(old_graph.out_indptr, old_graph.out_indices, new_graph.out_indptr,
                                    new_graph.out_indices, new_graph.n)
    changed = int((changed_in if changed_out is None else changed_in | changed_out).sum())
    if changed > max_share * new_graph.n:
        raise ConfigurationError(f"{changed:,} of {new_graph.n:,} pages' links changed, more than an update pays "
                                 f"for ({max_share:.0%} of the pages)")
    n_fingerprints, length = index.n_fingerprints, index.length
    parent = np.full((n_fingerprints, new_graph.n), NO_PARENT, dtype=np.int32)
    label = np.zeros((n_fingerprints, new_graph.n), dtype=np.int8)
    kind = walk.code
    steps = range(1, length + 1)
    keys = [stream_key(index.seed, i, step) for i in range(n_fingerprints) for step in steps]
    inwards = np.array([not walk.closed or inward(key) for key in keys], dtype=np.bool_).reshape(n_fingerprints, length)
    keys = np.array(keys, dtype=np.uint64).reshape(n_fingerprints, length)
    lists = (np.flatnonzero(changed_in), np.flatnonzero(changed_out) if changed_out is not None else None)
    deltas_in = _deltas(lists[0], new_graph.n, old_graph.in_indptr, old_graph.in_indices, new_graph.in_indptr,
                        new_graph.in_indices)
    deltas_out = deltas_in
    if lists[1] is not None:
        deltas_out = _deltas(lists[1], new_graph.n, old_graph.out_indptr, old_graph.out_indices,
                             new_graph.out_indptr, new_graph.out_indices)
    changed_out = changed_in if changed_out is None else changed_out
    # Every array the kernel only reads goes as a plain read-only view: one compiled signature
    # whether the old index and graph come from memory or from the store's memory maps.
    keys, inwards, changed_in, changed_out = (read_only(a) for a in (keys, inwards, changed_in, changed_out))
    lists = tuple(None if a is None else read_only(a) for a in lists)
    deltas_in, deltas_out = (tuple(read_only(a) for a in d) for d in (deltas_in, deltas_out))
    graphs = tuple(read_only(a) for a in (old_graph.in_indptr, old_graph.in_indices, old_graph.out_indptr,
                                          old_graph.out_indices, new_graph.in_indptr, new_graph.in_indices,
                                          new_graph.out_indptr, new_graph.out_indices, new_graph.codes))
    changes = (lists[0], lists[0] if lists[1] is None else lists[1], changed_in, changed_out, deltas_in, deltas_out)
    identity = read_only(np.arange(old_graph.n, dtype=np.int32))
    new_pages = read_only(np.arange(old_graph.n, new_graph.n, dtype=np.int32))
    offsets = index.walks.offsets
    # Fingerprints are replayed apart (the kernel releases the GIL), a scratch a thread: each one
    # is left as it was found, so a thread's next fingerprint takes it as it is.
    scratches: queue.SimpleQueue = queue.SimpleQueue()
    threads = max(1, min(usable_cores(), n_fingerprints))
    for _ in range(threads):
        scratches.put((np.zeros(new_graph.n, dtype=np.int8), np.full(new_graph.n, -1, dtype=np.int64),
                       np.full(new_graph.n, -1, dtype=np.int64), np.full(new_graph.n, -1, dtype=np.int64),
                       np.zeros(old_graph.n + 1, dtype=np.int64), np.empty(old_graph.n, dtype=np.int32)))

    def replay(i: int):
        begin, end = offsets[i * length], offsets[(i + 1) * length]
        parent[i, : old_graph.n] = index.parent[i]
        label[i, : old_graph.n] = index.label[i]
        scratch = scratches.get()
        try:
            return _replay(
                kind, keys[i], inwards[i], graphs, changes,
                (read_only(index.walks.positions[begin:end]), read_only(index.walks.representatives[begin:end]),
                 read_only(offsets[i * length : (i + 1) * length + 1] - begin)), identity, new_pages,
                (read_only(index.parent[i]), read_only(index.label[i])), (parent[i], label[i]), scratch, _FEW_BACK)
        finally:
            scratches.put(scratch)

    positions, representatives, sizes = [], [], np.zeros(n_fingerprints * length, dtype=np.int64)
    with Progress(n_fingerprints, f"{index.method} fingerprints updated", "fingerprints",
                  enabled=show_progress) as progress, ThreadPoolExecutor(threads) as pool:
        for i, (state_positions, state_representatives, bounds) in enumerate(pool.map(replay, range(n_fingerprints))):
            positions.append(state_positions)
            representatives.append(state_representatives)
            sizes[i * length : (i + 1) * length] = np.diff(bounds)
            progress.update(1)
    walk_offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=walk_offsets[1:])
    updated = _with_arrays(index, parent, label)
    updated.walks = WalkState(walk_offsets, np.concatenate(representatives), np.concatenate(positions), length)
    updated.changed_pages = changed
    return updated


#: A touched page reached from more pages than this: its old meeting is read from the old
#: fingerprint graph's children (built once for the fingerprint), not from its pages.
_FEW_BACK = 1024


@njit(inline="always")
def _choose(kind, key, page, indptr, indices, codes):
    """Where a walk on ``page`` goes (the kernels of :mod:`linksim.fingerprints.randomness`, one
    page): 0 the in-neighbour smallest in the page's own order, 1 the smallest in the stream's
    order, 2 the smallest of the page and its neighbours; -1 none."""
    begin, end = indptr[page], indptr[page + 1]
    if kind == 2:
        best = _order_key(key, page, codes[page])
        for i in range(begin, end):
            o = _order_key(key, indices[i], codes[indices[i]])
            if o < best:
                best = o
        return np.int64(best & np.int64(0xFFFFFFFF))
    if begin == end:
        return np.int64(-1)
    return np.int64(_first(page_stream(key, codes[page]) if kind == 0 else key, begin, end, indices, codes))


@njit(inline="always")
def _new_choice(kind, key, page, old_choice, delta, new_indptr, new_indices, codes):
    """The choice on the new graph of a changed ``page`` whose choice on the old graph was
    ``old_choice``: the old choice (if the page did not lose it) against the pages gained (every
    kind is a min-hash), so that a hub's list is not read again; else read whole."""
    if old_choice >= 0:
        added_indptr, added, removed_indptr, removed = delta
        kept = True
        for j in range(removed_indptr[page], removed_indptr[page + 1]):
            if removed[j] == old_choice:
                kept = False
        if kept:
            order = page_stream(key, codes[page]) if kind == 0 else key
            best = _order_key(order, old_choice, codes[old_choice])
            for j in range(added_indptr[page], added_indptr[page + 1]):
                o = _order_key(order, added[j], codes[added[j]])
                if o < best:
                    best = o
            return np.int64(best & np.int64(0xFFFFFFFF))
    return _choose(kind, key, page, new_indptr, new_indices, codes)


@njit(inline="always")
def _went(group, step, where, old_parent, old_label):
    """Where the old ``group`` went at ``step``: its page after it (``where``: the old state after
    the step, by representative), the page of the group it met, or -1 (it stopped)."""
    if where[group] >= 0:
        return where[group]
    if old_label[group] == step and old_parent[group] >= 0:
        return where[old_parent[group]]
    return np.int64(-1)


@njit(cache=True, nogil=True)
def _children(parent, indptr, child):
    """The children of each page in a fingerprint graph, as CSR (increasing)."""
    indptr[:] = 0
    for u in range(len(parent)):
        if parent[u] >= 0:
            indptr[parent[u] + 1] += 1
    for u in range(len(parent)):
        indptr[u + 1] += indptr[u]
    fill = indptr[:-1].copy()
    for u in range(len(parent)):
        if parent[u] >= 0:
            child[fill[parent[u]]] = u
            fill[parent[u]] += 1


@njit(cache=True, nogil=True)
def _occupied(pages, positions, step, n_old):
    """The ``pages`` (increasing) that an old group stands on before ``step``: below ``n_old``
    before the first step, else among ``positions`` (increasing), by one merge of the two."""
    if step == 1:
        return pages[: np.searchsorted(pages, n_old)]
    out = np.empty(min(len(pages), len(positions)), dtype=np.int64)
    count = a = b = 0
    while a < len(pages) and b < len(positions):
        if pages[a] < positions[b]:
            a += 1
        elif positions[b] < pages[a]:
            b += 1
        else:
            out[count] = pages[a]
            count += 1
            a += 1
            b += 1
    return out[:count]


@njit(inline="always")
def _occupant(step, page, n_old, occupant):
    """The representative of the old group on ``page`` before ``step`` (before the first step,
    every old page is its own group; after, ``occupant`` holds the state), -1 if none."""
    if step == 1:
        return np.int64(page) if page < n_old else np.int64(-1)
    return np.int64(occupant[page])


@njit(inline="always")
def _group_at(positions, representatives, page):
    """The representative of the group on ``page`` (positions increasing), -1 if none."""
    i = np.searchsorted(positions, page)
    if i < len(positions) and positions[i] == page:
        return np.int64(representatives[i])
    return np.int64(-1)


@njit(cache=True, nogil=True)
def _replay(kind, keys, inwards, graphs, changes, state, identity, new_pages, old, out, scratch, few_back):
    """One fingerprint's steps replayed where they differ (see the module). ``graphs``: the old
    and new graphs' ``(old_in_indptr, old_in_indices, old_out_indptr, old_out_indices,
    new_in_indptr, new_in_indices, new_out_indptr, new_out_indices, codes)``; ``changes``: the
    changed pages ``(changed_in_list, changed_out_list, changed_in, changed_out, deltas_in,
    deltas_out)``; ``state``: the old walk state ``(positions, representatives, bounds)``;
    ``old``: the old fingerprint graph ``(parent, label)``; ``out``: ``(parent, label)``, which
    hold the old fingerprint graph on entry and the new one on return. Returns the new walk
    state's positions, representatives and per-step bounds. ``scratch``: ``(mark, head, where,
    occupant, child_indptr, child)``: ``mark`` (zeros) and ``head`` (-1), ``where`` and
    ``occupant`` (-1) a page each, left as found; ``child_indptr`` and ``child`` hold the old
    graph's children when a meeting must be read again."""
    (old_in_indptr, old_in_indices, old_out_indptr, old_out_indices, new_in_indptr, new_in_indices, new_out_indptr,
     new_out_indices, codes) = graphs
    changed_in_list, changed_out_list, changed_in, changed_out, deltas_in, deltas_out = changes
    state_positions, state_representatives, bounds = state
    old_parent, old_label = old
    parent, label = out
    mark, head, where, occupant, child_indptr, child = scratch
    length = len(keys)
    n_old = len(identity)
    children_built = False
    never = np.int64(1) << np.int64(62)
    capacity = len(state_positions) + len(new_pages) + 16
    out_positions = np.empty(capacity, dtype=np.int32)
    out_representatives = np.empty(capacity, dtype=np.int32)
    out_bounds = np.zeros(length + 1, dtype=np.int64)
    written = 0
    # The new state before the step differs from the old one on these pages (-1: no group there).
    diff_positions = new_pages.astype(np.int64)
    diff_representatives = new_pages.astype(np.int64)
    before_positions = identity
    for step in range(1, length + 1):
        key = uint64(keys[step - 1])
        if kind == 2 and not inwards[step - 1]:
            new_indptr, new_indices = new_out_indptr, new_out_indices
            back_indptr, back_indices = old_in_indptr, old_in_indices
            changed, changed_list, delta = changed_out, changed_out_list, deltas_out
        else:
            new_indptr, new_indices = new_in_indptr, new_in_indices
            back_indptr, back_indices = old_out_indptr, old_out_indices
            changed, changed_list, delta = changed_in, changed_in_list, deltas_in
        after_positions = state_positions[bounds[step - 1] : bounds[step]]
        after_representatives = state_representatives[bounds[step - 1] : bounds[step]]
        for j in range(len(after_positions)):
            where[after_representatives[j]] = after_positions[j]
        # 1. The groups on changed pages and on the pages where the states differ.
        room = len(changed_list) + len(diff_positions)
        dirty_representative = np.empty(room, dtype=np.int64)
        dirty_next = np.empty(room, dtype=np.int64)
        chain = np.empty(room, dtype=np.int64)
        touched = np.empty(2 * room, dtype=np.int64)
        seen = np.empty(room, dtype=np.int64)
        n_dirty = n_touched = n_seen = 0
        # The changed pages an old group stands on (read in order, not looked up one by one).
        stood = _occupied(changed_list, before_positions, step, n_old)
        a = b = 0
        while a < len(stood) or b < len(diff_positions):
            if b == len(diff_positions) or (a < len(stood) and stood[a] < diff_positions[b]):
                x = np.int64(stood[a])
                a += 1
                in_diff = False
            else:
                x = diff_positions[b]
                if a < len(stood) and stood[a] == x:
                    a += 1
                in_diff = True
                b += 1
            old_group = _occupant(step, x, n_old, occupant)
            new_group = diff_representatives[b - 1] if in_diff else old_group
            if old_group < 0 and new_group < 0:
                continue
            old_next = np.int64(-2)
            if old_group >= 0:
                old_next = _went(old_group, step, where, old_parent, old_label)
            new_next = np.int64(-2)
            if new_group >= 0:
                if old_group < 0:
                    new_next = _choose(kind, key, x, new_indptr, new_indices, codes)
                elif changed[x]:
                    new_next = _new_choice(kind, key, x, old_next, delta, new_indptr, new_indices, codes)
                else:
                    new_next = old_next
            if old_group == new_group and old_next == new_next:
                continue
            if old_group >= 0:
                mark[old_group] |= 1  # a dirty old group: not a clean arrival anywhere
                seen[n_seen] = old_group
                n_seen += 1
                if old_next >= 0 and not mark[old_next] & 2:
                    mark[old_next] |= 2
                    touched[n_touched] = old_next
                    n_touched += 1
            if new_group >= 0:
                dirty_representative[n_dirty] = new_group
                dirty_next[n_dirty] = new_next
                if new_next >= 0:
                    chain[n_dirty] = head[new_next]
                    head[new_next] = n_dirty
                    if not mark[new_next] & 2:
                        mark[new_next] |= 2
                        touched[n_touched] = new_next
                        n_touched += 1
                n_dirty += 1
        # 2. Meetings again on the touched pages: the clean old groups that went there (found
        # among the pages a walk reaches it from) and the dirty groups that go there.
        pages = np.sort(touched[:n_touched])
        new_diff_positions = np.empty(n_touched, dtype=np.int64)
        new_diff_representatives = np.empty(n_touched, dtype=np.int64)
        n_diff = 0
        arrivals = np.empty(16, dtype=np.int64)
        for y in pages:
            before = _group_at(after_positions, after_representatives, y)
            if before >= 0 and not mark[before] & 1:
                # The old leader still comes here: unless a dirty group smaller than it comes too,
                # it leads again, and the clean groups keep their edges to it (a hub's thousands
                # of arrivals are not read).
                smaller = False
                k = head[y]
                while k >= 0:
                    if dirty_representative[k] < before:
                        smaller = True
                    k = chain[k]
                if not smaller:
                    k = head[y]
                    while k >= 0:
                        parent[dirty_representative[k]] = before
                        label[dirty_representative[k]] = step
                        k = chain[k]
                    head[y] = -1
                    continue
            count = 0
            if before >= 0:
                # The old arrivals: the old leader and the groups that met it at this step, found
                # among the pages a walk reaches y from, or for a page reached from many, among
                # the leader's children in the old fingerprint graph.
                arrivals[0] = before
                count = 0 if mark[before] & 1 else 1
                begin, end = back_indptr[y], back_indptr[y + 1]
                by_children = end - begin > few_back
                if by_children:
                    if not children_built:
                        _children(old_parent, child_indptr, child)
                        children_built = True
                    begin, end = child_indptr[before], child_indptr[before + 1]
                for j in range(begin - (1 if kind == 2 and not by_children else 0), end):
                    if by_children:
                        g = np.int64(child[j])
                    else:
                        g = _occupant(step, y if j < begin else np.int64(back_indices[j]), n_old, occupant)
                    if g < 0 or g == before or mark[g] & 1 or old_parent[g] != before or old_label[g] != step:
                        continue
                    if count == len(arrivals):
                        arrivals = np.concatenate((arrivals, np.empty(count, dtype=np.int64)))
                    arrivals[count] = g
                    count += 1
            k = head[y]
            while k >= 0:
                if count == len(arrivals):
                    arrivals = np.concatenate((arrivals, np.empty(count, dtype=np.int64)))
                arrivals[count] = dirty_representative[k]
                count += 1
                k = chain[k]
            head[y] = -1
            leader = never
            for j in range(count):
                if arrivals[j] < leader:
                    leader = arrivals[j]
            for j in range(count):
                if arrivals[j] != leader:
                    parent[arrivals[j]] = leader
                    label[arrivals[j]] = step
            if count and label[leader] == step:  # an old meeting at this step that no longer happens
                parent[leader] = -1
                label[leader] = 0
            now = leader if count else np.int64(-1)
            if now != before:
                new_diff_positions[n_diff] = y
                new_diff_representatives[n_diff] = now
                n_diff += 1
        for k in range(n_dirty):  # a walk that stops now loses the old meetings of its later steps
            if dirty_next[k] < 0 and label[dirty_representative[k]] >= step:
                parent[dirty_representative[k]] = -1
                label[dirty_representative[k]] = 0
        for j in range(len(after_positions)):
            where[after_representatives[j]] = -1
        for j in range(n_seen):
            mark[seen[j]] = 0
        for j in range(n_touched):
            mark[touched[j]] = 0
        # 3. The new state after the step: the old one, with the touched pages' groups.
        need = written + len(after_positions) + n_diff
        if need > len(out_positions):
            capacity = max(need, 2 * len(out_positions))
            grown = np.empty(capacity, dtype=np.int32)
            grown[:written] = out_positions[:written]
            out_positions = grown
            grown = np.empty(capacity, dtype=np.int32)
            grown[:written] = out_representatives[:written]
            out_representatives = grown
        a = b = 0
        while a < len(after_positions) or b < n_diff:
            if b == n_diff or (a < len(after_positions) and after_positions[a] < new_diff_positions[b]):
                out_positions[written] = after_positions[a]
                out_representatives[written] = after_representatives[a]
                written += 1
                a += 1
                continue
            if a < len(after_positions) and after_positions[a] == new_diff_positions[b]:
                a += 1
            if new_diff_representatives[b] >= 0:
                out_positions[written] = new_diff_positions[b]
                out_representatives[written] = new_diff_representatives[b]
                written += 1
            b += 1
        out_bounds[step] = written
        diff_positions = new_diff_positions[:n_diff]
        diff_representatives = new_diff_representatives[:n_diff]
        for j in range(len(before_positions) if step > 1 else 0):
            occupant[before_positions[j]] = -1
        for j in range(len(after_positions)):
            occupant[after_positions[j]] = after_representatives[j]
        before_positions = after_positions
    for j in range(len(before_positions) if length > 0 else 0):
        occupant[before_positions[j]] = -1
    return out_positions[:written], out_representatives[:written], out_bounds


# Extended Jaccard ---------------------------------------------------------------------------------
def update_minhash_index(index, old_graph: LinkGraph, new_graph: LinkGraph, show_progress: bool = False,
                         max_share: float = 1.0, check_graph: bool = True):
    """The extended Jaccard index (:class:`linksim.fingerprints.minhash.MinHashIndex`) of
    ``new_graph``, equal bit for bit to its build, from ``index`` built on ``old_graph``.

    A page's min-hash at radius k is the first page, in the fingerprint's random order, of the
    pages reaching it in at most k links: it can differ only for a page whose in-links changed, a
    page whose min-hash at radius k - 1 differed, or a page such a page links to. Those are computed
    again, radius after radius, from the new in-links (the random order is keyed by URL, so the
    pages' keys do not move); the inverted lists of a (fingerprint, radius) are sorted again only
    where a value changed. Pages added or deleted anywhere are carried through
    :func:`common_order`, as :func:`update_index` does.

    Raises
    ------
    ConfigurationError
        As :func:`update_index`: another graph, pages in another order, too large a change.
    """
    from linksim.fingerprints.minhash import MinHashIndex

    if check_graph and index.graph_fingerprint != graph_fingerprint(old_graph):
        raise ConfigurationError("the index was not built on the old graph given")
    prefix = _old_pages_first(old_graph, new_graph)
    if prefix:
        values, changed = _minhash_values(index, old_graph, new_graph, np.arange(old_graph.n), max_share,
                                          show_progress)
    else:
        old_at, new_at, size, old, new = _both_graphs(old_graph, new_graph)
        values, changed = _minhash_values(index, old, new, old_at, max_share, show_progress)
        place = np.full(size, -1, dtype=np.int64)
        place[new_at] = np.arange(new_graph.n)
        values = place[values[:, :, new_at]].astype(np.int32)  # no value names a page of the old graph only
    updated = MinHashIndex(values, index.length, index.seed, graph_fingerprint(new_graph), index.decay)
    if prefix:  # the inverted lists of the rows whose values did not change are the old ones
        old_order, old_indptr = index.inverted()
        updated.order, updated.indptr = _inverted_rows(values, old_order, old_indptr, changed)
    updated.changed_pages = int(changed.any(axis=(0, 1)).sum()) if changed.size else 0
    return updated


def _minhash_values(index, old_graph: LinkGraph, new_graph: LinkGraph, at: np.ndarray, max_share: float,
                    show_progress: bool):
    """The min-hash values of ``new_graph`` (pages of ``old_graph`` numbered ``at`` in it, the others
    new: pages without links in ``old_graph``) and which changed, (N, length, n) each."""
    changed_in = changed_pages(old_graph.in_indptr, old_graph.in_indices, new_graph.in_indptr,
                               new_graph.in_indices, new_graph.n)
    count = int(changed_in.sum())
    if count > max_share * new_graph.n:
        raise ConfigurationError(f"{count:,} of {new_graph.n:,} pages' links changed, more than an update pays "
                                 f"for ({max_share:.0%} of the pages)")
    n, length = new_graph.n, index.length
    values = np.empty((index.n_fingerprints, length, n), dtype=np.int32)
    changed = np.zeros((index.n_fingerprints, length, n), dtype=np.bool_)
    pages = np.arange(n, dtype=np.int32)
    changed_list = read_only(np.flatnonzero(changed_in))
    mark = np.zeros(n, dtype=np.int8)
    graph = [read_only(a) for a in (new_graph.codes, new_graph.in_indptr, new_graph.in_indices, new_graph.out_indptr,
                                    new_graph.out_indices)]
    with Progress(index.n_fingerprints, "xjaccard fingerprints updated", "fingerprints",
                  enabled=show_progress) as progress:
        for i in range(index.n_fingerprints):
            row = np.broadcast_to(pages, (length, n)).copy()  # a page of the new graph only: itself, until computed
            row[:, at] = at[np.asarray(index.values[i])]
            _minhash_replay(np.uint64(stream_key(index.seed, i, 0)), *graph, changed_list, row, changed[i], mark)
            values[i] = row
            progress.update(1)
    return values, changed


@njit(cache=True, nogil=True)
def _minhash_replay(key, codes, in_indptr, in_indices, out_indptr, out_indices, changed_list, values, changed, mark):
    """One fingerprint's min-hashes computed again where they may differ (see
    :func:`update_minhash_index`): ``values`` (length, n) holds the old ones on entry, the new ones
    on return; ``changed`` marks those that differ; ``mark`` (zeros) is scratch, left as found."""
    length, n = values.shape
    differ = np.empty(0, dtype=np.int64)
    for k in range(length):
        room = len(changed_list) + len(differ)
        for j in range(len(differ)):
            room += out_indptr[differ[j] + 1] - out_indptr[differ[j]]
        candidates = np.empty(room, dtype=np.int64)
        count = 0
        for j in range(len(changed_list)):
            if not mark[changed_list[j]]:
                mark[changed_list[j]] = 1
                candidates[count] = changed_list[j]
                count += 1
        for j in range(len(differ)):
            u = differ[j]
            if not mark[u]:
                mark[u] = 1
                candidates[count] = u
                count += 1
            for e in range(out_indptr[u], out_indptr[u + 1]):
                v = out_indices[e]
                if not mark[v]:
                    mark[v] = 1
                    candidates[count] = v
                    count += 1
        found = np.empty(count, dtype=np.int64)
        n_found = 0
        following = np.empty(count, dtype=np.int64)
        for j in range(count):
            u = candidates[j]
            mark[u] = 0
            first = u if k == 0 else np.int64(values[k - 1, u])
            best = _order_key(key, first, codes[first])
            for e in range(in_indptr[u], in_indptr[u + 1]):
                q = in_indices[e]
                v = q if k == 0 else np.int64(values[k - 1, q])
                o = _order_key(key, v, codes[v])
                if o < best:
                    best = o
            following[j] = best & np.int64(0xFFFFFFFF)
        # Written after all are computed: level k reads level k - 1 only, so the order is free.
        for j in range(count):
            u = candidates[j]
            if following[j] != values[k, u]:
                values[k, u] = following[j]
                changed[k, u] = True
                found[n_found] = u
                n_found += 1
        differ = found[:n_found]


def _inverted_rows(values: np.ndarray, old_order: np.ndarray, old_indptr: np.ndarray, changed: np.ndarray):
    """The inverted lists of :meth:`MinHashIndex.inverted` for ``values``: the old rows where no
    value changed (and no page was added), the others sorted again (a stable counting sort by value,
    the argsort of the build)."""
    n_fingerprints, length, n = values.shape
    n_old = old_order.shape[2]
    order = np.empty(values.shape, dtype=np.int32)
    indptr = np.empty((n_fingerprints, length, n + 1), dtype=np.int32)
    for i in range(n_fingerprints):
        for k in range(length):
            if n == n_old and not changed[i, k].any():
                order[i, k], indptr[i, k] = old_order[i, k], old_indptr[i, k]
            else:
                _counting_sort(values[i, k], order[i, k], indptr[i, k])
    return order, indptr


@njit(cache=True, nogil=True)
def _counting_sort(values, order, indptr):
    """``order``: the pages sorted by value, ties by page (numpy's stable argsort); ``indptr``:
    where each value's pages start (n + 1)."""
    indptr[:] = 0
    for u in range(len(values)):
        indptr[values[u] + 1] += 1
    for v in range(len(values)):
        indptr[v + 1] += indptr[v]
    fill = indptr[:-1].copy()
    for u in range(len(values)):
        order[fill[values[u]]] = u
        fill[values[u]] += 1


def warm_up() -> None:
    """Compile (or load from numba's cache) the update kernels on a few pages, for every kind of
    walk and for extended Jaccard: ``linksim similar`` calls this before it takes its writer lock,
    so that a first compilation (holding the interpreter for seconds) cannot starve the lock's
    heartbeat when the run updates its index."""
    from linksim.fingerprints.minhash import build_minhash_index
    from linksim.fingerprints.kinds import KINDS
    from linksim.fingerprints.walks import build_index

    names = [f"warm-up:{page}" for page in range(4)]
    old = LinkGraph.from_edges([0, 1, 2, 3], [1, 2, 3, 0], 4, keys=names)
    new = LinkGraph.from_edges([0, 1, 2, 3, 0], [1, 2, 3, 0, 2], 4, keys=names)
    for walk in KINDS:
        update_index(build_index(old, walk, 1, 2, keep_walks=True), old, new)
    update_minhash_index(build_minhash_index(old, 1, 2), old, new)
