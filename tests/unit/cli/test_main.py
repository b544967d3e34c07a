"""cli/main.py: the driver's own log lines never reach a user (-vv shows them)."""

from __future__ import annotations

import logging

from linksim.cli.main import _configure_logging


def test_the_drivers_log_lines_stay_out_of_user_output(capsys) -> None:
    _configure_logging(verbose=0, quiet=False)
    logging.getLogger("neo4j.io").warning("[#0000]  _: <CONNECTION> error: defunct connection")
    assert capsys.readouterr().err == ""
    _configure_logging(verbose=2, quiet=False)
    logging.getLogger("neo4j.io").warning("defunct connection")
    assert "defunct connection" in capsys.readouterr().err
    _configure_logging(verbose=0, quiet=False)
