"""The registry of similarity methods: it collects the :class:`~linksim.methods.method.Method` that each
method's own module of this package declares (:mod:`linksim.methods.simrank`,
:mod:`linksim.methods.psimrank`, :mod:`linksim.methods.xjaccard`, :mod:`linksim.methods.pagesim`,
:mod:`linksim.methods.ppsimrank`, :mod:`linksim.methods.spectral`): its name, what it computes, the papers' defaults,
its parameters (their ranges live in :mod:`linksim.parameters`), how to build, store, check and
estimate its index, its Spark build and its exact reference. The command line, the API, the index
store, the estimates, the procedures, the experiments and the report read this table and never a
method's name; adding a method is one module and :func:`register`.
"""

from __future__ import annotations

__all__ = ["DEFAULT_METHOD", "METHODS", "Method", "SimilarityIndex", "method", "check_sample", "register", "sample_methods",
           "walking_methods", "fingerprint_index"]

from linksim import store
from linksim.errors import ConfigurationError
from linksim.parameters import GRAPHS
from linksim.methods.method import Method, SimilarityIndex
from linksim.methods.pagesim import PAGESIM
from linksim.methods.ppsimrank import PPSIMRANK
from linksim.methods.psimrank import PSIMRANK
from linksim.methods.simrank import SIMRANK
from linksim.methods.spectral import SPECTRAL
from linksim.methods.xjaccard import XJACCARD


#: The methods, by name, in the papers' order (help texts and reports show them so). Each is
#: declared by its own module; :func:`register` adds one more (a plug-in, a test's toy method).
METHODS: dict[str, Method] = {m.name: m for m in (SIMRANK, PSIMRANK, XJACCARD, PAGESIM, PPSIMRANK, SPECTRAL)}
for _entry in METHODS.values():
    store.register_kind(_entry.name, _entry.restore, _entry.value_ranges)


def register(entry: Method) -> Method:
    """Add a method to the registry: every command, the API, the store and the estimates then
    know it by its name. A name already taken is refused."""
    if entry.name in METHODS:
        raise ConfigurationError(f"a method named {entry.name!r} is registered already")
    if entry.name in GRAPHS or not entry.name.isidentifier():
        # The host graph's indexes live in the folder `hosts` beside the methods' folders, and a
        # method's runs on it are keyed `<method>@hosts`.
        raise ConfigurationError(f"a method cannot be named {entry.name!r}: a plain name other than "
                                 f"{', '.join(GRAPHS)}")
    METHODS[entry.name] = entry
    store.register_kind(entry.name, entry.restore, entry.value_ranges)
    return entry


#: The method related pages are asked of when none is named: the one the evaluation ranks best
#: (spectral P-PSimRank: on Wikispeedia and WebKB the highest precision@10 and hits@10 of linksim's
#: methods and above every anchor's, every page with a link answered; ``benchmarks/quality.py``,
#: the docs' quality page).
DEFAULT_METHOD = "spectral"


def sample_methods() -> list[str]:
    """The methods whose top-k reads large ranges of their index from a sample (``--sample``)."""
    return [name for name, entry in METHODS.items() if entry.reads_sample]


def walking_methods() -> list[str]:
    """The methods whose index is fingerprint graphs of walks."""
    return [name for name, entry in METHODS.items() if entry.walk is not None]


def fingerprint_index(graph, name: str, n_fingerprints: int = 100, length: int = 10, seed: int = 0,
                      decay: float = 0.6, **options):
    """The fingerprint graphs of the registered method ``name`` (simrank, psimrank, ppsimrank) with
    its walk and its reading (:func:`linksim.fingerprints.walks.build_index`, whose ``options``)."""
    from linksim.fingerprints.walks import build_index

    if name not in walking_methods():
        raise ConfigurationError(f"fingerprint graphs are built for {', '.join(walking_methods())}, not {name!r}")
    entry = method(name)
    return build_index(graph, entry.walk, n_fingerprints, length, seed, decay, method=name, reading=entry.reading,
                       **options)


def method(name: str) -> Method:
    """The registry entry of ``name``; :class:`ConfigurationError` naming the methods otherwise."""
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise ConfigurationError(f"method must be one of {', '.join(METHODS)}, got {name!r}") from None


def check_sample(name: str, sample: int | None) -> None:
    """Refuse ``sample`` (``--sample``) for a method whose lists read no sample."""
    if sample is not None and not method(name).reads_sample:
        raise ConfigurationError(f"--sample (sample) applies to {', '.join(sample_methods())}, not to {name}")
