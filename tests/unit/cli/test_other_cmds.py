"""The commands without a test module of their own until now (demo, evaluate, report, browser,
neo4j, spark): a bad value refused while parsing, before anything connects or starts."""

from __future__ import annotations

import pytest

BAD_OPTIONS = [
    (["demo", "--top-k", "0"], "--top-k: must be an integer in 1..100,000"),
    (["evaluate", "--top", "0"], "--top: must be an integer in 1..100,000"),
    (["spark", "pagerank", "--damping", "1"], "--damping: must be a number in (0, 1)"),
    (["spark", "index", "simrank", "--fingerprints", "0"], "--fingerprints: must be an integer in 1..100,000"),
    (["spark", "similar", "psimrank", "--top-k", "0"], "--top-k: must be an integer in 1..100,000"),
    (["spark", "similar", "pagesim"], "invalid choice: 'pagesim'"),  # no Spark path: not offered
    (["pagerank", "--memory-budget", "lots"], "a memory budget is a size such as 8G"),
]


@pytest.mark.parametrize("argv, message", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_a_bad_value_is_refused_while_parsing(refused, argv, message) -> None:
    code, err = refused(argv)
    assert code == 2 and message in err and "Traceback" not in err


def test_settings_errors_come_before_any_start(tmp_path, monkeypatch, capsys) -> None:
    from linksim.cli.main import main

    monkeypatch.setenv("LINKSIM_HOME", str(tmp_path))
    assert main(["neo4j", "start", "--heap", "lots"]) == 2  # never a server, never a download
    assert "the heap size must be a size such as 512m or 4g" in capsys.readouterr().err
    assert not (tmp_path / "instances").exists()


def test_report_and_evaluate_read_their_files_before_connecting(tmp_path, monkeypatch, capsys) -> None:
    from linksim.cli.main import main

    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:9")  # nothing there: a connection would fail with 3
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    for command in ("report", "evaluate"):
        assert main([command, "--categories", str(tmp_path / "missing.tsv")]) == 4
        assert "missing.tsv" in capsys.readouterr().err


def test_evaluate_help_names_every_anchor(capsys) -> None:
    from linksim.cli.main import main
    from linksim.evaluation.anchors import ANCHORS

    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # argparse wraps at hyphens
    assert all(name in text for name in ANCHORS)
