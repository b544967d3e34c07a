"""Memory estimates: what the arrays of each stage take, refusals over a budget, budget sizes."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from linksim.errors import LinksimError
from linksim.estimate import (
    BASE_BYTES, MemoryBudgetExceeded, estimate_index, estimate_pagerank, parse_bytes,
)
from linksim.graph import LinkGraph
from linksim.fingerprints.treescan import QUERY_POSITION_BYTES
from linksim.methods import method


def test_the_fingerprint_index_part_is_what_a_built_index_holds():
    """The estimate's index parts equal the bytes of a real index and its tree layout."""
    rng = np.random.default_rng(1)
    n, m = 2_000, 12_000
    graph = LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)
    for name in ("simrank", "psimrank"):
        index = method(name).build_index(graph, n_fingerprints=12, length=6)
        real = sum(a.nbytes for a in index.store_arrays().values())
        parts = estimate_index(name, graph.n, graph.m, n_fingerprints=12, length=6).parts
        assert parts["fingerprints (parent, label)"] + parts["tree layout"] == real
    index = method("xjaccard").build_index(graph, n_fingerprints=12, length=3)
    real = sum(a.nbytes for a in index.store_arrays().values())
    parts = estimate_index("xjaccard", graph.n, graph.m, n_fingerprints=12, length=3).parts
    assert parts["min-hash values"] + parts["inverted lists"] == pytest.approx(real, rel=0.01)
    csr = graph.out_indices.nbytes + graph.in_indices.nbytes + graph.out_indptr.nbytes + graph.in_indptr.nbytes
    assert estimate_index("simrank", graph.n, graph.m).parts["link graph (CSR both ways)"] == csr


def test_the_pagesim_index_part_is_what_a_built_index_holds_once_its_reach_is_measured():
    """PageSim's size is set by the pages within reach of each page, not by the counts: measured
    on the graph, the estimate's propagation is the bytes of the built index's two matrices and
    ranks; pruned, an upper bound on them."""
    rng = np.random.default_rng(3)
    n, m = 1_500, 9_000
    graph = LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)
    pagesim = method("pagesim")
    for prune in (0.0, 1e-3):
        index = pagesim.build_index(graph, prune=prune)
        real = sum(a.nbytes for a in index.store_arrays().values())
        measured = pagesim.measure(graph, pagesim.parameters_for(prune=prune))
        parts = estimate_index("pagesim", graph.n, graph.m, prune=prune, measured=measured).parts
        (part, value), = parts.items() - estimate_index("simrank", graph.n, graph.m).parts.items()
        assert "counted" in part
        assert value == real if prune == 0 else value >= real
    guessed = estimate_index("pagesim", graph.n, graph.m).parts
    assert any("guessed from the counts" in part for part in guessed)


def test_estimates_grow_with_the_work_and_name_the_peak():
    small = estimate_index("simrank", 100_000, 1_000_000, n_fingerprints=100)
    assert small.bytes_min < small.bytes_max
    assert estimate_index("simrank", 100_000, 1_000_000, n_fingerprints=200).bytes_min > small.bytes_min
    assert estimate_index("simrank", 200_000, 1_000_000).bytes_min > small.bytes_min
    similar = estimate_index("simrank", 100_000, 1_000_000, top_k=10)
    assert similar.stages["build"] == small.stages["build"] and similar.bytes_min >= small.bytes_min
    # the index is let go before the write, and the lists' ranks with it
    assert similar.stages["top-k"][0] > similar.stages["write"][0] > similar.parts["top-k lists"] * 3 // 4
    assert similar.stages["top-k"][0] > similar.stages["stream"][0]
    assert estimate_index("simrank", 100_000, 1_000_000, top_k=50).peak_stage == "write"
    pagerank = estimate_pagerank(100_000, 1_000_000)
    assert BASE_BYTES < pagerank.bytes_min < small.bytes_min
    assert small.disk_bytes >= small.parts["fingerprints (parent, label)"] + small.parts["tree layout"]
    text = "\n".join(similar.lines())
    assert "tree layout" in text and "at the peak" in text and "disk" in text


