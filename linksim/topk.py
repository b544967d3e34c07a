"""Top-k related pages of every page, from any similarity index with ``related(u, top_k, ...)``."""

from __future__ import annotations

import multiprocessing
import os

import numpy as np

from linksim.progress import Progress

_SHARED: dict = {}  # the index, inherited by forked workers (copy-on-write, never pickled)


def _run(task: tuple[np.ndarray, int, float]):
    pages, top_k, threshold = task
    index = _SHARED["index"]
    sources, targets, scores = [], [], []
    for u in pages.tolist():
        for v, score in index.related(u, top_k=top_k, threshold=threshold):
            sources.append(u)
            targets.append(v)
            scores.append(score)
    return len(pages), np.array(sources, dtype=np.int64), np.array(targets, dtype=np.int64), np.array(scores)


def iter_top_k(
    index,
    top_k: int = 10,
    threshold: float = 0.0,
    pages: np.ndarray | None = None,
    workers: int | None = None,
    chunk: int = 1_000,
    show_progress: bool = True,
):
    """Every page's ``top_k`` related pages with a score above ``threshold``, chunk by chunk.

    Yields parallel arrays ``(source, target, score, rank)`` for ``chunk`` pages at a time, in the
    order of ``pages`` (default: all), rank 1 = most similar; a page's list is never split. With
    ``workers`` > 1 (default: the CPUs available) forked processes that see the index without
    copying it compute the chunks, and keep computing while the caller works on what it got.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    pages = np.arange(index.n) if pages is None else np.asarray(pages)
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    tasks = [(pages[start : start + chunk], top_k, threshold) for start in range(0, len(pages), chunk)]
    _SHARED["index"] = index
    try:
        with Progress(len(pages), "top related pages", "pages", enabled=show_progress) as progress:
            if workers > 1 and len(tasks) > 1 and "fork" in multiprocessing.get_all_start_methods():
                with multiprocessing.get_context("fork").Pool(workers) as pool:
                    for done, *arrays in pool.imap(_run, tasks):
                        progress.update(done)
                        yield (*arrays, _ranks(arrays[0]))
            else:
                for task in tasks:
                    done, *arrays = _run(task)
                    progress.update(done)
                    yield (*arrays, _ranks(arrays[0]))
    finally:
        _SHARED.clear()


def _ranks(source: np.ndarray) -> np.ndarray:
    """Position of each row within its source's run (the lists come out best first)."""
    if not len(source):
        return np.zeros(0, dtype=np.int64)
    starts = np.r_[True, source[1:] != source[:-1]]
    run_start = np.maximum.accumulate(np.where(starts, np.arange(len(source)), 0))
    return np.arange(len(source)) - run_start + 1


def top_k_all(
    index,
    top_k: int = 10,
    threshold: float = 0.0,
    pages: np.ndarray | None = None,
    workers: int | None = None,
    chunk: int = 1_000,
    show_progress: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every page's ``top_k`` related pages with a score above ``threshold``, all at once.

    Returns parallel arrays ``(source, target, score, rank)`` as :func:`iter_top_k` yields them.
    """
    parts = list(iter_top_k(index, top_k, threshold, pages, workers, chunk, show_progress))
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(4))  # type: ignore[return-value]
