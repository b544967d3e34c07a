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


def test_a_spectral_index_too_large_for_memory_has_its_walks_built_on_disk(recording) -> None:
    """The default's walks (the largest part of its index) go to disk where the whole does not fit;
    its embedding, neighbour and nearest lists stay in memory, and bound what is left."""
    runner = recording(_counts(1_000_000, 10_000_000))
    in_memory = check_memory(runner, "index", "none", "spectral")
    on_disk = check_memory(runner, "index", in_memory.bytes_min - 1, "spectral")
    assert not in_memory.on_disk and on_disk.on_disk
    assert on_disk.bytes_min < in_memory.bytes_min and "tree layout" not in on_disk.parts
    assert "one fingerprint's rows (the index is on disk)" in on_disk.parts
    assert on_disk.parts["link embedding"] == in_memory.parts["link embedding"]
    with pytest.raises(MemoryBudgetExceeded):
        check_memory(runner, "index", on_disk.parts["link embedding"], "spectral")


def test_the_page_major_copies_go_to_disk_first_then_the_index(recording) -> None:
    """A similar run whose page-major copies do not fit in memory writes them to files the queries
    read through the page cache, the index in memory; only when the index itself does not fit is
    it built (and read) on disk, the copies too."""
    runner = recording(_counts(1_000_000, 10_000_000))
    rows = 6 * 100 * 1_000_000
    roomy = check_memory(runner, "similar", "none", "psimrank", top_k=50)  # its lists (with the bands) the peak
    assert roomy.peak_stage == "top-k" and roomy.page_major and not roomy.rows_on_disk and not roomy.on_disk and roomy.parts["page-major rows"] == rows
    squeezed = check_memory(runner, "similar", roomy.bytes_min - 1, "psimrank", top_k=50)
    assert squeezed.page_major and squeezed.rows_on_disk and not squeezed.on_disk
    assert "page-major rows" not in squeezed.parts and squeezed.disk["page-major rows (while the run lasts)"] == rows
    assert roomy.stages["top-k"][0] - squeezed.stages["top-k"][0] == rows and squeezed.random_reads == rows
    tight = check_memory(runner, "similar", squeezed.bytes_min - 1, "psimrank", top_k=50)
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


def _settings(data, policy: str = "VOLUME", retention: str = "2 files"):
    rows = [{"name": "server.directories.data", "value": str(data)},
            {"name": "server.directories.transaction.logs.root", "value": str(data / "transactions")},
            {"name": "db.checkpoint", "value": policy}, {"name": "db.checkpoint.interval.volume", "value": "1.00GiB"},
            {"name": "db.tx_log.rotation.size", "value": "256.00MiB"},
            {"name": "db.tx_log.rotation.retention_policy", "value": retention}]
    return {"SHOW SETTINGS": rows}


def test_a_write_takes_the_store_growth_and_the_logs_held_between_checkpoints(recording, tmp_path) -> None:
    from types import SimpleNamespace

    from linksim.estimate import LOG_BYTES_PER_SIMILAR, STORE_BYTES_PER_SIMILAR
    from linksim.procedures.budget import write_disk

    n = 80_000_000
    runner = recording(_settings(tmp_path))
    (store, store_dir, store_bytes), (logs, logs_dir, log_bytes) = write_disk(runner, n)
    assert store_dir == tmp_path / "databases" / "neo4j" and store_bytes == STORE_BYTES_PER_SIMILAR * n
    # Checkpoints by volume: 1 GiB of logs, the 2 files kept, the one written and one more.
    assert logs_dir == tmp_path / "transactions" / "neo4j" and log_bytes == (1 << 30) + 4 * (256 << 20)
    assert write_disk(runner, 1_000)[1][2] == LOG_BYTES_PER_SIMILAR * 1_000  # fewer logs than that bound
    # Neo4j's default policy (every 15 minutes or 100,000 transactions) may hold the whole write's.
    assert write_disk(recording(_settings(tmp_path, "PERIODIC")), n)[1][2] == LOG_BYTES_PER_SIMILAR * n
    assert write_disk(recording(_settings(tmp_path, retention="2 days")), n)[1][2] == LOG_BYTES_PER_SIMILAR * n
    # A server elsewhere, or one whose folders this machine does not have: nothing to check here.
    remote = recording(_settings(tmp_path))
    remote.connection = SimpleNamespace(uri="neo4j://db.example.org:7687")
    assert write_disk(remote, n) == [] and not remote.sent
    assert write_disk(recording(_settings(tmp_path / "absent")), n) == []
    assert write_disk(recording({}), n) == []  # SHOW SETTINGS gave nothing (not allowed)


