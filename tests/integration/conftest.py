"""A real Neo4j for the integration tests, provisioned once per test session.

Precedence as in linksim.server.provision: NEO4J_URI, then Docker (testcontainers), then the
local server from Maven Central jars. The local server runs as its own instance (``pytest``) on
free ports, so the tests never touch the data of the user's ``default`` instance; it shares the
jar cache and is stopped at the end of the session.

When CI=true, a failure to provision Neo4j fails every integration test with the reason; outside
CI those tests are skipped with the reason (shown in the summary by ``-ra``).
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from linksim.procedures import QueryRunner
from linksim.procedures.maintenance import clear_database
from linksim.server import LocalServer, Provisioned, ServerSettings, provision

TEST_INSTANCE = "pytest"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def test_settings() -> ServerSettings:
    """Settings of the local test instance: own directory, free ports, modest memory."""
    bolt = free_port()
    http = free_port()
    while http == bolt:
        http = free_port()
    return ServerSettings.from_env(
        instance=TEST_INSTANCE, bolt_port=bolt, http_port=http, heap="1g", pagecache="512m"
    )


@pytest.fixture(scope="session")
def neo4j_server(test_settings: ServerSettings):
    # A test session killed before its teardown leaves its server running on other ports:
    # stop it, so that this session's server runs with this session's settings.
    LocalServer(test_settings).stop()
    try:
        server = provision(test_settings, stop_local_on_close=True)
    except Exception as exc:  # noqa: BLE001 - reported as the reason, never swallowed silently
        reason = f"could not provision a Neo4j server for the integration tests: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    yield server
    server.close()


@pytest.fixture(scope="session")
def session_runner(neo4j_server: Provisioned):
    runner = QueryRunner.connect(neo4j_server.connection)
    yield runner
    runner.close()


# Beyond this many relationships, a restart on an empty store (about 10 s) is faster than deleting
# them in transactions: 40 s after the cnr-2000 crawl's 3.2M links.
EMPTY_STORE_ABOVE = 300_000


def empty_store(server: LocalServer, database: str) -> None:
    """Stop the local test server, remove the database's store and transaction folders, and start
    it again: the server makes an empty store for the database it knows."""
    server.stop()
    data = server.settings.data_dir
    for folder in (data / "databases" / database, data / "transactions" / database):
        shutil.rmtree(folder, ignore_errors=True)
    server.start()


@pytest.fixture
def runner(session_runner: QueryRunner, neo4j_server: Provisioned) -> QueryRunner:
    """A query runner on an empty database (no data, no constraints, no indexes)."""
    links = session_runner.run("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    if neo4j_server.local is not None and links > EMPTY_STORE_ABOVE:
        empty_store(neo4j_server.local, neo4j_server.connection.database)
        session_runner.reset_bookmarks()  # the new store's transaction ids start again
    clear_database(session_runner, schema=True)
    return session_runner


@pytest.fixture(autouse=True)
def short_retire_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process runs wait 0.2 s, not 2 s, between a switch and retiring the old run (the
    readers test measures the real protocol with the default; subprocesses keep the default)."""
    from linksim.procedures import runs

    monkeypatch.setattr(runs, "RETIRE_GRACE_SECONDS", 0.2)


@pytest.fixture
def cli_env(neo4j_server: Provisioned, monkeypatch: pytest.MonkeyPatch, tmp_path):
    """Environment under which the `linksim` CLI talks to the test server."""
    conn = neo4j_server.connection
    monkeypatch.setenv("NEO4J_URI", conn.uri)
    monkeypatch.setenv("NEO4J_USER", conn.user)
    monkeypatch.setenv("NEO4J_PASSWORD", conn.password)
    monkeypatch.setenv("NEO4J_DATABASE", conn.database)
    return conn


@pytest.fixture
def wikispeedia(runner: QueryRunner) -> QueryRunner:
    """The runner, on a database holding the shared Wikispeedia crawl (loaded online)."""
    from linksim.procedures.load import load

    folder = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "wikispeedia"
    if not folder.exists():
        pytest.fail(f"shared data set missing: {folder}")
    load([folder], runner, mode="online", show_progress=False)
    return runner
