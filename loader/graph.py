"""The crawl as read from the input files, before it is written to Neo4j.

Readers add pages and links one by one; :meth:`CrawlGraph.links` then aggregates the links to one
per ordered pair with the number of times it was seen, which is what makes a load idempotent:
``LINKS_TO.count`` is set to the count of this input, never incremented.

Memory grows with the pages, not the links: the links read go to a
:class:`~linksim.store.spool.LinkSpool` (on disk beyond 4 Mi links).
"""

from __future__ import annotations

import itertools

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from linksim.loader.urls import hosts_of
from linksim.store.spool import MAX_PAGES, LinkSpool, Links

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


@dataclass
class GraphPart:
    """What one input added to a :class:`CrawlGraph`, in a form one process hands another: read
    apart (a worker a file) and merged in the files' order (:meth:`CrawlGraph.merge`), the parts
    give the graph that one reading of all the files gives. Pages by URL in the order the input
    first named them; the links as read, in order (``count`` None: each seen once); each pair's
    first anchor."""

    urls: list[str]
    crawled: bytes
    complete: bytes
    titles: dict[int, str]
    properties: dict[int, dict[str, object]]
    anchor_pairs: np.ndarray  # (k, 2) page numbers of the part
    # The k texts joined by NUL (one string pickles and unpickles at a fraction of k of them),
    # or their list where a text holds a NUL itself.
    anchor_texts: str | list[str]
    source: np.ndarray
    target: np.ndarray
    count: np.ndarray | None
    non_web: int
    skipped: Skipped


def joined(parts: list[np.ndarray]) -> np.ndarray:
    """The parts end to end (int64), or an empty array."""
    return np.concatenate(parts).astype(np.int64, copy=False) if parts else np.zeros(0, dtype=np.int64)


