"""The finished chunks of a top-k run, kept on disk so that a run cut short resumes where it was.

Every page's lists of a large crawl take hours (11M pages at about 2,000 pages a second); a crash,
a killed process or a server gone during the write must not cost them again. :func:`top_k_all
<linksim.ranking.topk.top_k_all>` hands each finished chunk of pages to a :class:`Checkpoint`,
which writes them, some at a time, to ``<folder>/part-*.npz`` (a new file written beside and
renamed into place, so a file is whole or absent). The next run with the same identity (the
index, its graph, the pages asked for, ``top_k``, ``similarity_cutoff``, ``sample`` and the
chunking) reads them back and computes only the other chunks; the lists are the same as an
uninterrupted run's, since every chunk's lists depend only on its pages. A folder of another
identity, or a part that cannot be read, is not used (its chunks are computed again). The caller
removes the folder once the lists are written (:meth:`Checkpoint.discard`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
import zipfile
from pathlib import Path

import numpy as np

from linksim.store.atomic import replaced

log = logging.getLogger(__name__)

#: A part is written after this many seconds of finished chunks (or at the end): a run cut short
#: loses at most that much work, and a crawl of 11M pages makes a few hundred files.
FLUSH_SECONDS = 30.0
_IDENTITY = "identity.json"


def pages_digest(pages: np.ndarray) -> str:
    """A short digest of the pages a run asks for (their order too)."""
    return hashlib.blake2b(np.ascontiguousarray(pages, dtype=np.int64).tobytes(), digest_size=16).hexdigest()


class Checkpoint:
    """The finished chunks of one top-k run in ``folder``, for a run of ``identity`` (JSON-able)."""

    def __init__(self, folder: Path, identity: dict, flush_seconds: float = FLUSH_SECONDS) -> None:
        self.folder = Path(folder)
        self.identity = json.loads(json.dumps(identity, sort_keys=True))
        self.flush_seconds = flush_seconds
        self._pending: dict[int, tuple] = {}
        self._last_flush = time.monotonic()
        self._parts = 0

    def finished(self, pages_type: type = np.int64, **scope) -> dict[int, tuple]:
        """The chunks finished by earlier runs of this identity and ``scope`` (how the run cuts its
        pages into chunks): number → (lists sampled, source, target, score), the pages as
        ``pages_type``. A folder of another identity is emptied and started again."""
        self.identity = json.loads(json.dumps({**self.identity, **scope}, sort_keys=True))
        try:
            kept = json.loads((self.folder / _IDENTITY).read_text())
        except FileNotFoundError:
            kept = None
        except (OSError, ValueError) as error:
            log.warning("the finished lists in %s cannot be read (%s): they are computed again", self.folder, error)
            kept = None
        if kept != self.identity:
            if kept is not None:
                log.info("the finished lists in %s are of another run (index, pages or parameters): computed again",
                         self.folder)
            self._start()
            return {}
        found = self._read_parts(pages_type)
        self._parts = len(list(self.folder.glob("part-*.npz")))
        return found

    def chunks(self, pages_type: type = np.int64) -> dict[int, tuple]:
        """Every chunk this run handed over (:meth:`add`), after a :meth:`flush`: those in the
        folder's parts, read back, and those no flush could write (a full disk), still held.
        A run that holds no lists while it makes them (:func:`linksim.ranking.topk.top_k_all`,
        ``hold=False``) gets them back here; a chunk whose part cannot be read is not among them."""
        found = self._read_parts(pages_type)
        for number, (sampled, source, target, score) in self._pending.items():
            found[number] = (sampled, source.astype(pages_type, copy=False), target.astype(pages_type, copy=False),
                             score)
        return found

    def _read_parts(self, pages_type: type) -> dict[int, tuple]:
        found: dict[int, tuple] = {}
        for path in sorted(self.folder.glob("part-*.npz")):
            try:
                with np.load(path, allow_pickle=False) as part:
                    numbers, sampled, bounds = part["numbers"], part["sampled"], part["bounds"]
                    source, target = part["source"].astype(pages_type), part["target"].astype(pages_type)
                    score = part["score"]
                if not (len(bounds) == len(numbers) + 1 == len(sampled) + 1 and bounds[-1] == len(source)
                        == len(target) == len(score)):
                    raise ValueError("arrays of different lengths")
            except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
                log.warning("a part of the finished lists (%s) cannot be read (%s): its chunks are computed again",
                            path, error)
                continue
            for i, number in enumerate(numbers.tolist()):
                begin, end = int(bounds[i]), int(bounds[i + 1])
                found[number] = (int(sampled[i]), source[begin:end], target[begin:end], score[begin:end])
        return found

    def _start(self) -> None:
        """An empty folder of this identity. One that cannot be written (a full disk) costs a
        later run the chunks, as a failed :meth:`flush` does, never this run's lists: without
        its identity, a later run reads none of its parts."""
        shutil.rmtree(self.folder, ignore_errors=True)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with replaced(self.folder / _IDENTITY) as handle:
                handle.write(json.dumps(self.identity, sort_keys=True).encode())
        except OSError as error:
            log.warning("cannot keep finished lists in %s (%s): a run cut short computes them again",
                        self.folder, error)

    def add(self, number: int, sampled: int, source: np.ndarray, target: np.ndarray, score: np.ndarray) -> None:
        """One finished chunk; written with others once ``flush_seconds`` have passed."""
        self._pending[number] = (sampled, source, target, score)
        if time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Write the chunks not yet written as one part. A failure to write (a full disk) costs a
        later run those chunks, never this run's lists: it is logged, and the chunks are kept for
        the next flush."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        numbers = sorted(self._pending)
        chunks = [self._pending[number] for number in numbers]
        lengths = [len(chunk[1]) for chunk in chunks]
        arrays = {
            "numbers": np.array(numbers, dtype=np.int64),
            "sampled": np.array([chunk[0] for chunk in chunks], dtype=np.int64),
            "bounds": np.r_[0, np.cumsum(lengths)].astype(np.int64),
            "source": np.concatenate([chunk[1] for chunk in chunks]).astype(np.int64, copy=False),
            "target": np.concatenate([chunk[2] for chunk in chunks]).astype(np.int64, copy=False),
            "score": np.concatenate([chunk[3] for chunk in chunks]).astype(np.float64, copy=False),
        }
        try:
            with replaced(self.folder / f"part-{self._parts:06d}-{os.getpid()}.npz") as handle:
                np.savez(handle, **arrays)
        except OSError as error:
            log.warning("cannot keep finished lists in %s (%s): a run cut short computes them again",
                        self.folder, error)
            return
        self._parts += 1
        self._pending.clear()

    def discard(self) -> None:
        """Remove the folder: the lists are written (or were not wanted)."""
        self._pending.clear()
        shutil.rmtree(self.folder, ignore_errors=True)

