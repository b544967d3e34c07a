"""Common Crawl's web graphs at the host or domain level, as Common Crawl releases them: a folder
(or the vertices file, its edges file beside it) of

- ``*vertices.txt.gz``: ``id<TAB>reversed name`` (``com.example.www``), ids 0, 1, 2, ... in
  order; the domain graph adds a third column, the domain's host count;
- ``*edges.txt.gz``: ``from<TAB>to``, ids of the vertices, sorted.

Each host or domain is loaded as the page ``https://<name>/`` (``com.example.www`` becomes
``https://www.example.com/``), so that every command of linksim runs on the graph as it runs on
a crawl's pages; a vertex with a link out is crawled, the others are only linked to.

Releases before 2026 strip a leading ``www.`` from the names; from the first 2026 graph it is
kept. The reader recognises the convention from the names themselves (a name that keeps its
``www.``) and says which it read: in a graph of the older convention ``https://example.com/``
stands for ``www.example.com`` too, so a page crawl is matched to it with ``www.`` removed.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np

from linksim.errors import ConfigurationError
from linksim.loader.graph import CrawlGraph
from linksim.loader.readers import ErrorPolicy, InputError, read_lines

log = logging.getLogger(__name__)

#: A host name's labels as Common Crawl writes them reversed: lower-case ASCII (IDNs in punycode).
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
#: The conventions of ``www.`` in the names.
KEPT, STRIPPED = "www kept", "www stripped"
#: Ids a block of edges holds before it is added (numpy arrays, not a link call per line).
EDGE_BLOCK = 1 << 20


def graph_files(path: Path) -> tuple[Path, Path] | None:
    """(vertices, edges) of a Common Crawl graph given as its folder or its vertices file; None
    where ``path`` is neither."""
    if path.is_dir():
        vertices = sorted(path.glob("*vertices.txt.gz")) + sorted(path.glob("*vertices.txt"))
        edges = sorted(path.glob("*edges.txt.gz")) + sorted(path.glob("*edges.txt"))
        if len(vertices) == 1 and len(edges) == 1:
            return vertices[0], edges[0]
        if vertices or edges:
            raise ConfigurationError(
                f"{path} holds {len(vertices)} vertices and {len(edges)} edges files of a Common Crawl graph; "
                "give a folder of one graph (one of each)")
        return None
    name = path.name
    if re.search(r"vertices\.txt(\.gz)?$", name):
        edges = path.with_name(name.replace("vertices.txt", "edges.txt"))
        if not edges.exists():
            raise ConfigurationError(f"{path} is the vertices of a Common Crawl graph, but {edges.name} is not beside it")
        return path, edges
    return None


def host_of(reversed_name: str) -> str | None:
    """``com.example.www`` -> ``www.example.com``; None where a label is not a host name's."""
    labels = reversed_name.split(".")
    if not all(_LABEL.fullmatch(label) for label in labels):
        return None
    return ".".join(reversed(labels))


def read_ccgraph(path: Path, graph: CrawlGraph, policy: ErrorPolicy, normalize: bool) -> str:
    """Read a Common Crawl host or domain graph (see the module) into ``graph``; returns the
    ``www.`` convention it recognised (:data:`KEPT` or :data:`STRIPPED`)."""
    del normalize  # the names are host names already: their URLs are in normal form
    files = graph_files(path)
    if files is None:
        raise ConfigurationError(f"{path} is not a Common Crawl graph (a folder of *vertices.txt.gz and "
                                 "*edges.txt.gz, or its vertices file)")
    vertices, edges = files
    pages, www = _read_vertices(vertices, graph, policy)
    convention = KEPT if www else STRIPPED
    log.info("%s: %s vertices, %s of them named with www. (%s: the release's convention)", vertices.name,
             f"{len(pages):,}", f"{www:,}", convention)
    _read_edges(edges, pages, graph, policy)
    return convention


def _read_vertices(path: Path, graph: CrawlGraph, policy: ErrorPolicy) -> tuple[np.ndarray, int]:
    """Each vertex's page (-1 for a vertex refused), by id; how many names keep ``www.``."""
    pages: list[int] = []
    www = 0
    for number, text in read_lines(path, policy):
        fields = text.split("\t")
        if len(fields) not in (2, 3) or not fields[0].isdigit():
            policy.bad(path, number, "expected `id<TAB>reversed host name[<TAB>hosts]`", "malformed vertex")
            continue
        if int(fields[0]) != len(pages):
            # Ids are the line order: a gap means lines were lost, and every later edge would be misread.
            raise InputError(path, number, f"vertex id {fields[0]} where {len(pages)} was expected (ids count up "
                                           "from 0, one a line)")
        host = host_of(fields[1].strip())
        if host is None:
            policy.bad(path, number, f"{fields[1][:200]!r} is not a reversed host name", "malformed vertex")
            pages.append(-1)
            continue
        www += host.startswith("www.")
        # graph.page, not add_pages: a host may be a page of another input of the load already.
        pages.append(graph.page(f"https://{host}/"))
    return np.array(pages, dtype=np.int64), www


def _read_edges(path: Path, pages: np.ndarray, graph: CrawlGraph, policy: ErrorPolicy) -> None:
    """The links, a block of ids at a time; a source with a link is crawled."""
    sources: list[int] = []
    targets: list[int] = []

    def flush() -> None:
        if sources:
            source, target = pages[sources], pages[targets]
            graph.extend_links(source, target)
            graph.set_crawled(source)
            sources.clear()
            targets.clear()

    for number, text in read_lines(path, policy):
        fields = text.split("\t")
        if len(fields) != 2 or not fields[0].isdigit() or not fields[1].isdigit():
            policy.bad(path, number, "expected `from<TAB>to` (vertex ids)", "malformed edge")
            continue
        a, b = int(fields[0]), int(fields[1])
        if a >= len(pages) or b >= len(pages):
            policy.bad(path, number, f"vertex {max(a, b)} is not in the vertices file ({len(pages):,} vertices)",
                       "unknown vertex")
            continue
        if pages[a] < 0 or pages[b] < 0:
            policy.bad(path, number, f"vertex {a if pages[a] < 0 else b} was refused", "unknown vertex")
            continue
        sources.append(a)
        targets.append(b)
        if len(sources) >= EDGE_BLOCK:
            flush()
    flush()