class CrawlGraph:
    """Pages (by URL key) and raw links accumulated from the input files.

    Holds a spool folder once more than :data:`SPOOL_LINKS` links were read: :meth:`close` (or
    ``with``) removes it, and the on-disk links aggregated from it."""

    def __init__(self, spool_links: int | None = None, spool_root: Path | None = None) -> None:
        self.index: dict[str, int] = {}
        self.urls: list[str] = []
        self.crawled = bytearray()
        # 1 for a page whose every out-link this input gives (a record of a page file, a WARC
        # response): a recrawl replaces its links even when it has none. An edge list only names
        # the pages it saw links from.
        self.complete = bytearray()
        self.titles: dict[int, str] = {}
        self.properties: dict[int, dict[str, object]] = {}
        self.anchors: dict[tuple[int, int], str] = {}
        self.spool = LinkSpool(spool_links, spool_root)
        self.non_web = 0
        self.skipped = Skipped()

    def __len__(self) -> int:
        return len(self.urls)

    def __enter__(self) -> "CrawlGraph":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Remove the spooled links (and the on-disk links made from them)."""
        self.spool.close()

    def page(
        self,
        key: str,
        crawled: bool = False,
        title: str | None = None,
        properties: dict[str, object] | None = None,
        complete: bool = False,
    ) -> int:
        """Add or update a page; return its index. A page once crawled stays crawled;
        ``complete``: the input gives all of the page's out-links (it is crawled)."""
        idx = self.index.get(key)
        if idx is None:
            idx = len(self.urls)
            if idx >= MAX_PAGES:
                raise OverflowError(f"more than {MAX_PAGES:,} pages")
            self.index[key] = idx
            self.urls.append(key)
            self.crawled.append(0)
            self.complete.append(0)
        if crawled or complete:
            self.crawled[idx] = 1
        if complete:
            self.complete[idx] = 1
        if title is not None:
            self.titles[idx] = title
        if properties:
            self.properties.setdefault(idx, {}).update(properties)
        return idx

    def part(self) -> GraphPart:
        """This graph as a :class:`GraphPart`."""
        source, target, count = self.spool.entries()
        pairs = np.fromiter(itertools.chain.from_iterable(self.anchors), dtype=np.int64,
                            count=2 * len(self.anchors)).reshape(-1, 2)
        texts: str | list[str] = list(self.anchors.values())
        joined = "\x00".join(texts)
        if joined.count("\x00") == len(texts) - 1:
            texts = joined
        return GraphPart(list(self.urls), bytes(self.crawled), bytes(self.complete), dict(self.titles),
                         {k: dict(v) for k, v in self.properties.items()}, pairs, texts,
                         source, target, count, self.non_web, self.skipped)

    def merge(self, part: GraphPart) -> None:
        """Add what ``part`` read, as if its input were read into this graph now."""
        index, urls = self.index, self.urls
        ids = np.empty(len(part.urls), dtype=np.int64)
        for local, key in enumerate(part.urls):
            idx = index.get(key)
            if idx is None:
                idx = len(urls)
                if idx >= MAX_PAGES:
                    raise OverflowError(f"more than {MAX_PAGES:,} pages")
                index[key] = idx
                urls.append(key)
                self.crawled.append(0)
                self.complete.append(0)
            ids[local] = idx
        for flags, given in ((self.crawled, part.crawled), (self.complete, part.complete)):
            for local in np.flatnonzero(np.frombuffer(given, dtype=np.uint8)).tolist():
                flags[ids[local]] = 1
        for local, title in part.titles.items():
            self.titles[int(ids[local])] = title
        for local, properties in part.properties.items():
            self.properties.setdefault(int(ids[local]), {}).update(properties)
        # The part's anchors, the first one of a pair kept: built and joined by dict operations (a
        # Python step an anchor was a tenth of a parallel read's parent, which the workers wait on).
        pairs = ids[part.anchor_pairs]
        texts = part.anchor_texts.split("\x00") if isinstance(part.anchor_texts, str) else part.anchor_texts
        given = dict(zip(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist()), texts))
        for pair in given.keys() & self.anchors.keys():
            del given[pair]
        self.anchors.update(given)
        if len(part.source):
            self.spool.extend(ids[part.source], ids[part.target], part.count)
        self.non_web += part.non_web
        for reason, count in part.skipped.counts.items():
            self.skipped.counts[reason] += count
            examples = self.skipped.examples.setdefault(reason, [])
            examples.extend(part.skipped.examples.get(reason, [])[: MAX_SKIP_EXAMPLES - len(examples)])

    def add_pages(self, keys: list[str], crawled: bool = False) -> np.ndarray:
        """Add pages that are new and distinct (the caller knows: no look-up here), in order; their
        indices. What :meth:`page` does for each, at a fraction of the cost."""
        first = len(self.urls)
        if first + len(keys) > MAX_PAGES:
            raise OverflowError(f"more than {MAX_PAGES:,} pages")
        self.index.update(zip(keys, range(first, first + len(keys))))
        self.urls.extend(keys)
        self.crawled.extend((b"\x01" if crawled else b"\x00") * len(keys))
        self.complete.extend(bytes(len(keys)))
        return np.arange(first, first + len(keys), dtype=np.int64)

    def set_crawled(self, pages: np.ndarray) -> None:
        """Mark ``pages`` (page numbers, repeats allowed) crawled, at once."""
        flags = np.frombuffer(self.crawled, dtype=np.uint8)
        flags[np.asarray(pages, dtype=np.int64)] = 1
        del flags  # a view of the bytearray holds it at its size

    def link(self, source: int, target: int, anchor: str | None = None, count: int = 1) -> None:
        """A link seen ``count`` times (an edge list's count column; 1 otherwise)."""
        self.spool.append(source, target, count)
        if anchor and (source, target) not in self.anchors:
            self.anchors[(source, target)] = anchor

    def link_from(self, source: int, targets: list[int], anchors) -> None:
        """The links of page ``source`` to ``targets`` in order, each with its anchor text (or
        None; ``anchors[i]`` is read only for a pair that has no text yet): what :meth:`link`
        does for each, at a fraction of the cost."""
        self.spool.append_from(source, targets)
        known = self.anchors
        for at, target in enumerate(targets):
            pair = (source, target)
            if pair not in known:
                anchor = anchors[at]
                if anchor:
                    known[pair] = anchor

    def extend_links(self, source: np.ndarray, target: np.ndarray, counts: np.ndarray | None = None) -> None:
        """Add many links at once (page indices, no anchors; ``counts``: the times each was seen)."""
        self.spool.extend(source, target, counts)

    def mark(self) -> tuple[int, int, bytes, bytes]:
        """Where the graph stands, for :meth:`rollback` (pages and links only: no title, property
        or anchor may be added between the two)."""
        return len(self.urls), self.spool.mark(), bytes(self.crawled), bytes(self.complete)

    def rollback(self, mark: tuple[int, int, bytes]) -> None:
        """Take back the pages and links added since ``mark`` and the crawled flags set since."""
        pages, links, crawled, complete = mark
        for key in self.urls[pages:]:
            del self.index[key]
        del self.urls[pages:]
        self.crawled[:] = crawled
        self.complete[:] = complete
        self.spool.truncate(links)

    @property
    def links_seen(self) -> int:
        return len(self.spool)

    def links(self) -> Links:
        """Aggregate the links read so far to one per ordered pair, sorted by (source, target)."""
        return self.spool.aggregate(len(self.urls))

    def recrawled(self, links: Links) -> np.ndarray:
        """The pages whose out-links this input gives in full (a bool a page): the complete pages
        and, from an edge list, the crawled pages it names as the source of a link."""
        return self.recrawl_input(links)[0]

    def recrawl_input(self, links: Links) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """What a recrawl compares, in one pass over the links: the recrawled pages (see
        :meth:`recrawled`), the links from them (source and target page numbers), the pages
        with links that the input did not recrawl (a links file without its pages file), and the
        counts of the links from recrawled pages."""
        pages = len(self.urls)
        complete = np.frombuffer(bytes(self.complete), dtype=np.uint8).astype(bool)[:pages]
        crawled = np.frombuffer(bytes(self.crawled), dtype=np.uint8).astype(bool)[:pages]
        # A crawled page that is the source of a link is recrawled, so a link's source is
        # recrawled exactly when it is complete or crawled: one pass decides every link.
        given = complete | crawled
        recrawled = complete.copy()
        sources, targets, others, counts = [], [], [], []
        for source, target, count in links.chunks(1 << 22):
            keep = given[source]
            recrawled[source[keep]] = True
            sources.append(source[keep])
            targets.append(target[keep])
            counts.append(count[keep])
            others.append(np.unique(source[~keep]))
        return recrawled, joined(sources), joined(targets), np.unique(joined(others)), joined(counts)

    def hosts(self) -> list[str | None]:
        return hosts_of(self.urls)
