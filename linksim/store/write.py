"""Saving an index: a fresh folder beside the old one, swapped in by renames (see the package)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from linksim.store.errors import IndexStoreError, IndexStoreFull
from linksim.store.files import array_digest, path_of, remove_dead_scratch, scratch_prefix
from linksim.store.kinds import FORMAT, FORMAT_VERSION, GRAPH_ARRAYS, parameters_of


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
    directory = Path(tempfile.mkdtemp(prefix=scratch_prefix("build", method), dir=root))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


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
    staging = Path(tempfile.mkdtemp(prefix=scratch_prefix("new", method), dir=root))
    try:
        for name, array in arrays.items():
            path = staging / f"{name}.npy"
            if not _move_built(array, path):
                array = np.ascontiguousarray(array)
                _write_npy(path, array)
            stat = path.stat()
            meta["arrays"][name] = {
                "dtype": str(array.dtype), "shape": list(array.shape), "blake2b": array_digest(array),
                "fileBytes": stat.st_size, "mtimeNs": stat.st_mtime_ns,
            }
        with open(staging / "meta.json", "w") as handle:
            handle.write(json.dumps(meta, indent=2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        retired = None
        if target.exists():
            retired = Path(tempfile.mkdtemp(prefix=scratch_prefix("old", method), dir=root))
            os.rename(target, retired / "index")
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)
    return target