def test_a_write_counts_the_room_the_store_holds_free_as_no_growth(recording, tmp_path) -> None:
    """Neo4j reuses the records of deleted relationships before it grows its files: the store's
    relationship records (its file's size, 240 of 34 bytes an 8 KiB page in the aligned format,
    end to end in the standard one) beyond the relationships it has are room the write takes first."""
    from linksim.estimate import STORE_BYTES_PER_SIMILAR
    from linksim.procedures.budget import write_disk

    folder = tmp_path / "databases" / "neo4j"
    folder.mkdir(parents=True)
    with open(folder / "neostore.relationshipstore.db", "wb") as handle:
        handle.truncate(8192 * 1_000)
    have = {"count(r)": [{"relationships": 100_000}]}
    for store, records in (("record-aligned-1.1", 240_000), ("record-standard-1.1", 8192 * 1_000 // 34)):
        runner = recording({**_settings(tmp_path), "SHOW DATABASES": [{"store": store}], **have})
        room = records - 100_000
        assert write_disk(runner, room + 7)[0][2] == STORE_BYTES_PER_SIMILAR * 7
        assert write_disk(runner, room // 2)[0][2] == 0
    # A format not known here (or not shown): no room counted.
    for shown in ([{"store": "block-block-1.1"}], []):
        runner = recording({**_settings(tmp_path), "SHOW DATABASES": shown, **have})
        assert write_disk(runner, 1_000)[0][2] == STORE_BYTES_PER_SIMILAR * 1_000


def test_needs_on_one_file_system_add_up_against_its_free_space(tmp_path) -> None:
    import os

    from linksim.estimate import DiskSpaceExceeded, check_free_space

    usage = os.statvfs(tmp_path)
    free = usage.f_bavail * usage.f_frsize
    check_free_space([("a", tmp_path, free // 3), ("b", tmp_path / "made later" / "deeper", free // 3)], "the run")
    with pytest.raises(DiskSpaceExceeded, match=r"the run needs .* of disk on the file system of .*\(a .*, b .*\), "
                                                r"which has .* free; do this") as refused:
        check_free_space([("a", tmp_path, free // 3 * 2), ("b", tmp_path / "made later", free // 3 * 2)], "the run",
                         "; do this")
    assert refused.value.exit_code == 8


def test_an_index_that_the_stores_disk_cannot_hold_is_refused_before_it_is_built(tmp_path) -> None:
    """The files of a build are checked against the store's free space first: the estimate's index
    bytes (beside the index it replaces), whatever the build's memory; a small index passes."""
    import os

    from linksim.estimate import DiskSpaceExceeded, estimate_index
    from linksim.procedures.budget import check_index_disk

    store = tmp_path / "indexes" / "not-yet-made"
    usage = os.statvfs(tmp_path)
    free = usage.f_bavail * usage.f_frsize
    pages = int(free // 2_000) + 1  # P-PSimRank's 100 fingerprints: over 2 kB a page on disk
    assert estimate_index("ppsimrank", pages, 10 * pages, on_disk=True).disk["index"] > free
    for on_disk in (False, True):
        with pytest.raises(DiskSpaceExceeded, match=r"index ppsimrank .* which has .* free; nothing was built") as refused:
            check_index_disk(store, "ppsimrank", pages, 10 * pages, on_disk, "index ppsimrank on many pages")
        assert refused.value.exit_code == 8
    check_index_disk(store, "ppsimrank", 1_000, 10_000, False, "index ppsimrank on 1,000 pages")
    assert not store.exists()  # a check writes nothing
