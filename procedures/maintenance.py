"""Database housekeeping shared by the tests and the benchmarks."""

from __future__ import annotations

from linksim.procedures.runner import QueryRunner


def clear_database(runner: QueryRunner, schema: bool = False, batch: int = 20_000) -> None:
    """Delete every relationship, then every node, in batches small enough for any heap.

    Relationships go first: deleting a node of a crawl with its links in one step can hold
    millions of relationships in one transaction. With ``schema``, drop constraints and indexes
    too (their names are passed as parameters).
    """
    with runner.driver.session(database=runner.database, bookmark_manager=runner.bookmarks) as session:
        session.run(
            "MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF $batch ROWS", batch=batch
        ).consume()
        session.run(
            "MATCH (n) CALL (n) { DELETE n } IN TRANSACTIONS OF $batch ROWS", batch=batch
        ).consume()
        if schema:
            for (name,) in session.run("SHOW CONSTRAINTS YIELD name").values():
                session.run("DROP CONSTRAINT $name IF EXISTS", name=name).consume()
            for (name,) in session.run(
                "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"
            ).values():
                session.run("DROP INDEX $name IF EXISTS", name=name).consume()
