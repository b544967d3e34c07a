"""Shared test set-up: tests under tests/integration/ are marked `integration` automatically, and
those that read the shared Wikispeedia crawl run one after the other; on a new install, the caches
it lacks (the Neo4j jars, Spark's connector, numba's kernels) are filled by processes of their own
beside the first tests."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the integration tests, and run the unit tests first (the Neo4j jars download beside
    them on a new machine: ``pytest_collection_finish``), then the integration tests, those that
    read the shared Wikispeedia crawl (the ``wikispeedia`` fixture) one after the other, after the
    other integration tests, those that change it (marked ``changes_the_crawl``) last: a test on an
    empty database between two of them made the second load the crawl again (under pytest-xdist,
    the integration tests run in this order on one worker: ``pytest_xdist_make_scheduler``)."""
    def group(item: pytest.Item) -> int:
        if "integration" not in Path(str(item.fspath)).parts:
            return 0
        if "wikispeedia" not in getattr(item, "fixturenames", ()):
            return 1
        return 3 if item.get_closest_marker("changes_the_crawl") else 2  # the crawl loaded again after each

    for item in items:
        if group(item) > 0:
            item.add_marker(pytest.mark.integration)
    items.sort(key=group)  # stable: each group keeps the files' order


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: without it, never called
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Under pytest-xdist (``make test``: ``-n 2``), the integration tests are one unit of work: one
    worker runs them in the order above against one server, while the other runs the unit tests
    one by one (they take one core; the integration tests about 1.5, theirs and the server's).
    xdist's own ``--dist loadgroup`` would do it with a mark, but it no longer groups under pytest
    9.2 (pytest-xdist issue 1386: the test ids it renames are not the ones scheduled)."""
    from xdist.scheduler import LoadScopeScheduling

    class IntegrationTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "integration" if nodeid.startswith("tests/integration/") else nodeid

    return IntegrationTogether(config, log)


# Three caches a new install fills once, each by a process of its own beside the first tests (the
# unit tests, on one core), when the run will need it:
# - the Neo4j jars of the local server (Maven's download took 85 s on a new machine, about all of
#   it waiting on the network; ``ensure_jars`` takes a file lock, so never two fetches at once);
# - Spark's package cache of the Neo4j connector (about 30 s of downloads from Maven Central);
# - numba's cache of linksim's kernels, beside the installed package (about 50 s of one core, in
#   whichever test first runs a query: the warm-ups a run calls before taking its lock fill it).
# The ``neo4j_server`` and ``spark`` fixtures wait for theirs (``background``). A cache a process
# failed to fill is filled by the normal path, which reports its own error; a kernel a test needs
# before it is cached is compiled in the test as before (numba replaces its cache files whole).
_FETCH_JARS = "from linksim.server import LocalServer, ServerSettings; LocalServer(ServerSettings.from_env()).ensure_jars()"
_RESOLVE_CONNECTOR = "from linksim.procedures.spark import session; session('local[1]', 1).stop()"
_WARM_UP = ("from linksim.ranking import treescan; treescan.warm_up(); "
            "from linksim.fingerprints import update; update.warm_up()")
_BACKGROUND: dict[str, subprocess.Popen] = {}


def _needs_jars(items: list[pytest.Item]) -> bool:
    """Whether the integration tests will provision the local server from jars not yet cached (the
    precedence of linksim.server.provision: NEO4J_URI, then Docker, then the local server)."""
    from linksim.server import LocalServer, ServerSettings, docker_available

    if not any(item.get_closest_marker("integration") for item in items):  # marked at collection
        return False
    if os.environ.get("NEO4J_URI") or LocalServer(ServerSettings.from_env()).jars_ready():
        return False  # the jars' cache is one for every instance of the linksim home
    return not docker_available()


def pytest_collection_finish(session: pytest.Session) -> None:
    from linksim.home import linksim_home
    from linksim.ranking import treescan

    # -P: the repository's linksim/ folder must not shadow the installed package (cwd is the root).
    def start(name: str, code: str) -> None:
        _BACKGROUND[name] = subprocess.Popen([sys.executable, "-P", "-c", code], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return  # one worker fills them (the jars and the connector under file locks, numba's files whole)
    if _needs_jars(session.items):
        start("jars", _FETCH_JARS)
    if any("spark" in getattr(item, "fixturenames", ()) for item in session.items) and \
            not any((linksim_home() / "ivy" / "jars").glob("org.neo4j_neo4j-connector-apache-spark*.jar")):
        start("spark", _RESOLVE_CONNECTOR)
    if session.items and not any((Path(treescan.__file__).parent / "__pycache__").glob("treescan.*.nbi")):
        start("numba", _WARM_UP)


def pytest_sessionfinish(session: pytest.Session) -> None:
    for name, process in _BACKGROUND.items():  # a short session does not wait for them
        if process.poll() not in (None, 0):  # said here, uncaptured: a broken fetch is not a silent no-op
            print(f"\ntests/conftest.py: the background {name} process failed (exit {process.returncode})",
                  file=sys.stderr)
        process.terminate()
        process.wait()


@pytest.fixture(scope="session")
def background():
    """``background(name)`` waits for the process that fills the named cache (``jars``, ``spark``),
    if one was started; a failure is reported when the session ends."""
    return lambda name: _BACKGROUND[name].wait() if name in _BACKGROUND else None


@pytest.fixture(scope="session")
def spark(background):
    """One Spark session (local[2], with the Neo4j connector) for every test that runs Spark: a
    process has one, and the connector's jars are only taken when it starts."""
    from linksim.procedures.spark import session

    background("spark")  # one resolution into Spark's package cache at a time
    spark = session("local[2]", 4)
    yield spark
    spark.stop()
