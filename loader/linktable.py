"""A link table (what ``linksim spark extract`` writes, :mod:`linksim.loader.extract`) read into a
crawl graph: its pages in id order with their titles and flags, its links with their counts and
anchors, a Parquet batch at a time (pyarrow, no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from linksim.errors import ConfigurationError
from linksim.loader.graph import CrawlGraph
from linksim.loader.readers import ErrorPolicy

#: The description file a link table folder holds (the same name as the extract's).
MARKER = "linksim-links.json"


def is_link_table(path: Path) -> bool:
    return path.is_dir() and (path / MARKER).is_file()


def read_link_table(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> str:
    """Add the link table ``path``'s pages and links to ``graph``; says what it was extracted from."""
    del normalize, policy  # its URLs are the extract's, normalised (or not) as it was asked
    import pyarrow.parquet as pq

    if not is_link_table(path):
        raise ConfigurationError(f"{path} is not a link table of `linksim spark extract` (no {MARKER})")
    described = json.loads((path / MARKER).read_text())
    pages = pq.read_table(path / "pages", columns=["id", "url", "title", "crawled", "complete"]).sort_by("id")
    ids = pages.column("id").to_numpy()
    if not np.array_equal(ids, np.arange(len(ids))):
        raise ConfigurationError(f"{path}/pages: the page ids are not 0, 1, ... {len(ids) - 1:,}: not a whole link table")
    urls = pages.column("url").to_pylist()
    if len(graph) == 0:
        numbers = graph.add_pages(urls)
    else:  # another input of the load came first: its pages may be these
        numbers = np.array([graph.page(url) for url in urls], dtype=np.int64)
    for column, flags in (("crawled", graph.crawled), ("complete", graph.complete)):
        view = np.frombuffer(flags, dtype=np.uint8)
        view[numbers[pages.column(column).to_numpy(zero_copy_only=False)]] = 1
        del view  # a view of the bytearray holds it at its size
    for page, title in zip(numbers.tolist(), pages.column("title").to_pylist()):
        if title is not None:
            graph.titles[page] = title
    anchors = graph.anchors
    for batch in _batches(path / "links"):
        source = numbers[batch.column("source").to_numpy()]
        target = numbers[batch.column("target").to_numpy()]
        graph.extend_links(source, target, batch.column("count").to_numpy())
        for a, b, text in zip(source.tolist(), target.tolist(), batch.column("anchor").to_pylist()):
            if text:
                anchors.setdefault((a, b), text)
    # What the extract read and skipped, as a load of the files would report it.
    graph.non_web += int(described.get("non_web_links", 0))
    for reason, count in described.get("skipped", {}).items():
        graph.skipped.counts[reason] += int(count)
        for where in described.get("skipped_examples", {}).get(reason, [])[:3]:
            graph.skipped.examples.setdefault(reason, []).append(where)
    return f"extracted from {len(described.get('files', [])):,} files"


def _batches(folder: Path):
    import pyarrow.dataset as ds

    yield from ds.dataset(folder, format="parquet").to_batches(columns=["source", "target", "count", "anchor"],
                                                               batch_size=1 << 20)
