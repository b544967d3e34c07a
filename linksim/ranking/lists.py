"""Top-k lists keyed by page code, and which of them changed between two runs.

A SIMILAR_TO run's lists are kept beside the index store (:mod:`linksim.store.lists`) by the
pages' codes (:attr:`linksim.graph.LinkGraph.codes`, a hash of the URL), not by page numbers or
database ids, which a recrawl moves or reuses. The next run of the method compares its lists with
them (:func:`changed_lists`) and rewrites only the pages whose list differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class CodedLists:
    """Lists by page code: ``sources`` (sorted, distinct codes of the pages with a list),
    ``indptr`` (list ``i`` is ``targets[indptr[i]:indptr[i + 1]]``), ``targets`` (codes, rank
    order) and ``scores`` (as written)."""

    sources: np.ndarray
    indptr: np.ndarray
    targets: np.ndarray
    scores: np.ndarray

    @classmethod
    def of(cls, codes: np.ndarray, source: np.ndarray, target: np.ndarray, score: np.ndarray) -> "CodedLists":
        """The lists of :func:`linksim.ranking.topk.top_k_all` (``source``, ``target`` page numbers,
        each source's pairs together and in rank order) under the pages' ``codes``."""
        source_codes = codes[np.asarray(source, dtype=np.int64)]
        order = np.argsort(source_codes, kind="stable")  # a list's pairs keep their rank order
        sorted_sources = source_codes[order]
        sources, starts = np.unique(sorted_sources, return_index=True)
        indptr = np.r_[starts, len(sorted_sources)].astype(np.int64)
        return cls(sources.astype(np.uint64), indptr,
                   codes[np.asarray(target, dtype=np.int64)][order].astype(np.uint64),
                   np.asarray(score, dtype=np.float64)[order])

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    def __len__(self) -> int:
        return len(self.targets)


def _same_lists(old: CodedLists, old_rows: np.ndarray, new: CodedLists, new_rows: np.ndarray) -> np.ndarray:
    """For lists ``old_rows`` of ``old`` and ``new_rows`` of ``new`` (same sources), whether each
    pair is the same list: same length, same targets in the same order, same scores."""
    same = old.lengths[old_rows] == new.lengths[new_rows]
    rows = np.flatnonzero(same)
    if len(rows) == 0:
        return same
    lengths = old.lengths[old_rows[rows]]
    pair = np.repeat(np.arange(len(rows)), lengths)
    within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    at_old = old.indptr[old_rows[rows]][pair] + within
    at_new = new.indptr[new_rows[rows]][pair] + within
    differs = (old.targets[at_old] != new.targets[at_new]) | (old.scores[at_old] != new.scores[at_new])
    bad = np.zeros(len(rows), dtype=bool)
    bad[pair[differs]] = True
    same[rows[bad]] = False
    return same


def changed_lists(old: CodedLists, new: CodedLists, present: np.ndarray) -> tuple[np.ndarray, int]:
    """Which lists a run of ``new`` lists has to write over a database holding ``old``, whose
    pages now are those of codes ``present``.

    Returns ``(changed, kept)``: the codes of the present pages whose list is not the same (a new
    list, a different one, or none where one was), sorted; and how many of the old relationships
    the database still holds (those whose source and target pages are both present: a deleted
    page took its relationships with it), which a caller compares with what the database counts.
    """
    present = np.unique(np.asarray(present, dtype=np.uint64))
    in_both = np.isin(old.sources, new.sources, assume_unique=True)
    old_rows = np.flatnonzero(in_both)
    new_rows = np.searchsorted(new.sources, old.sources[old_rows])
    same = _same_lists(old, old_rows, new, new_rows)
    unchanged = old.sources[old_rows[same]]
    candidates = np.union1d(old.sources, new.sources)
    changed = np.setdiff1d(candidates, unchanged, assume_unique=True)
    changed = changed[np.isin(changed, present, assume_unique=True)]
    source_present = np.isin(old.sources, present, assume_unique=True)
    kept = int((np.repeat(source_present, old.lengths) & np.isin(old.targets, present)).sum())
    return changed, kept
