"""Top-k related pages of every page, from any similarity index with ``related(u, top_k, ...)``."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from linksim.progress import Progress


def top_k_all(
    index,
    top_k: int = 10,
    threshold: float = 0.0,
    pages: np.ndarray | None = None,
    workers: int = 2,
    chunk: int = 2_000,
    show_progress: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every page's ``top_k`` related pages with a score above ``threshold``.

    Returns parallel arrays ``(source, target, score, rank)``, rank 1 = most similar, sources in
    increasing order. Pages are processed in chunks on ``workers`` threads (numpy releases the
    interpreter lock in the heavy parts of a query).
    """
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    pages = np.arange(index.n) if pages is None else np.asarray(pages)
    chunks = [pages[start : start + chunk] for start in range(0, len(pages), chunk)]

    def run(part: np.ndarray):
        out = []
        for u in part.tolist():
            related = index.related(u, top_k=top_k, threshold=threshold)
            if related:
                targets, scores = zip(*related)
                out.append((u, np.asarray(targets, dtype=np.int64), np.asarray(scores, dtype=np.float64)))
        return out

    results = []
    with Progress(len(pages), "top related pages", "pages", enabled=show_progress) as progress:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for part, found in zip(chunks, pool.map(run, chunks)):
                results.extend(found)
                progress.update(len(part))
    if not results:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0), empty
    source = np.concatenate([np.full(len(t), u, dtype=np.int64) for u, t, _ in results])
    target = np.concatenate([t for _, t, _ in results])
    score = np.concatenate([s for _, _, s in results])
    rank = np.concatenate([np.arange(1, len(t) + 1, dtype=np.int64) for _, t, _ in results])
    return source, target, score, rank
