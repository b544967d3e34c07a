"""Spectral P-PSimRank: P-PSimRank's best pages of each page, ranked by the cosine of the pages'
link embeddings (a truncated SVD of the hub-weighted in- and out-link matrix) with P-PSimRank's
score beside it (:mod:`linksim.spectral`)."""

from __future__ import annotations

from linksim.graph import LinkGraph
from linksim.methods import fingerprints as fingerprint_methods
from linksim.methods.method import Method


def _build(graph: LinkGraph, p: dict, show_progress: bool = False):
    from linksim.spectral import build_spectral_index

    return build_spectral_index(graph, int(p["n_fingerprints"]), int(p["length"]), int(p["seed"]), float(p["decay"]),
                                show_progress=show_progress)


def _restore(meta: dict, arrays: dict):
    from linksim.spectral import SpectralIndex

    return SpectralIndex.from_store(meta, arrays)


def _exact(graph: LinkGraph, decay: float, length: int, each=None):
    from linksim.spectral import spectral_exact

    return spectral_exact(graph, decay, length, each=each)


def _value_ranges(meta: dict, n: int, length: int) -> dict[str, tuple[float, float]]:
    return dict(fingerprint_methods.value_ranges(meta, n, length), embedding=(-1.0, 1.0))


def _estimate(pages: int, links: int, parameters: dict, on_disk: bool) -> tuple[int, int, int, dict]:
    from linksim.spectral import RANK

    fingerprints, working, stored, parts = fingerprint_methods.estimate(pages, links, parameters, False)
    embedding = 4 * RANK * pages
    # The SVD: the sparse features (two a link, 12 bytes each), ARPACK's Lanczos basis (2 RANK + 1
    # vectors of the longer side, 2 pages) and its U, Sigma, V^T.
    svd = 24 * links + 8 * (2 * RANK + 1) * 2 * pages + 8 * RANK * 3 * pages
    return (fingerprints + embedding, max(working, svd), stored + embedding,
            dict(parts, **{"link embedding": embedding}))


SPECTRAL = Method(
    name="spectral",
    title="Spectral P-PSimRank",
    summary="spectral P-PSimRank: P-PSimRank's 100 best pages of a page ranked by 0.8 x the cosine of the "
            "pages' link embeddings (truncated SVD, rank 100, of the idf-weighted in- and out-links) + 0.2 x "
            "P-PSimRank's score",
    defaults=dict(fingerprint_methods.MONTE_CARLO, length=3),
    build=_build,
    restore=_restore,
    exact=_exact,
    value_ranges=_value_ranges,
    estimate=_estimate,
)
