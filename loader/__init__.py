"""Crawl files -> Neo4j: format readers, URL normalisation, batched and bulk import.

The graph model::

    (:Page {url, title, host, crawled, ...})-[:LINKS_TO {count, anchor}]->(:Page)

``url`` is unique (normalised, see :mod:`linksim.loader.urls`); pages only linked to exist with
``crawled: false``; one ``LINKS_TO`` per ordered pair, ``count`` = times this input had it.

The loader never imports :mod:`linksim.procedures`: the load procedure
(:func:`linksim.procedures.load.load`) wraps its reading and writing in the writer lock, the
schema and the graph's version.
"""

from linksim.loader.graph import CrawlGraph
from linksim.loader.load import LoadSummary, read_crawl, read_files
from linksim.loader.readers import FORMATS, InputError, detect_format

__all__ = ["FORMATS", "CrawlGraph", "InputError", "LoadSummary", "detect_format", "read_crawl", "read_files"]
