"""cli/similarity_cmd.py: `index`, `similar`, `related`, `sim`, `explain` refuse a bad value while parsing."""

from __future__ import annotations

import pytest

# Each of these was a numpy traceback, a silent default or a wrong answer (issue 13, findings 4, 7).
BAD_OPTIONS = [
    (["related", "http://e.org/", "--method", "psimrank", "--fingerprints", "0"], "--fingerprints: must be an integer in 1..100,000, got '0'"),
    (["related", "http://e.org/", "--top-k", "0"], "--top-k: must be an integer in 1..100,000, got '0'"),
    (["related", "http://e.org/", "--top-k", "-1"], "--top-k: must be an integer in 1..100,000, got '-1'"),
    (["sim", "http://e.org/a", "http://e.org/b", "--fingerprints", "-3"], "--fingerprints: must be an integer in 1..100,000, got '-3'"),
    (["similar", "simrank", "--fingerprints", "0"], "--fingerprints: must be an integer in 1..100,000"),
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
    (["related", "http://e.org/a", "http://e.org/b", "--pool", "0"], "--pool: must be an integer in 1..100,000, got '0'"),
    (["explain", "http://e.org/a", "http://e.org/b", "--fingerprints", "0"], "--fingerprints: must be an integer in 1..100,000"),
]


@pytest.mark.parametrize("argv, message", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_a_bad_value_is_refused_while_parsing(refused, argv, message) -> None:
    code, err = refused(argv)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_index_and_similar_take_the_default_method_as_related_does() -> None:
    """`linksim similar` with no METHOD writes the default method's lists (the method `related`
    reads by default); a METHOD given is still checked against the registry."""
    from linksim.cli.main import build_parser
    from linksim.methods import DEFAULT_METHOD

    parser = build_parser()
    for command in ("index", "similar"):
        assert parser.parse_args([command]).method == DEFAULT_METHOD
        assert parser.parse_args([command, "simrank"]).method == "simrank"
        assert parser.parse_args([command, "--top-k", "5"] if command == "similar" else [command]).method == DEFAULT_METHOD
        with pytest.raises(SystemExit):
            parser.parse_args([command, "nosuchmethod"])
    assert parser.parse_args(["related", "http://e.org/"]).method == DEFAULT_METHOD
