"""The stored format and the kinds of index the store can open, as the registry tells it."""

from __future__ import annotations

import numpy as np

from linksim.errors import ConfigurationError
from linksim.store.errors import IndexOutdated

FORMAT = "linksim-index"
# 2: a digest, size and modification time per array; 3: hash-based draws (linksim.fingerprints.randomness);
# 4: draws keyed by the pages' URLs (LinkGraph.codes), so that a page keeps its draws when others come or go;
# 5: SimRank's in-link the first in the page's own random order (a choice a change of links seldom moves)
FORMAT_VERSION = 5

#: The link graph's arrays kept with an index that can be updated (``graph_<name>.npy``).
GRAPH_ARRAYS = ("out_indptr", "out_indices", "in_indptr", "in_indices", "codes")


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


def kind_of(method: str) -> tuple:
    try:
        return _KINDS[method]
    except (KeyError, TypeError):
        raise ConfigurationError(f"method must be one of {', '.join(_KINDS)}, got {method!r}") from None


def assemble(method: str, meta: dict, arrays: dict[str, np.ndarray]):
    restore = kind_of(method)[0]
    try:
        return restore(meta, arrays)
    except KeyError as missing:
        raise IndexOutdated(
            f"the stored {method} index lacks the array {missing} (written by another linksim)", method,
            meta.get("parameters"), rebuild=True) from None


def index_ranges(method: str, meta: dict, n: int, length: int) -> dict[str, tuple[float, float]]:
    return kind_of(method)[1](meta, n, length)
