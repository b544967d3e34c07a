"""The registry is the one place that knows the methods: no code outside the method modules and
the registry compares a method's name (issue 25); each method module declares its own Method."""

from __future__ import annotations

import ast
from pathlib import Path

from linksim.methods import METHODS

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("linksim", "loader", "procedures", "server", "cli", "analysis", "benchmarks")
# The method modules (each declares its Method) and the registry that collects them.
METHOD_MODULES = {f"linksim/methods/{name}.py" for name in
                  ("__init__", "method", "fingerprints", "simrank", "psimrank", "xjaccard", "pagesim")}


def _names(node: ast.AST) -> set[str]:
    """The method names a comparison's operand holds: a string, or a tuple, list or set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & set(METHODS)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names(element) for element in node.elts)) if node.elts else set()
    return set()


def comparisons_with_method_names(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                for name in sorted(_names(operand)):
                    found.append((node.lineno, name))
    return found


def test_the_detector_sees_every_form() -> None:
    source = 'a == "simrank"\nb in ("psimrank", "x")\n"xjaccard" != c\nd not in {"pagesim"}\ne == "other"\n'
    assert comparisons_with_method_names(source) == [(1, "simrank"), (2, "psimrank"), (3, "xjaccard"), (4, "pagesim")]


def test_no_code_outside_the_method_modules_compares_a_method_name() -> None:
    offenders = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative in METHOD_MODULES:
                continue
            offenders += [f"{relative}:{line}: {name}" for line, name in
                          comparisons_with_method_names(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_each_method_is_declared_by_its_own_module() -> None:
    import importlib

    for name, entry in METHODS.items():
        module = importlib.import_module(f"linksim.methods.{name}")
        assert getattr(module, name.upper()) is entry
        assert entry.value_ranges is not None and entry.estimate is not None and entry.build is not None
