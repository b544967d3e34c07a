"""Spectral P-PSimRank: each page's co-linked pages and nearest pages in the link embedding (a
truncated SVD of the hub-weighted in- and out-link matrix), ranked by the cosine of the embeddings
with P-PSimRank's score beside it (:mod:`linksim.spectral`)."""

from __future__ import annotations

from linksim.graph import LinkGraph
from linksim.methods import fingerprints as fingerprint_methods
from linksim.methods.method import Method


def _build(graph: LinkGraph, p: dict, show_progress: bool = False, directory=None, keep_walks: bool = False):
    from linksim.spectral import build_spectral_index

    return build_spectral_index(graph, int(p["n_fingerprints"]), int(p["length"]), int(p["seed"]), float(p["decay"]),
                                show_progress=show_progress, directory=directory, keep_walks=keep_walks)


def _update(graph_before: LinkGraph, index, graph: LinkGraph, show_progress: bool = False, max_share: float = 1.0,
            check_graph: bool = True):
    from linksim.spectral_update import update_spectral_index

    return update_spectral_index(graph_before, index, graph, show_progress=show_progress, max_share=max_share,
                                 check_graph=check_graph)


def _restore(meta: dict, arrays: dict):
    from linksim.spectral import SpectralIndex

    return SpectralIndex.from_store(meta, arrays)


def _exact(graph: LinkGraph, decay: float, length: int, each=None):
    from linksim.spectral import spectral_exact

    return spectral_exact(graph, decay, length, each=each)


def _value_ranges(meta: dict, n: int, length: int) -> dict[str, tuple[float, float]]:
    links = int(meta["graph"].get("links", n * n))
    return dict(fingerprint_methods.value_ranges(meta, n, length), embedding=(-1.0, 1.0),
                neighbour_indptr=(0, 2 * links), neighbour_indices=(0, n - 1), nearest=(-1, n - 1),
                cosine_share=(0.0, 1.0), lengths=(0.0, 1.01), eigenvalues=(0.0, float(max(n, 1))),
                centroids=(-1.01, 1.01), page_cluster=(-1, n - 1), fold_state=(0.0, float(max(n, 1))))


#: The estimate's part for what an update folds changed pages in with (stored, not read by the lists).
FOLDING_PART = "embedding's folding state (for updates)"


def _estimate(pages: int, links: int, parameters: dict, on_disk: bool) -> tuple[int, int, int, dict]:
    from linksim.embedding import OVERSAMPLE
    from linksim.lowrank import BLOCK, CHUNK
    from linksim.spectral import ANN_PAGES, CLUSTER_SAMPLE, NEAREST, RANK, SCAN_BLOCK, SEARCH_BYTES, cluster_count

    fingerprints, working, stored, parts = fingerprint_methods.estimate(pages, links, parameters, on_disk)
    # Built in memory, the index keeps what an update folds changed pages in with: each page's
    # length and cluster, the clusters' centroids (linksim.spectral_update).
    embedding = 4 * RANK * pages
    folding = 0 if on_disk else 8 * pages + 4 * RANK * cluster_count(pages)
    neighbours = 8 * (pages + 1) + 4 * 2 * links  # both ways: two entries a link
    nearest = 4 * NEAREST * pages
    # The SVD (randomized subspace iteration): its block of RANK + OVERSAMPLE float32 columns, the
    # Gram operator's two scratch blocks of BLOCK columns and its four float64 weights a page, and
    # a chunk of the block in float64. The links are the graph's own lists, not copied. It runs first:
    # of the index, only the block (the embedding to be) is held then.
    svd = 4 * (RANK + OVERSAMPLE) * pages + 2 * 4 * BLOCK * pages + 33 * pages + 8 * (RANK + OVERSAMPLE) * CHUNK
    # The nearest pages: the clusters (six int64 a page: the pages with a direction, twice, each
    # one's cluster, their order, the pages cluster after cluster, each page's cluster), k-means' sample and a
    # cluster's search (its pages' and its candidates' rows, faiss's blocks of products; a few
    # thousand rows). They are found and freed before the fingerprints and the neighbour lists:
    # on top of the whole index, they add what they hold beyond them. Below ANN_PAGES, a block of
    # scans: SCAN_BLOCK float32 cosines a page.
    sample = min(pages, cluster_count(pages) * CLUSTER_SAMPLE)
    search = (48 * pages + 4 * RANK * sample + SEARCH_BYTES if pages >= ANN_PAGES else 4 * SCAN_BLOCK * pages)
    held = {"link embedding": embedding, "neighbour lists": neighbours, "nearest pages": nearest,
            **({FOLDING_PART: folding} if folding else {})}
    index = fingerprints + embedding + neighbours + nearest + folding
    return (index, max(working, svd - index, search - fingerprints - neighbours),
            stored + embedding + neighbours + nearest + folding, dict(parts, **held))


def _spark_rows(edges, n: int, parameters: dict, partitions: int, log=None, codes=None):
    from linksim import spark as jobs

    return jobs.spectral_rows(edges, n, parameters["n_fingerprints"], parameters["length"], parameters["seed"],
                              partitions, log=log, codes=codes)


def _spark_index(rows, parameters: dict, n: int):
    from linksim import spark as jobs

    return jobs.spectral_index(rows, parameters, n)


def _warm_up() -> None:
    from linksim import spectral_update
    from linksim.ranking import colinked, combined

    combined.warm_up()
    colinked.warm_up()
    spectral_update.warm_up()


SPECTRAL = Method(
    name="spectral",
    colour="#8c564b",
    title="Spectral P-PSimRank",
    summary="spectral P-PSimRank: a page's 100 best co-linked pages (Adamic-Adar, links both ways, hubs of "
            "over 200 links skipped) and its 10 nearest in the link embedding (truncated SVD, rank 100, of the "
            "idf-weighted in- and out-links), ranked by a x the embeddings' cosine + (1 - a) x P-PSimRank's score, a "
            "the share of the link features' weight the embedding holds (at most 0.8)",
    defaults=dict(fingerprint_methods.MONTE_CARLO, length=3),
    build=_build,
    update=_update,
    exact_update=False,
    keeps_state=True,
    restore=_restore,
    exact=_exact,
    value_ranges=_value_ranges,
    estimate=_estimate,
    page_major_rows=True,
    build_on_disk=True,
    spark_rows=_spark_rows,
    spark_index=_spark_index,
    warm_up=_warm_up,
)
