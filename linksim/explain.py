"""Why two pages are related: a score taken apart into its terms, each with what it stands for.

Every similarity linksim computes is a sum, and each term has a meaning:

- **SimRank, PSimRank, P-PSimRank** (Fogaras & Rácz 2005): ``sim(u, v) = (1/N) Σ_i c^τ_i``, where
  τ_i is the step at which u's and v's walks of fingerprint i first stand on the same page. A term
  is a fingerprint where they met: the step, the meeting page and the two walks that led to it
  (each step a link, followed backwards; P-PSimRank's either way, or staying put), share
  ``c^τ / N``.
- **The default method** (spectral P-PSimRank): ``a · max(0, cos) + (1 − a) · ppsim``, ``a`` the
  index's cosine share: one term for the link embedding's cosine, then P-PSimRank's meetings, each
  times ``1 − a``.
- **Extended Jaccard**: ``(1/N) Σ_i Σ_k c^k (1 − c) · 1{fp_k(u) = fp_k(v)}``: a term is a
  fingerprint and a radius k where the two min-hashes agree; the shared page reaches both pages in
  at most k links (the shortest link paths from it are given), share ``c^k (1 − c) / N``.
- **PageSim** (Lin, King & Lyu 2006): ``Σ_s min(PR_s(u), PR_s(v))`` (or the minmax formula): a term
  is a source page whose PageRank both pages received, with how much each received.

The terms add up to the score (to rounding: they are summed in another order). The walks and
paths are read through ``neighbours(pages, inward) -> {page: sorted neighbours}`` (in-links, or
out-links when ``inward`` is false; self-links left out, pages of the index only), so this core
never reads a database: :mod:`linksim.procedures.explain` gives it Neo4j's links.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from linksim.errors import ConfigurationError, LinksimError

Neighbours = Callable[[list[int], bool], dict[int, list[int]]]
#: ``paths(pairs)``: for (page, target) pairs, a shortest link path from page to target (both
#: included); a pair left out has none.
Paths = Callable[[list[tuple[int, int]]], dict[tuple[int, int], list[int]]]

#: ``codes(pages)``: the draw codes of pages (:attr:`linksim.graph.LinkGraph.codes`: a hash of each
#: page's URL); None: each page's number, as for a graph without keys.
Codes = Callable[[list[int]], dict[int, int]]

#: Pages a path search from one page may visit before it gives up (the path is then left out).
PATH_SEARCH_LIMIT = 200_000


@dataclass
class Term:
    """One term of a score: its ``share`` and what it stands for (see the module)."""

    kind: str  # "meeting", "embedding", "shared in-neighbourhood" or "source"
    share: float
    fingerprint: int | None = None
    step: int | None = None  # meeting step τ, or the radius k of extended Jaccard
    page: int | None = None  # the meeting page, the shared page, the source
    path_a: list[int] | None = field(default=None)  # page a ... page (a walk), or page ... a (links)
    path_b: list[int] | None = field(default=None)
    received_a: float | None = None  # PageSim: what each page received from the source
    received_b: float | None = None


def explain(index, u: int, v: int, neighbours: Neighbours, n_fingerprints: int | None = None,
            paths: Paths | None = None, codes: Codes | None = None) -> list[Term]:
    """The terms of ``index.sim(u, v)`` (see the module), largest share first. ``paths``: how
    extended Jaccard's link paths are found (default: a search over ``neighbours``).

    Raises
    ------
    ConfigurationError
        u and v are the same page, or the index's method has no explanation.
    """
    from linksim.fingerprints.index import FingerprintIndex
    from linksim.fingerprints.minhash import MinHashIndex
    from linksim.pagesim import PageSimIndex
    from linksim.spectral import SpectralIndex

    if u == v:
        raise ConfigurationError("explain takes two different pages (a page's similarity to itself is 1)")
    if isinstance(index, SpectralIndex):
        cosine = float(index.cosine(u, np.array([v]))[0])
        terms = [Term("embedding", index.share * cosine)] if cosine > 0 else []
        terms += meetings(index.fingerprints, u, v, neighbours, n_fingerprints, weight=1.0 - index.share, codes=codes)
    elif isinstance(index, FingerprintIndex):
        terms = meetings(index, u, v, neighbours, n_fingerprints, codes=codes)
    elif isinstance(index, MinHashIndex):
        terms = shared_in_neighbourhoods(index, u, v, neighbours, n_fingerprints, paths)
    elif isinstance(index, PageSimIndex):
        if n_fingerprints is not None:
            raise ConfigurationError("--fingerprints (n_fingerprints) does not apply to PageSim, which samples nothing")
        terms = sources(index, u, v)
    else:
        raise ConfigurationError(f"explain does not apply to {getattr(index, 'method', type(index).__name__)}")
    return sorted(terms, key=lambda term: -term.share)


def walks(walk, seed: int, starts: dict[int, int], steps: int | dict[int, int],
          neighbours: Neighbours, codes: Codes | None = None) -> dict[int, list[int]]:
    """The walk from ``starts[i]`` in fingerprint i for ``steps`` steps (or ``steps[i]``; shorter
    where it stops): the pages it stands on, start first, drawn exactly as the index's build draws
    them (with the pages' draw ``codes``)."""
    from linksim.fingerprints.randomness import choose, inward, stream_key

    limit = steps if isinstance(steps, dict) else dict.fromkeys(starts, steps)
    paths = {i: [page] for i, page in starts.items()}
    for step in range(1, max(limit.values(), default=0) + 1):
        going = [i for i, path in paths.items() if len(path) == step and step <= limit[i]]
        keys = {i: stream_key(seed, i, step) for i in going}
        directions = {i: not walk.closed or inward(keys[i]) for i in going}
        read = {}
        for direction in (True, False):
            pages = sorted({paths[i][-1] for i in going if directions[i] == direction})
            if pages:
                read[direction] = neighbours(pages, direction)
        known = None
        if codes is not None:
            wanted = {paths[i][-1] for i in going}
            for found in read.values():
                wanted.update(q for page in found.values() for q in page)
            known = codes(sorted(wanted))
        for i in going:
            here = paths[i][-1]
            following = choose(walk, keys[i], here, read[directions[i]].get(here, []), known)
            if following >= 0:
                paths[i].append(following)
    return paths


def meetings(index, u: int, v: int, neighbours: Neighbours, n_fingerprints: int | None = None,
             weight: float = 1.0, codes: Codes | None = None) -> list[Term]:
    """The fingerprints where u's and v's walks met (``weight`` times their shares)."""
    times = index.meeting_times(u, v, n_fingerprints)
    met = {i: int(t) for i, t in enumerate(times.tolist()) if t <= index.length}
    if not met:
        return []
    walk = index.walk  # each fingerprint's walks drawn up to their meeting only
    from_u = walks(walk, index.seed, {i: u for i in met}, met, neighbours, codes)
    from_v = walks(walk, index.seed, {i: v for i in met}, met, neighbours, codes)
    powers = index.powers(index.decay)
    count = len(times)
    terms = []
    for i, tau in met.items():
        a, b = from_u[i][: tau + 1], from_v[i][: tau + 1]
        if len(a) != tau + 1 or len(b) != tau + 1 or a[-1] != b[-1] or any(x == y for x, y in zip(a[:-1], b[:-1])):
            raise LinksimError(f"the walks of fingerprint {i} do not meet at step {tau} as the index says: "
                               "the graph's links differ from those the index was built from")
        terms.append(Term("meeting", weight * float(powers[tau]) / count, i, tau, a[-1], a, b))
    return terms


def shared_in_neighbourhoods(index, u: int, v: int, neighbours: Neighbours,
                             n_fingerprints: int | None = None, paths: Paths | None = None) -> list[Term]:
    """Extended Jaccard's agreeing min-hashes, with the shortest link paths from each shared page."""
    from linksim.parameters import check_fingerprints_asked

    count = check_fingerprints_asked(n_fingerprints, index.n_fingerprints)
    values = index.values[:count]
    weights = index._weights(None)
    agree = np.argwhere(values[:, :, u] == values[:, :, v])
    shared = {int(values[i, k, u]) for i, k in agree.tolist()}
    if paths is None:
        towards = {(w, target): path for target in (u, v)
                   for w, path in link_paths(target, shared, index.length, neighbours).items()}
    else:
        towards = paths([(w, target) for target in (u, v) for w in sorted(shared)])
    terms = []
    for i, k in agree.tolist():
        page = int(values[i, k, u])
        terms.append(Term("shared in-neighbourhood", float(weights[k]) / count, i, k + 1, page,
                          towards.get((page, u)), towards.get((page, v))))
    return terms


def link_paths(target: int, pages: set[int], radius: int, neighbours: Neighbours) -> dict[int, list[int]]:
    """For each of ``pages`` within ``radius`` links of ``target``, a shortest link path from it to
    ``target`` (the page first, ``target`` last): a search backwards over in-links, level by level,
    that stops when every page is found (or after :data:`PATH_SEARCH_LIMIT` pages)."""
    before = {target: -1}
    frontier = [target]
    wanted = set(pages)
    for _ in range(radius):
        if wanted <= before.keys() or not frontier or len(before) > PATH_SEARCH_LIMIT:
            break
        found = neighbours(sorted(frontier), True)
        following = []
        for page in frontier:
            for q in found.get(page, []):
                if q not in before:
                    before[q] = page
                    following.append(q)
        frontier = following
    paths = {}
    for page in wanted & before.keys():
        path, x = [page], page
        while before[x] >= 0:
            x = before[x]
            path.append(x)
        paths[page] = path
    return paths


def sources(index, u: int, v: int) -> list[Term]:
    """PageSim's sources that both pages received PageRank from."""
    from linksim.pagesim import _combine

    a, b = index.by_page[u], index.by_page[v]
    common, at_a, at_b = np.intersect1d(a.indices, b.indices, assume_unique=True, return_indices=True)
    shares = _combine(a.data[at_a], b.data[at_b], index.formula)
    return [Term("source", float(share), page=int(s), received_a=float(x), received_b=float(y))
            for s, share, x, y in zip(common.tolist(), shares.tolist(), a.data[at_a].tolist(), b.data[at_b].tolist())
            if share > 0]
