"""The on-disk index store: one versioned directory per method, checked before every answer.

An index directory holds ``meta.json`` (format version, method, parameters, seed, the fingerprint
and size of the graph it was built from, the shape and dtype of every array) and one ``.npy`` file
per array, memory-mapped on load. A save writes a fresh directory beside the old one and swaps it
in by renames, so a reader sees the old index or the new one, never a half-written one.

:func:`load` refuses, with a message that says what to run, an index of another format version,
one whose files do not match its ``meta.json``, one built from a different graph, or one built
with other parameters than the caller asks for. Asking for fewer fingerprints than were built is
allowed (the papers' load-adaptive N).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from linksim.errors import LinksimError

FORMAT = "linksim-index"
FORMAT_VERSION = 1


class IndexStoreError(LinksimError):
    """An index that is missing, unreadable or built for something else."""

    exit_code = 6


class IndexNotFound(IndexStoreError):
    pass


class IndexMismatch(IndexStoreError):
    pass


def _rebuild_hint(method: str) -> str:
    return f"build a new one with `linksim index {method}`"


def _arrays_of(index) -> dict[str, np.ndarray]:
    from linksim.fingerprints import FingerprintIndex, MinHashIndex

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
    from linksim.fingerprints import FingerprintIndex, MinHashIndex, TreeLayout

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


def save(index, root: Path, method: str, graph_pages: int, graph_links: int, extra: dict | None = None) -> Path:
    """Write ``index`` as the stored index of ``method`` (replacing the old one atomically)."""
    from linksim import __version__

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    arrays = _arrays_of(index)
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "method": method,
        "parameters": parameters_of(index),
        "graph": {"fingerprint": index.graph_fingerprint, "pages": int(graph_pages), "links": int(graph_links)},
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "linksim": __version__,
        "arrays": {name: {"dtype": str(a.dtype), "shape": list(a.shape)} for name, a in arrays.items()},
        "bytes": int(sum(a.nbytes for a in arrays.values())),
        **(extra or {}),
    }
    target = index_dir(root, method)
    staging = Path(tempfile.mkdtemp(prefix=f".{method}.new-", dir=root))
    try:
        for name, array in arrays.items():
            np.save(staging / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
        (staging / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
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


def load(root: Path, method: str, graph_fingerprint: str | None = None, mmap: bool = True, **expected):
    """The stored index of ``method``, checked by :func:`check`; arrays memory-mapped."""
    meta = describe(root, method)
    if meta is None:
        raise IndexNotFound(f"no {method} index in {Path(root)}: {_rebuild_hint(method)}")
    check(meta, method, graph_fingerprint, **expected)
    directory = index_dir(root, method)
    arrays = {}
    for name, spec in meta["arrays"].items():
        path = directory / f"{name}.npy"
        try:
            array = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise IndexMismatch(f"{path} cannot be read ({error}): {_rebuild_hint(method)}") from error
        if str(array.dtype) != spec["dtype"] or list(array.shape) != spec["shape"]:
            raise IndexMismatch(
                f"{path} holds {array.dtype}{list(array.shape)}, meta.json says {spec['dtype']}{spec['shape']}: "
                f"{_rebuild_hint(method)}"
            )
        arrays[name] = array
    return _assemble(method, meta, arrays)
