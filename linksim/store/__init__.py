"""The on-disk index store: one versioned directory per method, checked before every answer.

An index directory holds ``meta.json`` (format version, method, parameters, seed, the fingerprint
and size of the graph it was built from, the shape, dtype, file size, modification time and
BLAKE2b digest of every array) and one ``.npy`` file per array, memory-mapped on load. A save
writes a fresh directory beside the old one and swaps it in by renames, so a reader sees the old
index or the new one, never a half-written one; a save that fails (a full disk) leaves the old
index as it was and no staging directory behind. Saves of one method are serialised by a lock
file in the store.

Integrity: every load checks each file's size, header, dtype and shape, and recomputes the digest
of any file whose size or modification time differs from what the save recorded (a file rewritten
since). :func:`verify` (``linksim index METHOD --verify``) recomputes every digest and checks that
every value lies in its range (page numbers, meeting times, offsets). Any mismatch is an
:class:`IndexMismatch` saying to rebuild, never a wrong answer or a traceback.

:func:`load` refuses, with a message that says what to run, an index of another format version,
one whose files do not match its ``meta.json``, one built from a different graph, or one built
with other parameters than the caller asks for. Asking for fewer fingerprints than were built is
allowed (the papers' load-adaptive N).
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from linksim.errors import ConfigurationError, LinksimError
from linksim.store.atomic import replaced

log = logging.getLogger(__name__)

FORMAT = "linksim-index"
# 2: a digest, size and modification time per array; 3: hash-based draws (linksim.fingerprints.randomness);
# 4: draws keyed by the pages' URLs (LinkGraph.codes), so that a page keeps its draws when others come or go;
# 5: SimRank's in-link the first in the page's own random order (a choice a change of links seldom moves)
FORMAT_VERSION = 5


class IndexStoreError(LinksimError):
    """An index that is missing, unreadable or built for something else.

    Its fields say what would mend it, for each caller to word in its own terms (the command line
    as a ``linksim index`` command, see :func:`linksim.cli.main`): ``method``, the ``parameters``
    to build it with, and ``rebuild`` (the one stored must be built again)."""

    exit_code = 6

    def __init__(self, reason: str, method: str | None = None, parameters: dict | None = None,
                 rebuild: bool = False) -> None:
        self.reason, self.method, self.rebuild = reason, method, rebuild
        self.parameters = {k: v for k, v in (parameters or {}).items() if v is not None}
        super().__init__(self.worded(remedy))

    def worded(self, word) -> str:
        """The message with the remedy as ``word(method, parameters, rebuild)`` spells it."""
        if self.method is None:
            return self.reason
        return f"{self.reason}: {word(self.method, self.parameters, self.rebuild)}"


def remedy(method: str, parameters: dict, rebuild: bool) -> str:
    """The remedy in the API's terms: the index of ``method`` to build (again)."""
    shown = ", ".join([f"{k}={v!r}" for k, v in parameters.items()] + (["rebuild=True"] if rebuild else []))
    return f"build it again with ls.similar({method!r}).index({shown})" if rebuild else \
        f"build one with ls.similar({method!r}).index({shown})"


class IndexStoreFull(IndexStoreError):
    """The index store's file system is full (or the index is over a size limit): the exit code
    of a run that does not fit the free disk, not that of a stale index."""

    exit_code = 8


class IndexNotFound(IndexStoreError):
    pass


class IndexMismatch(IndexStoreError):
    pass


class IndexCorrupt(IndexMismatch):
    """A stored file differs from what was written: reported, never rebuilt over silently."""


class IndexOutdated(IndexMismatch):
    """An index written by another linksim (another format version, an array missing): queries
    refuse it, a build (:func:`open_built`) builds it again in its place."""


def parameters_of(index) -> dict:
    """What an index was built with (the values a query or a rebuild is compared against)."""
    return index.parameters


#: How each kind of index is assembled from its stored arrays (``restore(meta, arrays)``) and where
#: its stored values lie (``value_ranges(meta, pages, length)``), by the method's name: the registry
#: (:mod:`linksim.methods`) tells the store of every method it holds, so that the store, below
#: the methods, opens any index without importing them.
_KINDS: dict[str, tuple] = {}


def register_kind(method: str, restore, value_ranges) -> None:
    """The store opens and verifies the indexes of ``method`` so (:func:`linksim.methods.register`)."""
    _KINDS[method] = (restore, value_ranges)


def _kind(method: str) -> tuple:
    try:
        return _KINDS[method]
    except (KeyError, TypeError):
        raise ConfigurationError(f"method must be one of {', '.join(_KINDS)}, got {method!r}") from None


def _assemble(method: str, meta: dict, arrays: dict[str, np.ndarray]):
    restore = _kind(method)[0]
    try:
        return restore(meta, arrays)
    except KeyError as missing:
        raise IndexOutdated(
            f"the stored {method} index lacks the array {missing} (written by another linksim)", method,
            meta.get("parameters"), rebuild=True) from None


