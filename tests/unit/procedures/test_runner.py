"""procedures/runner.py: the one door to Neo4j and its retries."""

from __future__ import annotations

import pytest



def test_writes_give_up_together_one_retry_time_after_the_server_went_away(monkeypatch) -> None:
    """Writes in flight and writes after them stop retrying one retry time after the server was
    first found unreachable, not one retry time each (pagerank took 71 s to give up, for a
    documented 30). A real driver against a closed port: every attempt is refused at once."""
    import threading
    import time

    from neo4j import GraphDatabase
    from neo4j.exceptions import ServiceUnavailable

    from linksim.procedures import QueryRunner

    monkeypatch.setenv("LINKSIM_RETRY_SECONDS", "1.5")
    driver = GraphDatabase.driver("bolt://127.0.0.1:9", auth=("neo4j", "x"))
    runner = QueryRunner(driver, "neo4j")
    began = time.monotonic()
    ended: dict[str, float] = {}

    def write(name: str, delay: float) -> None:
        time.sleep(delay)
        try:
            runner.write("CREATE (:X)")
        except ServiceUnavailable:
            ended[name] = time.monotonic() - began

    threads = [threading.Thread(target=write, args=(f"w{i}", d)) for i, d in enumerate([0, 0, 0.2, 1.0])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    driver.close()
    assert sorted(ended) == ["w0", "w1", "w2", "w3"]
    assert all(1.4 <= seconds <= 2.2 for seconds in ended.values()), ended  # w3 alone would take to 2.5
    late = time.monotonic()
    runner = QueryRunner(GraphDatabase.driver("bolt://127.0.0.1:9", auth=("neo4j", "x")), "neo4j")
    runner._unreachable_since = late - 5  # found unreachable long ago: a new call does not wait again
    with pytest.raises(ServiceUnavailable):
        runner.write("CREATE (:X)")
    assert time.monotonic() - late < 0.5
    runner.driver.close()
