"""Shared test set-up: tests under tests/integration/ are marked `integration` automatically, and
numba's kernels are compiled in the background while the first tests start."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


# The compiled kernels (linksim.ranking.treescan, linksim.fingerprints.update) take about 70 s to
# compile on a fresh install, once: numba caches them beside the installed package. A session
# compiles them in a process of its own from its start, while the test server starts and the first
# crawl loads, and a test's first warm-up waits for that process instead of compiling them again.
WARM_UP = ("from linksim.ranking import treescan; treescan.warm_up(); "
           "from linksim.fingerprints import update; update.warm_up()")
_warming: list = []


def pytest_sessionstart(session: pytest.Session) -> None:
    from linksim.fingerprints import update
    from linksim.ranking import treescan

    # At the lowest priority: the test server's start, on the same two cores, comes first.
    process = subprocess.Popen([sys.executable, "-c", WARM_UP], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONSAFEPATH": "1"},
                               preexec_fn=lambda: os.nice(19))
    _warming.append(process)
    for module in (treescan, update):
        module.warm_up = _after_the_background(module.warm_up, process)


def _after_the_background(warm_up, process: subprocess.Popen):
    def waited() -> None:
        process.wait()  # its failure is no test's: the warm-up below compiles what it did not
        warm_up()

    return waited


def pytest_sessionfinish(session: pytest.Session) -> None:
    for process in _warming:
        if process.poll() is None:
            process.kill()
        process.wait()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the integration tests, and run those that read the shared Wikispeedia crawl (the
    ``wikispeedia`` fixture) one after the other, after the other integration tests, those that
    change it (marked ``changes_the_crawl``) last: a test on an empty database between two of them
    made the second load the crawl again."""
    def group(item: pytest.Item) -> int:
        if "integration" not in Path(str(item.fspath)).parts:
            return 3
        if "wikispeedia" not in getattr(item, "fixturenames", ()):
            return 0
        return 2 if item.get_closest_marker("changes_the_crawl") else 1  # the crawl loaded again after each

    for item in items:
        if group(item) < 3:
            item.add_marker(pytest.mark.integration)
    items.sort(key=group)  # stable: each group keeps the files' order


@pytest.fixture(scope="session")
def spark():
    """One Spark session (local[2], with the Neo4j connector) for every test that runs Spark: a
    process has one, and the connector's jars are only taken when it starts."""
    from linksim.procedures.spark import session

    spark = session("local[2]", 4)
    yield spark
    spark.stop()
