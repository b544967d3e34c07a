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
    # The propagation holds one entry per page and page within `radius` links of it, by rows and
    # by columns (scipy's indices and row pointers int32 below 2**31 entries, else int64; values
    # float64), made in place: the build holds nothing else of its size. `reach` (measure) counts them; from the counts alone, a
    # guess (each link followed `radius` times, 4 pages each) that the crawl's hubs can exceed.
    reach = parameters.get("reach")
    if reach is None:
        reach = min(pages * pages, links * max(1, parameters["radius"]) * 4)
        if parameters.get("prune", 0.0) > 0:
            reach = min(reach, pages * (1 + _kept_at_most(parameters)))
    position = 4 if reach < 2**31 else 8
    index = 2 * ((position + 8) * reach + position * (pages + 1)) + 8 * pages
    # the push's scratch (two float and two int32 arrays a page), the reach counts and the row
    # pointers. A pruned build joins its blocks of rows (12 bytes an entry, as the matrix) before
    # the transposition: its peak is two copies too.
    working = 24 * pages + 16 * (pages + 1)
    worded = ("guessed from the counts" if "reach" not in parameters else "counted"
              if not parameters.get("reach_error") else f"counted on a sample, +-{parameters['reach_error']:.1%}")
    return index, working, index, {f"propagation (pages within reach, {worded})": index}


def _kept_at_most(parameters: dict) -> int:
    """A pruned row's entries besides its own: (d + d^2 + d^3) / prune."""
    d = parameters.get("decay", 0.5)
    return int((d + d * d + d**3) / parameters["prune"])


def _measure(graph: LinkGraph, parameters: dict) -> dict:
    from linksim.pagesim import reach_estimate

    total, error = reach_estimate(graph, int(parameters["radius"]), float(parameters.get("decay", 0.5)),
                                  float(parameters.get("prune", 0.0)))
    return {"reach": total, "reach_error": round(error, 4)}


def _build(graph: LinkGraph, p: dict, show_progress: bool = False):
    from linksim.pagesim import build_pagesim_index

    return build_pagesim_index(graph, radius=int(p["radius"]), decay=float(p["decay"]), damping=float(p["damping"]),
                               formula=str(p["formula"]), prune=float(p["prune"]))


def _restore(meta: dict, arrays: dict):
    from linksim.pagesim import PageSimIndex

    return PageSimIndex.from_store(meta, arrays)


def _warm_up() -> None:
    from linksim import pagesim

    pagesim.warm_up()


def _method():
    return Method(
        name="pagesim",
        colour="#9467bd",
        title="PageSim",
        summary="PageSim: each page's PageRank propagated along simple paths of at most --radius links, "
                "decay d per link (Lin, King & Lyu 2006)",
        defaults={"radius": 3, "decay": 0.5, "damping": 0.85, "formula": "minmax", "prune": 0.0},
        samples=False,
        build=_build,
        restore=_restore,
        value_ranges=_value_ranges,
        estimate=_estimate,
        shrink=("radius", "prune"),  # its index is its reach: no fingerprints to drop
        measure=_measure,
        warm_up=_warm_up,
    )


PAGESIM = _method()
