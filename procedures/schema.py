"""Apply ``cypher/schema.cypher``: constraints and indexes, idempotently."""

from __future__ import annotations

from linksim import cypher
from linksim.procedures.runner import QueryRunner


def apply_schema(runner: QueryRunner) -> dict[str, int]:
    """Create the constraints and indexes linksim needs, where missing, and wait for them.

    Returns
    -------
    dict
        ``statements`` run and ``constraints_added`` / ``indexes_added`` by this call
        (0 and 0 when the schema was already there).
    """
    added = {"constraints_added": 0, "indexes_added": 0}
    statements = cypher.statements("schema")
    for statement in statements:
        counters = runner.write(statement)
        for key in added:
            added[key] += counters.get(key, 0)
    runner.run("CALL db.awaitIndexes(300)")
    runner.write(ADOPT_CURRENT_FLAGS)
    return {"statements": len(statements), **added}


# Databases written by linksim before (:LinksimCurrent) marked the current run of a method with
# `current: true` on its (:LinksimRun): point the method's LinksimCurrent at that run, once.
ADOPT_CURRENT_FLAGS = """
MATCH (r:LinksimRun {current: true})
WITH r ORDER BY r.started
MERGE (c:LinksimCurrent {algorithm: r.algorithm})
ON CREATE SET c.run = r.id, c.since = datetime()
REMOVE r.current
"""

LOCK_CONSTRAINT = "linksim_lock_name"


def ensure_lock_constraint(runner: QueryRunner) -> None:
    """The uniqueness of lock names (without it two writers could MERGE two lock nodes)."""
    from neo4j.exceptions import ClientError

    if runner.run("SHOW CONSTRAINTS YIELD name WHERE name = $name RETURN name", {"name": LOCK_CONSTRAINT}):
        return
    statement = next(s for s in cypher.statements("schema") if LOCK_CONSTRAINT in s)
    try:
        runner.write(statement)
    except ClientError:  # created by another writer at the same moment
        if not runner.run("SHOW CONSTRAINTS YIELD name WHERE name = $name RETURN name", {"name": LOCK_CONSTRAINT}):
            raise
