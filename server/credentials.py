"""Password files: generated, written owner-only (0600), refused when others can read them."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from linksim.errors import ConfigurationError


def generate_password() -> str:
    """A random password for a new local server (URL-safe, about 190 bits)."""
    return secrets.token_urlsafe(24)


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
        If the file is missing, empty, or has permissions wider than owner-only.
    """
    path = Path(path).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ConfigurationError(f"password file {path} does not exist") from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigurationError(
            f"password file {path} is readable by others (mode {stat.S_IMODE(info.st_mode):o}); "
            f"run: chmod 600 {path}"
        )
    password = path.read_text(encoding="utf-8").strip()
    if not password:
        raise ConfigurationError(f"password file {path} is empty")
    return password
