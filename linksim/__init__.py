"""linksim: link-based similarity search over web crawls.

``linksim.connect()`` opens the Python API (:mod:`linksim.procedures.api`): load a crawl, compute
PageRank and similarity indexes in Neo4j, ask for related pages. It is imported when called, so
``import linksim`` and the compute core stay pure: the ``linksim`` package itself holds the numpy /
scipy core and never imports the Neo4j driver; its sub-packages ``linksim.loader``,
``linksim.procedures``, ``linksim.server`` and ``linksim.cli`` connect it to Neo4j, and
``linksim.analysis`` holds the report and the text evaluation.
"""

from linksim.errors import ConfigurationError, LinksimError
from linksim.methods import DEFAULT_METHOD, METHODS

__version__ = "0.1.0"


def connect(*args, **kwargs):
    """Connect to Neo4j and return the API object (see :func:`linksim.procedures.api.connect`)."""
    from linksim.procedures.api import connect as _connect

    return _connect(*args, **kwargs)


__all__ = ["ConfigurationError", "DEFAULT_METHOD", "LinksimError", "METHODS", "__version__", "connect"]
