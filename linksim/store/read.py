"""Opening an index: checked against its format, its graph and the parameters asked for, and
for integrity, before any answer (see the package)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from linksim.store.atomic import replaced
from linksim.store.errors import IndexCorrupt, IndexMismatch, IndexNotFound, IndexOutdated
from linksim.store.files import array_digest, describe, remove_dead_scratch, stored
from linksim.store.kinds import FORMAT, FORMAT_VERSION, GRAPH_ARRAYS, assemble, index_ranges

log = logging.getLogger(__name__)


def check(meta: dict, method: str, graph_fingerprint: str | None = None, **expected) -> None:
    """Raise :class:`IndexMismatch` unless ``meta`` fits the graph and the parameters asked for.

    ``expected`` holds parameters to compare (None: not asked); ``n_fingerprints`` may be at most
    what was built.
    """
    where = f"the stored {method} index"
    if meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION:
        raise IndexOutdated(
            f"{where} has format {meta.get('format')!r} version {meta.get('version')!r}; this linksim "
            f"reads {FORMAT!r} version {FORMAT_VERSION}", method, meta.get("parameters"), rebuild=True)
    if meta.get("method") != method:
        raise IndexMismatch(f"{where} says it is a {meta.get('method')!r} index", method, rebuild=True)
    built = meta["graph"]
    if graph_fingerprint is not None and built["fingerprint"] != graph_fingerprint:
        raise IndexMismatch(
            f"{where} was built on {meta['created']} from a different graph ({built['pages']:,} pages, "
            f"{built['links']:,} links); the graph has changed since", method, meta.get("parameters"))
    parameters = meta["parameters"]
    for name, value in expected.items():
        if value is None or name not in parameters:
            continue
        if name == "n_fingerprints":
            if value > parameters[name]:
                raise IndexMismatch(f"{where} has {parameters[name]} fingerprints, fewer than the {value} asked for",
                                    method, {"n_fingerprints": value})
            continue
        if parameters[name] != value:
            shown = " ".join(f"{k}={v}" for k, v in parameters.items())
            raise IndexMismatch(f"{where} was built with {shown}, not {name}={value}", method,
                                {k: v for k, v in expected.items() if v is not None})


def _corrupt(path: Path, what: str, method: str) -> IndexCorrupt:
    return IndexCorrupt(f"{path} is corrupt ({what})", method, rebuild=True)


def _open_array(directory: Path, name: str, spec: dict, method: str, mmap: bool, verify: bool) -> np.ndarray:
    path = directory / f"{name}.npy"
    try:
        stat = path.stat()
    except OSError as error:
        raise IndexMismatch(f"{path} cannot be read ({error.strerror})", method, rebuild=True) from None
    if stat.st_size != spec["fileBytes"]:
        raise _corrupt(path, f"{stat.st_size:,} bytes, {spec['fileBytes']:,} written", method)
    try:
        array = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise _corrupt(path, f"unreadable header: {error}", method) from None
    if str(array.dtype) != spec["dtype"] or list(array.shape) != spec["shape"]:
        raise IndexMismatch(
            f"{path} holds {array.dtype}{list(array.shape)}, meta.json says {spec['dtype']}{spec['shape']}", method,
            rebuild=True)
    if (verify or stat.st_mtime_ns != spec["mtimeNs"]) and array_digest(array) != spec["blake2b"]:
        raise _corrupt(path, "its content differs from what was written: digest mismatch", method)
    # A plain ndarray over the same mapping: np.memmap's Python-level indexing costs more than the
    # queries' own work (2.2 ms of 4.5 ms a page in the all-pages top-k on cnr-2000).
    return array.view(np.ndarray) if isinstance(array, np.memmap) else array


@dataclass
class StoredIndex:
    """An index opened from the store, with what names its pages and where it lives."""

    index: object
    meta: dict
    pages: object  # linksim.store.pagetable.PageTable, or None for an index stored without URLs
    path: Path


def _open(meta: dict, method: str, mmap: bool, verify: bool) -> StoredIndex:
    from linksim.store.pagetable import PageTable

    directory = Path(meta["path"])
    arrays = {name: _open_array(directory, name, spec, method, mmap, verify) for name, spec in meta["arrays"].items()}
    pages = PageTable.from_arrays(arrays) if "page_url_order" in arrays else None
    return StoredIndex(assemble(method, meta, arrays), meta, pages, directory)


def open_path(path: Path, mmap: bool = True):
    """The index stored in the folder ``path`` (as :func:`save` returned it), memory-mapped: what a
    Spark task opens to answer its share of the pages (:func:`linksim.spark.top_k_lists`)."""
    path = Path(path)
    meta = json.loads((path / "meta.json").read_text())
    check(meta, meta["method"])
    return _open(dict(meta, path=str(path)), meta["method"], mmap, verify=False).index


def _matching(root: Path, method: str, crawled_only: bool | None, expected: dict) -> tuple[list[dict], list[dict]]:
    """(indexes of ``method`` whose parameters fit ``expected``, all of the method)."""
    remove_dead_scratch(root)
    everything = stored(root, method)
    fits = []
    for meta in everything:
        if crawled_only is not None and bool(meta.get("crawledOnly")) != bool(crawled_only):
            continue
        try:
            check(meta, method, None, **expected)
        except IndexMismatch:
            continue
        fits.append(meta)
    return fits, everything


def open_current(root: Path, method: str, state: dict, crawled_only: bool | None = None, mmap: bool = True,
                 **expected) -> StoredIndex:
    """The stored index of ``method`` that fits the parameters asked for (None: any; one built
    with exactly those values first, then the newest) and was built from the graph in ``state`` (``{id, version, pages, links}``): no graph is read.

    Raises
    ------
    IndexNotFound
        No index of the method fits the parameters: names the command that builds one.
    IndexMismatch
        Some fit but were built from an earlier state of the graph (stale): names the command.
    """
    fits, everything = _matching(root, method, crawled_only, expected)
    if not everything:
        raise IndexNotFound(f"no {method} index in {Path(root)}", method, expected)
    if not fits:
        built = "; ".join(" ".join(f"{k}={v}" for k, v in m["parameters"].items()) for m in everything[:3])
        raise IndexNotFound(f"no stored {method} index fits the parameters asked for (stored: {built})", method,
                            expected)
    # One built with exactly the values asked for first (N = 100 over the first 100 of N = 1000).
    fits.sort(key=lambda m: any(v is not None and m["parameters"].get(k) != v for k, v in expected.items()))
    for meta in fits:
        if meta.get("graphState") == state:
            return _open(meta, method, mmap, verify=False)
    newest = fits[0].get("graphState") or {}
    raise IndexMismatch(
        f"the stored {method} index is stale: it was built from version {newest.get('version')} of the graph "
        f"({newest.get('pages', 0):,} pages, {newest.get('links', 0):,} links); the graph is at version "
        f"{state.get('version')} ({state.get('pages', 0):,} pages, {state.get('links', 0):,} links)", method, expected)


def open_built(root: Path, method: str, parameters: dict, graph_fingerprint: str, crawled_only: bool = False,
               mmap: bool = True) -> StoredIndex | None:
    """The stored index of ``method`` built with exactly ``parameters`` from the graph of
    ``graph_fingerprint`` (the builders' reuse), or None if there is none, it is of another graph,
    or it was written by another linksim (:class:`IndexOutdated`: the build replaces it). A
    corrupt one is reported (:class:`IndexCorrupt`)."""
    meta = describe(root, method, parameters, crawled_only)
    if meta is None:
        return None
    try:
        check(meta, method)
        if meta["graph"]["fingerprint"] != graph_fingerprint:
            return None
        return _open(meta, method, mmap, verify=False)
    except IndexOutdated as outdated:
        log.warning("%s; building it again", outdated.reason)
        return None


def open_previous(root: Path, method: str, parameters: dict, crawled_only: bool = False) -> StoredIndex | None:
    """The stored index of ``method`` built with exactly ``parameters`` whatever its graph, if it
    can be updated: of this linksim's format, with the graph it was built from (else None: the
    build replaces it)."""
    meta = describe(root, method, parameters, crawled_only)
    if meta is None:
        return None
    arrays = meta.get("arrays", {})
    wanted = [f"graph_{name}" for name in GRAPH_ARRAYS]  # pages are matched by their codes
    try:
        check(meta, method)
    except IndexMismatch:
        return None
    if not all(name in arrays for name in wanted):
        return None
    return _open(meta, method, mmap=True, verify=False)


def stored_graph(found: StoredIndex):
    """The :class:`~linksim.graph.LinkGraph` an index was built from, as :func:`save` kept it with
    the index (memory-mapped), its pages known by their draw codes (what an update reads of them;
    their URLs are the index's page table)."""
    from linksim.graph import LinkGraph

    directory = found.path
    arrays = {name: _open_array(directory, f"graph_{name}", found.meta["arrays"][f"graph_{name}"],
                                found.meta["method"], mmap=True, verify=False) for name in GRAPH_ARRAYS}
    codes = arrays.pop("codes")
    return LinkGraph(n=len(arrays["in_indptr"]) - 1, draw_codes=codes, **arrays)


def record_state(path: Path, state: dict) -> None:
    """Record that the index in ``path`` fits the graph in ``state`` too (the same links and URLs
    under a newer version, e.g. after a load that changed nothing): meta.json replaced atomically."""
    meta = json.loads((path / "meta.json").read_text())
    meta["graphState"] = state
    with replaced(path / "meta.json") as handle:
        handle.write((json.dumps(meta, indent=2) + "\n").encode())


def load(root: Path, method: str, graph_fingerprint: str | None = None, mmap: bool = True,
         verify: bool = False, crawled_only: bool | None = None, **expected):
    """The newest stored index of ``method`` fitting the parameters asked for (and built from the
    graph of ``graph_fingerprint`` if given), checked by :func:`check` and for integrity (see
    module); arrays memory-mapped. ``verify``: recompute every digest, not only those of changed
    files."""
    fits, everything = _matching(root, method, crawled_only, expected)
    if not everything:
        raise IndexNotFound(f"no {method} index in {Path(root)}", method, expected)
    for meta in fits:
        if graph_fingerprint is None or meta["graph"]["fingerprint"] == graph_fingerprint:
            return _open(meta, method, mmap, verify).index
    # None fits: check says what differs (the parameters, or the graph of those that fit them).
    check((fits or everything)[0], method, graph_fingerprint, **expected)
    raise IndexMismatch(f"no stored {method} index fits", method, expected)


def _ranges(method: str, meta: dict) -> dict[str, tuple[float, float]]:
    """Where every stored value must lie, per array (inclusive)."""
    n = meta["graph"]["pages"]
    length = meta["parameters"].get("length", 0)
    pages = {}
    if "page_url_order" in meta["arrays"]:
        pages = {"page_url_order": (0, n - 1), "page_url_offsets": (0, meta["arrays"]["page_url_bytes"]["shape"][0])}
    return {**pages, **index_ranges(method, meta, n, length)}


def verify(root: Path, method: str) -> list[dict]:
    """Recompute the digest of every array of every stored index of ``method`` and check every
    value's range.

    Returns their ``meta.json``; raises :class:`IndexMismatch` for the first fault found.
    """
    metas = stored(root, method)
    if not metas:
        raise IndexNotFound(f"no {method} index in {Path(root)}", method)
    for meta in metas:
        _verify_one(meta, method)
    return metas


def _verify_one(meta: dict, method: str) -> None:
    check(meta, method)
    directory = Path(meta["path"])
    ranges = _ranges(method, meta)
    for name, spec in meta["arrays"].items():
        array = _open_array(directory, name, spec, method, mmap=True, verify=True)
        if name in ranges and array.size:
            low, high = ranges[name]
            flat = array.reshape(-1)
            step = 16 << 20
            for start in range(0, len(flat), step):
                part = flat[start : start + step]
                if part.min() < low or part.max() > high or (part.dtype.kind == "f" and not np.isfinite(part).all()):
                    raise _corrupt(directory / f"{name}.npy", f"values outside {low}..{high}", method)
