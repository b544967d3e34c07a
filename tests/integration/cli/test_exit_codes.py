"""Every command, run into each exit code it can give, against the real server: the codes are the
docs' one table (rendered from the code's, each with an example), with one message and no traceback."""

from __future__ import annotations

import gzip
import importlib.util
import re
from pathlib import Path

import pytest

from linksim.cli.main import build_parser, main
from linksim.procedures.load import load

ROOT = Path(__file__).resolve().parents[3]
CORNELL = ROOT.parent / "shared" / "data" / "webkb" / "cornell.cites"


def documented_codes() -> dict[int, str]:
    """The codes of the docs' exit-code reference, as the site renders it from the code."""
    spec = importlib.util.spec_from_file_location("reference_pages", ROOT / "docs" / "reference_pages.py")
    pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pages)
    text = pages.exit_codes_reference()
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^\| (\d+) \| ([^|]+) \| [^|]+ \|", text, re.M)}


def commands() -> set[str]:
    """Every command and sub-command of the parser, e.g. ``neo4j status``, ``spark index``."""
    names = set()

    def walk(parser, prefix):
        for action in parser._actions:
            if action.__class__.__name__ == "_SubParsersAction":
                for name, sub in action.choices.items():
                    walk(sub, prefix + [name])
                return
        names.add(" ".join(prefix))

    walk(build_parser(), [])
    return names


def run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit_:  # argparse's own refusals
        return int(exit_.code)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    empty_gz = tmp_path / "empty.tsv.gz"
    with gzip.open(empty_gz, "wb"):
        pass
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"http://e.org/1\thttp://e.org/2\nlonely\n")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    return {"empty_gz": empty_gz, "bad": bad, "folder": folder, "missing": tmp_path / "missing.tsv",
            "out": tmp_path / "crawl.tsv.gz"}


# (argv with {placeholders}, code): each command at least once, each code it can give.
CASES = [
    (["load", "{missing}"], 4),
    (["load", "{empty_gz}"], 4),
    (["load", "{bad}"], 4),
    (["load", "{bad}", "--mode", "bulk"], 4),  # the file is read (and refused) before the mode is judged
    (["load", "{cornell}", "--mode", "bulk"], 2),  # the database has data
    (["generate", "{out}", "--links", "0"], 2),
    (["pagerank", "--memory-budget", "lots"], 2),
    (["pagerank", "--memory-budget", "1K"], 8),
    (["pagerank", "--mode", "stats"], 0),
    (["pagerank", "--uri", "bolt://127.0.0.1:9"], 3),
    (["index", "simrank", "--memory-budget", "1K"], 8),
    (["index", "simrank", "--verify"], 6),
    (["similar", "psimrank", "--top-k", "0"], 2),
    (["similar", "psimrank", "--memory-budget", "inf"], 2),
    (["related", ""], 2),
    (["related", "http://not-in-the.graph/", "--method", "psimrank"], 2),
    (["related", "{page}", "--method", "psimrank"], 0),
    (["related", "{page}", "--method", "simrank"], 6),
    (["sim", "{page}", "{page}", "--method", "simrank"], 6),
    (["explain", "{page}", "{page}", "--method", "psimrank"], 2),  # a page with itself
    (["explain", "{page}", "http://not-in-the.graph/", "--method", "simrank"], 6),
    (["hosts", "--batch-size", "0"], 2),
    (["hosts"], 0),
    (["evaluate", "--categories", "{missing}"], 4),
    (["report", "--quick", "--categories", "{missing}"], 4),
    (["browser", "--password-file", "{folder}"], 2),
    (["demo", "--top-k", "0"], 2),
    (["neo4j", "status", "--json"], 3),  # LINKSIM_INSTANCE names an instance that never ran
    (["neo4j", "start", "--heap", "lots"], 2),
    (["neo4j", "stop"], 0),
    (["neo4j", "logs"], 1),  # no log yet: the instance never ran
    (["neo4j", "init", "--uri", "bolt://127.0.0.1:9"], 3),
    (["neo4j", "plugin", "--out", "{bad}"], 2),  # a file, not a folder
    (["spark", "pagerank", "--damping", "1"], 2),
    (["spark", "index", "simrank", "--fingerprints", "0"], 2),
    (["spark", "similar", "psimrank", "--top-k", "0"], 2),
    (["spark", "extract", "{bad}", "--out", "{folder}"], 2),  # an edge list: loaded, not extracted
    (["spark", "extract", "{missing}", "--out", "{folder}"], 4),
]


