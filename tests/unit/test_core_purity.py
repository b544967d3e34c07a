"""The compute core (`linksim` without its Neo4j-facing sub-packages) never imports neo4j."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import linksim

# Sub-packages that talk to Neo4j; everything else under linksim/ is the pure core.
NEO4J_FACING = {"loader", "procedures", "server", "cli", "cypher"}


def core_modules() -> list[Path]:
    root = Path(linksim.__file__).parent
    return sorted(
        path
        for path in root.rglob("*.py")
        if not (set(path.relative_to(root).parts[:-1]) & NEO4J_FACING)
    )


def neo4j_imports(source: str) -> list[int]:
    """Line numbers of imports of the neo4j package (any form) in a module's source."""
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
        if any(name == "neo4j" or name.startswith("neo4j.") for name in names):
            lines.append(node.lineno)
    return lines


def test_the_detector_finds_every_form_of_import() -> None:
    source = (
        "import os\nimport neo4j\nfrom neo4j import GraphDatabase\n"
        "import neo4j.exceptions as e\nimportlib.import_module('neo4j')\nfrom . import neo4jish\n"
    )
    assert neo4j_imports(source) == [2, 3, 4, 5]


def test_core_modules_do_not_import_neo4j() -> None:
    modules = core_modules()
    assert any(path.name == "errors.py" for path in modules)
    offenders = {
        str(path): lines
        for path in modules
        if (lines := neo4j_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_importing_the_core_loads_no_neo4j() -> None:
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
        "print(sorted(m for m in sys.modules if m == 'neo4j' or m.startswith('neo4j.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
