"""The crawl as read from the input files, before it is written to Neo4j.

Readers add pages and links one by one; :meth:`CrawlGraph.links` then aggregates the links to one
per ordered pair with the number of times it was seen, which is what makes a load idempotent:
``LINKS_TO.count`` is set to the count of this input, never incremented.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from linksim.loader.urls import host_of

MAX_SKIP_EXAMPLES = 5


@dataclass
class Skipped:
    """Records skipped, by reason, with a few examples (``file:line``) of each."""

    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, where: str) -> None:
        self.counts[reason] += 1
        examples = self.examples.setdefault(reason, [])
        if len(examples) < MAX_SKIP_EXAMPLES:
            examples.append(where)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class Links:
    """Links aggregated to one per ordered pair (indices into ``CrawlGraph.urls``)."""

    source: np.ndarray
    target: np.ndarray
    count: np.ndarray
    seen: int  # links read, before aggregation
    self_loops: int  # distinct self-loop pairs (kept in the graph)
    self_loops_seen: int

    @property
    def duplicates(self) -> int:
        """Links read more than once for the same ordered pair (seen - distinct)."""
        return self.seen - len(self.source)

    def __len__(self) -> int:
        return len(self.source)


class CrawlGraph:
    """Pages (by URL key) and raw links accumulated from the input files."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.urls: list[str] = []
        self.crawled = bytearray()
        self.titles: dict[int, str] = {}
        self.properties: dict[int, dict[str, object]] = {}
        self.anchors: dict[tuple[int, int], str] = {}
        self._source = array("q")
        self._target = array("q")
        self.non_web = 0
        self.skipped = Skipped()

    def __len__(self) -> int:
        return len(self.urls)

    def page(
        self,
        key: str,
        crawled: bool = False,
        title: str | None = None,
        properties: dict[str, object] | None = None,
    ) -> int:
        """Add or update a page; return its index. A page once crawled stays crawled."""
        idx = self.index.get(key)
        if idx is None:
            idx = len(self.urls)
            self.index[key] = idx
            self.urls.append(key)
            self.crawled.append(0)
        if crawled:
            self.crawled[idx] = 1
        if title is not None:
            self.titles[idx] = title
        if properties:
            self.properties.setdefault(idx, {}).update(properties)
        return idx

    def link(self, source: int, target: int, anchor: str | None = None) -> None:
        self._source.append(source)
        self._target.append(target)
        if anchor and (source, target) not in self.anchors:
            self.anchors[(source, target)] = anchor

    def extend_links(self, source: np.ndarray, target: np.ndarray) -> None:
        """Add many links at once (page indices, no anchors)."""
        self._source.frombytes(np.asarray(source, dtype=np.int64).tobytes())
        self._target.frombytes(np.asarray(target, dtype=np.int64).tobytes())

    @property
    def links_seen(self) -> int:
        return len(self._source)

    def links(self) -> Links:
        """Aggregate the links read so far to one per ordered pair, sorted by (source, target)."""
        source = np.frombuffer(self._source, dtype=np.int64) if self._source else np.empty(0, np.int64)
        target = np.frombuffer(self._target, dtype=np.int64) if self._target else np.empty(0, np.int64)
        n = max(len(self.urls), 1)
        pairs, counts = np.unique(source * n + target, return_counts=True)
        src, dst = np.divmod(pairs, n)
        loops = src == dst
        return Links(
            source=src,
            target=dst,
            count=counts.astype(np.int64),
            seen=len(source),
            self_loops=int(loops.sum()),
            self_loops_seen=int(counts[loops].sum()),
        )

    def hosts(self) -> list[str | None]:
        return [host_of(url) for url in self.urls]
