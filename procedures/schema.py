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
    return {"statements": len(statements), **added}
