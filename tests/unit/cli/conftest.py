"""The command line's unit tests: a command run with no server anywhere, so that a value that got
past parsing fails on the connection instead."""

from __future__ import annotations

import pytest

from linksim.cli.main import main


@pytest.fixture
def refused(capsys, monkeypatch):
    """``refused(argv)``: the exit code and standard error of a command line refused while parsing."""
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:9")
    monkeypatch.setenv("NEO4J_PASSWORD", "x")

    def run(argv: list[str]) -> tuple[int, str]:
        with pytest.raises(SystemExit) as info:
            main(argv)
        return info.value.code, capsys.readouterr().err

    return run
