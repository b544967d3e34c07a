"""Top-k related pages of every page, from any similarity index with ``related(u, top_k, ...)``."""

from __future__ import annotations

import logging
import multiprocessing

import numpy as np

from linksim.cores import leave_interrupts, usable_cores
from linksim.errors import ConfigurationError
from linksim.parameters import Query
from linksim.progress import Progress
from linksim.ranking.reader import lists_reader

log = logging.getLogger(__name__)

_SHARED: dict = {}  # the index, inherited by forked workers (copy-on-write, never pickled)
_MADE = ()  # a chunk made and kept by the checkpoint only (top_k_all's hold=False)


def _run(task: tuple[int, np.ndarray, Query, dict]):
    number, pages, query, options = task
    index = _SHARED["index"]
    sources, targets, scores = [], [], []
    sampled_before = index.lists_sampled
    if _SHARED.get("targets") is not None:
        from linksim.ranking.targets import ranked_within

        lists = ranked_within(index, pages, query, _SHARED["targets"], **options)
    else:  # a chunk in one call (a compiled one, where the index has it)
        lists = index.lists(pages, query, **options)
    for u, found in zip(pages.tolist(), lists):
        for v, score in found:
            sources.append(u)
            targets.append(v)
            scores.append(score)
    sampled = index.lists_sampled - sampled_before
    pages_type = page_dtype(index.n)
    return (number, len(pages), sampled, np.array(sources, dtype=pages_type), np.array(targets, dtype=pages_type),
            np.array(scores, dtype=np.float64))


def page_dtype(n: int) -> type:
    """The integer type of page numbers in lists of a graph of ``n`` pages: 4 bytes where they fit
    (a 100M-link crawl's lists are about 10^8 pairs: 0.8 GB less than as int64)."""
    return np.int32 if n <= np.iinfo(np.int32).max else np.int64


def top_k_all(index, top_k: int = 10, similarity_cutoff: float = 0.0,
              **options) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every page's ``top_k`` related pages with a score above ``similarity_cutoff``: the values
    checked, then :func:`lists_of_all` (``options`` are its)."""
    return lists_of_all(index, Query.checked(top_k, similarity_cutoff), **options)


def lists_of_all(
    index,
    query: Query,
    pages: np.ndarray | None = None,
    workers: int | None = None,
    chunk: int = 1_000,
    show_progress: bool = True,
    sample: int | None = None,
    report: dict | None = None,
    checkpoint=None,
    hold: bool = True,
    targets=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every page's list of a checked ``query`` (``query.top_k`` >= 1 pages with a score above
    ``query.similarity_cutoff``).

    Returns parallel arrays ``(source, target, score, rank)``, rank 1 = most similar, in the
    order of ``pages`` (default: all); pages and ranks as int32 where the graph's pages fit
    (:func:`page_dtype`), scores as float64. With ``workers`` > 1 (default: the CPUs available) the
    pages are shared out in chunks to forked processes that see the index without copying it.
    An index with twin classes (pages that share their scores, see
    :meth:`linksim.fingerprints.index.FingerprintIndex.twin_classes`) gets each class's pages in a row,
    so that the class is queried once.

    ``sample`` (the fingerprint-tree methods; None: the index's default, 0: exact lists): how
    many members of a large range of a page's trees its list reads (see
    :meth:`linksim.fingerprints.index.FingerprintIndex.related`); ``report``, if given, receives
    ``lists_sampled``, the lists read from a sample (not proven exact), and ``lists_resumed``, the
    pages whose lists came from ``checkpoint``.

    ``checkpoint`` (a :class:`linksim.store.partial.Checkpoint`): finished chunks are kept there as
    they come, and those an earlier run of the same identity finished are read back instead of
    computed (the same lists: a chunk's lists depend only on its pages).

    ``hold=False`` (with a ``checkpoint``): the finished chunks are kept by the checkpoint alone
    while the lists are made, and read back once they all are. The index then has the memory
    the lists would take (1.6 GB at 10^8 links): an index read from disk needs it as page cache.

    ``targets`` (a :class:`linksim.ranking.targets.Targets`): each list holds only the pages that
    pass, chosen while it is ranked (:func:`linksim.ranking.targets.ranked_within`).
    """
    index = lists_reader(index)
    options = {}
    if sample is not None:
        if not index.reads_sample:
            # The registry's callers (procedures.similarity, the API) name the methods it applies to.
            raise ConfigurationError("--sample (sample) applies to the methods whose lists read fingerprint trees, "
                                     f"not to {index.method}")
        options["sample"] = sample
    pages = np.arange(index.n) if pages is None else np.asarray(pages)
    if workers is None:
        workers = usable_cores()
    index.prepare_all_pages()  # built here, before the workers fork
    if targets is not None:
        index.prepare_targets(targets)
    queue = index.list_order(pages)
    tasks = [(number, queue[start : start + chunk], query, options)
             for number, start in enumerate(range(0, len(queue), chunk))]
    parts: list = [None] * len(tasks)
    hold = hold or checkpoint is None
    sampled = resumed = 0
    if checkpoint is not None:
        from linksim.store.partial import pages_digest

        scope = {"chunk": chunk, "queue": pages_digest(queue)}
        for number, (lists_sampled, *arrays) in checkpoint.finished(page_dtype(index.n), **scope).items():
            if number < len(tasks):
                parts[number] = arrays if hold else _MADE
                sampled += lists_sampled
                resumed += len(tasks[number][1])
        tasks = [task for task in tasks if parts[task[0]] is None]
        if resumed:
            log.info("%s of %s pages' lists read back from the run cut short before (%s)", f"{resumed:,}",
                     f"{len(pages):,}", checkpoint.folder)

    def finished(number: int, lists_sampled: int, arrays: list) -> None:
        nonlocal sampled
        parts[number] = arrays if hold else _MADE
        sampled += lists_sampled
        if checkpoint is not None:
            checkpoint.add(number, lists_sampled, *arrays)

    _SHARED["index"], _SHARED["targets"] = index, targets
    try:
        with Progress(len(pages) - resumed, "top related pages", "pages", enabled=show_progress) as progress:
            if workers > 1 and len(tasks) > 1 and "fork" in multiprocessing.get_all_start_methods():
                with multiprocessing.get_context("fork").Pool(workers, initializer=leave_interrupts) as pool:
                    # Chunks as they finish (progress counts every finished chunk, also while an
                    # earlier, slower one runs), put back in their order.
                    for number, done, lists_sampled, *arrays in pool.imap_unordered(_run, tasks):
                        finished(number, lists_sampled, arrays)
                        progress.update(done)
            else:
                for task in tasks:
                    number, done, lists_sampled, *arrays = _run(task)
                    finished(number, lists_sampled, arrays)
                    progress.update(done)
    finally:
        _SHARED.clear()
        if checkpoint is not None:
            checkpoint.flush()
    if report is not None:
        report["lists_sampled"] = sampled
        report["lists_resumed"] = resumed
    if not hold:
        _read_back(index, parts, checkpoint, query, options, queue, chunk, targets)
    return _joined(parts, pages, queue, page_dtype(index.n))


