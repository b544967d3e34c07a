"""Every public name of the Python API documents what it takes or gives (numpydoc), as the
generated reference shows it."""

from __future__ import annotations

import inspect

import pytest

import linksim
from linksim.procedures import api


def public_callables():
    for name in linksim.__all__:
        value = getattr(linksim, name)
        if callable(value):
            yield f"linksim.{name}", value
    yield "linksim.procedures.api.connect", api.connect
    for facade in (api.Linksim, api.PageRank, api.Similar, api.Spark):
        for name, member in vars(facade).items():
            if not name.startswith("_") and callable(member):  # properties are attributes, not calls
                yield f"{facade.__name__}.{name}", member


def has_section(obj) -> bool:
    text = inspect.cleandoc(inspect.getdoc(obj) or "")
    return any(f"\n{title}\n{'-' * len(title)}" in f"\n{text}" for title in ("Parameters", "Returns"))


def test_the_facade_is_found() -> None:
    names = {name for name, _ in public_callables()}
    assert {"linksim.connect", "Linksim.related", "PageRank.write", "Similar.write", "Spark.similar"} <= names


@pytest.mark.parametrize("obj", [pytest.param(obj, id=name) for name, obj in public_callables()])
def test_every_public_callable_has_a_parameters_or_returns_section(obj) -> None:
    assert has_section(obj), "its docstring has no numpydoc Parameters or Returns section"


def test_a_docstring_without_sections_is_caught() -> None:
    def bare():
        """Only a summary."""

    assert not has_section(bare)
