"""linksim: link-based similarity search over web crawls.

``linksim.connect()`` opens the Python API (:mod:`linksim.procedures.api`): load a crawl, compute
PageRank and similarity indexes in Neo4j, ask for related pages. It is imported when called, so
``import linksim`` and the compute core stay pure: the ``linksim`` package itself holds the numpy /
scipy core and never imports the Neo4j driver; its sub-packages ``linksim.loader``,
``linksim.procedures``, ``linksim.server`` and ``linksim.cli`` connect it to Neo4j, and
``linksim.analysis`` holds the report and the text evaluation.
"""

from pathlib import Path as _Path


def _checkout_subpackages() -> None:
    """Python started at the repository's root imports this folder as ``linksim``: find the
    sub-packages that live beside it (``procedures/``, ``loader/``, ...) there too, as the install's
    ``package-dir`` does. An installed linksim sits in site-packages, where this adds nothing."""
    root = _Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and (root / "procedures" / "__init__.py").is_file():
        __path__.append(str(root))  # noqa: F821 - a package's own __path__


_checkout_subpackages()

from linksim.errors import ConfigurationError, LinksimError  # noqa: E402
from linksim.methods import DEFAULT_METHOD, METHODS  # noqa: E402
from linksim._version import __version__  # noqa: E402


def connect(*args, **kwargs):
    """Connect to Neo4j and return the API object, imported on the first call.

    Parameters
    ----------
    *args, **kwargs
        Those of :func:`linksim.procedures.api.connect`: the server (``uri``, ``user``,
        ``password_file``, ``database``; default: the environment, then the local server),
        ``index_dir`` and ``show_progress``.

    Returns
    -------
    linksim.procedures.api.Linksim
        The connection; close it, or use it in a ``with`` block.
    """
    from linksim.procedures.api import connect as _connect

    return _connect(*args, **kwargs)


__all__ = ["ConfigurationError", "DEFAULT_METHOD", "LinksimError", "METHODS", "__version__", "connect"]
