"""Files replaced whole: written beside their place, synced, then renamed over it, so that a
reader (or a process killed halfway) finds the old file or the new one, never a part of one."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replaced(path: Path):
    """A binary file handle whose content becomes ``path`` when the block ends without an error;
    on an error the scratch file is removed and ``path`` is as it was."""
    path = Path(path)
    descriptor, scratch = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
