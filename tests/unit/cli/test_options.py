"""The command line refuses a bad value while parsing, before it connects or reads a graph; the
driver's own log lines never reach a user."""

from __future__ import annotations

import logging

import pytest

from linksim.cli.main import _configure_logging, main

# Each of these was a numpy traceback, a silent default or a wrong answer (issue 13, findings 4, 7).
BAD_OPTIONS = [
    (["related", "http://e.org/", "--method", "psimrank", "--fingerprints", "0"], "--fingerprints: must be an integer in 1..100,000, got '0'"),
    (["sim", "http://e.org/a", "http://e.org/b", "--fingerprints", "-3"], "--fingerprints: must be an integer in 1..100,000, got '-3'"),
    (["similar", "simrank", "--fingerprints", "0"], "--fingerprints: must be an integer in 1..100,000"),
    (["related", "http://e.org/", "--top-k", "0"], "--top-k: must be an integer in 1..100,000, got '0'"),
    (["related", "http://e.org/", "--top-k", "-1"], "--top-k: must be an integer in 1..100,000, got '-1'"),
    (["similar", "simrank", "--top-k", "0"], "--top-k: must be an integer in 1..100,000"),
    (["similar", "simrank", "--length", "0"], "--length: must be an integer in 1..127"),
    (["similar", "simrank", "--length", "200"], "--length: must be an integer in 1..127"),
    (["similar", "psimrank", "--decay", "1.5"], "--decay: must be a number in (0, 1), got '1.5'"),
    (["similar", "psimrank", "--decay", "nan"], "--decay: must be a number in (0, 1), got 'nan'"),
    (["similar", "pagesim", "--radius", "0"], "--radius: must be an integer in 1..20"),
    (["similar", "xjaccard", "--similarity-cutoff", "-0.1"], "--similarity-cutoff: must be a number in [0, 1)"),
    (["similar", "xjaccard", "--batch-size", "0"], "--batch-size: must be an integer in 1..1,000,000"),
    (["similar", "simrank", "--seed", "-1"], "--seed: must be an integer in 0..9,223,372,036,854,775,807"),
    (["similar", "simrank", "--wait", "-5"], "--wait: must be a number in [0, 604800]"),
    (["pagerank", "--damping", "1"], "--damping: must be a number in (0, 1), got '1'"),
    (["pagerank", "--tol", "0"], "--tol: must be a number in (0, 1], got '0'"),
    (["pagerank", "--max-iter", "0"], "--max-iter: must be an integer in 1..1,000,000"),
    (["pagerank", "--max-iter", "ten"], "--max-iter: must be an integer in 1..1,000,000, got 'ten'"),
    (["load", "x.tsv", "--batch-size", "0"], "--batch-size: must be an integer in 1..1,000,000"),
]


@pytest.mark.parametrize("argv, message", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_a_bad_value_is_refused_while_parsing(argv, message, capsys, monkeypatch) -> None:
    # No server anywhere: a value that got past parsing would fail on the connection instead.
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:9")
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert message in err and "Traceback" not in err


def test_the_drivers_log_lines_stay_out_of_user_output(capsys) -> None:
    _configure_logging(verbose=0, quiet=False)
    logging.getLogger("neo4j.io").warning("[#0000]  _: <CONNECTION> error: defunct connection")
    assert capsys.readouterr().err == ""
    _configure_logging(verbose=2, quiet=False)
    logging.getLogger("neo4j.io").warning("defunct connection")
    assert "defunct connection" in capsys.readouterr().err
    _configure_logging(verbose=0, quiet=False)


def test_load_help_states_the_bulk_threshold_of_the_code(capsys) -> None:
    from linksim.loader.load import BULK_MIN_LINKS

    with pytest.raises(SystemExit):
        main(["load", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f">= {BULK_MIN_LINKS:,} links" in help_text and "1M" not in help_text