def test_every_documented_code_has_an_example_and_every_command_is_checked() -> None:
    from linksim.cli.options import EXIT_CODES

    codes = documented_codes()
    assert set(codes) == set(EXIT_CODES) == {0, 1, 2, 3, 4, 5, 6, 7, 8, 130}
    assert all(codes[code].strip().startswith(meaning) for code, meaning in EXIT_CODES.items())  # what --help says
    assert {code for _, code in CASES} <= set(codes)
    names = commands()
    covered = {next(" ".join(argv[:n]) for n in range(len(argv), 0, -1) if " ".join(argv[:n]) in names)
               for argv, _ in CASES}
    assert covered == names, names - covered


PAGES_AND_LINKS = ("MATCH (p:Page) OPTIONAL MATCH (p)-[l:LINKS_TO]->() "
                   "RETURN count(DISTINCT p) AS pages, count(l) AS links")


@pytest.fixture(scope="module")
def cornell(empty_database, server_env, tmp_path_factory) -> dict:
    """Cornell's crawl in an empty database and its PSimRank index (none of SimRank), made once for
    every case (after each, the test checks that its pages and links are still the load's)."""
    runner = empty_database()
    load([CORNELL], runner, show_progress=False)
    indexes = tmp_path_factory.mktemp("indexes")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {**server_env, "LINKSIM_INDEX_DIR": str(indexes)}.items():
            patch.setenv(name, value)
        assert main(["-q", "index", "psimrank", "--fingerprints", "10"]) == 0
    return {"page": runner.run("MATCH (p:Page) RETURN p.url AS url ORDER BY url LIMIT 1")[0]["url"],
            "indexes": indexes, "counts": runner.run(PAGES_AND_LINKS)[0]}


@pytest.mark.parametrize("argv, code", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_each_command_exits_with_the_documented_code(cornell, session_runner, cli_env, files, tmp_path, monkeypatch,
                                                     capsys, argv, code) -> None:
    page = cornell["page"]
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(cornell["indexes"]))
    monkeypatch.setenv("LINKSIM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LINKSIM_INSTANCE", "never-started")
    values = {**{k: str(v) for k, v in files.items()}, "cornell": str(CORNELL), "page": page}
    capsys.readouterr()
    assert run([word.format(**values) for word in argv]) == code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if code:
        assert err.strip() or (argv[:2] == ["neo4j", "status"] and '"running": false' in out), "a failure says why"
    assert session_runner.run(PAGES_AND_LINKS)[0] == cornell["counts"]  # a refused command wrote nothing


def test_a_page_without_a_title_or_pagerank_prints_blanks(cornell, cli_env, tmp_path, monkeypatch, capsys) -> None:
    """Cornell's pages have no titles and no PageRank was run: the table leaves those cells blank
    (not NaN or None) and the JSON gives null."""
    import json

    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(cornell["indexes"]))
    monkeypatch.setenv("LINKSIM_HOME", str(tmp_path / "home"))
    capsys.readouterr()
    assert run(["related", cornell["page"], "--method", "psimrank"]) == 0
    table = capsys.readouterr().out
    assert "rank" in table and "pagerank" in table and "NaN" not in table and "None" not in table
    assert run(["related", cornell["page"], "--method", "psimrank", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert records and all(r["pagerank"] is None and r["title"] is None for r in records)
