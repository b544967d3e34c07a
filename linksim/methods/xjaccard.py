"""Extended Jaccard (Fogaras & Racz 2005, Algorithm 3): sum over k of c^k (1 - c) times the Jaccard
similarity of the k-step in-neighbourhoods (the page itself included), by min-hashing
(:mod:`linksim.fingerprints.minhash`)."""

from __future__ import annotations

from linksim.methods.fingerprints import MONTE_CARLO, exact_reference
from linksim.graph import LinkGraph
from linksim.methods.method import Method


def _build(graph: LinkGraph, p: dict, show_progress: bool = False):
    from linksim.fingerprints.minhash import build_minhash_index

    return build_minhash_index(graph, int(p["n_fingerprints"]), int(p["length"]), int(p["seed"]), float(p["decay"]),
                               show_progress=show_progress)


def _restore(meta: dict, arrays: dict):
    from linksim.fingerprints.minhash import MinHashIndex

    return MinHashIndex.from_store(meta, arrays)


def _update(graph_before: LinkGraph, index, graph: LinkGraph, show_progress: bool = False, max_share: float = 1.0,
            check_graph: bool = True):
    from linksim.fingerprints.update import update_minhash_index

    return update_minhash_index(index, graph_before, graph, show_progress=show_progress, max_share=max_share,
                                check_graph=check_graph)


def _value_ranges(meta: dict, n: int, length: int) -> dict[str, tuple[float, float]]:
    return {"values": (0, n - 1), "order": (0, n - 1), "indptr": (0, n)}


def _estimate(pages: int, links: int, parameters: dict, on_disk: bool) -> tuple[int, int, int, dict]:
    n_fingerprints, length = parameters["n_fingerprints"], parameters["length"]
    values = 4 * n_fingerprints * length * pages
    inverted = 4 * n_fingerprints * length * (2 * pages + 1)
    index = values + inverted
    graph = 2 * 8 * (pages + 1) + 2 * 4 * links  # stored with the index, for updates
    return index, 8 * 4 * pages, index + graph, {"min-hash values": values, "inverted lists": inverted}


def _spark_rows(edges, n: int, parameters: dict, partitions: int, log=None, codes=None):
    from linksim import spark as jobs

    return jobs.minhash_rows(edges, n, parameters["n_fingerprints"], parameters["length"], parameters["seed"],
                             partitions, log=log, codes=codes)


def _spark_index(rows, parameters: dict, n: int):
    from linksim import spark as jobs
    from linksim.fingerprints.minhash import MinHashIndex

    values = jobs.minhash_arrays(rows, parameters["n_fingerprints"], parameters["length"], n)
    return MinHashIndex(values, parameters["length"], parameters["seed"], "", parameters["decay"])


XJACCARD = Method(
    name="xjaccard",
    colour="#2ca02c",
    title="extended Jaccard",
    summary="extended Jaccard: sum over k of c^k (1 - c) times the Jaccard similarity of the k-step "
            "in-neighbourhoods, by min-hashing (Fogaras & Racz 2005, Algorithm 3)",
    defaults=dict(MONTE_CARLO, length=4),
    build=_build,
    update=_update,
    restore=_restore,
    exact=exact_reference("xjaccard"),
    reads_sample=True,
    value_ranges=_value_ranges,
    estimate=_estimate,
    spark_rows=_spark_rows,
    spark_index=_spark_index,
    report_limits={"length": 6, "n_fingerprints": 300},  # min-hash lists grow with N x L
)
