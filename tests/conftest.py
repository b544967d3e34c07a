"""Shared test set-up: tests under tests/integration/ are marked `integration` automatically, and
under `pytest -n 2 --dist loadgroup` (`make test`) they are one unit of work: one worker runs them,
in order (they share one Neo4j server and the database the last test left), while the other runs
the unit tests."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


INTEGRATION = "tests/integration/"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.integration)


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pytest-xdist is a test dependency; without it tests run in one process
    LoadScopeScheduling = None
else:
    class OneServerScheduling(LoadScopeScheduling):
        """xdist's scheduling by scope, with one scope for every integration test and one for each
        unit test. (xdist's own `loadgroup` renames each grouped test's node id, which pytest 9
        no longer lets a plugin do, and the groups silently vanish.)"""

        def _split_scope(self, nodeid: str) -> str:
            return INTEGRATION if nodeid.startswith(INTEGRATION) else nodeid

    def pytest_xdist_make_scheduler(config: pytest.Config, log):
        if config.getvalue("dist") == "loadgroup":
            return OneServerScheduling(config, log)
        return None


@pytest.fixture(scope="session")
def spark():
    """One Spark session (local[2], with the Neo4j connector) for every test that runs Spark: a
    process has one, and the connector's jars are only taken when it starts."""
    from linksim.procedures.spark import session

    spark = session("local[2]", 4)
    yield spark
    spark.stop()
