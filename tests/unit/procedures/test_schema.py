"""procedures/schema.py: the statements, then the wait for the indexes."""

from __future__ import annotations


def test_schema_statements_then_the_wait_for_indexes(recording) -> None:
    from linksim.procedures.schema import apply_schema

    runner = recording()
    apply_schema(runner)
    order = [q for _, q, _ in runner.sent]
    assert all("IF NOT EXISTS" in q or "IF EXISTS" in q for q in order[:11]) and "db.awaitIndexes" in order[11]
    assert "LinksimRun {current: true}" in order[12]  # old databases' flags adopted, once
