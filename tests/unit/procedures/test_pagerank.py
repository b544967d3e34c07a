"""procedures/pagerank.py: the lock, the values as parameters."""

from __future__ import annotations


def test_pagerank_write_locks_before_reading_and_sends_values_as_parameters(fake, recording) -> None:
    from linksim.procedures.pagerank import run_pagerank

    answers = dict(fake.lock_answers(), **fake.graph_answers())
    answers["SET p[$property]"] = lambda p: {"properties_set": len(p["ids"])}
    runner = recording(answers)
    run = run_pagerank(runner, write_property="pr_test", show_progress=False, batch_size=3)
    order = [q for _, q, _ in runner.sent]
    acquired = next(i for i, q in enumerate(order) if "MERGE (l:LinksimLock" in q)
    read = next(i for i, q in enumerate(order) if "collect(id) AS ids" in q)
    released = max(i for i, q in enumerate(order) if "DELETE l" in q)
    assert acquired < read < released == len(order) - 1
    writes = [p for _, q, p in runner.sent if "SET p[$property]" in q]
    assert [w["ids"] for w in writes] == [fake.IDS[:3], fake.IDS[3:]] and {w["property"] for w in writes} == {"pr_test"}
    assert all("pr_test" not in q for _, q, _ in runner.sent)  # the property name is a parameter
    assert run.did_converge and abs(sum(run.ranks) - 1) < 1e-6 and run.node_properties_written == run.pages
