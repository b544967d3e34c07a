"""Target filters: which pages may be in a page's list (GDS's ``targetNodeFilter``), applied
while the list is ranked, so that it is still ``top_k`` long wherever that many pages pass.

A :class:`Targets` is resolved for one graph: the pages a list may hold (crawled pages, pages of a
label, a list of URLs), or a host per page and whether a list keeps the page's own host
(``same-host``) or the others (``other-hosts``). A page on no host (an identifier, not a web URL)
passes neither host filter, and a page on no host keeps every page with a host under
``other-hosts``.

:func:`ranked_within` gives any index's filtered lists: an index that filters its own candidates
(spectral, whose candidates are a pool: the filter has to choose the pool) does it; for the others,
which rank every page that scores, a list is read ever deeper until ``top_k`` of its pages pass or
it holds every page that scores (the best ``top_k`` passing pages of that ranking).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass

import numpy as np
from numba import njit

from linksim.parameters import Query
from linksim.ranking.reader import lists_reader

PAGES, OTHER_HOSTS, SAME_HOST = 0, 1, 2  #: the kinds of filter, as the compiled lists read them
NO_HOST = -1

#: How much deeper than ``top_k`` a filtered list is first read, and how much deeper each time
#: after; beyond :data:`DEEPEST` pages, every page that scores is read.
DEEPER = 4
DEEPEST = 4_096


@njit(cache=True, nogil=True)
def passing_into(u, pages, kind, allowed, hosts, out):
    """Which of ``pages`` may be in u's list (see the module), into the boolean array ``out``.
    Python passes an array numpy made: one numba made failed to reach Python ("'descr' is NULL")
    in a test process after the report's experiments had run."""
    if kind == PAGES:
        for i in range(len(pages)):
            out[i] = allowed[pages[i]] != 0
        return
    mine = hosts[u]
    for i in range(len(pages)):
        theirs = hosts[pages[i]]
        if kind == OTHER_HOSTS:
            out[i] = theirs != NO_HOST and theirs != mine
        else:
            out[i] = theirs != NO_HOST and theirs == mine


@njit(cache=True, nogil=True)
def passing(u, pages, kind, allowed, hosts):
    """:func:`passing_into` a new array: the compiled lists' filter."""
    out = np.empty(len(pages), dtype=np.bool_)
    passing_into(u, pages, kind, allowed, hosts, out)
    return out


@dataclass(frozen=True, eq=False)
class Targets:
    """A target filter resolved for a graph of ``n`` pages. ``name`` is how runs are keyed
    (``<method>@<name>``); ``allowed`` (uint8 per page, kind :data:`PAGES`) or ``hosts`` (int32 per
    page, :data:`NO_HOST` for none; the host kinds)."""

    name: str
    kind: int
    allowed: np.ndarray
    hosts: np.ndarray

    @classmethod
    def of_pages(cls, name: str, allowed: np.ndarray) -> "Targets":
        return cls(name, PAGES, np.ascontiguousarray(allowed, dtype=np.uint8), np.empty(0, dtype=np.int32))

    @classmethod
    def of_hosts(cls, name: str, hosts: np.ndarray, same: bool) -> "Targets":
        return cls(name, SAME_HOST if same else OTHER_HOSTS, np.empty(0, dtype=np.uint8),
                   np.ascontiguousarray(hosts, dtype=np.int32))

    @property
    def arrays(self) -> tuple:
        """What the compiled lists take: (kind, allowed, hosts)."""
        return self.kind, self.allowed, self.hosts

    def passes(self, u: int, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, dtype=np.int64)
        out = np.empty(len(pages), dtype=np.bool_)
        passing_into(int(u), pages, *self.arrays, out)
        return out

    def passes_set(self, members: np.ndarray, pages: np.ndarray) -> np.ndarray:
        """For a set of pages: on none of the members' hosts (``other-hosts``), on one of them
        (``same-host``), or allowed."""
        pages = np.asarray(pages, dtype=np.int64)
        if self.kind == PAGES:
            return self.allowed[pages] != 0
        theirs = self.hosts[pages]
        mine = np.isin(theirs, self.hosts[np.asarray(members, dtype=np.int64)])
        return (theirs != NO_HOST) & (~mine if self.kind == OTHER_HOSTS else mine)

    @functools.cached_property
    def _digest(self) -> str:
        h = hashlib.blake2b(digest_size=8)
        h.update(f"{self.name}:{self.kind}".encode())
        h.update(self.allowed.tobytes())
        h.update(self.hosts.tobytes())
        return h.hexdigest()

    def digest(self) -> str:
        """What the filter lets through, as a short digest (a run's checkpoint is kept for one
        filter, the default's nearest pages are found once for one), computed once."""
        return self._digest


def host_numbers(hosts: list) -> np.ndarray:
    """Each page's host (a name, or None) as a number, :data:`NO_HOST` for None."""
    names: dict = {}
    return np.fromiter((NO_HOST if host is None else names.setdefault(host, len(names)) for host in hosts),
                       dtype=np.int32, count=len(hosts))


def filtered(targets: Targets, u: int, found: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The pairs of ``found`` that pass for u, in their order."""
    if not found:
        return []
    keep = targets.passes(u, np.fromiter((v for v, _ in found), dtype=np.int64, count=len(found)))
    return [pair for pair, kept in zip(found, keep.tolist()) if kept]


def filtered_lists(targets: Targets, lists: dict, top: int) -> dict:
    """Whole rankings by page (every page that scores, best first) cut to the ``top`` pages that
    pass: a reference ranked without the filter, filtered as the lists are (the anchors)."""
    return {u: filtered(targets, u, ranked)[:top] for u, ranked in lists.items()}


def ranked_within(index, pages: np.ndarray, query: Query, targets: Targets,
                  **options) -> list[list[tuple[int, float]]]:
    """The lists of ``pages`` (``query.top_k`` >= 1) of the pages that pass ``targets`` (see the
    module): for each page, the best ``top_k`` passing pages of the ranking ``index.related`` reads."""
    pages = np.asarray(pages, dtype=np.int64)
    index = lists_reader(index)
    if index.filters_targets:
        return index.lists(pages, query, targets=targets, **options)
    deeper = dataclasses.replace(query, top_k=DEEPER * query.top_k)
    first = index.lists(pages, deeper, **options)
    return [_deepened(index, u, found, deeper, query.top_k, targets, options) for u, found in zip(pages.tolist(), first)]


def _deepened(index, u: int, found: list, query: Query, top_k: int, targets: Targets,
              options: dict) -> list[tuple[int, float]]:
    """u's filtered list from ``found`` (its list ``query.top_k`` deep), read deeper while too few
    pass and the list read is full (pages below it may pass)."""
    kept = filtered(targets, u, found)
    depth = query.top_k
    while len(kept) < top_k and len(found) >= depth:
        depth = None if depth * DEEPER > DEEPEST else depth * DEEPER
        found = index.related_one(u, dataclasses.replace(query, top_k=depth), **options)
        kept = filtered(targets, u, found)
        if depth is None:
            break
    return kept[:top_k]


def warm_up() -> None:
    """Compile (or load from numba's cache) :func:`passing` for both kinds of arrays."""
    pages = np.array([0, 1], dtype=np.int64)
    Targets.of_pages("warm-up", np.ones(2)).passes(0, pages)
    Targets.of_hosts("warm-up", np.zeros(2), same=False).passes(0, pages)
