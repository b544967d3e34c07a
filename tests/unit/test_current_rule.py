"""The rule of the current SIMILAR_TO lists has one source (linksim.procedures.runs): every
query of the code is built from it, and each shipped Cypher file that reads current lists
spells it exactly so (Browser users paste those files as they are)."""

import re
from importlib import resources
from pathlib import Path

from linksim.procedures.runs import RUNS_OF_CURRENT, is_current

ROOT = Path(__file__).resolve().parents[2]
# What only the rule may say: an `until` read, or the runs of a current node.
RULE_PARTS = re.compile(r"coalesce\(\w+\.until|coalesce\(\w+\.runs\b")


def shipped_cypher() -> dict[str, str]:
    files = {}

    def walk(folder, prefix=""):
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".cypher"):
                files[prefix + entry.name] = entry.read_text(encoding="utf-8")

    walk(resources.files("linksim.cypher"))
    return files


def test_the_shipped_queries_spell_the_rule_as_its_source_does() -> None:
    files = shipped_cypher()
    code = {name: "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
            for name, text in files.items()}
    readers = {name: text for name, text in code.items() if "SIMILAR_TO" in text and "LinksimCurrent" in text}
    assert {"related_pages.cypher", "browser/favorites.cypher"} <= set(readers)
    for name, text in readers.items():
        for line in text.splitlines():
            if RULE_PARTS.search(line):
                assert RUNS_OF_CURRENT + " AS runs" in line or is_current() in line, (name, line)
        assert text.count(is_current()) == text.count(RUNS_OF_CURRENT + " AS runs") > 0, name


def test_no_python_module_spells_the_rule_but_its_source() -> None:
    spelled = []
    for folder in ("procedures", "linksim", "cli", "loader", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name in ("runs.py", "test_current_rule.py") and path.parent.name in ("procedures", "unit"):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if RULE_PARTS.search(line) and not line.lstrip().startswith("#"):
                    spelled.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert spelled == []


def test_the_predicate_leaves_out_replaced_relationships() -> None:
    assert is_current() == "s.run IN runs AND NOT coalesce(s.until, 0) IN runs"
    assert is_current("$runs", "r") == "r.run IN $runs AND NOT coalesce(r.until, 0) IN $runs"
