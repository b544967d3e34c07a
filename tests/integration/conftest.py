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

# Each pytest-xdist worker that runs integration tests has a server of its own (tests/conftest.py);
# LINKSIM_TEST_INSTANCE names them for a second test session beside a first on one linksim home
# (the first session stops a server of its instance name left running).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
_NAME = os.environ.get("LINKSIM_TEST_INSTANCE", "pytest")
TEST_INSTANCE = _NAME if _WORKER == "gw0" else f"{_NAME}-{_WORKER}"


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
def neo4j_server(test_settings: ServerSettings, background, kernels):
    # A test session killed before its teardown leaves its server running on other ports:
    # stop it, so that this session's server runs with this session's settings.
    LocalServer(test_settings).stop()
    background("jars")  # fetched beside the unit tests on a new machine (tests/conftest.py)
    try:
        LocalServer(test_settings).install_gds()  # the FastRP anchor's; a server of NEO4J_URI has its own plugins
        server = provision(test_settings, stop_local_on_close=True)
    except Exception as exc:  # noqa: BLE001 - reported as the reason, never swallowed silently
        reason = f"could not provision a Neo4j server for the integration tests: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    kernels()  # the tests' commands load numba's kernels rather than compile them beside the warm-up
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


def emptied(session_runner: QueryRunner, neo4j_server: Provisioned) -> QueryRunner:
    """The session's runner, its database emptied (no data, no constraints, no indexes)."""
    links = session_runner.run("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    if neo4j_server.local is not None and links > EMPTY_STORE_ABOVE:
        empty_store(neo4j_server.local, neo4j_server.connection.database)
        session_runner.reset_bookmarks()  # the new store's transaction ids start again
    clear_database(session_runner, schema=True)
    return session_runner


@pytest.fixture
def runner(session_runner: QueryRunner, neo4j_server: Provisioned) -> QueryRunner:
    """A query runner on an empty database (no data, no constraints, no indexes)."""
    return emptied(session_runner, neo4j_server)


@pytest.fixture(scope="session")
def empty_database(session_runner: QueryRunner, neo4j_server: Provisioned):
    """What ``runner`` does, as a function, for a fixture of a wider scope: empties the database and
    returns the runner."""
    return lambda: emptied(session_runner, neo4j_server)


@pytest.fixture(scope="session")
def server_env(neo4j_server: Provisioned) -> dict[str, str]:
    """The environment under which the `linksim` CLI talks to the test server."""
    conn = neo4j_server.connection
    return {"NEO4J_URI": conn.uri, "NEO4J_USER": conn.user, "NEO4J_PASSWORD": conn.password,
            "NEO4J_DATABASE": conn.database}


@pytest.fixture(autouse=True)
def short_retire_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process runs wait 0.2 s, not 2 s, between a switch and retiring the old run (the
    readers test measures the real protocol with the default; subprocesses keep the default)."""
    from linksim.procedures import runs

    monkeypatch.setattr(runs, "RETIRE_GRACE_SECONDS", 0.2)


@pytest.fixture
def cli_env(neo4j_server: Provisioned, server_env: dict, monkeypatch: pytest.MonkeyPatch, tmp_path):
    """Environment under which the `linksim` CLI talks to the test server."""
    for name, value in server_env.items():
        monkeypatch.setenv(name, value)
    return neo4j_server.connection


# What a test sees of the crawl: linksim changes pages and links only through its loader, which
# records each change on the graph's LinksimGraph and LinksimChange nodes; their properties, the
# counts of every label and type, aggregates of the pages' properties and of the links' ends, and
# the schema. Server-side aggregates: reading every node and link into the test takes seconds.
_STATE_QUERIES = (
    "MATCH (n) WHERE n:LinksimGraph OR n:LinksimChange "
    "RETURN labels(n) AS labels, properties(n) AS props",
    "MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n ORDER BY label",
    "MATCH ()-[r]->() RETURN type(r) AS type, count(*) AS n ORDER BY type",
    "MATCH (p:Page) RETURN sum(size(keys(p))) AS keys, sum(size(p.url)) AS url, sum(size(coalesce(p.title, ''))) AS "
    "title, sum(size(coalesce(p.categories, []))) AS categories, count(p.crawled) AS crawled, "
    "min(p.lastCrawled) AS first, max(p.lastCrawled) AS last, sum(coalesce(p.pagerank, 0.0)) AS pagerank",
    "MATCH (a)-[r:LINKS_TO]->(b) RETURN sum(id(a) % 1009 * (id(b) % 1013)) AS ends, sum(size(keys(r))) AS keys",
    "SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties RETURN * ORDER BY name",
    "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state RETURN * ORDER BY name",
)


def database_state(runner: QueryRunner) -> list:
    """What :data:`_STATE_QUERIES` find, to compare with the state after the load."""
    import json

    return [sorted(json.dumps(row, sort_keys=True, default=str) for row in runner.run(query)) for query in _STATE_QUERIES]


# The Wikispeedia database as loaded: its digest, the labels, relationship types and page
# properties the load made. Many tests read it and write only their own results beside it.
_LOADED: dict = {}


def _counts(runner: QueryRunner) -> tuple[int, int]:
    return (runner.run("MATCH (p:Page) RETURN count(p) AS n")[0]["n"],
            runner.run("MATCH ()-[r:LINKS_TO]->() RETURN count(r) AS n")[0]["n"])


def _labels(runner: QueryRunner) -> set[str]:
    """The labels the nodes hold (db.labels() also names the labels of deleted nodes)."""
    return {row["l"] for row in runner.run("MATCH (n) UNWIND labels(n) AS l RETURN DISTINCT l")}


def _back_to_the_load(runner: QueryRunner) -> bool:
    """Delete what a test added beside the loaded crawl (other relationship types, nodes of other
    labels and other labels of its nodes, PageRank, schema) and say whether the database is then the load's again."""
    if not _LOADED:
        return False
    loaded = _LOADED
    if _counts(runner) != loaded["counts"]:  # another crawl, or pages or links changed (Neo4j's count store)
        return False
    types = [row["t"] for row in runner.run("CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t")]
    for extra in sorted(set(types) - loaded["types"]):
        runner.write_autocommit("MATCH ()-[r]->() WHERE type(r) = $type CALL (r) { DELETE r } "
                                "IN TRANSACTIONS OF 20000 ROWS", {"type": extra})
    runner.write_autocommit("MATCH (n) WHERE NOT any(label IN labels(n) WHERE label IN $labels) "
                            "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 20000 ROWS", {"labels": sorted(loaded["labels"])})
    for extra in sorted(_labels(runner) - loaded["labels"]):  # labels set on the crawl's pages (PageRank's tiers)
        runner.write_autocommit("MATCH (n:$($label)) CALL (n) { REMOVE n:$($label) } IN TRANSACTIONS OF 20000 ROWS",
                                {"label": extra})
    if "pagerank" not in loaded["keys"]:  # PageRank written by a test (any other page property: a new load)
        runner.write_autocommit("MATCH (p:Page) WHERE p.pagerank IS NOT NULL "
                                "CALL (p) { SET p.pagerank = null } IN TRANSACTIONS OF 20000 ROWS")
    for row in runner.run("SHOW CONSTRAINTS YIELD name RETURN name"):
        if row["name"] not in loaded["constraints"]:
            runner.write_autocommit("DROP CONSTRAINT $name IF EXISTS", {"name": row["name"]})
    for row in runner.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"):
        if row["name"] not in loaded["indexes"]:
            runner.write_autocommit("DROP INDEX $name IF EXISTS", {"name": row["name"]})
    return database_state(runner) == loaded["state"]


@pytest.fixture
def wikispeedia(session_runner: QueryRunner, neo4j_server: Provisioned, request) -> QueryRunner:
    """The runner, on a database holding the shared Wikispeedia crawl (loaded online).

    A test that leaves the crawl as loaded and adds only its own results (SIMILAR_TO, runs,
    PageRank, schema) hands the next one the same database once those are deleted: that is checked
    against the state after the load (:func:`database_state`), and anything else (a recrawl, a
    page changed) loads the crawl again into an empty database."""
    from linksim.procedures.load import load

    folder = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "wikispeedia"
    if not folder.exists():
        pytest.fail(f"shared data set missing: {folder}")
    if _back_to_the_load(session_runner):
        return session_runner
    _LOADED.clear()
    runner = request.getfixturevalue("runner")  # an empty database
    load([folder], runner, mode="online", show_progress=False)
    _LOADED.update(
        state=database_state(runner), counts=_counts(runner),
        # What the relationships and nodes hold.
        types={row["t"] for row in runner.run("MATCH ()-[r]->() RETURN DISTINCT type(r) AS t")},
        labels=_labels(runner),
        keys={row["key"] for row in runner.run("MATCH (p:Page) UNWIND keys(p) AS key RETURN DISTINCT key")},
        constraints={row["name"] for row in runner.run("SHOW CONSTRAINTS YIELD name RETURN name")},
        indexes={row["name"] for row in runner.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name")},
    )
    return runner

