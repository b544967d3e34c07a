"""The linksim home: the one folder of linksim's own files (Neo4j's jars and instances, indexes,
logs, Spark's Ivy cache), which every layer may ask for."""

from __future__ import annotations

import os
from pathlib import Path

from linksim.errors import ConfigurationError


def linksim_home(env: dict[str, str] | None = None) -> Path:
    """Return the linksim home directory: ``$LINKSIM_HOME``, else the platform's user cache
    directory (platformdirs: ``$XDG_CACHE_HOME/linksim`` or ``~/.cache/linksim`` on Linux,
    ``~/Library/Caches/linksim`` on macOS, ``%LOCALAPPDATA%\\linksim\\Cache`` on Windows)."""
    import platformdirs

    env = os.environ if env is None else env
    if env.get("LINKSIM_HOME"):
        return Path(env["LINKSIM_HOME"]).expanduser().resolve()
    return Path(platformdirs.user_cache_dir("linksim", appauthor=False)).resolve()


def home_folder(path: Path, what: str = "the linksim home") -> Path:
    """``path`` (a folder under the linksim home) made and checked writable; a home that cannot
    hold it is one message naming it and LINKSIM_HOME, never an OSError traceback."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as error:
        raise ConfigurationError(
            f"{what} {path} cannot be written ({error.strerror or error}): set LINKSIM_HOME to a folder "
            "you can write"
        ) from None
    return path
