"""The compute core (`linksim` without its Neo4j-facing sub-packages and the analyses) imports
neither neo4j nor matplotlib nor scikit-learn: numpy and scipy only (GUIDE.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import linksim

# Sub-packages that talk to Neo4j, and the analyses (report, TF-IDF); everything else under
# linksim/ is the pure core.
OUTSIDE_CORE = {"loader", "procedures", "server", "cli", "cypher", "analysis"}
FORBIDDEN = ("neo4j", "matplotlib", "sklearn")


def core_modules() -> list[Path]:
    root = Path(linksim.__file__).parent
    return sorted(
        path
        for path in root.rglob("*.py")
        if not (set(path.relative_to(root).parts[:-1]) & OUTSIDE_CORE)
    )


def forbidden_imports(source: str) -> list[int]:
    """Line numbers of imports of a forbidden package (any form) in a module's source."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names = [str(node.args[0].value)]
        else:
            continue
        if any(name == top or name.startswith(top + ".") for name in names for top in FORBIDDEN):
            lines.append(node.lineno)
    return lines


def test_the_detector_finds_every_form_of_import() -> None:
    source = (
        "import os\nimport neo4j\nfrom neo4j import GraphDatabase\n"
        "import neo4j.exceptions as e\nimportlib.import_module('neo4j')\nfrom . import neo4jish\n"
        "import matplotlib.pyplot as plt\nfrom sklearn.feature_extraction.text import TfidfVectorizer\nimport sklearnish\n"
    )
    assert sorted(forbidden_imports(source)) == [2, 3, 4, 5, 7, 8]


def test_core_modules_import_no_forbidden_package() -> None:
    modules = core_modules()
    assert any(path.name == "errors.py" for path in modules)
    offenders = {
        str(path): lines
        for path in modules
        if (lines := forbidden_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_importing_the_core_loads_no_forbidden_package() -> None:
    root = Path(linksim.__file__).parent
    names = []
    for path in core_modules():
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(["linksim", *parts]))
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
