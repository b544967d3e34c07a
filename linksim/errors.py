"""Exceptions that a user can cause and that the command line reports as one clear message."""


class LinksimError(Exception):
    """An error with a message meant for the user: what went wrong, with which input, what to do.

    The command line prints the message without a traceback and exits with ``exit_code``.
    """

    exit_code = 1


class ConfigurationError(LinksimError):
    """A setting, option or file given by the user is invalid."""

    exit_code = 2
