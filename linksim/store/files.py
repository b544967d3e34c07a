"""Where the store keeps each index, what its ``meta.json`` says, the digest of its arrays, and
the scratch folders of saves and builds."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np

from linksim.store.errors import IndexMismatch


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


def array_digest(array: np.ndarray) -> str:
    """BLAKE2b of an array's bytes, read in slices (a memory-mapped array is not read whole)."""
    digest = hashlib.blake2b(digest_size=20)
    flat = array.reshape(-1)
    step = max(1, (64 << 20) // max(1, array.itemsize))
    for start in range(0, len(flat), step):
        digest.update(np.ascontiguousarray(flat[start : start + step]).view(np.uint8))
    return digest.hexdigest()


# Scratch folders of the store: ``.<kind>-<pid>-<method>-<random>`` (kind build, new or old),
# named by the process that made them so that those of a process that died can be told apart from
# those of a save running now.
_SCRATCH = re.compile(r"^\.(build|new|old)-(\d+)-")
_OLDER_SCRATCH = re.compile(r"^\.(build-[^.]+|[^.]+\.(new|old))-")  # of linksim before pids in names
_OLDER_SCRATCH_SECONDS = 86_400


def scratch_prefix(kind: str, method: str) -> str:
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