def test_a_run_over_the_budget_is_refused_naming_the_setting():
    estimate = estimate_index("simrank", 1_000_000, 10_000_000, top_k=10)
    estimate.check(None)  # no budget: never refused
    estimate.check(estimate.bytes_min)  # exactly enough
    with pytest.raises(MemoryBudgetExceeded, match=r"Raise the budget \(memory_budget\)") as refused:
        estimate.check(estimate.bytes_min - 1)
    assert refused.value.exit_code == 8 and "tree layout" in str(refused.value)
    from linksim.cli.main import worded  # the command line names its own flags and variable

    assert "Raise the budget (--memory-budget / LINKSIM_MEMORY_BUDGET), or use fewer fingerprints (--fingerprints) " \
        "or a smaller --top-k; `--estimate` prints the estimate." in worded(refused.value)
    pagesim = estimate_index("pagesim", 1_000_000, 10_000_000, top_k=10, measured={"reach": 10**11})
    with pytest.raises(MemoryBudgetExceeded) as reach:
        pagesim.check(pagesim.bytes_min - 1)
    assert "or use a smaller --radius or a larger --prune;" in worded(reach.value)  # no fingerprints to drop


@pytest.mark.parametrize("text, value", [
    ("8G", 8 << 30), ("512M", 512 << 20), ("12GiB", 12 << 30), ("1.5g", int(1.5 * (1 << 30))),
    ("1000", 1000), ("1e9", 10**9), ("none", None), (None, None), ("64kb", 64 << 10),
])
def test_budget_sizes(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["lots", "-1G", "0", "G"])
def test_bad_budget_sizes_are_refused(text):
    with pytest.raises(LinksimError, match="budget"):
        parse_bytes(text)


