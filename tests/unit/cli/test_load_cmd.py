"""cli/load_cmd.py: a bad value refused while parsing; the help states the code's bulk threshold."""

from __future__ import annotations

import pytest

from linksim.cli.main import main

# Each of these was a numpy traceback, a silent default or a wrong answer (issue 13, findings 4, 7).
BAD_OPTIONS = [
    (["load", "x.tsv", "--batch-size", "0"], "--batch-size: must be an integer in 1..1,000,000"),
]


@pytest.mark.parametrize("argv, message", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_a_bad_value_is_refused_while_parsing(refused, argv, message) -> None:
    code, err = refused(argv)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_load_help_states_the_bulk_threshold_of_the_code(capsys) -> None:
    from linksim.loader.load import BULK_MIN_LINKS

    with pytest.raises(SystemExit):
        main(["load", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f">= {BULK_MIN_LINKS:,} links" in help_text and "1M" not in help_text
