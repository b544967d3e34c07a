"""Password files: generated, written owner-only (0600), refused when others can read them."""

from __future__ import annotations

import base64
import os
import secrets
import stat
from pathlib import Path
from typing import Callable

from linksim.errors import ConfigurationError


def generate_password(random_bytes: Callable[[int], bytes] = secrets.token_bytes) -> str:
    """A random password for a new local server: 24 random bytes in URL-safe base64 (192 bits).

    One in 64 begins with ``-``: every tool it is handed to must take it as a value, not an option
    (the admin tool gets it after ``--``). ``random_bytes`` is for tests that need a given password.
    """
    return base64.urlsafe_b64encode(random_bytes(24)).decode("ascii").rstrip("=")


def write_password_file(path: Path, password: str) -> None:
    """Write ``password`` to ``path`` with mode 0600, never readable by others even briefly."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (password + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def read_password_file(path: Path) -> str:
    """Read a password file, refusing one that the group or others may read or write.

    Raises
    ------
    ConfigurationError
        If the file is missing, a folder, unreadable, not UTF-8 text, empty, or has permissions
        wider than owner-only.
    """
    path = Path(path).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ConfigurationError(f"password file {path} does not exist") from None
    except OSError as error:
        raise ConfigurationError(f"password file {path} cannot be read ({error.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigurationError(f"password file {path} is a folder: give the file that holds the password")
    if not stat.S_ISREG(info.st_mode):
        raise ConfigurationError(f"password file {path} is not a regular file")
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigurationError(
            f"password file {path} is readable by others (mode {stat.S_IMODE(info.st_mode):o}); "
            f"run: chmod 600 {path}"
        )
    try:
        password = path.read_bytes().decode("utf-8").strip()
    except UnicodeDecodeError as error:
        raise ConfigurationError(
            f"password file {path} is not a text file (invalid UTF-8 at byte {error.start}): it should "
            "hold the password on its first line"
        ) from None
    except OSError as error:
        raise ConfigurationError(f"password file {path} cannot be read ({error.strerror})") from None
    if "\x00" in password or len(password.splitlines()) > 1:
        raise ConfigurationError(f"password file {path} holds binary data or several lines: it should "
                                 "hold the password alone on one line")
    if not password:
        raise ConfigurationError(f"password file {path} is empty")
    return password