def test_an_index_built_on_disk_is_estimated_without_its_arrays():
    """Built into memory-mapped files, the index's N x V arrays leave the memory estimate (one
    fingerprint's rows remain) and stay in the disk estimate; only SimRank and PSimRank can."""
    pages, links = 11_000_000, 100_000_000
    for name in ("simrank", "psimrank"):
        memory = estimate_index(name, pages, links, top_k=10)
        disk = estimate_index(name, pages, links, top_k=10, on_disk=True)
        assert disk.on_disk and not memory.on_disk
        walks = memory.parts["walk state (for updates)"]  # kept by a build in memory only
        assert walks == 8 * 100 * pages and "walk state (for updates)" not in disk.parts
        held = memory.parts["fingerprints (parent, label)"] + memory.parts["tree layout"] + walks
        rows = disk.parts["one fingerprint's rows (the index is on disk)"]
        bands = memory.parts.get("first-step bands", 0)  # PSimRank's, in memory only (none on disk)
        assert (bands > 0) == (name == "psimrank") and "first-step bands" not in disk.parts
        page_major = memory.parts["page-major rows"]  # 6 bytes a page and fingerprint
        assert page_major == 6 * 100 * pages and "page-major rows" not in disk.parts
        assert disk.page_major and disk.rows_on_disk and not memory.rows_on_disk  # on disk, with the index
        assert disk.disk["page-major rows (while the run lasts)"] == page_major
        # walks longer than the path labels' 15 bits: no page-major rows
        longer = estimate_index(name, pages, links, top_k=10, length=16)
        assert "page-major rows" not in longer.parts and not longer.page_major
        # a similar run reads the stored index, memory-mapped: its top-k stage holds what it reads,
        # parent and label (5 bytes), the preorder and its labels (5; the queries read the positions
        # from the page-major rows, but making those rows reads them once: 4), not the subtree
        # sizes, the roots or the walk state
        read = (5 + 5 + 4) * 100 * pages
        assert read < held - walks
        # on disk, the run maps the store too, but those pages are page cache (the random reads): its
        # top-k holds none of the index, only the block maxima of the labels (1/64 byte and 1/4096);
        # it keeps no lists, so the graph goes before them too, and holds none while it makes them:
        # its checkpoint's files do, read back once all are made
        blocks = 100 * (-(-pages // 4096) * 4096) * (1 / 64 + 1 / 4096)
        graph = memory.parts["link graph (CSR both ways)"]
        lists = memory.parts["top-k lists"]
        assert lists == (4 + 4 + 8 + 4) * 10 * pages
        # (without the lists, its top-k peaks as the page-major rows are built: 32 fingerprints' path
        # labels (2 bytes: walks of over 7 steps) and a step of the transposition, more than the
        # queries' scratch)
        scratch, building = 46 * pages, 2 * 32 * pages + 4 * 100 * 2**18
        assert building > scratch
        assert memory.stages["top-k"][0] - disk.stages["top-k"][0] == read + bands + page_major - blocks + graph \
            + lists + scratch - building
        assert disk.stages["lists read back"][0] - disk.stages["top-k"][0] == lists - building
        assert "lists read back" not in memory.stages
        assert disk.disk["finished lists (while the run lasts)"] == memory.disk["finished lists (while the run lasts)"] \
            == 24 * 10 * pages
        # (without rows the queries read the positions, 4 bytes, which making the rows reads too)
        assert longer.stages["top-k"][0] - memory.stages["top-k"][0] == 4 * 100 * pages - page_major - bands * (
            name == "psimrank") + (longer.parts.get("first-step bands", 0) if name == "psimrank" else 0) - 4 * 100 * pages
        assert rows < held / 20
        assert memory.stages["build"][0] - disk.stages["build"][0] == held - rows
        # The same files on disk, but for the walk state and the link graph an update reads.
        graph = 2 * 8 * (pages + 1) + 2 * 4 * links  # as stored for an update
        assert memory.disk["index"] - disk.disk["index"] == walks + graph
        assert disk.bytes_max < 12 * 2**30 < memory.bytes_min  # the 100M-link crawl: 12 GiB only on disk
        assert "built on disk" in disk.lines()[0]
    with pytest.raises(LinksimError, match="in memory only"):
        estimate_index("xjaccard", pages, links, on_disk=True)


def test_the_random_reads_of_an_index_on_disk_are_the_arrays_the_queries_read():
    """An index on disk: the estimate names the bytes of its files a similar run reads at random,
    the itemsizes of the arrays the compiled queries take (preorder, labels, and the page-major
    rows, which hold the positions)."""
    from linksim.methods import fingerprint_index

    rng = np.random.default_rng(3)
    index = fingerprint_index(LinkGraph.from_edges(rng.integers(0, 60, 300), rng.integers(0, 60, 300), 60), "simrank", 4,
                        seed=1)
    index._exact_members = 0  # a small graph: page-major rows all the same
    index.prepare_all_pages()
    tree, by_page = index._tree()
    assert by_page  # the positions are the page-major rows'
    read = sum(array.itemsize for array in (tree[0], tree[1], *index._page_major))  # the block maxima: 1/64 byte
    pages = 11_000_000
    disk = estimate_index("simrank", pages, 100_000_000, top_k=10, on_disk=True)
    assert disk.random_reads == read * 100 * pages == disk.as_dict()["randomReadBytes"]
    assert any("read at random" in line for line in disk.lines())
    # without page-major rows (walks of 16 steps), the layout's positions
    longer = estimate_index("simrank", pages, 100_000_000, top_k=10, on_disk=True, length=16)
    assert longer.random_reads == sum(array.itemsize for array in (tree[0], tree[1], index.layout().position)) * 100 * pages
    rows = estimate_index("simrank", pages, 100_000_000, top_k=10, rows_on_disk=True)  # the index in memory
    assert rows.random_reads == 6 * 100 * pages and rows.as_dict()["rowsOnDisk"] and not rows.on_disk
    assert estimate_index("simrank", pages, 100_000_000, top_k=10).random_reads == 0  # in memory
    # spectral's lists read the labels and the page-major rows of its walks (no scans of a tree's
    # members: not the preorder's pages), and its own arrays, all mapped from the store
    spectral = estimate_index("spectral", pages, 100_000_000, top_k=10, length=3, on_disk=True)
    own = sum(spectral.parts[part] for part in ("link embedding", "neighbour lists", "nearest pages"))
    assert spectral.random_reads == (1 + 4 + 1) * 100 * pages + own  # walks of 3 steps: one byte of path labels
    assert spectral.stages["top-k"][0] < spectral.stages["build"][0] - own  # none of it held by the lists
    assert estimate_index("simrank", pages, 100_000_000, on_disk=True).random_reads == 0  # an index run


FREED_HEAP = """
import sys
import numpy as np
if sys.argv[1] == "set":
    from linksim.allocator import return_freed_memory
    assert return_freed_memory()
def anonymous():
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith("Anonymous:"):
            return int(line.split()[1]) >> 10
big = np.ones(16 << 20, np.uint8)
del big  # freeing a mapped block raises glibc's threshold to its size
before = anonymous()
held, pins = [], []
for _ in range(128):  # 128 MiB of 1 MiB arrays, each followed by a small block that stays
    held.append(np.ones(1 << 20, np.uint8))
    pins.append(np.ones(1 << 10, np.uint8))
del held
print(anonymous() - before)
"""


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists() or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc on Linux only")
def test_the_spectral_lists_count_the_page_major_rows_their_walks_read():
    """The spectral lists score P-PSimRank from the walks' page-major rows (built before the
    workers fork, :meth:`SpectralIndex.prepare_all_pages`): the estimate holds them, in memory or,
    where the budget does not hold them, on disk, and the rows are the arrays that are built."""
    from linksim.spectral import build_spectral_index

    rng = np.random.default_rng(2)
    index = build_spectral_index(LinkGraph.from_edges(rng.integers(0, 80, 400), rng.integers(0, 80, 400), 80),
                                 n_fingerprints=6, seed=2)
    index.fingerprints._exact_members = 0
    index.prepare_all_pages()
    built = sum(array.itemsize for array in index.fingerprints._page_major) * 6 * 80
    pages, links = 1_000_000, 9_000_000
    held = estimate_index("spectral", pages, links, n_fingerprints=6, length=3, top_k=10)
    assert held.page_major and held.parts["page-major rows"] == built // 80 * pages
    # The stored index is read memory-mapped: the walks' queries then read the rows' positions
    # instead of the layout's, which the rows held in memory replace and rows on disk leave out;
    # making the rows reads every fingerprint's parents, labels and positions once (9 bytes), pages
    # the mapping holds until the index goes.
    positions = QUERY_POSITION_BYTES * 6 * pages
    prepared = (5 + QUERY_POSITION_BYTES) * 6 * pages
    without = estimate_index("spectral", pages, links, n_fingerprints=6, length=3, top_k=10, page_major=False)
    assert held.stages["top-k"][0] - without.stages["top-k"][0] == held.parts["page-major rows"] - positions + prepared
    disk = estimate_index("spectral", pages, links, n_fingerprints=6, length=3, top_k=10, rows_on_disk=True)
    assert disk.rows_on_disk and "page-major rows" not in disk.parts
    assert disk.disk["page-major rows (while the run lasts)"] == held.parts["page-major rows"]
    assert disk.stages["top-k"][0] == without.stages["top-k"][0] - positions + prepared


def test_a_spectral_run_reads_its_trees_as_p_psimrank_does_and_the_rest_whole():
    """A similar run reads a spectral index from the store, memory-mapped, as it reads P-PSimRank's
    (obtain_index(reopen=True)): its lists hold the pages of the trees their queries read, not the
    whole layout, and beside them the embedding, the neighbour and the nearest lists whole. Spectral
    has no twin classes, but making its page-major rows reads the parents and labels once, as
    P-PSimRank's twin classes do: both hold them."""
    pages, links, count = 1_000_000, 9_000_000, 6
    spectral = estimate_index("spectral", pages, links, n_fingerprints=count, length=3, top_k=10)
    walks = estimate_index("ppsimrank", pages, links, n_fingerprints=count, length=3, top_k=10)
    whole = sum(spectral.parts[part] for part in ("link embedding", "neighbour lists", "nearest pages"))
    assert spectral.stages["top-k"][0] - walks.stages["top-k"][0] == whole
    assert spectral.stages["write"] == walks.stages["write"]  # either index let go before the write


def test_freed_arrays_go_back_to_the_system():
    """What the estimates assume: arrays of a few MiB freed between small live blocks leave no
    resident heap behind (glibc's default keeps the 128 MiB here)."""
    def left(mode: str) -> int:
        done = subprocess.run([sys.executable, "-c", FREED_HEAP, mode], capture_output=True, text=True, check=True)
        return int(done.stdout)

    assert left("default") >= 100  # the case the setting is for: shown to happen here
    assert left("set") <= 8
