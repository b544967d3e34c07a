"""Convergence measured on the ordering a score vector induces (Haveliwala 1999, Section 5).

- :func:`top_n_similarity`: ``|A ∩ B| / |A ∪ B|`` of the top-``n`` page sets of two orderings,
  for a series of ``n`` (the paper's Figure 9);
- :func:`position_differences`: how far each page moves between two orderings, for the pages that
  either ordering places in its top ``top`` (the histograms of the paper's Figure 8).
"""

from __future__ import annotations

import numpy as np


def ordering(scores: np.ndarray) -> np.ndarray:
    """Page indices from the highest score to the lowest (ties by index, stable)."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def top_n_similarity(a: np.ndarray, b: np.ndarray, ns: list[int] | np.ndarray) -> np.ndarray:
    """Similarity ``|A∩B| / |A∪B|`` of the top-``n`` sets of ``a`` and ``b``, for each ``n``."""
    order_a, order_b = ordering(a), ordering(b)
    rank_b = np.empty(len(b), dtype=np.int64)
    rank_b[order_b] = np.arange(len(b))
    result = []
    for n in ns:
        n = int(min(n, len(a)))
        if n == 0:
            result.append(1.0)
            continue
        common = int((rank_b[order_a[:n]] < n).sum())
        result.append(common / (2 * n - common))
    return np.array(result)


def position_differences(a: np.ndarray, b: np.ndarray, top: int) -> np.ndarray:
    """``|position in a − position in b|`` for every page in the top ``top`` of ``a`` or ``b``."""
    position_a = np.empty(len(a), dtype=np.int64)
    position_b = np.empty(len(b), dtype=np.int64)
    position_a[ordering(a)] = np.arange(len(a))
    position_b[ordering(b)] = np.arange(len(b))
    considered = (position_a < top) | (position_b < top)
    return np.abs(position_a[considered] - position_b[considered])


def position_histogram(a: np.ndarray, b: np.ndarray, top: int, bucket: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Counts of position differences in buckets of ``bucket`` positions; (counts, bucket starts)."""
    differences = position_differences(a, b, top)
    buckets = differences // bucket
    counts = np.bincount(buckets) if len(buckets) else np.zeros(1, dtype=np.int64)
    return counts, np.arange(len(counts)) * bucket
