"""Give the memory of freed arrays back to the system at once (glibc's malloc).

glibc serves a large block (at least ``M_MMAP_THRESHOLD``, 128 KiB at start) from a mapping of its
own, unmapped when freed; but each time such a block is freed, it raises the threshold to that
block's size (up to 32 MiB), so that later arrays of up to that size come from the heap, where a
small block allocated after them keeps their pages resident once they are freed. A build makes
and frees many arrays of a few MiB (a walk step's active pages, a fingerprint row's temporaries):
measured on cnr-2000, `similar simrank` held 250 MiB of freed heap at its peak. A fixed threshold
keeps every large array in its own mapping.

Also :func:`new_array`: an array to fill, in memory or memory-mapped in a folder.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from pathlib import Path

import numpy as np

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD = 128 << 10  # glibc's own starting value


def return_freed_memory() -> bool:
    """Fix glibc's mmap threshold at its starting value for this process (and the workers it
    forks); True where it was set, False where the C library is not glibc."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1


def new_array(directory: Path | None, name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
    """An array to fill: in memory, or a memory-mapped ``name.npy`` in ``directory``."""
    if directory is None:
        return np.empty(shape, dtype=dtype)
    from numpy.lib.format import open_memmap

    return open_memmap(Path(directory) / f"{name}.npy", mode="w+", dtype=dtype, shape=shape)
