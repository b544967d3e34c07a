"""Get a real Neo4j server, in the project's order of precedence.

1. ``NEO4J_URI`` set (with ``NEO4J_USER`` / ``NEO4J_PASSWORD``): use that server, start nothing;
2. a reachable Docker engine: testcontainers runs the official ``neo4j:5.26-community`` image;
3. otherwise the local server assembled from Maven Central jars (:mod:`linksim.server.local`).

Used by the test fixtures and by commands that need a server whatever the machine offers.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Callable

from linksim.errors import ConfigurationError
from linksim.server.connection import Connection
from linksim.server.credentials import generate_password
from linksim.server.local import LocalServer
from linksim.server.settings import DEFAULT_DATABASE, DEFAULT_USER, ServerSettings

log = logging.getLogger(__name__)

DOCKER_IMAGE = "neo4j:5.26-community"
_docker_logged = False


def docker_available() -> bool:
    """True if a Docker engine answers a ping. Says why not, once, at debug level."""
    global _docker_logged
    reason = None
    try:
        import docker  # comes with the optional testcontainers dependency
    except ImportError:
        reason = "the docker/testcontainers packages are not installed"
    else:
        try:
            client = docker.from_env(timeout=3)
            try:
                client.ping()
            finally:
                client.close()
        except Exception as exc:  # noqa: BLE001 - any failure means "no engine"
            reason = f"no Docker engine reachable ({type(exc).__name__})"
    if reason is None:
        return True
    if not _docker_logged:
        log.debug("%s; not trying testcontainers, using the local Neo4j server", reason)
        _docker_logged = True
    return False


@dataclass
class Provisioned:
    """A server ready for use; ``close()`` releases what provisioning started."""

    connection: Connection
    kind: str  # "external", "docker" or "local"
    http_url: str | None
    local: LocalServer | None = None
    _cleanup: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        while self._cleanup:
            self._cleanup.pop()()

    def __enter__(self) -> "Provisioned":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def provision(
    settings: ServerSettings | None = None,
    env: dict[str, str] | None = None,
    stop_local_on_close: bool = False,
) -> Provisioned:
    """Provision a Neo4j server by the precedence above.

    Parameters
    ----------
    settings : ServerSettings, optional
        Settings of the local instance, used only when neither NEO4J_URI nor Docker is there.
    env : dict, optional
        Environment to read (default ``os.environ``).
    stop_local_on_close : bool
        Stop the local server on ``close()`` if this call started it.
    """
    env = os.environ if env is None else env
    database = env.get("NEO4J_DATABASE") or DEFAULT_DATABASE
    if env.get("NEO4J_URI"):
        password = env.get("NEO4J_PASSWORD")
        if not password:
            raise ConfigurationError("NEO4J_URI is set but NEO4J_PASSWORD is not")
        conn = Connection(
            env["NEO4J_URI"], env.get("NEO4J_USER") or DEFAULT_USER, password, database, "environment"
        )
        log.info("using the Neo4j server at %s (NEO4J_URI); starting nothing", conn.uri)
        return Provisioned(conn, "external", env.get("NEO4J_HTTP_URL"))

    if docker_available():
        from testcontainers.neo4j import Neo4jContainer

        password = generate_password()
        container = Neo4jContainer(DOCKER_IMAGE, password=password)
        container.start()
        host = container.get_container_host_ip()
        http_url = f"http://{host}:{container.get_exposed_port(7474)}"
        conn = Connection(
            container.get_connection_url(), DEFAULT_USER, password, database, "docker"
        )
        log.info("started %s with testcontainers at %s", DOCKER_IMAGE, conn.uri)
        return Provisioned(conn, "docker", http_url, _cleanup=[container.stop])

    settings = settings or ServerSettings.from_env(env)
    server = LocalServer(settings)
    status, started = server.start()
    conn = Connection(status.uri, DEFAULT_USER, server.password(), database, "local")
    cleanup = [server.stop] if (started and stop_local_on_close) else []
    return Provisioned(conn, "local", status.http_url, local=server, _cleanup=cleanup)
