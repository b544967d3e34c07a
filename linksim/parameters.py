"""The parameters of linksim's algorithms and runs: one name each, its type and valid range.

Every value a user gives is checked here where it enters (the command line's option types, the
procedures' entry points, the indexes' query methods), before any graph is read, with a message
naming the value, the option and the range: no numpy error reaches a user.

A list's length and cutoff are checked once, by the facade they enter through (the Python API's
methods, an index's ``related`` / ``related_many``, :func:`linksim.ranking.topk.top_k_all`,
:func:`linksim.ranking.sets.combined`), which turns them into a :class:`Query`; the layers below
take the query and check nothing again. The command line checks its options as it parses them,
before it connects to a server, so that a typo is refused without one; it then calls the API,
whose check is the one of every other caller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from linksim.errors import ConfigurationError


@dataclass(frozen=True)
class Parameter:
    """A parameter: its Python name, command-line option, type and range (bounds inclusive unless
    ``*_open``)."""

    name: str
    option: str
    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def describe(self) -> str:
        """The valid range, as the message of a refused value says it."""
        low = "" if self.low is None else ("(" if self.low_open else "[") + f"{self.low:g}"
        high = "" if self.high is None else f"{self.high:g}" + (")" if self.high_open else "]")
        if self.kind is int:
            if self.high is None:
                return f"an integer >= {int(self.low):,}"
            return f"an integer in {int(self.low):,}..{int(self.high):,}"
        if self.high is None:
            return f"a number {'>' if self.low_open else '>='} {self.low:g}"
        return f"a number in {low}, {high}"

    def check(self, value: object) -> int | float:
        """``value`` converted to the parameter's type; :class:`ConfigurationError` if it is not one
        or lies outside the range."""
        refused = ConfigurationError(f"{self.option} ({self.name}) must be {self.describe()}, got {value!r}")
        if isinstance(value, bool):
            raise refused
        if self.kind is int:
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int):
                try:
                    value = _integer(str(value))
                except ValueError:
                    raise refused from None
        else:
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise refused from None
            if not math.isfinite(value):
                raise refused
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise refused
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            raise refused
        return value


_SUFFIXES = {"k": 10**3, "m": 10**6, "g": 10**9, "b": 10**9}


def _integer(text: str) -> int:
    """An integer as people write large ones: ``100000``, ``100_000``, ``1e5``, ``100k``, ``10M``."""
    text = text.strip().replace("_", "").replace(",", "")
    scale = _SUFFIXES.get(text[-1:].lower(), 1) if text else 1
    if scale != 1:
        text = text[:-1]
    try:
        return int(text) * scale
    except ValueError:
        number = float(text) * scale  # 1e7, 2.5M
        if not math.isfinite(number) or not number.is_integer():
            raise
        return int(number)


#: SIMILAR_TO relationships per write transaction unless --batch-size says otherwise (why this
#: size: linksim/procedures/similarity.py).
SIMILAR_WRITE_BATCH = 500

_ALL = (
    Parameter("n_fingerprints", "--fingerprints", int, 1, 100_000),
    Parameter("length", "--length", int, 1, 127),  # meeting times are stored as int8
    Parameter("decay", "--decay", float, 0.0, 1.0, low_open=True, high_open=True),
    Parameter("seed", "--seed", int, 0, 2**63 - 1),
    Parameter("radius", "--radius", int, 1, 20),
    Parameter("prune", "--prune", float, 0.0, 1.0, high_open=True),  # PageSim: walks below this share left out
    Parameter("top_k", "--top-k", int, 1, 100_000),
    Parameter("pool", "--pool", int, 1, 100_000),  # related pages of each member combined for a set
    Parameter("sample", "--sample", int, 0, 10**9),  # tree members read per large range; 0: exact lists
    Parameter("similarity_cutoff", "--similarity-cutoff", float, 0.0, 1.0, high_open=True),
    Parameter("batch_size", "--batch-size", int, 1, 1_000_000),
    Parameter("damping", "--damping", float, 0.0, 1.0, low_open=True, high_open=True),
    Parameter("tol", "--tol", float, 0.0, 1.0, low_open=True),
    Parameter("max_iter", "--max-iter", int, 1, 1_000_000),
    Parameter("wait", "--wait", float, 0.0, 7 * 24 * 3600.0),
    Parameter("top", "--top", int, 0, 1_000_000),
    Parameter("links", "--links", int, 10, 10_000_000_000),
    Parameter("out_exponent", "--out-exponent", float, 2.0, 10.0, low_open=True),
    Parameter("in_exponent", "--in-exponent", float, 2.0, 10.0, low_open=True),
    Parameter("partitions", "--partitions", int, 1, 100_000),  # Spark jobs' partitions
    Parameter("write_partitions", "--write-partitions", int, 1, 1_000),  # Spark connector writers
)

#: Every parameter by its Python name (the one vocabulary: ``linksim.parameters.PARAMETERS``).
PARAMETERS: dict[str, Parameter] = {p.name: p for p in _ALL}


def check_parameters(**values) -> dict[str, int | float]:
    """Check the given values (None: not given, skipped); return them converted.

    Raises
    ------
    ConfigurationError
        For the first value of a wrong type or outside its range, naming the option and range.
    """
    checked = {}
    for name, value in values.items():
        if value is None:
            continue
        if name not in PARAMETERS:
            raise ConfigurationError(f"unknown parameter {name!r}")
        checked[name] = PARAMETERS[name].check(value)
    return checked


#: The link graphs a command runs on: the pages (default) and the hosts of ``linksim hosts``.
GRAPHS = ("pages", "hosts")


def check_graph(name: object) -> str:
    """``name`` if it names a link graph (``--graph``); :class:`ConfigurationError` otherwise."""
    if name not in GRAPHS:
        raise ConfigurationError(f"--graph (graph) must be one of {', '.join(GRAPHS)}, got {name!r}")
    return name  # type: ignore[return-value]


def check_fingerprints_asked(asked: int | None, built: int) -> int:
    """The number of fingerprints a query uses: ``asked`` (1..built) or all that were built."""
    if asked is None:
        return built
    value = PARAMETERS["n_fingerprints"].check(asked)
    if value > built:
        raise ConfigurationError(
            f"--fingerprints (n_fingerprints) must lie in 1..{built} for this index (it was built with "
            f"{built}), got {asked!r}; build one with more: `linksim index METHOD --fingerprints {asked}`"
        )
    return value


@dataclass(frozen=True)
class Query:
    """What a list asks for, checked: ``top_k`` pages (None: every page that scores) with a score
    above ``similarity_cutoff``. Made by :meth:`checked` where the values enter; the layers below a
    facade take it as it is (a query made directly, as those layers make deeper ones, is trusted)."""

    top_k: int | None = 10
    similarity_cutoff: float = 0.0

    @classmethod
    def checked(cls, top_k: int | None = 10, similarity_cutoff: float = 0.0) -> "Query":
        """The query of these values, checked (:class:`ConfigurationError` naming the option and range)."""
        values = check_parameters(top_k=top_k, similarity_cutoff=similarity_cutoff)
        return cls(values.get("top_k"), values["similarity_cutoff"])


def check_page(u: int, n: int) -> None:
    """Refuse a page number outside ``0..n-1`` (numpy would wrap a negative one around)."""
    if not 0 <= u < n:
        raise ConfigurationError(f"page {u} is not a page of this index (0..{n - 1})")


def sampled_parameters(index) -> dict:
    """The build parameters of a Monte Carlo index (SimRank, PSimRank, extended Jaccard), as plain
    numbers: what the store keys it by and a rebuild compares against."""
    return {"n_fingerprints": int(index.n_fingerprints), "length": int(index.length), "decay": float(index.decay),
            "seed": int(index.seed)}
