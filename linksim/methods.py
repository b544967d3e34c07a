"""The registry of similarity methods: what each one is, known once.

A :class:`Method` holds a method's name, what it computes, the papers' defaults, which parameters
it takes (their ranges live in :mod:`linksim.parameters`), how to build its index, which class
stores and restores it, and its exact reference. The command line's help, the index store, the
procedures, the experiments, the evaluation and the report all read this table; adding a method
is one module with its index class plus one entry here.

Every index answers the same protocol (:class:`SimilarityIndex`): ``sim(u, v)``,
``related(u, top_k, threshold)``, ``n``, ``nbytes``, ``parameters``, and ``store_arrays()`` /
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

    def related(self, u: int, top_k: int | None = 10, threshold: float = 0.0, **options) -> list[tuple[int, float]]: ...

    def store_arrays(self) -> dict[str, np.ndarray]: ...


@dataclass(frozen=True)
class Method:
    """A similarity method of the registry.

    Attributes
    ----------
    name : str
        As given on the command line and stored (``SIMILAR_TO.method``).
    title, summary : str
        How help texts and reports name and describe it.
    defaults : dict
        The papers' defaults of every build parameter.
    samples : bool
        Monte Carlo (fingerprints, a seed) or exact.
    build : callable
        ``build(graph, parameters, show_progress=False)`` -> index, parameters complete (see
        :meth:`parameters_for`); SimRank's and PSimRank's also take ``directory=`` to build
        into memory-mapped files there (:func:`linksim.walks.build_index`).
    restore : callable
        ``restore(meta, arrays)`` -> index, from the store.
    fingerprint_trees : bool
        The index is fingerprint graphs read as trees (SimRank, PSimRank): it can be built into
        memory-mapped files (``build(..., directory=)``) and its top-k takes ``max_members``.
    exact : callable or None
        ``exact(graph, decay, length, each=None)`` -> dense n x n scores (small graphs), or None
        where the index is exact itself.
    """

    name: str
    title: str
    summary: str
    defaults: dict = field(default_factory=dict)
    samples: bool = True
    build: Callable = None
    restore: Callable = None
    exact: Callable | None = None
    fingerprint_trees: bool = False  # SimRank-like: built on disk on demand, --max-members applies

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


def _fingerprints(kind: str):
    def build(graph: LinkGraph, p: dict, show_progress: bool = False, directory=None):
        from linksim.walks import build_index

        return build_index(graph, kind, int(p["n_fingerprints"]), int(p["length"]), int(p["seed"]), float(p["decay"]),
                           show_progress=show_progress, directory=directory)

    return build


def _minhash(graph: LinkGraph, p: dict, show_progress: bool = False):
    from linksim.minhash import build_minhash_index

    return build_minhash_index(graph, int(p["n_fingerprints"]), int(p["length"]), int(p["seed"]), float(p["decay"]),
                               show_progress=show_progress)


def _pagesim(graph: LinkGraph, p: dict, show_progress: bool = False):
    from linksim.pagesim import build_pagesim_index

    return build_pagesim_index(graph, radius=int(p["radius"]), decay=float(p["decay"]), damping=float(p["damping"]),
                               formula=str(p["formula"]))


def _restore_fingerprints(meta: dict, arrays: dict):
    from linksim.fingerprint_index import FingerprintIndex

    return FingerprintIndex.from_store(meta, arrays)


def _restore_minhash(meta: dict, arrays: dict):
    from linksim.minhash import MinHashIndex

    return MinHashIndex.from_store(meta, arrays)


def _restore_pagesim(meta: dict, arrays: dict):
    from linksim.pagesim import PageSimIndex

    return PageSimIndex.from_store(meta, arrays)


def _exact(name: str):
    def exact(graph: LinkGraph, decay: float, length: int, each=None) -> np.ndarray:
        from linksim import exact as references

        return getattr(references, f"{name}_exact")(graph, decay, length, each=each)

    return exact


_MONTE_CARLO = {"n_fingerprints": 100, "length": 10, "decay": 0.6, "seed": 0}

#: The methods, by name, in the papers' order (help texts and reports show them so).
METHODS: dict[str, Method] = {m.name: m for m in (
    Method(
        "simrank", "SimRank",
        "SimRank = E[c^tau], tau the first meeting time of two reversed random walks, by coalescing "
        "walks stored as fingerprint graphs (Fogaras & Racz 2004/2005)",
        dict(_MONTE_CARLO), True, _fingerprints("simrank"), _restore_fingerprints, _exact("simrank"), True,
    ),
    Method(
        "psimrank", "PSimRank",
        "PSimRank: reversed random walks coupled by a random permutation per step, so that they meet "
        "with the Jaccard similarity of the in-sets (Fogaras & Racz 2005)",
        dict(_MONTE_CARLO), True, _fingerprints("psimrank"), _restore_fingerprints, _exact("psimrank"), True,
    ),
    Method(
        "xjaccard", "extended Jaccard",
        "extended Jaccard: sum over k of c^k (1 - c) times the Jaccard similarity of the k-step "
        "in-neighbourhoods, by min-hashing (Fogaras & Racz 2005, Algorithm 3)",
        dict(_MONTE_CARLO, length=4), True, _minhash, _restore_minhash, _exact("xjaccard"),
    ),
    Method(
        "pagesim", "PageSim",
        "PageSim: each page's PageRank propagated along simple paths of at most --radius links, "
        "decay d per link (Lin, King & Lyu 2006)",
        {"radius": 3, "decay": 0.5, "damping": 0.85, "formula": "minmax"}, False, _pagesim, _restore_pagesim,
        None,
    ),
)}

#: The method related pages are asked of when none is named: the one the evaluation ranks best
#: (PSimRank: on Wikispeedia the highest precision@10 and sibling Gamma of the Monte Carlo methods;
#: see the README).
DEFAULT_METHOD = "psimrank"


def method(name: str) -> Method:
    """The registry entry of ``name``; :class:`ConfigurationError` naming the methods otherwise."""
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise ConfigurationError(f"method must be one of {', '.join(METHODS)}, got {name!r}") from None
