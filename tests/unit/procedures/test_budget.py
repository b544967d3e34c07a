"""procedures/budget.py: the budget's sources in order, and a run refused before it reads or
locks anything; an index that fits only on disk is built there."""

from __future__ import annotations

import pytest

from linksim.estimate import MemoryBudgetExceeded
from linksim.procedures.budget import check_memory, memory_budget


def test_the_budget_is_the_value_given_then_the_environment_then_the_memory_available(monkeypatch) -> None:
    monkeypatch.setenv("LINKSIM_MEMORY_BUDGET", "2G")
    assert memory_budget("512M") == 512 << 20 and memory_budget(None) == 2 << 30
    assert memory_budget("none") is None
    monkeypatch.delenv("LINKSIM_MEMORY_BUDGET")
    assert memory_budget(None) > 0  # what the machine has available now


def _counts(pages: int, links: int):
    """A recording runner that answers the graph's state (counts from Neo4j's count store)."""
    state = {"id": "g", "version": 1, "pages": pages, "links": links}
    return {"LinksimGraph {name: 'links'}": [state]}


def test_a_run_over_the_budget_is_refused_having_read_only_the_counts(recording) -> None:
    runner = recording(_counts(1_000_000, 10_000_000))
    with pytest.raises(MemoryBudgetExceeded):
        check_memory(runner, "similar", "100M", "psimrank", top_k=10)
    assert all("LinksimGraph" in query for _, query, _ in runner.sent)  # no lock, no stream, no write


def test_an_index_too_large_for_memory_is_built_on_disk_when_that_fits(recording) -> None:
    runner = recording(_counts(1_000_000, 10_000_000))
    in_memory = check_memory(runner, "index", "none", "simrank")
    assert not in_memory.on_disk
    budget = in_memory.bytes_min - 1
    assert check_memory(runner, "index", budget, "simrank").on_disk  # SimRank's trees go to disk
    with pytest.raises(MemoryBudgetExceeded):
        check_memory(runner, "index", budget // 20, "simrank")  # not even on disk
    with pytest.raises(MemoryBudgetExceeded):  # extended Jaccard is built in memory only
        check_memory(runner, "index", check_memory(runner, "index", "none", "xjaccard").bytes_min - 1, "xjaccard")


def test_the_page_major_copies_go_to_disk_first_then_the_index(recording) -> None:
    """A similar run whose page-major copies do not fit in memory writes them to files the queries
    read through the page cache, the index in memory; only when the index itself does not fit is
    it built (and read) on disk, the copies too."""
    runner = recording(_counts(1_000_000, 10_000_000))
    rows = 6 * 100 * 1_000_000
    roomy = check_memory(runner, "similar", "none", "simrank", top_k=50)  # the lists' stages the peak
    assert roomy.peak_stage == "write" and roomy.page_major and not roomy.rows_on_disk and not roomy.on_disk and roomy.parts["page-major rows"] == rows
    squeezed = check_memory(runner, "similar", roomy.bytes_min - 1, "simrank", top_k=50)
    assert squeezed.page_major and squeezed.rows_on_disk and not squeezed.on_disk
    assert "page-major rows" not in squeezed.parts and squeezed.disk["page-major rows (while the run lasts)"] == rows
    assert roomy.stages["top-k"][0] - squeezed.stages["top-k"][0] == rows and squeezed.random_reads == rows
    tight = check_memory(runner, "similar", squeezed.bytes_min - 1, "simrank", top_k=50)
    assert tight.on_disk and tight.page_major and tight.rows_on_disk
    assert tight.as_dict()["rowsOnDisk"] is True and roomy.as_dict()["rowsOnDisk"] is False
    # Extended Jaccard has no fingerprint trees, and no copies.
    assert not check_memory(runner, "similar", "none", "xjaccard", top_k=10).page_major


def test_the_estimate_is_of_the_run_as_the_budget_makes_it(recording, monkeypatch) -> None:
    """`--estimate` under a budget that sends the index to disk estimates the on-disk run (the
    100M-link scale run printed the in-memory 25 GiB for a build that went to disk at 10 GiB)."""
    from linksim.procedures.budget import estimate_run

    runner = recording(_counts(1_000_000, 10_000_000))
    in_memory = estimate_run(runner, "index", "simrank", memory_budget="none")
    assert not in_memory.on_disk
    on_disk = estimate_run(runner, "index", "simrank", memory_budget=in_memory.bytes_min - 1)
    assert on_disk.on_disk and on_disk.bytes_min < in_memory.bytes_min
    assert on_disk.as_dict() == check_memory(runner, "index", in_memory.bytes_min - 1, "simrank").as_dict()
    monkeypatch.setenv("LINKSIM_MEMORY_BUDGET", str(in_memory.bytes_min - 1))
    assert estimate_run(runner, "index", "simrank").on_disk  # the environment's budget, as runs read it


def test_the_host_graph_is_estimated_from_its_own_counts_and_says_hosts(recording) -> None:
    from linksim.procedures.budget import estimate_run

    pages = {"id": "g", "version": 1, "pages": 1_000_000, "links": 10_000_000}
    hosts = {"id": "h", "version": 1, "pages": 14_654, "links": 104_223}
    runner = recording({"LinksimGraph {name: 'links'}": [pages], "LinksimGraph {name: 'hosts'}": [hosts]})
    on_hosts = estimate_run(runner, "similar", "ppsimrank", top_k=10, memory_budget="none", graph="hosts")
    on_pages = estimate_run(runner, "similar", "ppsimrank", top_k=10, memory_budget="none")
    assert (on_hosts.pages, on_hosts.links) == (14_654, 104_223) and on_hosts.bytes_max < on_pages.bytes_max
    assert on_hosts.lines()[0].startswith("Estimate for similar ppsimrank on 14,654 hosts and 104,223 links")
    assert on_pages.lines()[0].startswith("Estimate for similar ppsimrank on 1,000,000 pages")
    assert on_hosts.as_dict()["nodes"] == "hosts"
