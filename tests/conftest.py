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
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ("--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
         "--disable-component-update --disable-sync --window-size=1400,1000").split()


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


#: Integration tests that read no shared crawl and leave nothing behind: under pytest-xdist they are a
#: second unit of work, on the other worker against a server of its own (``pytest-gw1``), so that
#: both cores work to the end of the run instead of one worker idling once the unit tests are done.
SECOND_UNIT = frozenset(f"tests/integration/{name}.py" for name in (
    "procedures/test_hosts", "cli/test_demo", "docs/test_tutorial", "loader/test_bulk_faults",
    "api/test_readme_api", "server/test_server", "loader/test_load"))


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: without it, never called
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Under pytest-xdist (``make test``: ``-n 2``), the integration tests are two units of work: one
    worker runs those of the shared crawls in the order above against its server, the other those
    of :data:`SECOND_UNIT` against its own, and both then take the unit tests one by one.
    xdist's own ``--dist loadgroup`` would do it with a mark, but it no longer groups under pytest
    9.2 (pytest-xdist issue 1386: the test ids it renames are not the ones scheduled)."""
    from xdist.scheduler import LoadScopeScheduling

    # A server of NEO4J_URI is one database: every integration test then runs on one worker.
    apart = () if os.environ.get("NEO4J_URI") else SECOND_UNIT

    class IntegrationTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if not nodeid.startswith("tests/integration/"):
                return nodeid
            return "integration-2" if nodeid.split("::")[0] in apart else "integration"

    return IntegrationTogether(config, log)


# Three caches a new install fills once, each by a process of its own beside the first tests, when
# the run will need it:
# - the Neo4j jars of the local server and its Graph Data Science plugin, the FastRP anchor's
#   (about 13 s of downloads, the jars of server/jars.lock side by side, then GDS's 15 MB;
#   ``ensure_jars`` and ``ensure_gds`` take file locks, so never two fetches at once);
# - Spark's package cache of the Neo4j connector (about 30 s of downloads from Maven Central);
# - numba's cache of linksim's kernels, beside the installed package (about 50 s of one core;
#   started by pytest-xdist's controller before its workers, else when collection ends).
# The ``neo4j_server`` and ``spark`` fixtures wait for theirs (``background``); the unit tests, and
# the server once it has started, wait for the kernels (``kernels``). A cache a process failed to
# fill is filled by the normal path, which reports its own error; a kernel a test needs before it
# is cached is compiled in the test as before (numba replaces its cache files whole).
_FETCH_JARS = ("from linksim.server import LocalServer, ServerSettings; server = LocalServer(ServerSettings.from_env()); "
               "server.ensure_jars(); server.ensure_gds()")
_RESOLVE_CONNECTOR = "from linksim.procedures.spark import session; session('local[1]', 1).stop()"
_WARM_UP = ("from filelock import FileLock; held = FileLock({lock!r}); held.acquire(); "  # until it exits
            "from linksim.fingerprints import treescan; treescan.warm_up(); "
            "from linksim.fingerprints import update; update.warm_up()")
_BACKGROUND: dict[str, subprocess.Popen] = {}


def _kernels() -> tuple[Path, bool]:
    """The file lock the numba warm-up holds while it fills the cache, and whether the cache is
    filled (one kernel file is enough: a warm-up that was cut short leaves the rest to the tests)."""
    from linksim.fingerprints import treescan

    cache = Path(treescan.__file__).parent / "__pycache__"
    cache.mkdir(exist_ok=True)
    return cache / ".linksim-warm-up.lock", any(cache.glob("treescan.*.nbi"))


def _start(name: str, code: str) -> None:
    # -P: the repository's linksim/ folder must not shadow the installed package (cwd is the root).
    _BACKGROUND[name] = subprocess.Popen([sys.executable, "-P", "-c", code], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _xdist_controller(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under pytest-xdist, the controller starts numba's warm-up before the workers exist, so that
    the lock is held before either asks for it (``kernels``): both would otherwise compile the
    kernels beside it, the unit tests' first (the report's) for 70 s of a core."""
    lock, filled = _kernels()
    if _xdist_controller(session.config) and not filled:
        _start("numba", _WARM_UP.format(lock=str(lock)))


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

    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return  # one worker fills them (the jars and the connector under file locks)
    if _needs_jars(session.items):
        _start("jars", _FETCH_JARS)
    if any("spark" in getattr(item, "fixturenames", ()) for item in session.items) and \
            not any((linksim_home() / "ivy" / "jars").glob("org.neo4j_neo4j-connector-apache-spark*.jar")):
        _start("spark", _RESOLVE_CONNECTOR)
    lock, filled = _kernels()
    if session.items and not filled and "PYTEST_XDIST_WORKER" not in os.environ:  # else the controller's
        _start("numba", _WARM_UP.format(lock=str(lock)))


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
def kernels():
    """``kernels()`` waits while numba's warm-up fills the kernels' cache (a file lock it holds,
    so that a worker of pytest-xdist waits for the controller's process too): a test then loads
    them rather than compiling them beside it. Returns at once when none runs."""
    from filelock import FileLock, Timeout

    def wait() -> None:
        try:
            with FileLock(_kernels()[0], timeout=900):
                pass
        except Timeout:  # a warm-up stuck for 15 minutes: the tests compile what they need
            pass
    return wait


@pytest.fixture(scope="session")
def spark(background):
    """One Spark session (local[2], with the Neo4j connector) for every test that runs Spark: a
    process has one, and the connector's jars are only taken when it starts."""
    from linksim.procedures.spark import session

    background("spark")  # one resolution into Spark's package cache at a time
    spark = session("local[2]", 4)
    yield spark
    spark.stop()


@pytest.fixture
def chrome():
    """Headless Chromium, Debian's, driven by Selenium and Debian's chromedriver (no browser is
    downloaded at test time): without them a test fails under CI=true and is skipped elsewhere."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    if missing:
        reason = f"headless browser test needs Debian's chromium and chromium-driver ({', '.join(missing)} missing)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()
