"""Grading related-page lists against a category tree: sibling Γ (Fogaras & Rácz 2005, Section 4).

The reading used is the one of ``../shared/papers/README.md``. Categories are paths such as
``subject.Science.Biology.Birds``; a leading ``subject`` component is dropped and the path is cut
to ``depth`` components (default 2): the page's *classes* (``Science.Biology``). A class's parent
is its first ``depth - 1`` components (``Science``); classes with the same parent are siblings.

For a query page ``u`` with at least one class, take its list (u excluded, positive scores only,
the top ``top`` = 100): pages ``v`` sharing a class with u, and pages ``w`` sharing none but having
a class whose parent is the parent of one of u's classes (only in a sibling class). A pair (v, w)
is concordant if s(v) > s(w), discordant if s(v) < s(w); ties are ignored.
``Γ_u = (C − D) / (C + D)``; reported: the mean of Γ_u over queries with C + D > 0, their number,
the pooled ``Σ(C − D) / Σ(C + D)``, the number of comparable pairs ``Σ(C + D)``, precision@10
(the share of a query's first 10 places held by same-class pages, over queries with a list),
hits@10 (the same share over *every* labelled page: an empty or short list counts its missing
places as misses, so that a method that answers fewer pages shows it) and coverage (the share of
the pages with at least one link whose list is not empty).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np


def classes_of(paths: Iterable[str], depth: int = 2) -> frozenset[str]:
    """The classes of a page from its category paths (``subject.`` dropped, cut to ``depth``)."""
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    found = set()
    for path in paths:
        parts = [part for part in path.strip().replace("/", ".").split(".") if part]
        if parts and parts[0] == "subject":
            parts = parts[1:]
        if parts:
            found.add(".".join(parts[:depth]))
    return frozenset(found)


def parent_of(class_name: str) -> str:
    """A class's parent: all but its last component ('' for a top-level class)."""
    return class_name.rsplit(".", 1)[0] if "." in class_name else ""


@dataclass
class GammaReport:
    """Sibling Γ of one set of lists."""

    gamma: float  # mean Γ_u over queries with comparable pairs (nan if none)
    pooled: float  # Σ(C − D) / Σ(C + D)
    queries: int  # queries with C + D > 0
    pairs: int  # Σ(C + D)
    precision_at_10: float
    graded: int  # queries with at least one class and a non-empty list
    hits_at_10: float = float("nan")  # same-class pages in the first 10 places / 10, every labelled page
    labelled: int = 0  # pages with at least one class
    coverage: float = float("nan")  # pages with a link and a non-empty list / pages with a link

    def as_dict(self) -> dict[str, float | int]:
        return {
            "gamma": self.gamma, "pooled": self.pooled, "queries": self.queries, "pairs": self.pairs,
            "precision_at_10": self.precision_at_10, "graded": self.graded, "hits_at_10": self.hits_at_10,
            "labelled": self.labelled, "coverage": self.coverage,
        }


def query_gamma(same: np.ndarray, sibling: np.ndarray) -> tuple[int, int]:
    """(C, D) for the scores of the same-class pages and of the sibling-only pages of one list."""
    if len(same) == 0 or len(sibling) == 0:
        return 0, 0
    ordered = np.sort(np.asarray(sibling, dtype=float))
    below = np.searchsorted(ordered, same, side="left")  # siblings scored lower than each v
    above = len(ordered) - np.searchsorted(ordered, same, side="right")
    return int(below.sum()), int(above.sum())


