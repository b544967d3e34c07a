"""What SimRank, PSimRank and P-PSimRank share as methods: fingerprint graphs of coalescing walks
(built by :mod:`linksim.fingerprints.walks`, read as trees by :mod:`linksim.fingerprints.index`), told
apart only by how a walk chooses its next page. Their modules (:mod:`linksim.methods.simrank`,
:mod:`linksim.methods.psimrank`, :mod:`linksim.methods.ppsimrank`) declare each :class:`~linksim.methods.method.Method` from these parts; the heavy modules are imported
when a part is called, so that the registry stays light to import."""

from __future__ import annotations

from linksim.fingerprints.kinds import WalkKind
from linksim.graph import LinkGraph

#: The papers' Monte Carlo defaults (Fogaras & Racz 2005: N = 100, L = 10, c = 0.6).
MONTE_CARLO = {"n_fingerprints": 100, "length": 10, "decay": 0.6, "seed": 0}


def builder(name: str, walk: WalkKind, reading: dict):
    def build(graph: LinkGraph, p: dict, show_progress: bool = False, directory=None, keep_walks: bool = False):
        from linksim.fingerprints.walks import build_index

        return build_index(graph, walk, int(p["n_fingerprints"]), int(p["length"]), int(p["seed"]), float(p["decay"]),
                           show_progress=show_progress, directory=directory, keep_walks=keep_walks, method=name,
                           reading=reading)

    return build


def updater(graph_before: LinkGraph, index, graph: LinkGraph, show_progress: bool = False, max_share: float = 1.0,
            check_graph: bool = True):
    """The index of ``graph`` from ``index``, built (with its walk state) on ``graph_before``:
    :func:`linksim.fingerprints.update.update_index`, the rebuild's arrays bit for bit."""
    from linksim.fingerprints.update import update_index

    return update_index(index, graph_before, graph, show_progress=show_progress, max_share=max_share,
                        check_graph=check_graph)


def restorer(walk: WalkKind, reading: dict):
    def restore(meta: dict, arrays: dict):
        from linksim.fingerprints.index import FingerprintIndex

        return FingerprintIndex.from_store(meta, arrays, walk=walk, reading=reading)

    return restore


def exact_reference(name: str):
    def exact(graph: LinkGraph, decay: float, length: int, each=None):
        from linksim.fingerprints import exact as references

        return getattr(references, f"{name}_exact")(graph, decay, length, each=each)

    return exact


def value_ranges(meta: dict, n: int, length: int) -> dict[str, tuple[float, float]]:
    return {"parent": (-1, n - 1), "label": (0, length), "layout_order": (0, n - 1),
            "layout_position": (0, n - 1), "layout_size": (1, n), "layout_label": (0, length),
            "layout_root": (0, n - 1), "walks_representatives": (0, n - 1), "walks_positions": (0, n - 1)}


ONE_FINGERPRINT = "one fingerprint's rows (the index is on disk)"  #: what a build on disk holds of the trees


def estimate(pages: int, links: int, parameters: dict, on_disk: bool,
             updatable: bool = True) -> tuple[int, int, int, dict]:
    n_fingerprints = parameters["n_fingerprints"]
    fingerprints = 5 * n_fingerprints * pages  # parent int32 + label int8
    layout = 17 * n_fingerprints * pages  # order, position, size, root int32 + label int8
    walking = 8 * 6 * pages  # the walk positions and choices of one fingerprint
    stored = fingerprints + layout
    if on_disk:
        # One fingerprint's rows and the layout's int64 temporaries of one row.
        index = (5 + 17) * pages + 8 * 10 * pages
        return index, walking, stored, {ONE_FINGERPRINT: index}
    if not updatable:
        return stored, walking, stored, {"fingerprints (parent, label)": fingerprints, "tree layout": layout}
    # Built in memory, the index keeps its walk state for updates (linksim.fingerprints.update):
    # 8 bytes a group of walks after a step, about one a page and fingerprint over all steps
    # (measured at L = 10: 0.27 on the generated 10M-link crawl, 0.7-1.1 on cnr-2000, 0.6-2.0 on
    # Wikispeedia), and the link graph it was built from is stored with it.
    walks = 8 * n_fingerprints * pages
    graph = 2 * 8 * (pages + 1) + 2 * 4 * links
    return stored + walks, walking, stored + walks + graph, {
        "fingerprints (parent, label)": fingerprints, "tree layout": layout, "walk state (for updates)": walks}


def spark_rows(walk: WalkKind):
    def rows(edges, n: int, parameters: dict, partitions: int, log=None, codes=None):
        from linksim import spark as jobs

        return jobs.fingerprint_rows(edges, n, walk, parameters["n_fingerprints"], parameters["length"],
                                     parameters["seed"], partitions, log=log, codes=codes)

    return rows


def spark_index(name: str, walk: WalkKind, reading: dict):
    def gather(rows, parameters: dict, n: int):
        from linksim import spark as jobs
        from linksim.fingerprints.index import FingerprintIndex

        parent, label = jobs.fingerprint_arrays(rows, parameters["n_fingerprints"], n)
        return FingerprintIndex(parent, label, name, parameters["length"], parameters["seed"], "", parameters["decay"],
                                walk=walk, reading=reading)

    return gather


def parts(name: str, walk: WalkKind, reading: dict | None = None) -> dict:
    """The keyword arguments of a fingerprint method's :class:`~linksim.methods.method.Method`:
    its walks chosen by ``walk``, its lists read as ``reading`` says (:class:`FingerprintIndex`)."""
    reading = dict(reading or {})
    return dict(name=name, defaults=dict(MONTE_CARLO), samples=True, build=builder(name, walk, reading),
                update=updater, keeps_state=True, restore=restorer(walk, reading), exact=exact_reference(name), fingerprint_trees=True,
                build_on_disk=True, page_major_rows=True, reads_sample=True, walk=walk, reading=reading,
                value_ranges=value_ranges, estimate=estimate, spark_rows=spark_rows(walk),
                spark_index=spark_index(name, walk, reading))
