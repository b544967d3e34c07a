"""What a similarity method is: :class:`Method`, declared by each method's own module and
collected by the registry (:mod:`linksim.methods`).

Every index answers the same protocol (:class:`SimilarityIndex`): ``sim(u, v)``,
``related(u, top_k, similarity_cutoff)``, ``n``, ``nbytes``, ``parameters``, and ``store_arrays()`` /
``from_store(meta, arrays)`` for the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from linksim.errors import ConfigurationError
from linksim.graph import LinkGraph
from linksim.parameters import check_parameters


class SimilarityIndex(Protocol):
    graph_fingerprint: str

    @property
    def n(self) -> int: ...

    @property
    def nbytes(self) -> int: ...

    @property
    def parameters(self) -> dict: ...

    def sim(self, u: int, v: int, **options) -> float: ...

    def related(self, u: int, top_k: int | None = 10, similarity_cutoff: float = 0.0,
                **options) -> list[tuple[int, float]]: ...

    def store_arrays(self) -> dict[str, np.ndarray]: ...


@dataclass(frozen=True, kw_only=True)
class Method:
    """A similarity method of the registry.

    Attributes
    ----------
    name : str
        As given on the command line and stored (``SIMILAR_TO.method``).
    title, summary : str
        How help texts and reports name and describe it.
    colour : str
        The colour the report's plots draw it in (a matplotlib colour; empty: the plot's own).
    defaults : dict
        The papers' defaults of every build parameter.
    samples : bool
        Monte Carlo (fingerprints, a seed) or exact.
    build : callable
        ``build(graph, parameters, show_progress=False)`` -> index, parameters complete (see
        :meth:`parameters_for`); those that ``build_on_disk`` also take ``directory=`` to build
        into memory-mapped files there (:func:`linksim.fingerprints.walks.build_index`), and the
        walking methods' ``keep_walks=True`` to keep what their update starts from.
    update : callable or None
        ``update(graph_before, index, graph, show_progress=False, max_share=1.0, check_graph=True)``
        -> the index of ``graph``, equal bit for bit to its build (``exact_update``), or within the
        noise of a rebuild (the default's: :mod:`linksim.spectral_update`), from ``index`` built
        with ``keep_walks`` on ``graph_before``; None where a changed graph means a rebuild. It
        raises :class:`ConfigurationError` where a rebuild is due.
    exact_update : bool
        Its ``update`` gives the rebuild's arrays bit for bit.
    restore : callable
        ``restore(meta, arrays)`` -> index, from the store.
    fingerprint_trees : bool
        The index is fingerprint graphs read as trees (SimRank, PSimRank, P-PSimRank), with their twin classes.
    build_on_disk : bool
        Its index can be built into memory-mapped files (``build(..., directory=)``, then ``layout()``)
        where it does not fit the memory budget: the fingerprint-tree methods and spectral (its walks).
    page_major_rows : bool
        Its lists of all pages score page pairs of fingerprint trees exactly from page-major rows
        (:meth:`linksim.fingerprints.index.FingerprintIndex.prepare_exact_scores`), which the
        estimate counts: the fingerprint-tree methods and spectral P-PSimRank.
    reads_sample : bool
        Its top-k reads a large range of the index (a tree, a bucket) from a systematic sample of
        ``sample`` members (the fingerprint-tree methods and extended Jaccard's min-hash buckets).
    exact : callable or None
        ``exact(graph, decay, length, each=None)`` -> dense n x n scores (small graphs), or None
        where the index is exact itself.
    keeps_state : bool
        Its ``build`` takes ``keep_walks=True`` to keep what its ``update`` starts from (the walking
        methods' walk state; spectral's, and its embedding's lengths and clusters).
    walk : WalkKind or None
        How a fingerprint walk chooses its next page (:mod:`linksim.fingerprints.kinds`: SimRank's
        uniform in-neighbour, PSimRank's smallest in a random order of the pages, P-PSimRank's
        smallest in the closed in- or out-neighbourhood, the direction drawn per step), passed down
        to the build, the index and its updates; None for the methods that walk no fingerprint graphs.
    reading : dict
        The knobs of its lists' sampled reading where they differ from a fingerprint index's
        defaults (:class:`linksim.fingerprints.index.FingerprintIndex`), set on every index it makes.
    value_ranges : callable
        ``value_ranges(meta, pages, length)`` -> ``{array: (low, high)}``, inclusive: where every
        value of the stored arrays must lie (``linksim index --verify``).
    shrink : tuple of str
        The parameters that shrink its runs' memory, as a refusal over the budget names them.
    estimate : callable
        ``estimate(pages, links, parameters, on_disk)`` -> ``(index, working, stored, parts)``:
        the bytes the built index holds in memory, the working memory of its build, its bytes
        on disk, and ``{what: bytes}`` for the estimate's breakdown (:mod:`linksim.estimate`).
        ``parameters`` holds what ``measure`` measured, where the caller measured it.
    measure : callable or None
        ``measure(graph, parameters)`` -> ``{name: value}``: what of the link graph's structure, not
        its counts, sizes the index (PageSim's: the pages within reach of each page), measured on
        the streamed graph for the estimate; None where the counts size it.
    spark_rows, spark_index : callable or None
        The Spark build (:mod:`linksim.spark`): ``spark_rows(edges, pages, parameters, partitions,
        log, codes)`` -> the index as a DataFrame (``codes``: the pages' draw codes,
        :func:`linksim.spark.codes_frame`, or None for a graph without keys),
        ``spark_index(rows, parameters, pages)`` -> the index
        gathered from it; None where the method has no Spark path.
    warm_up : callable or None
        ``warm_up()`` compiles the kernels of its lists (a cold numba cache takes tens of seconds), which a
        run calls before it takes its lock; None where its lists need none beyond the fingerprint queries'.
    report_limits : dict
        The largest values of a parameter the report's grids give this method (a costly build).
    """

    name: str
    title: str
    summary: str
    colour: str = ""
    defaults: dict = field(default_factory=dict)
    samples: bool = True
    build: Callable = None
    update: Callable | None = None
    exact_update: bool = True
    restore: Callable = None
    exact: Callable | None = None
    fingerprint_trees: bool = False  # fingerprint trees
    build_on_disk: bool = False  # built on disk on demand
    page_major_rows: bool = False  # its lists score pairs from page-major rows
    reads_sample: bool = False  # --sample applies
    keeps_state: bool = False
    walk: object = None
    reading: dict = field(default_factory=dict)
    value_ranges: Callable = None
    estimate: Callable = None
    shrink: tuple[str, ...] = ("n_fingerprints", "top_k")
    measure: Callable | None = None
    spark_rows: Callable | None = None
    spark_index: Callable | None = None
    warm_up: Callable | None = None
    report_limits: dict = field(default_factory=dict)

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(self.defaults)

    def parameters_for(self, **given) -> dict:
        """The defaults overridden by the given values that are not None, each checked.

        Raises
        ------
        ConfigurationError
            For a parameter the method does not take, or a value out of its range.
        """
        parameters = dict(self.defaults)
        for name, value in given.items():
            if value is None:
                continue
            if name not in parameters:
                raise ConfigurationError(f"{self.name} takes no parameter {name!r} (it takes "
                                         f"{', '.join(self.parameter_names)})")
            parameters[name] = value
        # The values as checked (100.0 given is 100): the store's key is a hash of them.
        parameters.update(check_parameters(**{k: v for k, v in parameters.items() if k != "formula"}))
        return parameters

    def build_index(self, graph: LinkGraph, show_progress: bool = False, **given):
        """Build the index of ``graph`` with the given parameters (None: the default)."""
        return self.build(graph, self.parameters_for(**given), show_progress=show_progress)
