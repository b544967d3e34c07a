"""procedures/browser.py: the PageRank tiers in one transaction."""

from __future__ import annotations


def test_pagerank_tiers_are_set_in_one_transaction(recording) -> None:
    from linksim.procedures.browser import label_pagerank_tiers

    runner = recording({"count(p) AS n": [{"n": 250}], "SET p:": {"labels_added": 3}})
    counts = label_pagerank_tiers(runner)
    transactions = [p["statements"] for kind, _, p in runner.sent if kind == "transaction"]
    assert len(transactions) == 1 and len(transactions[0]) == 4  # clear both tiers, set both: or nothing
    assert [params for _, params in transactions[0][2:]] == [
        {"property": "pagerank", "skip": 0, "limit": 3}, {"property": "pagerank", "skip": 3, "limit": 22}]
    assert counts.ranked == 250
