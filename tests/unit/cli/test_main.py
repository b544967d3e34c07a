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


def _commands(parser, prefix=()):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                yield prefix + (name,), command
                yield from _commands(command, prefix + (name,))


def test_global_options_are_taken_before_and_after_every_command() -> None:
    from linksim.cli.main import build_parser

    parser = build_parser()
    leaves = [path for path, command in _commands(parser)
              if not any(type(a).__name__ == "_SubParsersAction" for a in command._actions)]
    assert len(leaves) > 15
    tested = 0
    for path in leaves:
        command = dict(_commands(parser))[path]
        positionals = ["x"] * sum(1 for a in command._actions if not a.option_strings and a.required
                                  and a.nargs not in ("?", "*"))
        for argv, verbose, quiet in ((["-q", *path, *positionals], 0, True), ([*path, *positionals, "-q"], 0, True),
                                     ([*path, *positionals], 0, False), (["-v", *path, *positionals], 1, False),
                                     ([*path, *positionals, "-vv"], 2, False)):
            try:
                args = parser.parse_args(argv)
            except SystemExit:  # positionals with choices: the command's own words, not tested here
                break
            assert (args.verbose, args.quiet) == (verbose, quiet), argv
        else:
            tested += 1
    assert tested > len(leaves) // 2, tested
