"""PageSim (Lin, King & Lyu 2006): each page's PageRank propagated along simple paths of at most r
links, decay d per link; PS(u, v) = sum of min^2/max of the feature vectors (:mod:`linksim.pagesim`)."""

from __future__ import annotations

import numpy as np

from linksim.graph import LinkGraph
from linksim.methods.method import Method


def _value_ranges(meta: dict, n: int, length: int) -> dict[str, tuple[float, float]]:
    entries = meta["arrays"]["source_indices"]["shape"][0]
    return {"source_indptr": (0, entries), "source_indices": (0, n - 1), "source_data": (0, np.inf),
            "page_indptr": (0, entries), "page_indices": (0, n - 1), "page_data": (0, np.inf),
            "ranks": (0, 1)}


def _estimate(pages: int, links: int, parameters: dict, on_disk: bool) -> tuple[int, int, int, dict]:
    # Feature vectors: one entry per (page, page reached within `radius` links); bounded by the
    # links followed radius times, at most every pair.
    reach = min(pages * pages, links * max(1, parameters["radius"]) * 4)
    if parameters.get("prune", 0.0) > 0:  # a row holds at most (d + d^2 + d^3) / prune entries besides its own
        d = parameters.get("decay", 0.5)
        reach = min(reach, pages * (1 + int((d + d * d + d**3) / parameters["prune"])))
    index = 16 * reach
    return index, 3 * 16 * min(reach, links * 4), index, {"feature vectors": index}


def _build(graph: LinkGraph, p: dict, show_progress: bool = False):
    from linksim.pagesim import build_pagesim_index

    return build_pagesim_index(graph, radius=int(p["radius"]), decay=float(p["decay"]), damping=float(p["damping"]),
                               formula=str(p["formula"]), prune=float(p["prune"]))


def _restore(meta: dict, arrays: dict):
    from linksim.pagesim import PageSimIndex

    return PageSimIndex.from_store(meta, arrays)


def _method():
    return Method(
        name="pagesim",
        title="PageSim",
        summary="PageSim: each page's PageRank propagated along simple paths of at most --radius links, "
                "decay d per link (Lin, King & Lyu 2006)",
        defaults={"radius": 3, "decay": 0.5, "damping": 0.85, "formula": "minmax", "prune": 0.0},
        samples=False,
        build=_build,
        restore=_restore,
        value_ranges=_value_ranges,
        estimate=_estimate,
    )


PAGESIM = _method()
