"""cli/pagerank_cmd.py: a bad value refused while parsing."""

from __future__ import annotations

import pytest

# Each of these was a numpy traceback, a silent default or a wrong answer (issue 13, findings 4, 7).
BAD_OPTIONS = [
    (["pagerank", "--damping", "1"], "--damping: must be a number in (0, 1), got '1'"),
    (["pagerank", "--tol", "0"], "--tol: must be a number in (0, 1], got '0'"),
    (["pagerank", "--max-iter", "0"], "--max-iter: must be an integer in 1..1,000,000"),
    (["pagerank", "--max-iter", "ten"], "--max-iter: must be an integer in 1..1,000,000, got 'ten'"),
]


@pytest.mark.parametrize("argv, message", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_a_bad_value_is_refused_while_parsing(refused, argv, message) -> None:
    code, err = refused(argv)
    assert code == 2
    assert message in err and "Traceback" not in err
