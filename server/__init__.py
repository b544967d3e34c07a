"""Neo4j servers for linksim: the local server from Maven Central jars, connections, provisioning."""

from linksim.server.connection import Connection, resolve_connection
from linksim.server.errors import ServerError
from linksim.server.local import LocalServer, ServerStatus
from linksim.server.provision import Provisioned, docker_available, provision
from linksim.server.settings import ServerSettings, linksim_home

__all__ = [
    "Connection",
    "LocalServer",
    "Provisioned",
    "ServerError",
    "ServerSettings",
    "ServerStatus",
    "docker_available",
    "linksim_home",
    "provision",
    "resolve_connection",
]
