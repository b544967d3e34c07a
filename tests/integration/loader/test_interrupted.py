"""The database goes away mid-load: linksim's runner retries, the load stops saying how far it got,
and rerunning the same load finishes it with no duplicates."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from linksim.procedures.load import load
from linksim.loader.online import LoadInterrupted
from linksim.procedures import QueryRunner


class StopServerAfter(QueryRunner):
    """A runner that stops the real server just before its ``after``-th link batch, once the
    batches before it have committed (two are written at once: without the wait, the one in
    flight beside it may or may not commit, as the machine's load decides)."""

    def __init__(self, driver, database, server, after: int) -> None:
        super().__init__(driver, database)
        self.server, self.after, self.link_batches = server, after, 0
        self.lock = threading.Lock()
        self.committed = threading.Semaphore(0)

    def write(self, query, parameters=None):
        if "LINKS_TO" not in query:
            return super().write(query, parameters)
        with self.lock:
            self.link_batches += 1
            mine = self.link_batches
        if mine == self.after:
            for _ in range(self.after - 1):
                assert self.committed.acquire(timeout=60), "an earlier link batch never committed"
            self.server.stop()
        result = super().write(query, parameters)
        self.committed.release()
        return result


def test_server_stopping_mid_load_then_rerun(neo4j_server, runner: QueryRunner, tmp_path: Path, monkeypatch) -> None:
    server = neo4j_server.local
    if server is None:
        pytest.skip(f"needs the local server to stop it; this one was provisioned by {neo4j_server.kind}")
    crawl = tmp_path / "crawl.tsv"
    crawl.write_text("".join(f"{i}\t{(i * 7 + 3) % 3000}\n{i}\t{(i * 13 + 1) % 3000}\n" for i in range(3000)))

    conn = neo4j_server.connection
    # A short retry window keeps the test quick: the runner retries a write for 30 s by default.
    monkeypatch.setenv("LINKSIM_RETRY_SECONDS", "3")
    driver = GraphDatabase.driver(conn.uri, auth=(conn.user, conn.password))
    try:
        failing = StopServerAfter(driver, conn.database, server, after=3)
        with pytest.raises(LoadInterrupted) as info:
            load([crawl], failing, batch_size=1000, show_progress=False)
    finally:
        driver.close()
        server.start()
    message = str(info.value)
    # Batches 1 and 2 committed before the stop; batch 4, in flight beside batch 3, may have committed too.
    assert "all 3,000 pages and at least 2,000 of 6,000 links written" in message
    assert "Rerun the same command to finish" in message

    summary = load([crawl], runner, batch_size=1000, show_progress=False)
    assert summary.pages_created == 0
    assert summary.links_created + summary.links_updated == 6000
    assert summary.links_updated in (2000, 3000), summary
    rows = runner.run(
        "MATCH (a:Page)-[r:LINKS_TO]->(b:Page) WITH a, b, count(r) AS n "
        "RETURN count(*) AS pairs, max(n) AS most"
    )
    assert rows == [{"pairs": 6000, "most": 1}]
