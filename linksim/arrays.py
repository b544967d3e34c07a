"""Arrays as the compiled kernels take them."""

from __future__ import annotations

import numpy as np


def read_only(array: np.ndarray) -> np.ndarray:
    """A plain, read-only view, as every index array is passed here: indexes built in memory and
    indexes opened from the store (read-only memory maps) then call with the same argument types,
    so that numba compiles each function once per installation (its cache), not once per kind of
    array, each compilation holding the interpreter for 20 s or more."""
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view
