"""Δ(A, T): how alike the texts of a page and of its related pages are (Lin, King & Lyu 2006, §6),
with TF-IDF vectors from scikit-learn."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from linksim.evaluation import text_quality


def tfidf_matrix(texts: Sequence[str]):
    """L2-normalised TF-IDF rows (scikit-learn, English stop words, sublinear term frequency)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=2, dtype=np.float32)
    return vectorizer.fit_transform(texts)


def text_quality_curves(lists_by_name: dict[str, dict], texts: dict, max_t: int = 10):
    """{name: {T: Δ}} for lists keyed like ``texts``."""
    keys = list(texts)
    matrix = tfidf_matrix([texts[k] for k in keys])
    return {name: text_quality(lists, texts, max_t, matrix, keys).delta for name, lists in lists_by_name.items()}