def index_dir(root: Path, method: str) -> Path:
    """The folder holding every stored index of ``method`` (one sub-folder per parameter set)."""
    return Path(root) / method


def key_of(parameters: dict, crawled_only: bool = False) -> str:
    """The name of the folder of an index built with ``parameters``: a hash of them."""
    text = json.dumps({"parameters": parameters, "crawledOnly": bool(crawled_only)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def path_of(root: Path, method: str, parameters: dict, crawled_only: bool = False) -> Path:
    return index_dir(root, method) / key_of(parameters, crawled_only)


def _read_meta(path: Path, method: str) -> dict:
    try:
        meta = json.loads((path / "meta.json").read_text())
    except (OSError, ValueError) as error:
        raise IndexMismatch(f"{path / 'meta.json'} cannot be read ({error})", method, rebuild=True) from None
    return dict(meta, path=str(path))


def describe_path(path: Path, method: str) -> dict:
    """The ``meta.json`` of the index stored in ``path`` (with its ``path``)."""
    return _read_meta(Path(path), method)


def stored(root: Path, method: str) -> list[dict]:
    """The ``meta.json`` of every stored index of ``method`` (with its ``path``), newest first."""
    folder = index_dir(root, method)
    metas = [_read_meta(entry.parent, method) for entry in sorted(folder.glob("*/meta.json"))
             if not entry.parent.name.startswith(".")] if folder.is_dir() else []
    return sorted(metas, key=lambda m: (m.get("created", ""), m["path"]), reverse=True)


def describe(root: Path, method: str, parameters: dict | None = None, crawled_only: bool = False) -> dict | None:
    """The ``meta.json`` of the stored index of ``method`` built with ``parameters`` (the newest
    of the method if None), or None if there is none."""
    if parameters is None:
        found = stored(root, method)
        return found[0] if found else None
    path = path_of(root, method, parameters, crawled_only)
    return _read_meta(path, method) if (path / "meta.json").exists() else None


def _digest(array: np.ndarray) -> str:
    """BLAKE2b of an array's bytes, read in slices (a memory-mapped array is not read whole)."""
    digest = hashlib.blake2b(digest_size=20)
    flat = array.reshape(-1)
    step = max(1, (64 << 20) // max(1, array.itemsize))
    for start in range(0, len(flat), step):
        digest.update(np.ascontiguousarray(flat[start : start + step]).view(np.uint8))
    return digest.hexdigest()


def _write_npy(path: Path, array: np.ndarray) -> None:
    """``np.save`` by plain file writes, so that a full disk is reported as the OS says it
    (``np.save`` says only "N requested and M written"); on disk before the swap (fsync)."""
    from numpy.lib import format as npy

    with open(path, "wb") as handle:
        npy.write_array_header_1_0(handle, npy.header_data_from_array_1_0(array))
        flat = array.reshape(-1).view(np.uint8)
        for start in range(0, len(flat), 64 << 20):
            handle.write(flat[start : start + (64 << 20)])
        handle.flush()
        os.fsync(handle.fileno())


@contextmanager
def build_directory(root: Path, method: str):
    """A scratch folder in the store for an index built on disk (same file system, so that the
    save moves its files); removed afterwards, and those of builds whose process died."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    remove_dead_scratch(root)
    directory = Path(tempfile.mkdtemp(prefix=_scratch_prefix("build", method), dir=root))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# Scratch folders of the store: ``.<kind>-<pid>-<method>-<random>`` (kind build, new or old),
# named by the process that made them so that those of a process that died can be told apart from
# those of a save running now.
_SCRATCH = re.compile(r"^\.(build|new|old)-(\d+)-")
_OLDER_SCRATCH = re.compile(r"^\.(build-[^.]+|[^.]+\.(new|old))-")  # of linksim before pids in names
_OLDER_SCRATCH_SECONDS = 86_400


def _scratch_prefix(kind: str, method: str) -> str:
    return f".{kind}-{os.getpid()}-{method}-"


def remove_dead_scratch(root: Path) -> list[Path]:
    """Remove the scratch folders of saves and builds whose process is gone (killed half-way),
    at the start of every save or load of the store; returns what was removed."""
    import psutil

    removed = []
    try:
        entries = list(Path(root).iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _SCRATCH.match(entry.name)
        if match:
            dead = not psutil.pid_exists(int(match.group(2)))
        else:  # an older linksim's: no owner to ask, so only once it is clearly abandoned
            try:
                dead = bool(_OLDER_SCRATCH.match(entry.name)) and (
                    time.time() - entry.stat().st_mtime > _OLDER_SCRATCH_SECONDS)
            except OSError:
                dead = False
        if dead and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _move_built(array: np.ndarray, path: Path) -> bool:
    """Move an array built on disk (a whole ``.npy`` memory-mapped for writing, see
    :func:`linksim.allocator.new_array`) to ``path`` instead of copying it; False if it is not one
    or lives on another file system."""
    if not isinstance(array, np.memmap) or array.mode not in ("w+", "r+") or not array.filename:
        return False
    source = Path(array.filename)
    if source.suffix != ".npy" or array.offset + array.nbytes != source.stat().st_size:
        return False
    array.flush()
    with open(source, "rb+") as handle:
        os.fsync(handle.fileno())
    try:
        os.rename(source, path)
    except OSError as error:
        if error.errno == errno.EXDEV:
            return False
        raise
    return True


@contextmanager
def _save_lock(root: Path, method: str):
    """One save of a method's index at a time in this store (another process waits)."""
    from filelock import FileLock

    with FileLock(root / f".{method}.lock"):
        yield


def save(index, root: Path, method: str, graph_pages: int, graph_links: int, extra: dict | None = None,
         urls=None, state: dict | None = None, crawled_only: bool = False, graph=None) -> Path:
    """Write ``index`` as the stored index of ``method`` with its parameters (replacing the one
    of the same parameters atomically; others stay). ``urls`` name the pages (so that queries
    find a page without the graph); ``state`` is the graph state it was built from
    (``{id, version, pages, links}``, compared by :func:`open_current`); ``graph``, the
    :class:`~linksim.graph.LinkGraph` it was built from, is kept with an index that can be
    updated (``index.updatable``), for the update after the next change (:func:`stored_graph`).

    Raises
    ------
    IndexStoreError
        The store cannot be written (no space left, no permission): the old index is untouched
        and nothing of the new one is left behind.
    """
    root = Path(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
        with _save_lock(root, method):
            return _save(index, root, method, graph_pages, graph_links, extra, urls, state, crawled_only, graph)
    except OSError as error:
        cause = error.strerror or str(error)
        full = error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
        if full:
            cause += " (free some space, or store the indexes in another folder)"
        raise (IndexStoreFull if full else IndexStoreError)(
            f"cannot write the {method} index to {root}: {cause}. The previous index, if any, is "
            "untouched and nothing of the new one was kept."
        ) from None


def _save(index, root: Path, method: str, graph_pages: int, graph_links: int, extra: dict | None, urls,
          state: dict | None, crawled_only: bool, graph) -> Path:
    from linksim._version import __version__
    from linksim.store.pagetable import PageTable

    arrays = dict(index.store_arrays())
    if urls is not None:
        arrays.update(PageTable.from_urls(urls).arrays())
    if graph is not None and getattr(index, "updatable", False):
        arrays.update({f"graph_{name}": getattr(graph, name) for name in GRAPH_ARRAYS})
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "method": method,
        "parameters": parameters_of(index),
        "crawledOnly": bool(crawled_only),
        "graph": {"fingerprint": index.graph_fingerprint, "pages": int(graph_pages), "links": int(graph_links)},
        "graphState": state,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "linksim": __version__,
        "arrays": {},
        "bytes": int(sum(a.nbytes for a in arrays.values())),
        **(extra or {}),
    }
    target = path_of(root, method, index.parameters, crawled_only)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_scratch(root)
    staging = Path(tempfile.mkdtemp(prefix=_scratch_prefix("new", method), dir=root))
    try:
        for name, array in arrays.items():
            path = staging / f"{name}.npy"
            if not _move_built(array, path):
                array = np.ascontiguousarray(array)
                _write_npy(path, array)
            stat = path.stat()
            meta["arrays"][name] = {
                "dtype": str(array.dtype), "shape": list(array.shape), "blake2b": _digest(array),
                "fileBytes": stat.st_size, "mtimeNs": stat.st_mtime_ns,
            }
        with open(staging / "meta.json", "w") as handle:
            handle.write(json.dumps(meta, indent=2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        retired = None
        if target.exists():
            retired = Path(tempfile.mkdtemp(prefix=_scratch_prefix("old", method), dir=root))
            os.rename(target, retired / "index")
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)
    return target


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
    if (verify or stat.st_mtime_ns != spec["mtimeNs"]) and _digest(array) != spec["blake2b"]:
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
    return StoredIndex(_assemble(method, meta, arrays), meta, pages, directory)


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


#: The link graph's arrays kept with an index that can be updated (``graph_<name>.npy``).
GRAPH_ARRAYS = ("out_indptr", "out_indices", "in_indptr", "in_indices", "codes")


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
    return {**pages, **_index_ranges(method, meta, n, length)}


def _index_ranges(method: str, meta: dict, n: int, length: int) -> dict[str, tuple[float, float]]:
    return _kind(method)[1](meta, n, length)


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
