"""procedures/maintenance.py: relationships before nodes, in batches; schema names as parameters."""

from __future__ import annotations

from linksim.procedures.maintenance import clear_database


def test_relationships_go_first_then_nodes_then_the_schema_by_name(recording) -> None:
    runner = recording({"SHOW CONSTRAINTS": [{"name": "page_url"}], "SHOW INDEXES": [{"name": "similar_to_run"}]})
    clear_database(runner, schema=True, batch=7)
    sent = [(kind, query, parameters) for kind, query, parameters in runner.sent if kind == "autocommit"]
    assert "()-[r]->()" in sent[0][1] and "(n)" in sent[1][1] and sent[0][2] == sent[1][2] == {"batch": 7}
    assert [(q.split()[0], p) for _, q, p in sent[2:]] == [("DROP", {"name": "page_url"}), ("DROP", {"name": "similar_to_run"})]
    assert all("page_url" not in q and "similar_to_run" not in q for _, q, _ in runner.sent)  # names are parameters
