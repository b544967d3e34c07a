"""Index handles: where the index store of a database lives, and an index obtained (built or
reused, :func:`obtain_index`) or opened for queries (:func:`open_index`) with its page table."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from linksim import store
from linksim.digest import graph_fingerprint
from linksim.errors import ConfigurationError
from linksim.methods import method as registered
from linksim.procedures.graphs import (PAGE_GRAPH, LinkGraphOf, empty_graph, graph_of, index_root_of,
                                       refuse_crawled_only)
from linksim.procedures.stream import StreamedGraph, stream_link_graph

log = logging.getLogger(__name__)


def default_index_root(uri: str, database: str, home: Path | None = None) -> Path:
    """``<LINKSIM_HOME>/indexes/<host_port>-<database>-<hash>``: one store per database."""
    from linksim.home import linksim_home

    readable = "".join(ch if ch.isalnum() else "_" for ch in uri.split("://")[-1])[:40]
    digest = hashlib.sha256(f"{uri}\n{database}".encode()).hexdigest()[:8]
    return (home or linksim_home()) / "indexes" / f"{readable}-{database}-{digest}"


@dataclass
class IndexHandle:
    """An index ready to answer: built or reused by :func:`obtain_index` (with the graph streamed
    for it), or opened for queries by :func:`open_index` (no graph read)."""

    method: str
    index: object
    root: Path
    built: bool = False
    build_seconds: float = 0.0
    streamed: StreamedGraph | None = None
    path: Path | None = None
    _pages: object = None
    of: LinkGraphOf = PAGE_GRAPH  # the link graph it is an index of (its pages may be hosts)
    host_filters: dict = field(default_factory=dict)  # target filters by host, resolved (procedures.targets)

    @property
    def pages(self):
        """Which page is which (a :class:`linksim.store.pagetable.PageTable`)."""
        if self._pages is None:
            from linksim.store.pagetable import PageTable

            self._pages = PageTable.from_urls(self.streamed.urls)
        return self._pages

    def page(self, url: str) -> int:
        page = self.pages.page(url)
        if page is None and not self.of.pages:
            raise ConfigurationError(f"{url} is not a host of the host graph (`linksim hosts` builds it again "
                                     "from the pages)")
        if page is None:
            raise ConfigurationError(
                f"{url} is not a page of the graph (URLs are stored normalised: lower-case scheme "
                "and host, no default port, no fragment)"
            )
        return page


def obtain_index(
    runner,
    method: str,
    root: Path,
    streamed: StreamedGraph | None = None,
    rebuild: bool = False,
    crawled_only: bool = False,
    show_progress: bool = True,
    memory_budget: str | int | None | bool = None,
    on_disk: bool = False,
    graph: str | LinkGraphOf = "pages",
    reopen: bool = False,
    counted: bool = False,
    **given,
) -> IndexHandle:
    """The index of ``method`` with the given parameters (None: the papers' default) for the graph
    in Neo4j, streamed for it: the stored one if it was built from the same links and URLs (its
    recorded graph state then brought up to date), else built and stored. For ``index`` and
    ``similar``; queries open the stored index without reading the graph (:func:`open_index`).
    ``memory_budget``: see :mod:`linksim.procedures.budget` (False: none); ``counted``: the
    estimate from the counts checked by the caller, who passes ``on_disk`` (build the index into
    memory-mapped files, when only that fits). An index that the graph's structure sizes
    (PageSim's) is checked again, measured on the streamed graph, before it is built. ``graph``:
    the page graph or the host graph (:mod:`linksim.procedures.graphs`), whose indexes are stored
    in ``root/hosts``. ``reopen`` (an index whose lists read fingerprint trees, ``page_major_rows``:
    the fingerprint-tree methods and spectral, for ``similar``): an index this call built or updated
    is returned as opened from the store, memory-mapped, as a stored one is: the build's arrays are
    let go, and the lists hold of it only the pages their queries read.
    """
    entry = registered(method)
    parameters = entry.parameters_for(**given)  # checked before the graph is read
    of = graph_of(streamed.of if streamed is not None else graph)
    refuse_crawled_only(of, crawled_only)
    root = index_root_of(root, of)
    if streamed is None and memory_budget is not False and not counted:
        from linksim.procedures.budget import check_memory

        on_disk = check_memory(runner, "index", memory_budget, method, graph=of.name, **given).on_disk
    if streamed is None:
        streamed = stream_link_graph(runner, crawled_only=crawled_only, show_progress=show_progress, graph=of)
    graph = streamed.graph
    if graph.n == 0:
        raise empty_graph(of)
    if not rebuild:
        found = store.open_built(root, method, parameters, graph_fingerprint(graph), crawled_only)
        if found is not None:
            if found.meta.get("graphState") != streamed.state:
                store.record_state(found.path, streamed.state)
            log.info("using the stored %s index in %s", method, found.path)
            return IndexHandle(method, found.index, root, False, 0.0, streamed, found.path, of=of)
        updated = _updated(entry, root, parameters, streamed, crawled_only, show_progress) if not on_disk else None
        if updated is not None:
            # opened from the store, the index holds its update's change too (what the lists read of it)
            index = store.open_path(updated[2]) if reopen and entry.page_major_rows else updated[0]
            return IndexHandle(method, index, root, True, updated[1], streamed, updated[2], of=of)
    from linksim.procedures.budget import check_index_disk, check_measured

    what = f"index {method} on {graph.n:,} {of.noun}s"
    measured = check_measured(graph, method, memory_budget, what, **given) if memory_budget is not False else None
    check_index_disk(root, method, graph.n, graph.m, on_disk, what, measured=measured, **given)
    log.info("building the %s index of %s %ss (%s)", method, f"{graph.n:,}", of.noun,
             ", ".join(f"{k}={v}" for k, v in parameters.items()))
    began = time.monotonic()
    with store.build_directory(root, method) if on_disk else contextlib.nullcontext() as directory:
        if directory is None:
            keep = {"keep_walks": True} if entry.keeps_state else {}  # what the next update starts from
            index = entry.build(graph, parameters, show_progress=show_progress, **keep)
        else:
            log.info("building on disk (memory-mapped, in %s): the index does not fit the memory budget", directory)
            index = entry.build(graph, parameters, show_progress=show_progress, directory=directory)
            index.layout()  # built on disk too, before the save moves the files
        seconds = time.monotonic() - began
        path = store.save(index, root, method, graph.n, graph.m, extra={"buildSeconds": round(seconds, 3)},
                          urls=streamed.urls, state=streamed.state, crawled_only=crawled_only, graph=graph)
    log.info("built in %.1f s, stored in %s", seconds, path)
    if reopen and entry.page_major_rows:
        index = store.open_path(path)
    return IndexHandle(method, index, root, True, seconds, streamed, path, of=of)


#: An update of a stored index pays while at most this share of the pages' links changed (beyond,
#: the index is built again: the update's cost grows with the walks the change touches).
UPDATE_SHARE = 0.25


def _updated(entry, root: Path, parameters: dict, streamed: StreamedGraph, crawled_only: bool, show_progress: bool):
    """The stored index of an earlier graph brought up to date with the streamed graph
    (``Method.update``: the rebuild's arrays, bit for bit; the default's within the noise of a
    rebuild, its ``change`` saying what moved) and stored in its place, as ``(index,
    seconds, path)``; None where it cannot be (no such index, a method without updates, an index
    built without its walk state or on disk, too large a change, pages in another order): then
    the caller builds it."""
    from linksim.errors import ConfigurationError

    if entry.update is None:
        return None
    found = store.open_previous(root, entry.name, parameters, crawled_only)
    if found is None:
        return None
    graph = streamed.graph
    began = time.monotonic()
    before = store.stored_graph(found)
    try:
        # The graph kept beside the index is the one it was built from: no digest to compare.
        index = entry.update(before, found.index, graph, show_progress=show_progress, max_share=UPDATE_SHARE,
                             check_graph=False)
    except ConfigurationError as reason:
        log.info("building the %s index again rather than updating it: %s", entry.name, reason)
        return None
    seconds = time.monotonic() - began
    rebuilt = found.meta.get("buildSeconds")
    path = store.save(index, root, entry.name, graph.n, graph.m,
                      extra={"buildSeconds": rebuilt, "updateSeconds": round(seconds, 3), "updatedFrom": {
                          "pages": before.n, "links": before.m, "changedPages": index.changed_pages}},
                      urls=streamed.urls, state=streamed.state, crawled_only=crawled_only, graph=graph)
    log.info("updated the stored %s index to the changed graph (%s of %s pages with links changed) in %.1f s "
             "(its build took %s), stored in %s", entry.name, f"{index.changed_pages:,}", f"{graph.n:,}", seconds,
             "?" if rebuilt is None else f"{rebuilt:.1f} s", path)
    return index, seconds, path


def open_index(runner, method: str, root: Path, crawled_only: bool | None = None, state: dict | None = None,
               graph: str | LinkGraphOf = "pages", **given) -> IndexHandle:
    """The stored index of ``method`` for queries: the newest that fits the parameters given
    (``n_fingerprints``: at least that many) and the graph as it is now, which one constant-time
    query checks (:func:`linksim.procedures.stream.graph_state`). Nothing is built or streamed.

    Raises
    ------
    IndexNotFound, IndexMismatch
        No such index, or a stale one: the message names the ``linksim index`` command to run.
    """
    from linksim.procedures.stream import graph_state

    registered(method)
    of = graph_of(graph)
    refuse_crawled_only(of, bool(crawled_only))
    state = graph_state(runner, of) if state is None else state
    if state["pages"] == 0:
        raise empty_graph(of)
    root = index_root_of(root, of)
    try:
        found = store.open_current(root, method, state, crawled_only, **given)
    except store.IndexStoreError as error:
        if of.pages:
            raise
        # The remedy names the host graph: `linksim index METHOD --graph hosts`.
        raise type(error)(error.reason, error.method, dict(error.parameters, graph=of.name), error.rebuild) from None
    if found.pages is None:
        raise store.IndexMismatch(f"the stored {method} index in {found.path} names no pages (written by an "
                                  "older linksim)", method, rebuild=True)
    return IndexHandle(method, found.index, root, path=found.path, _pages=found.pages, of=of)


@contextmanager
def answering(handle: IndexHandle):
    """A stored index whose values make a query fail is corrupt (a file changed without its
    modification time, which only ``--verify`` reads whole): say so, never a traceback."""
    try:
        yield
    except (IndexError, ValueError) as error:
        raise store.IndexCorrupt(
            f"the stored {handle.method} index in {handle.path or store.index_dir(handle.root, handle.method)} gave an "
            f"impossible value ({type(error).__name__}: {error}): it is corrupt (its verify finds which file)",
            handle.method, rebuild=True) from None
