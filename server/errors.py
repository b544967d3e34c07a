"""The local server's errors."""

from __future__ import annotations

from pathlib import Path

from linksim.errors import LinksimError


class ServerError(LinksimError):
    """The local server could not be provisioned, started or stopped."""


def log_tail(path: Path, lines: int = 15) -> str:
    """The last ``lines`` of a log, for an error that points at it ("" when it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])
