"""A digest of a link graph: an index answers only for the graph it was built from."""

from __future__ import annotations

import hashlib

import numpy as np

from linksim.graph import LinkGraph


def graph_fingerprint(graph: LinkGraph) -> str:
    """A digest of the link structure: an index answers only for the graph it was built from."""
    digest = hashlib.sha256()
    digest.update(np.int64(graph.n).tobytes())
    digest.update(np.ascontiguousarray(graph.out_indptr, dtype=np.int64).tobytes())
    digest.update(np.ascontiguousarray(graph.out_indices, dtype=np.int64).tobytes())
    if graph.keys is not None:  # which page is which: the same links between other pages differ
        for key in graph.keys:
            digest.update(str(key).encode("utf-8", "surrogatepass") + b"\n")
    return digest.hexdigest()
