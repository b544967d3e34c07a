"""Shared test set-up: tests under tests/integration/ are marked `integration` automatically, and
those that read the shared Wikispeedia crawl run one after the other."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the integration tests, and run the unit tests first (the Neo4j jars download beside
    them on a new machine: tests/integration/conftest.py), then the integration tests, those that
    read the shared Wikispeedia crawl (the ``wikispeedia`` fixture) one after the other, after the
    other integration tests, those that change it (marked ``changes_the_crawl``) last: a test on an
    empty database between two of them made the second load the crawl again."""
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


@pytest.fixture(scope="session")
def spark():
    """One Spark session (local[2], with the Neo4j connector) for every test that runs Spark: a
    process has one, and the connector's jars are only taken when it starts."""
    from linksim.procedures.spark import session

    spark = session("local[2]", 4)
    yield spark
    spark.stop()
