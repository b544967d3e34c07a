"""procedures/indexes.py: one index store a database, under the linksim home."""

from __future__ import annotations

from linksim.procedures.indexes import default_index_root


def test_each_server_and_database_has_its_own_store(tmp_path) -> None:
    one = default_index_root("bolt://127.0.0.1:7687", "neo4j", home=tmp_path)
    assert one == default_index_root("bolt://127.0.0.1:7687", "neo4j", home=tmp_path)
    assert one.parent == tmp_path / "indexes"
    others = {default_index_root("bolt://127.0.0.1:7688", "neo4j", home=tmp_path),
              default_index_root("bolt://127.0.0.1:7687", "crawl2", home=tmp_path)}
    assert one not in others and len(others) == 2
