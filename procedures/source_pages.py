"""``--source-pages``: the pages whose lists a run writes (all pages stay candidates, as GDS's
source node filter): ``crawled``, ``pagerank>=Q`` or ``@FILE`` of URLs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from linksim.errors import ConfigurationError, LinksimError

if TYPE_CHECKING:
    from linksim.procedures.indexes import IndexHandle


CRAWLED_PAGES = """
MATCH (p:Page) WHERE p.crawled
RETURN collect(id(p)) AS ids
"""


PAGERANKS = """
MATCH (p:Page) WHERE p[$property] IS NOT NULL
RETURN collect(id(p)) AS ids, collect(p[$property]) AS ranks
"""


@dataclass(frozen=True)
class SourcePages:
    """Which pages get a list written (GDS's source node filter): ``crawled`` pages, pages whose
    PageRank is at or above a ``quantile`` of all ranks, or the pages of a list of ``urls``."""

    kind: str
    quantile: float = 0.0
    urls: tuple[str, ...] = ()

    def describe(self) -> str:
        return {"crawled": "crawled", "pagerank": f"pagerank>={self.quantile:g}"}.get(
            self.kind, f"{len(self.urls)} URLs")

    def select(self, runner, handle: "IndexHandle") -> np.ndarray:
        """The pages (indices of the streamed graph) to write lists for."""
        ids = handle.streamed.node_ids  # sorted: page i has the i-th smallest id
        if self.kind == "urls":
            from linksim.loader.urls import stored_key

            return np.unique(np.array([handle.page(stored_key(url)) for url in self.urls], dtype=np.int64))
        if self.kind == "crawled":
            chosen = np.array(runner.read_one(CRAWLED_PAGES)[0], dtype=np.int64)
        else:
            found, ranks = runner.read_one(PAGERANKS, {"property": "pagerank"})
            if not found:
                raise LinksimError("no page has a pagerank: run `linksim pagerank` first, or choose other source pages")
            ranks = np.asarray(ranks, dtype=np.float64)
            chosen = np.asarray(found, dtype=np.int64)[ranks >= np.quantile(ranks, self.quantile)]
        where = np.searchsorted(ids, chosen)
        inside = where < len(ids)
        inside[inside] = ids[where[inside]] == chosen[inside]
        return np.unique(where[inside])


def parse_source_pages(spec) -> SourcePages | None:
    """``None`` (every page), ``crawled``, ``pagerank>=Q`` (Q in [0, 1)), a list of URLs, or a
    :class:`SourcePages`. Anything else is a :class:`ConfigurationError`."""
    if spec is None or isinstance(spec, SourcePages):
        return spec
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise ConfigurationError("source_pages: the list of URLs is empty")
        return SourcePages("urls", urls=tuple(str(url) for url in spec))
    text = str(spec).strip()
    if text == "crawled":
        return SourcePages("crawled")
    if text.startswith("pagerank>="):
        try:
            quantile = float(text.split(">=", 1)[1])
        except ValueError:
            quantile = -1.0
        if not 0.0 <= quantile < 1.0:
            raise ConfigurationError(f"--source-pages pagerank>=Q takes a quantile Q in [0, 1), got {text!r}")
        return SourcePages("pagerank", quantile=quantile)
    raise ConfigurationError(
        f"--source-pages must be crawled, pagerank>=Q (a quantile in [0, 1)) or @FILE (URLs, one a line), got {text!r}")
