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
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from linksim.errors import LinksimError

FORMAT = "linksim-index"
FORMAT_VERSION = 2  # 2: a digest, size and modification time per array


class IndexStoreError(LinksimError):
    """An index that is missing, unreadable or built for something else."""

    exit_code = 6


class IndexNotFound(IndexStoreError):
    pass


class IndexMismatch(IndexStoreError):
    pass


class IndexCorrupt(IndexMismatch):
    """A stored file differs from what was written: reported, never rebuilt over silently."""


def _rebuild_hint(method: str) -> str:
    return f"build a new one with `linksim index {method}`"


def _arrays_of(index) -> dict[str, np.ndarray]:
    from linksim.fingerprint_index import FingerprintIndex
    from linksim.minhash import MinHashIndex

    if isinstance(index, FingerprintIndex):
        layout = index.layout()
        return {
            "parent": index.parent, "label": index.label,
            "layout_order": layout.order, "layout_position": layout.position,
            "layout_size": layout.size, "layout_label": layout.label, "layout_root": layout.root,
        }
    if isinstance(index, MinHashIndex):
        order, indptr = index.inverted()
        return {"values": index.values, "order": order, "indptr": indptr}
    if hasattr(index, "store_arrays"):
        return index.store_arrays()
    raise TypeError(f"cannot store a {type(index).__name__}")


def parameters_of(index) -> dict:
    """What an index was built with (the values a query or a rebuild is compared against)."""
    if hasattr(index, "store_parameters"):
        return index.store_parameters()
    return {
        "n_fingerprints": int(index.n_fingerprints),
        "length": int(index.length),
        "decay": float(index.decay),
        "seed": int(index.seed),
    }


def _from_arrays(method: str, meta: dict, arrays: dict[str, np.ndarray]):
    from linksim.fingerprint_index import FingerprintIndex, TreeLayout
    from linksim.minhash import MinHashIndex

    parameters = meta["parameters"]
    fingerprint = meta["graph"]["fingerprint"]
    if method in ("simrank", "psimrank"):
        index = FingerprintIndex(
            arrays["parent"], arrays["label"], method, parameters["length"], parameters["seed"],
            fingerprint, parameters["decay"],
        )
        index._members = TreeLayout(
            arrays["layout_order"], arrays["layout_position"], arrays["layout_size"],
            arrays["layout_label"], arrays["layout_root"],
        )
        return index
    if method == "xjaccard":
        return MinHashIndex(
            arrays["values"], parameters["length"], parameters["seed"], fingerprint,
            parameters["decay"], arrays["order"], arrays["indptr"],
        )
    if method == "pagesim":
        from linksim.pagesim import PageSimIndex

        return PageSimIndex.from_store(meta, arrays)
    raise IndexMismatch(f"unknown index method {method!r} in the store")


def _assemble(method: str, meta: dict, arrays: dict[str, np.ndarray]):
    try:
        return _from_arrays(method, meta, arrays)
    except KeyError as missing:
        raise IndexMismatch(
            f"the stored {method} index lacks the array {missing} (written by another linksim): "
            f"{_rebuild_hint(method)}"
        ) from None


def index_dir(root: Path, method: str) -> Path:
    return Path(root) / method


