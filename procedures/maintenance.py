"""Database housekeeping shared by the tests and the benchmarks."""

from __future__ import annotations

from linksim.procedures.runner import QueryRunner


def clear_database(runner: QueryRunner, schema: bool = False, batch: int = 20_000) -> None:
    """Delete every relationship, then every node, in batches small enough for any heap.

    Relationships go first: deleting a node of a crawl with its links in one step can hold
    millions of relationships in one transaction. With ``schema``, drop constraints and indexes
    too (their names are passed as parameters).
    """
    runner.write_autocommit("MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF $batch ROWS", {"batch": batch})
    runner.write_autocommit("MATCH (n) CALL (n) { DELETE n } IN TRANSACTIONS OF $batch ROWS", {"batch": batch})
    if schema:
        for row in runner.run("SHOW CONSTRAINTS YIELD name RETURN name"):
            runner.write_autocommit("DROP CONSTRAINT $name IF EXISTS", {"name": row["name"]})
        for row in runner.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"):
            runner.write_autocommit("DROP INDEX $name IF EXISTS", {"name": row["name"]})
