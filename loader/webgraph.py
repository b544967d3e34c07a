"""WebGraph BV graphs: the compressed format of the LAW's web crawls (cnr-2000 among them) and of
the graphs the WebGraph tools write, read through the reference library's Rust implementation
(PyPI ``webgraph``, the authors' Python bindings).

A graph is a basename with its files beside it, given as any of them (``cnr-2000.graph`` or
``cnr-2000.properties``):

- ``BASENAME.graph`` and ``BASENAME.properties``: the graph (``graphclass`` BVGraph);
- ``BASENAME.ef``: the Elias-Fano index of its offsets, which the Rust library reads the graph
  through; where only the Java tools' ``.offsets`` is there, make it once with
  ``webgraph build ef BASENAME`` (``cargo install webgraph-cli``);
- optionally the nodes' names, one a line in node order: ``BASENAME.urls`` (the LAW's, gzipped or
  not) or ``BASENAME.nodes`` (what ``webgraph from arcs --labels`` writes). Without them a node is
  the page named by its number, as an edge list of ids names it.

Every node is a page; a node with a link out is crawled, the others are only linked to (as in a
crawl's frontier).
"""

from __future__ import annotations

import itertools
import logging
from pathlib import Path

import numpy as np

from linksim.errors import ConfigurationError
from linksim.loader.graph import CrawlGraph
from linksim.loader.readers import ErrorPolicy, InputError, read_lines
from linksim.loader.urls import IDENTIFIER, WEB, resolve

log = logging.getLogger(__name__)

#: The suffixes a BV graph is named by.
SUFFIXES = (".graph", ".properties")
#: The files of the nodes' names, in the order they are looked for.
NAMES = (".urls.gz", ".urls", ".nodes.gz", ".nodes")
#: Nodes whose links are read at once (one numpy block of their targets).
NODE_BLOCK = 1 << 16


def basename_of(path: Path) -> Path | None:
    """The basename of the BV graph ``path`` names (its ``.graph`` or ``.properties``), or None."""
    if path.suffix in SUFFIXES and path.with_suffix(".properties").is_file():
        return path.with_suffix("")
    return None


def _properties(basename: Path) -> dict[str, str]:
    found = {}
    for line in basename.with_suffix(".properties").read_text(encoding="latin-1").splitlines():
        key, equals, value = line.partition("=")
        if equals and not key.lstrip().startswith("#"):
            found[key.strip()] = value.strip()
    return found


def _open(basename: Path):
    """The library's graph, or a clear error of what is missing."""
    graph_class = _properties(basename).get("graphclass", "")
    if not graph_class.endswith("BVGraph"):
        raise ConfigurationError(f"{basename}.properties is not a WebGraph BV graph's (graphclass {graph_class!r})")
    for suffix in (".graph", ".ef"):
        if not basename.with_suffix(suffix).is_file():
            how = (f"; make it with `webgraph build ef {basename}` (the WebGraph tools: cargo install webgraph-cli)"
                   if suffix == ".ef" else "")
            raise ConfigurationError(f"{basename}{suffix} is missing: a BV graph is read through it{how}")
    try:
        import webgraph
    except ImportError:  # pragma: no cover - a dependency of linksim
        raise ConfigurationError("reading a WebGraph BV graph needs the webgraph package: pip install webgraph") from None
    try:
        return webgraph.BvGraph(str(basename))
    except (ValueError, OSError) as exc:
        raise ConfigurationError(f"{basename}: the WebGraph library cannot read it: {exc}") from None


def read_webgraph(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> str:
    """Read the BV graph ``path`` names (see the module) into ``graph``; returns where the nodes'
    names came from."""
    basename = basename_of(path)
    if basename is None:
        raise ConfigurationError(f"{path} is not a WebGraph BV graph (BASENAME.graph beside BASENAME.properties)")
    bv = _open(basename)
    nodes = bv.num_nodes()
    names, named_by = _names(basename, nodes, policy, normalize)
    pages = _pages(graph, names)
    degrees = np.asarray(bv.outdegrees(), dtype=np.int64)
    for first in range(0, nodes, NODE_BLOCK):
        last = min(first + NODE_BLOCK, nodes)
        counts = degrees[first:last]
        targets = np.fromiter(itertools.chain.from_iterable(bv.successors(node) for node in range(first, last)),
                              dtype=np.int64, count=int(counts.sum()))
        sources = np.repeat(np.arange(first, last, dtype=np.int64), counts)
        keep = (pages[sources] >= 0) & (pages[targets] >= 0)  # a node whose name was refused has no page
        graph.extend_links(pages[sources[keep]], pages[targets[keep]])
    graph.set_crawled(pages[(degrees > 0) & (pages >= 0)])
    log.info("%s: %s nodes, %s arcs, names %s", basename.name, f"{nodes:,}", f"{bv.num_arcs():,}", named_by)
    return f"names {named_by}"


def _names(basename: Path, nodes: int, policy: ErrorPolicy, normalize: bool) -> tuple[list[str | None], str]:
    """Each node's page key (None for a name refused) and where the names came from."""
    for suffix in NAMES:
        file = Path(f"{basename}{suffix}")
        if file.is_file():
            break
    else:
        return [str(node) for node in range(nodes)], "from the node numbers"
    names: list[str | None] = []
    for number, text in read_lines(file, policy):
        if len(names) == nodes:
            raise InputError(file, number, f"more names than the graph's {nodes:,} nodes")
        kind, key = resolve(text, None, normalize)
        if kind not in (WEB, IDENTIFIER):
            policy.bad(file, number, f"{text[:200]!r} names no page ({key if kind != 'non-web' else 'another scheme'})",
                       "malformed node name")
            key = None
        names.append(key)
    if len(names) != nodes:
        raise InputError(file, None, f"{len(names):,} names for the graph's {nodes:,} nodes: every node is named, one a line")
    return names, f"from {file.name}"


def _pages(graph: CrawlGraph, names: list[str | None]) -> np.ndarray:
    """The page of each node (-1 for a name refused)."""
    if len(graph) == 0 and None not in names and len(set(names)) == len(names):
        return graph.add_pages(names)  # the common case, at a fraction of a look-up a node
    # graph.page, not add_pages: a name may be a page of another input, or two names one URL.
    return np.array([-1 if name is None else graph.page(name) for name in names], dtype=np.int64)
