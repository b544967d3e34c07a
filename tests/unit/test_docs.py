"""The README is a front door and the docs' references cover the code: every command and option,
every setting the code reads from the environment, every exit code; no run figures in the code."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest

from linksim import cypher
from linksim.cli.main import build_parser
from linksim.cli.options import EXIT_CODES, SETTINGS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CODE = ("linksim", "loader", "procedures", "cli", "server", "analysis")
# Variables linksim sets for the processes it starts (Neo4j's own tools), not settings it reads.
SET_FOR_CHILDREN = {"NEO4J_HOME", "NEO4J_CONF"}


def _pages():
    spec = importlib.util.spec_from_file_location("reference_pages", ROOT / "docs" / "reference_pages.py")
    pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pages)
    return pages


def test_the_readme_is_a_front_door() -> None:
    lines = README.splitlines()
    assert len(lines) <= 250 and len(README.encode()) <= 16 * 1024
    assert max(map(len, lines)) <= 200
    assert not re.search(r"20\d\d-\d\d-\d\d", README)
    # One picture of a page's related pages in Neo4j Browser (`make docs-picture` takes it).
    pictures = re.findall(r"!\[[^]]*\]\(([^)]+)\)", README)
    assert pictures and all((ROOT / picture).stat().st_size > 20_000 for picture in pictures)


def test_the_readmes_cypher_is_the_shipped_query() -> None:
    shown = re.search(r"```cypher\n(.*?)```", README, re.S).group(1).strip()
    assert shown == cypher.query("related_pages", "related_pages_procedure")


def test_the_python_how_to_shows_the_readme_example_that_runs() -> None:
    """tests/integration/api/test_readme_api.py runs the README's example; the how-to's is the same
    program (its comments may say more)."""
    import ast

    def code(text: str, heading: str) -> str:
        return ast.dump(ast.parse(re.search(r"```python\n(.*?)```", text.split(heading, 1)[1], re.S).group(1)))

    how_to = (ROOT / "docs" / "how-to" / "python.md").read_text(encoding="utf-8")
    assert code(how_to, "# Python API") == code(README, "## Python API")


def test_the_cli_reference_names_every_command_and_option() -> None:
    pages = _pages()
    text = pages.cli_reference()
    seen = 0
    for name, parser in pages.commands(build_parser()):
        heading = f"## `linksim {name}`\n" if name else "## `linksim`\n"
        assert heading in text, name
        section = text.split(heading, 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            for flag in action.option_strings:
                assert f"`{flag}`" in section, (name, flag)
                seen += 1
    assert seen > 100  # every command's connection options among them


def test_the_configuration_reference_lists_every_variable_the_code_reads() -> None:
    read = set()
    for folder in CODE:
        for path in (ROOT / folder).rglob("*.py"):
            read |= set(re.findall(r"[\"']((?:LINKSIM|NEO4J)_[A-Z_]+)[\"']", path.read_text(encoding="utf-8")))
    listed = {variable for _, _, variable, _ in SETTINGS}
    assert read - SET_FOR_CHILDREN == listed
    text = _pages().configuration_reference()
    assert all(f"`{variable}`" in text for variable in listed)


def test_the_exit_code_reference_is_the_codes_table() -> None:
    text = _pages().exit_codes_reference()
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \| ([^|]+) \|$", text, re.M)
    assert [int(code) for code, _, _ in rows] == list(EXIT_CODES)
    assert all(meaning.strip() == EXIT_CODES[int(code)] and example.strip() for code, meaning, example in rows)


@pytest.mark.parametrize("folder", CODE)
def test_no_dates_or_run_figures_in_the_code(folder: str) -> None:
    for path in (ROOT / folder).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for pattern in (r"20\d\d-\d\d-\d\d", r"pages/s", r"s on 2 cores"):
            found = re.search(pattern, text)
            assert not found, f"{path.relative_to(ROOT)}: {text[max(0, found.start() - 60):found.end() + 20]!r}"


# What a measured run says: a date, a rate, a score, a timing or a size to the decimal (settings
# and limits are round: "60 s", "a 12 GiB budget").
RUN_FIGURES = (r"20\d\d-\d\d-\d\d", r"\d[\d,.]*k? ?\w+/s\b", r"P@10[ :=]*\d?\.\d", r"\b0\.\d{3}\b",
               r"\d+\.\d+ ?(s|min|minutes|hours?|GiB|GB|MiB|MB)(?!\w)", r"\d[\d,.]* ?ms\b")


@pytest.mark.parametrize("page", sorted(str(path.relative_to(ROOT / "docs"))
                                        for path in (ROOT / "docs").rglob("*.md")))
def test_the_hand_written_pages_show_no_run_figures(page: str) -> None:
    # The benchmark pages are rendered from benchmarks/results/; prose points to them.
    text = re.sub(r"```.*?```", "", (ROOT / "docs" / page).read_text(encoding="utf-8"), flags=re.S)
    found = [match.group(0) for pattern in RUN_FIGURES for match in re.finditer(pattern, text)]
    assert not found, f"docs/{page}: {found[:8]}"


def test_the_benchmark_pages_show_what_the_results_files_hold() -> None:
    import json

    pages = _pages()
    results = ROOT / "benchmarks" / "results"
    scale = json.loads((results / "scale.json").read_text(encoding="utf-8"))
    page = pages.scale_page()
    headings = re.findall(r"^## (\S+) links$", page, re.M)
    smallest_first = [size for size, _ in pages._by_size(dict.fromkeys(headings))]
    assert sorted(headings) == sorted(scale["sizes"]) and headings == smallest_first
    for size, stages in scale["sizes"].items():
        index = stages.get("index")
        if index:  # each stage's seconds and peak, as the benchmark wrote them
            assert f"| index | {index['seconds']:.1f} | {index['peakPss'] / 2**30:.2f} |" in page
    estimate = json.loads((results / "estimate.json").read_text(encoding="utf-8"))
    rows = [line for line in pages.estimate_page().splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) - 1 == sum(len(runs) for runs in estimate["runs"].values())
    recrawls = {(size, limit): json.loads((results / name).read_text(encoding="utf-8"))
                for size, limit, name in pages.recrawl_files()}
    page = pages.recrawl_page()
    rows = [line for line in page.splitlines() if line.startswith("| ") and "---" not in line
            and not line.startswith("| step ")]
    steps = sum("judged_mean" in step for result in recrawls.values() for row in result["stages"].values()
                for step in row.get("steps", []))
    assert recrawls and len(rows) - len(recrawls) == steps + sum(len(result["stages"]) for result in recrawls.values())
    assert all(f"## {size} links{f' (fold limit {limit})' if limit else ''}\n" in page and result["links"] == size
               for (size, limit), result in recrawls.items())
    warc = json.loads((results / "warc-read.json").read_text(encoding="utf-8"))["summary"]
    page = pages.reading_page()
    assert all(f" | {rate:,} | {warc['pages_per_second_best'][name]:,} |" in page
               for name, rate in warc["pages_per_second_median"].items())
    scripts = pages.scripts_page()
    missing = [path.name for path in (ROOT / "benchmarks").glob("[a-z]*.py") if f"| `{path.name}` |" not in scripts]
    assert not missing, f"benchmarks/README.md names no {missing}"