def describe(root: Path, method: str) -> dict | None:
    """The ``meta.json`` of the stored index of ``method``, or None if there is none."""
    path = index_dir(root, method) / "meta.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise IndexMismatch(f"{path} cannot be read ({error}); {_rebuild_hint(method)}") from error


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
def _save_lock(root: Path, method: str):
    """One save of a method's index at a time in this store (another process waits)."""
    with open(root / f".{method}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def save(index, root: Path, method: str, graph_pages: int, graph_links: int, extra: dict | None = None) -> Path:
    """Write ``index`` as the stored index of ``method`` (replacing the old one atomically).

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
            return _save(index, root, method, graph_pages, graph_links, extra)
    except OSError as error:
        cause = error.strerror or str(error)
        if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            cause += " (free some space or give another --index-dir)"
        raise IndexStoreError(
            f"cannot write the {method} index to {root}: {cause}. The previous index, if any, is "
            "untouched and nothing of the new one was kept."
        ) from None


def _save(index, root: Path, method: str, graph_pages: int, graph_links: int, extra: dict | None) -> Path:
    from linksim import __version__

    arrays = _arrays_of(index)
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "method": method,
        "parameters": parameters_of(index),
        "graph": {"fingerprint": index.graph_fingerprint, "pages": int(graph_pages), "links": int(graph_links)},
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "linksim": __version__,
        "arrays": {},
        "bytes": int(sum(a.nbytes for a in arrays.values())),
        **(extra or {}),
    }
    target = index_dir(root, method)
    staging = Path(tempfile.mkdtemp(prefix=f".{method}.new-", dir=root))
    try:
        for name, array in arrays.items():
            path = staging / f"{name}.npy"
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
            retired = Path(tempfile.mkdtemp(prefix=f".{method}.old-", dir=root))
            os.rename(target, retired / "index")
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)
    for leftover in root.glob(f".{method}.*-*"):  # from a save that was killed half-way
        shutil.rmtree(leftover, ignore_errors=True)
    return target


def check(meta: dict, method: str, graph_fingerprint: str | None = None, **expected) -> None:
    """Raise :class:`IndexMismatch` unless ``meta`` fits the graph and the parameters asked for.

    ``expected`` holds parameters to compare (None: not asked); ``n_fingerprints`` may be at most
    what was built.
    """
    where = f"the stored {method} index"
    if meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION:
        raise IndexMismatch(
            f"{where} has format {meta.get('format')!r} version {meta.get('version')!r}; this linksim "
            f"reads {FORMAT!r} version {FORMAT_VERSION}: {_rebuild_hint(method)}"
        )
    if meta.get("method") != method:
        raise IndexMismatch(f"{where} says it is a {meta.get('method')!r} index: {_rebuild_hint(method)}")
    built = meta["graph"]
    if graph_fingerprint is not None and built["fingerprint"] != graph_fingerprint:
        raise IndexMismatch(
            f"{where} was built on {meta['created']} from a different graph ({built['pages']:,} pages, "
            f"{built['links']:,} links); the graph has changed since: {_rebuild_hint(method)}"
        )
    parameters = meta["parameters"]
    for name, value in expected.items():
        if value is None or name not in parameters:
            continue
        if name == "n_fingerprints":
            if value > parameters[name]:
                raise IndexMismatch(
                    f"{where} has {parameters[name]} fingerprints, fewer than the {value} asked for: "
                    f"{_rebuild_hint(method)} --fingerprints {value}"
                )
            continue
        if parameters[name] != value:
            shown = " ".join(f"{k}={v}" for k, v in parameters.items())
            raise IndexMismatch(
                f"{where} was built with {shown}, not {name}={value}: {_rebuild_hint(method)} with the "
                f"parameters you want"
            )


def _corrupt(path: Path, what: str, method: str) -> IndexCorrupt:
    return IndexCorrupt(f"{path} is corrupt ({what}): {_rebuild_hint(method)} --rebuild")


def _open_array(directory: Path, name: str, spec: dict, method: str, mmap: bool, verify: bool) -> np.ndarray:
    path = directory / f"{name}.npy"
    try:
        stat = path.stat()
    except OSError as error:
        raise IndexMismatch(f"{path} cannot be read ({error.strerror}): {_rebuild_hint(method)}") from None
    if stat.st_size != spec["fileBytes"]:
        raise _corrupt(path, f"{stat.st_size:,} bytes, {spec['fileBytes']:,} written", method)
    try:
        array = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise _corrupt(path, f"unreadable header: {error}", method) from None
    if str(array.dtype) != spec["dtype"] or list(array.shape) != spec["shape"]:
        raise IndexMismatch(
            f"{path} holds {array.dtype}{list(array.shape)}, meta.json says {spec['dtype']}{spec['shape']}: "
            f"{_rebuild_hint(method)}"
        )
    if (verify or stat.st_mtime_ns != spec["mtimeNs"]) and _digest(array) != spec["blake2b"]:
        raise _corrupt(path, "its content differs from what was written: digest mismatch", method)
    return array


def load(root: Path, method: str, graph_fingerprint: str | None = None, mmap: bool = True,
         verify: bool = False, **expected):
    """The stored index of ``method``, checked by :func:`check` and for integrity (see module);
    arrays memory-mapped. ``verify``: recompute every digest, not only those of changed files."""
    meta = describe(root, method)
    if meta is None:
        raise IndexNotFound(f"no {method} index in {Path(root)}: {_rebuild_hint(method)}")
    check(meta, method, graph_fingerprint, **expected)
    directory = index_dir(root, method)
    arrays = {name: _open_array(directory, name, spec, method, mmap, verify) for name, spec in meta["arrays"].items()}
    return _assemble(method, meta, arrays)


def _ranges(method: str, meta: dict) -> dict[str, tuple[float, float]]:
    """Where every stored value must lie, per array (inclusive)."""
    n = meta["graph"]["pages"]
    length = meta["parameters"].get("length", 0)
    if method in ("simrank", "psimrank"):
        return {"parent": (-1, n - 1), "label": (0, length), "layout_order": (0, n - 1),
                "layout_position": (0, n - 1), "layout_size": (1, n), "layout_label": (0, length),
                "layout_root": (0, n - 1)}
    if method == "xjaccard":
        return {"values": (0, n - 1), "order": (0, n - 1), "indptr": (0, n)}
    if method == "pagesim":
        entries = meta["arrays"]["source_indices"]["shape"][0]
        return {"source_indptr": (0, entries), "source_indices": (0, n - 1), "source_data": (0, np.inf),
                "page_indptr": (0, entries), "page_indices": (0, n - 1), "page_data": (0, np.inf),
                "ranks": (0, 1)}
    return {}


def verify(root: Path, method: str) -> dict:
    """Recompute the digest of every array of the stored index and check every value's range.

    Returns the index's ``meta.json``; raises :class:`IndexMismatch` for the first fault found.
    """
    meta = describe(root, method)
    if meta is None:
        raise IndexNotFound(f"no {method} index in {Path(root)}: {_rebuild_hint(method)}")
    check(meta, method)
    directory = index_dir(root, method)
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
    return meta
