"""Ranking one page's scores: the best pages above a similarity_cutoff, ties broken by page."""

from __future__ import annotations

import numpy as np


def top_scores(scores: np.ndarray, u: int, top_k: int | None, similarity_cutoff: float) -> list[tuple[int, float]]:
    """The pages of a score vector above ``similarity_cutoff`` (u excluded), best first, ties by page."""
    candidates = np.flatnonzero(scores > similarity_cutoff)
    return top_pairs(candidates, scores[candidates], u, top_k, similarity_cutoff)


def top_pairs(candidates: np.ndarray, values: np.ndarray, u: int, top_k: int | None,
              similarity_cutoff: float) -> list[tuple[int, float]]:
    """The best of (page, score) pairs above ``similarity_cutoff`` (u excluded), ties by page."""
    pages, scores = top_pages(candidates, values, u, top_k, similarity_cutoff)
    return list(zip(pages.tolist(), scores.tolist()))


def top_pages(candidates: np.ndarray, values: np.ndarray, u: int, top_k: int | None,
              similarity_cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top_pairs` as two arrays, pages (int64) and scores, best first."""
    keep = (values > similarity_cutoff) & (candidates != u)
    candidates, values = candidates[keep], values[keep]
    if top_k is not None and len(candidates) > top_k:
        kth = np.partition(values, len(values) - top_k)[len(values) - top_k]
        keep = values >= kth - 1e-12
        candidates, values = candidates[keep], values[keep]
    # Equal scores summed in another order may differ in the last bits: rank on 12 decimals,
    # so that ties go to the smaller page whichever way a score was added up.
    ranking = np.lexsort((candidates, -np.round(values, 12)))
    if top_k is not None:
        ranking = ranking[:top_k]
    return candidates[ranking].astype(np.int64), values[ranking].astype(np.float64)