def _read_back(index, parts: list, checkpoint, query: Query, options: dict,
               queue: np.ndarray, chunk: int, targets=None) -> None:
    """The chunks of a run that held none, read back from ``checkpoint`` into ``parts``; one whose
    part cannot be read (its file damaged since) is computed again, here."""
    chunks = checkpoint.chunks(page_dtype(index.n))
    again = 0
    _SHARED["index"], _SHARED["targets"] = index, targets
    try:
        for number in range(len(parts)):
            if number in chunks:
                parts[number] = list(chunks.pop(number)[1:])
            else:
                _, done, _, *arrays = _run((number, queue[number * chunk : (number + 1) * chunk], query, options))
                parts[number] = arrays
                again += done
    finally:
        _SHARED.clear()
    if again:
        log.warning("%s pages' lists could not be read back from %s: computed again", f"{again:,}", checkpoint.folder)


def _joined(parts: list, pages: np.ndarray, queue: np.ndarray, pages_type: type):
    """The chunks' lists as one set of arrays in the order of ``pages``, with their ranks. Each
    chunk is copied into place and let go: the peak is the lists once and a chunk, not twice."""
    total = sum(len(part[0]) for part in parts)
    source, target = np.empty(total, dtype=pages_type), np.empty(total, dtype=pages_type)
    score, rank = np.empty(total, dtype=np.float64), np.empty(total, dtype=np.int32)
    at = 0
    for number, part in enumerate(parts):
        size = len(part[0])
        end = at + size
        source[at:end], target[at:end], score[at:end] = part
        if size:  # ranks: position within each source's run (a chunk holds whole lists, best first)
            starts = np.r_[True, part[0][1:] != part[0][:-1]]
            run_start = np.maximum.accumulate(np.where(starts, np.arange(size), 0))
            rank[at:end] = np.arange(size) - run_start + 1
        parts[number] = None
        at = end
    if queue is not pages:  # back to the order of `pages`, each list kept as it came
        where = np.empty(int(pages.max()) + 1 if len(pages) else 0, dtype=np.int64)
        where[pages] = np.arange(len(pages))
        back = np.argsort(where[source], kind="stable")
        source, target, score, rank = source[back], target[back], score[back], rank[back]
    return source, target, score, rank
