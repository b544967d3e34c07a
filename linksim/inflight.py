"""Work kept in flight: the next batch is encoded while the server writes the one before, or the
next blocks of a crawl file are parsed while the pages of the one before are looked up."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator


def in_flight(batches: Iterator[Any], write: Callable[[Any], Any], workers: int):
    """Yield ``(batch, write(batch))`` in order, with up to ``workers`` writes running at once.

    Only ``workers + 1`` batches exist at a time. The first failure is raised once the writes
    before it are accounted for; a write already started beside it may still commit, so callers
    write what a rerun can redo or clean up (an idempotent MERGE, or rows keyed by a run id).
    """
    if workers <= 1:
        for batch in batches:
            yield batch, write(batch)
        return
    pending: deque = deque()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for batch in batches:
            pending.append((batch, pool.submit(write, batch)))
            if len(pending) >= workers:
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()
