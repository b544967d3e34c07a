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


def test_a_query_over_the_servers_transaction_memory_says_to_raise_its_heap() -> None:
    """The server's own limit (dbms.memory.transaction.total.max, 70 % of its heap), met by the
    page stream of the 100M-link crawl under a 3 GiB heap: the message names the heap to raise, for
    the local server the command that does, not linksim's memory budget."""
    from neo4j.exceptions import Neo4jError

    from linksim.procedures.runner import driver_error

    error = Neo4jError._hydrate_neo4j(
        code="Neo.TransientError.General.MemoryPoolOutOfMemoryError",
        message="The allocation of an extra 2.0 MiB would use more than the limit 2.1 GiB. Currently using 2.1 GiB. "
                "dbms.memory.transaction.total.max threshold reached")
    worded = str(driver_error(error))
    assert worded.startswith("Neo4j error Neo.TransientError.General.MemoryPoolOutOfMemoryError: The allocation")
    assert "linksim neo4j start --heap 4g" in worded and "budget" not in worded
    other = str(driver_error(Neo4jError._hydrate_neo4j(code="Neo.ClientError.Statement.SyntaxError", message="x")))
    assert other == "Neo4j error Neo.ClientError.Statement.SyntaxError: x"


def test_a_query_that_commits_in_parts_is_retried_for_the_retry_time_with_an_undo(monkeypatch) -> None:
    """A SIMILAR_TO batch (CALL IN TRANSACTIONS, autocommit) that deadlocks is undone and tried
    again for the runner's whole retry time, not a fixed number of times (two retries gave up on
    a crawl with navigation hubs), and gives up once that time is spent."""
    import time

    from neo4j.exceptions import TransientError

    from linksim.procedures import QueryRunner

    monkeypatch.setenv("LINKSIM_RETRY_SECONDS", "4")
    monkeypatch.setattr(time, "sleep", lambda seconds: None)  # the backoff's pauses, not their length
    runner = QueryRunner(None, "neo4j")

    class Deadlock(TransientError):
        code = "Neo.TransientError.Transaction.DeadlockDetected"

    def deadlock() -> TransientError:
        return Deadlock("deadlock")

    seen, undone = [], []

    def attempt(tries: int) -> str:
        seen.append(tries)
        if tries < 6:
            raise deadlock()
        return "written"

    assert runner.retried(attempt, lambda error, tries: undone.append(tries)) == "written"
    assert seen == list(range(7)) and undone == list(range(1, 7))  # an undo before each new attempt

    clock = iter(range(0, 1000))
    monkeypatch.setattr(time, "monotonic", lambda: float(next(clock)))
    calls = []

    def always(tries: int):
        calls.append(tries)
        raise deadlock()

    with pytest.raises(TransientError):
        runner.retried(always)
    assert 2 <= len(calls) <= 5  # each attempt takes a tick of the fake clock: the 4 s run out
