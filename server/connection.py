"""Which Neo4j server a linksim command talks to, and with which credentials.

Precedence, the same for every command:

1. command-line options ``--uri``, ``--user``, ``--password-file``, ``--database``;
2. environment variables ``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD`` (or
   ``NEO4J_PASSWORD_FILE``), ``NEO4J_DATABASE``;
3. the local server that ``linksim neo4j start`` runs, with its generated password file (a
   password from 1. or 2. is used for it when given: after a ``ALTER USER``, say).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from linksim.errors import ConfigurationError, LinksimError
from linksim.server.credentials import read_password_file
from linksim.server.settings import DEFAULT_DATABASE, DEFAULT_USER, ServerSettings


@dataclass(frozen=True)
class Connection:
    """Where and how to connect. ``source`` says which rule of the precedence chose the URI."""

    uri: str
    user: str
    password: str
    database: str
    source: str

    def __repr__(self) -> str:  # never print the password
        return (
            f"Connection(uri={self.uri!r}, user={self.user!r}, database={self.database!r}, "
            f"source={self.source!r})"
        )

    def driver(self):
        """A Neo4j driver for this connection (the caller closes it)."""
        from neo4j import GraphDatabase

        # linksim's queries are its own and fixed; the server's notices about them (id() in the
        # streaming queries is deprecated; SIMILAR_TO does not exist before the first `similar`)
        # are for linksim's developers, not for its users.
        return GraphDatabase.driver(
            self.uri,
            auth=(self.user, self.password),
            notifications_disabled_classifications=["DEPRECATION", "UNRECOGNIZED"],
            max_transaction_retry_time=retry_seconds(),
        )


def retry_seconds(env: dict[str, str] | None = None) -> float:
    """How long a write is retried on transient errors (a server restarting, a deadlock) before
    the command gives up: ``LINKSIM_RETRY_SECONDS``, default 30 (the driver's)."""
    env = os.environ if env is None else env
    text = env.get("LINKSIM_RETRY_SECONDS", "30")
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 3600:
        raise ConfigurationError(f"LINKSIM_RETRY_SECONDS must be a number of seconds in 0..3600, got {text!r}")
    return value


def resolve_connection(
    uri: str | None = None,
    user: str | None = None,
    password_file: str | Path | None = None,
    database: str | None = None,
    env: dict[str, str] | None = None,
    settings: ServerSettings | None = None,
) -> Connection:
    """Resolve the connection from options, then the environment, then the local server."""
    env = os.environ if env is None else env
    database = database or env.get("NEO4J_DATABASE") or DEFAULT_DATABASE
    user = user or env.get("NEO4J_USER") or DEFAULT_USER

    if uri or env.get("NEO4J_URI"):
        source = "option" if uri else "environment"
        uri = uri or env["NEO4J_URI"]
        if password_file:
            password = read_password_file(Path(password_file))
        elif env.get("NEO4J_PASSWORD"):
            password = env["NEO4J_PASSWORD"]
        elif env.get("NEO4J_PASSWORD_FILE"):
            password = read_password_file(Path(env["NEO4J_PASSWORD_FILE"]))
        else:
            raise ConfigurationError(
                f"no password for {uri}: give --password-file, or set NEO4J_PASSWORD or "
                "NEO4J_PASSWORD_FILE"
            )
        return Connection(uri, user, password, database, source)

    settings = settings or ServerSettings.from_env(env)
    from linksim.server.local import LocalServer

    server = LocalServer(settings)
    running = server.running_settings()
    if not password_file and env.get("NEO4J_PASSWORD"):  # the environment beats the server's file
        return Connection(running.uri, user, env["NEO4J_PASSWORD"], database, "local")
    given = password_file or env.get("NEO4J_PASSWORD_FILE")
    if given:  # a file the user named: its own problem, never "the server has not been started"
        return Connection(running.uri, user, read_password_file(Path(given)), database, "local")
    pw_path = settings.password_file
    if not pw_path.exists():
        raise LinksimError(
            f"no Neo4j server configured: the local server has not been started yet "
            f"(no {pw_path}). Run `linksim neo4j start`, or set NEO4J_URI / --uri to use "
            "another server."
        )
    return Connection(running.uri, user, read_password_file(pw_path), database, "local")