def sibling_gamma(
    lists: Mapping[object, Sequence[tuple[object, float]]],
    classes: Mapping[object, frozenset[str]],
    top: int = 100,
    linked: Iterable[object] | None = None,
) -> GammaReport:
    """Grade ``lists`` (query -> [(page, score)], best first) against ``classes`` (page -> classes).

    Pages missing from ``classes`` have no class. Lists are cut to the ``top`` best positive
    scores with the query itself left out. ``linked``: the pages with at least one link, for the
    coverage (nan without them).
    """
    gammas, concordant, discordant, precisions, graded = [], 0, 0, [], 0
    empty: frozenset[str] = frozenset()
    labelled = [u for u, mine in classes.items() if mine]
    hits = 0
    answered = set()
    for u, ranked in lists.items():
        entries = [(v, s) for v, s in ranked if v != u and s > 0]
        if entries:
            answered.add(u)
        mine = classes.get(u, empty)
        if not mine or not entries:
            continue
        entries.sort(key=lambda item: -item[1])
        entries = entries[:top]
        graded += 1
        parents = {parent_of(c) for c in mine}
        same, sibling = [], []
        first_ten = 0
        for position, (v, score) in enumerate(entries):
            theirs = classes.get(v, empty)
            if theirs & mine:
                same.append(score)
                first_ten += position < 10
            elif any(parent_of(c) in parents for c in theirs):
                sibling.append(score)
        precisions.append(first_ten / 10)
        hits += first_ten
        c, d = query_gamma(np.array(same), np.array(sibling))
        if c + d:
            gammas.append((c - d) / (c + d))
            concordant += c
            discordant += d
    pairs = concordant + discordant
    with_link = None if linked is None else set(linked)
    return GammaReport(
        gamma=float(np.mean(gammas)) if gammas else float("nan"),
        pooled=(concordant - discordant) / pairs if pairs else float("nan"),
        queries=len(gammas),
        pairs=pairs,
        precision_at_10=float(np.mean(precisions)) if precisions else float("nan"),
        graded=graded,
        hits_at_10=hits / (10 * len(labelled)) if labelled else float("nan"),
        labelled=len(labelled),
        coverage=len(answered & with_link) / len(with_link) if with_link else float("nan"),
    )


def top_lists_from_matrix(scores: np.ndarray, top: int = 100) -> dict[int, list[tuple[int, float]]]:
    """Every row's ``top`` best positive off-diagonal entries, as lists for :func:`sibling_gamma`.

    Ties are broken by column (smaller first), as the indexes do.
    """
    scores = np.array(scores, dtype=float, copy=True)
    np.fill_diagonal(scores, 0.0)
    lists = {}
    for u in range(scores.shape[0]):
        row = scores[u]
        candidates = np.flatnonzero(row > 0)
        order = np.lexsort((candidates, -np.round(row[candidates], 12)))[:top]
        lists[u] = [(int(candidates[i]), float(row[candidates[i]])) for i in order]
    return lists


# Text similarity of the related pages: Δ(A, T) of the PageSim paper (Section 6) -------------------
@dataclass
class TextQuality:
    """Δ(A, T) for T = 1..max_t: the mean over pages of the mean cosine TF-IDF similarity between
    a page and its top T related pages (pages with a text and a non-empty list)."""

    delta: dict[int, float]
    pages: int  # pages graded (with a text and at least one related page with a text)
    lists_short: int  # of those, pages whose list held fewer than max_t pages with a text


def text_quality(
    lists: Mapping[object, Sequence[tuple[object, float]]],
    texts: Mapping[object, str],
    max_t: int,
    matrix,
    keys: Sequence[object],
) -> TextQuality:
    """Δ(A, T) of the lists (query -> [(page, score)], best first) against the pages' texts.

    ``sim_{A,T}(v)`` averages the cosine over the first T list entries that have a text (all of
    them when the list is shorter); Δ(A, T) averages it over the pages graded. ``matrix`` holds
    the texts' L2-normalised rows, in the order of ``keys``
    (:func:`linksim.analysis.texts.tfidf_matrix`; the core computes no TF-IDF itself).
    """
    row_of = {key: i for i, key in enumerate(keys)}
    queries, targets, ranks = [], [], []
    short = 0
    for u, ranked in lists.items():
        if u not in row_of:
            continue
        entries = [v for v, s in ranked if v != u and s > 0 and v in row_of][:max_t]
        if not entries:
            continue
        short += len(entries) < max_t
        queries += [row_of[u]] * len(entries)
        targets += [row_of[v] for v in entries]
        ranks += list(range(1, len(entries) + 1))
    if not queries:
        return TextQuality({t: float("nan") for t in range(1, max_t + 1)}, 0, 0)
    queries_a, targets_a, ranks_a = np.array(queries), np.array(targets), np.array(ranks)
    cosine = np.asarray(matrix[queries_a].multiply(matrix[targets_a]).sum(axis=1)).ravel()
    pages = np.unique(queries_a)
    delta = {}
    for t in range(1, max_t + 1):
        keep = ranks_a <= t
        sums = np.bincount(queries_a[keep], weights=cosine[keep], minlength=matrix.shape[0])
        counts = np.bincount(queries_a[keep], minlength=matrix.shape[0])
        delta[t] = float((sums[pages] / counts[pages]).mean())
    return TextQuality(delta, len(pages), short)
