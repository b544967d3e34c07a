"""linksim installs under one import namespace and ships its Cypher files."""

from __future__ import annotations

import importlib
import importlib.metadata
from pathlib import Path

import pytest

from linksim import cypher
from linksim.procedures.runs import RUNS_OF_CURRENT, is_current


def test_only_linksim_is_a_top_level_name() -> None:
    top_level = importlib.metadata.distribution("linksim").read_text("top_level.txt")
    assert top_level is not None
    assert top_level.split() == ["linksim"]


@pytest.mark.parametrize(
    "name", ["linksim.loader", "linksim.procedures", "linksim.server", "linksim.cli", "linksim.cypher"]
)
def test_sub_packages_import(name: str) -> None:
    assert importlib.import_module(name).__name__ == name


def test_console_script_is_declared() -> None:
    scripts = importlib.metadata.entry_points(group="console_scripts")
    assert {ep.value for ep in scripts if ep.name == "linksim"} == {"linksim.cli.main:main"}


def test_schema_statements_are_idempotent_and_parsed() -> None:
    statements = cypher.statements("schema")
    assert len(statements) == 11
    assert all("IF NOT EXISTS" in statement or "IF EXISTS" in statement for statement in statements)
    assert not any("//" in statement for statement in statements)
    assert any("REQUIRE p.url IS UNIQUE" in statement for statement in statements)


def test_unknown_cypher_file_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match="no Cypher file named 'nope'"):
        cypher.load("nope")


def test_related_pages_queries_take_parameters_only_and_read_the_current_run_once() -> None:
    for name in ("related_pages", "related_pages_all_methods", "related_graph"):
        text = cypher.query("related_pages", name)
        assert "$url" in text and "LinksimCurrent" in text
        # The current runs are read into a value once; reading `current.runs` per relationship
        # could see the lists before and after a switch within one answer.
        head, rest = text.split("WITH ", 1)
        first, after = rest.split("\n", 1)
        assert f"{RUNS_OF_CURRENT} AS runs" in first and "current." not in after
        assert f"WHERE {is_current()}" in after  # replaced lists left out
        assert "{" not in text.replace("{algorithm: $method}", "").replace("{url: $url}", "")


def test_the_short_related_pages_queries_take_parameters_only() -> None:
    for name in ("related_pages_procedure", "related_graph_procedure"):
        text = cypher.query("related_pages", name)
        assert text.startswith("CALL linksim.related($url, $method, $limit)")
        assert len(text.splitlines()) <= 3 and "'" not in text and '"' not in text


def test_browser_style_and_saved_queries_ship() -> None:
    from importlib import resources

    folder = resources.files("linksim.cypher").joinpath("browser")
    style = folder.joinpath("style.grass").read_text()
    assert "node.Page" in style and "{title}" in style and "relationship.SIMILAR_TO" in style
    favorites = folder.joinpath("favorites.cypher").read_text()
    assert favorites.count("// name:") == 7 and "$url" in favorites and "$paths" in favorites
    # the graph view's saved query is the short one the demo prints, as shipped
    assert cypher.query("related_pages", "related_graph_procedure") in favorites


def test_the_command_line_holds_no_cypher() -> None:
    """cli/ is a shell over the Python API and the procedures: its strings hold no query."""
    import ast
    import re

    import linksim.cli

    clause = re.compile(r"\b(MATCH|MERGE|CREATE|DELETE|DETACH|UNWIND|RETURN|CALL)\b[\s(]")
    found = []
    for path in Path(linksim.cli.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and clause.search(node.value):
                found.append(f"{path.name}:{node.lineno}: {node.value[:60]!r}")
    assert found == []


def test_the_loader_does_not_import_the_procedures() -> None:
    """Data flows one way (GUIDE.md): crawl files -> loader -> Neo4j -> procedures."""
    import ast

    import linksim.loader

    found = []
    for path in Path(linksim.loader.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}:{node.lineno}" for name in names if name.startswith("linksim.procedures")]
    assert found == []


def test_python_at_the_repository_root_imports_the_working_tree() -> None:
    """The bare ``linksim/`` folder shadows the installed package there: its sub-packages that live in
    other folders (``procedures/``, ``cli/``) are found beside it, as the install maps them."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    # A Spark session earlier in this process sets PYTHONSAFEPATH (linksim.spark), which keeps the
    # working directory off sys.path: the case here is a plain `python` started at the root.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    done = subprocess.run([sys.executable, "-c", "import linksim.procedures.api as a, linksim.cli.main as c; "
                           "print(a.__file__); print(c.__file__)"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(root / "procedures" / "api.py"), str(root / "cli" / "main.py")]
