"""linksim: link-based similarity search over web crawls.

The ``linksim`` package itself is the pure compute core (numpy/scipy only; it never imports the
Neo4j driver). Its sub-packages ``linksim.loader``, ``linksim.procedures``, ``linksim.server`` and
``linksim.cli`` connect it to Neo4j.
"""

from linksim.errors import LinksimError

__version__ = "0.1.0"

__all__ = ["LinksimError", "__version__"]
