"""Exceptions that a user can cause and that the command line reports as one clear message."""


class LinksimError(Exception):
    """An error with a message meant for the user: what went wrong, with which input, what to do.

    The command line prints the message without a traceback and exits with ``exit_code``.

    Parameters
    ----------
    message : str
        The message: what went wrong, with which input, and what to do about it.
    """

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)


class ConfigurationError(LinksimError):
    """A setting, option or file given by the user is invalid (exit code 2: nothing was started).

    Parameters
    ----------
    message : str
        The message: which setting, what it holds, and what it should hold.
    """

    exit_code = 2
