"""The index store: what is saved is what is loaded, and a wrong index is refused with a hint."""

from __future__ import annotations

import json

import numpy as np
import pytest

from linksim import store
from linksim.digest import graph_fingerprint
from linksim.fingerprints.minhash import build_minhash_index
from linksim.methods import fingerprint_index
from linksim.graph import LinkGraph


def on_the_command_line(error) -> str:
    """The message as `linksim` prints it: the remedy worded as a command (the core's errors carry
    the method and parameters to build, not a command)."""
    from linksim.cli.main import worded

    return worded(error)


def random_graph(seed: int, n: int = 50, m: int = 160, keys=None) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n, keys=keys)


def build(method: str, graph: LinkGraph, **kwargs):
    if method == "xjaccard":
        return build_minhash_index(graph, n_fingerprints=20, seed=3, **kwargs)
    return fingerprint_index(graph, method, n_fingerprints=20, seed=3, **kwargs)


@pytest.mark.parametrize("method", ["simrank", "psimrank", "xjaccard"])
def test_round_trip_answers_the_same(tmp_path, method: str) -> None:
    graph = random_graph(1)
    index = build(method, graph, decay=0.7)
    store.save(index, tmp_path, method, graph.n, graph.m)
    loaded = store.load(tmp_path, method, graph_fingerprint(graph))
    assert store.parameters_of(loaded) == {"n_fingerprints": 20, "length": index.length, "decay": 0.7, "seed": 3}
    for u in range(0, graph.n, 7):
        assert loaded.related(u, top_k=None) == index.related(u, top_k=None)
        assert loaded.sim(u, (u + 1) % graph.n) == index.sim(u, (u + 1) % graph.n)
    # The decay given at build time is the queries' default.
    some = next(u for u in range(graph.n) if index.related(u, top_k=None))
    best = loaded.related(some, top_k=1)[0][1]
    assert best == pytest.approx(index.related(some, top_k=1, decay=0.7)[0][1])
    assert best != pytest.approx(index.related(some, top_k=1, decay=0.5)[0][1])


def test_a_different_graph_is_refused(tmp_path) -> None:
    graph = random_graph(1, keys=[f"https://x/{i}" for i in range(50)])
    store.save(build("simrank", graph), tmp_path, "simrank", graph.n, graph.m)
    other = random_graph(2, keys=graph.keys)
    with pytest.raises(store.IndexMismatch, match="different graph.*build one with ls.similar.'simrank'.") as info:
        store.load(tmp_path, "simrank", graph_fingerprint(other))
    assert "build one with `linksim index simrank --fingerprints 20 " in on_the_command_line(info.value)
    # Same links, pages named differently: also a different graph.
    renamed = random_graph(1, keys=[f"https://y/{i}" for i in range(50)])
    with pytest.raises(store.IndexMismatch, match="different graph"):
        store.load(tmp_path, "simrank", graph_fingerprint(renamed))
    store.load(tmp_path, "simrank", graph_fingerprint(random_graph(1, keys=list(graph.keys))))


def test_other_parameters_are_refused_fewer_fingerprints_allowed(tmp_path) -> None:
    graph = random_graph(1)
    store.save(build("psimrank", graph), tmp_path, "psimrank", graph.n, graph.m)
    fingerprint = graph_fingerprint(graph)
    with pytest.raises(store.IndexMismatch, match="length=10.*not length=5"):
        store.load(tmp_path, "psimrank", fingerprint, length=5)
    with pytest.raises(store.IndexMismatch, match="20 fingerprints, fewer than the 50"):
        store.load(tmp_path, "psimrank", fingerprint, n_fingerprints=50)
    index = store.load(tmp_path, "psimrank", fingerprint, n_fingerprints=10, length=10, seed=3)
    assert index.n_fingerprints == 20


def test_missing_unreadable_and_foreign_versions(tmp_path) -> None:
    with pytest.raises(store.IndexNotFound, match="no simrank index"):
        store.load(tmp_path, "simrank")
    graph = random_graph(1)
    path = store.save(build("simrank", graph), tmp_path, "simrank", graph.n, graph.m)
    meta = json.loads((path / "meta.json").read_text())
    meta["version"] = 99
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(store.IndexOutdated, match="version 99"):
        store.load(tmp_path, "simrank")
    index = build("simrank", graph)
    # another linksim's index: a build of the same parameters builds it again in its place
    assert store.open_built(tmp_path, "simrank", index.parameters, index.graph_fingerprint) is None
    meta["version"] = store.FORMAT_VERSION
    meta["arrays"]["parent"]["shape"] = [20, 49]
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(store.IndexMismatch, match="parent.npy holds") as damaged:
        store.load(tmp_path, "simrank")
    assert not isinstance(damaged.value, store.IndexOutdated)
    with pytest.raises(store.IndexMismatch, match="parent.npy holds"):  # damage is reported to a build too
        store.open_built(tmp_path, "simrank", index.parameters, index.graph_fingerprint)


FULL_DISK_SAVE = """
import resource, signal, sys
import numpy as np
from linksim import store
from linksim.methods import fingerprint_index
from linksim.graph import LinkGraph

rng = np.random.default_rng(2)
graph = LinkGraph.from_edges(rng.integers(0, 3000, 20000), rng.integers(0, 3000, 20000), 3000)
index = fingerprint_index(graph, "simrank", n_fingerprints=20, seed=3)  # the parameters of the stored one: it is replaced
# The file-size limit makes the kernel refuse writes past 64 KiB (EFBIG), as a full disk would.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))
try:
    store.save(index, sys.argv[1], "simrank", graph.n, graph.m)
except store.IndexStoreError as error:
    print(error)
    sys.exit(error.exit_code)
"""


def test_a_save_that_runs_out_of_space_leaves_the_old_index(tmp_path) -> None:
    import subprocess
    import sys

    graph = random_graph(1)
    old = build("simrank", graph)
    store.save(old, tmp_path, "simrank", graph.n, graph.m)
    result = subprocess.run([sys.executable, "-c", FULL_DISK_SAVE, str(tmp_path)], capture_output=True, cwd="/",
                            text=True, timeout=120)
    assert result.returncode == 8, result.stderr  # the free disk's code (the exit-code table), not a stale index's
    assert f"cannot write the simrank index to {tmp_path}: File too large" in result.stdout
    assert "previous index, if any, is untouched" in result.stdout and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".simrank.lock", "simrank"]  # no staging left
    loaded = store.load(tmp_path, "simrank", graph_fingerprint(graph), verify=True)
    assert np.array_equal(loaded.parent, old.parent)


def _saved(tmp_path, method: str = "simrank"):
    graph = random_graph(1)
    index = build(method, graph)
    store.save(index, tmp_path, method, graph.n, graph.m)
    return graph, index, store.path_of(tmp_path, method, index.parameters)


def _rewrite(path, change, keep_mtime: bool) -> None:
    """Rewrite an array file with a valid header and the same shape, values changed."""
    import os

    before = path.stat()
    array = np.load(path)
    np.save(path, change(array.copy()), allow_pickle=False)
    if keep_mtime:  # as bit rot or a careless copy would: only --verify can tell
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_rewritten_array_is_refused_on_load(tmp_path) -> None:
    graph, _, folder = _saved(tmp_path)
    _rewrite(folder / "parent.npy", lambda a: np.roll(a, 1, axis=1), keep_mtime=False)
    with pytest.raises(store.IndexMismatch, match=r"parent.npy is corrupt \(its content differs .*digest mismatch\).*"
                       r"rebuild=True") as info:
        store.load(tmp_path, "simrank", graph_fingerprint(graph))
    assert on_the_command_line(info.value).endswith(
        "check it with `linksim index simrank --verify`, build it again with `linksim index simrank --rebuild`")


def test_verify_finds_what_a_load_cannot(tmp_path) -> None:
    graph, _, folder = _saved(tmp_path)
    store.verify(tmp_path, "simrank")  # a sound index passes
    _rewrite(folder / "label.npy", lambda a: a[::-1].copy(), keep_mtime=True)
    store.load(tmp_path, "simrank", graph_fingerprint(graph))  # size, header, shape, time: all as saved
    with pytest.raises(store.IndexMismatch, match="label.npy is corrupt .*digest mismatch"):
        store.verify(tmp_path, "simrank")


@pytest.mark.parametrize("name", ["layout_order", "parent", "label"])
def test_a_truncated_array_is_refused(tmp_path, name: str) -> None:
    graph, _, folder = _saved(tmp_path)
    (folder / f"{name}.npy").write_bytes(b"")
    with pytest.raises(store.IndexMismatch, match=rf"{name}.npy is corrupt \(0 bytes, [0-9,]+ written\)"):
        store.load(tmp_path, "simrank", graph_fingerprint(graph))


def test_an_unreadable_header_is_refused(tmp_path) -> None:
    graph, _, folder = _saved(tmp_path, "xjaccard")
    path = folder / "values.npy"
    data = bytearray(path.read_bytes())
    data[:6] = b"NOTNPY"
    path.write_bytes(bytes(data))
    with pytest.raises(store.IndexMismatch, match="values.npy is corrupt .unreadable header"):
        store.load(tmp_path, "xjaccard", graph_fingerprint(graph))


@pytest.mark.parametrize("method, name, bad", [
    ("simrank", "parent", 10**6), ("simrank", "layout_size", 0), ("xjaccard", "values", -5),
])
def test_verify_checks_every_value_range(tmp_path, method: str, name: str, bad: int) -> None:
    graph, _, folder = _saved(tmp_path, method)

    def poke(a):
        a.reshape(-1)[3] = bad
        return a

    _rewrite(folder / f"{name}.npy", poke, keep_mtime=True)
    # Rewrite the recorded digest too: only the value range can tell now.
    meta = json.loads((folder / "meta.json").read_text())
    meta["arrays"][name]["blake2b"] = store.files.array_digest(np.load(folder / f"{name}.npy"))
    (folder / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(store.IndexMismatch, match=rf"{name}.npy is corrupt \(values outside"):
        store.verify(tmp_path, method)


def test_indexes_of_other_parameters_coexist_and_queries_pick_by_graph_state(tmp_path) -> None:
    graph = random_graph(1, keys=[f"https://x/{i}" for i in range(50)])
    state = {"id": "g1", "version": 3, "pages": 50, "links": 160}
    small = fingerprint_index(graph, "simrank", n_fingerprints=20, seed=3)
    large = fingerprint_index(graph, "simrank", n_fingerprints=60, seed=3)
    for index in (small, large):
        store.save(index, tmp_path, "simrank", graph.n, graph.m, urls=graph.keys, state=state)
    assert len(store.stored(tmp_path, "simrank")) == 2
    assert store.open_current(tmp_path, "simrank", state, n_fingerprints=60).index.n_fingerprints == 60
    assert store.open_current(tmp_path, "simrank", state, n_fingerprints=20).meta["parameters"]["n_fingerprints"] in (20, 60)
    opened = store.open_current(tmp_path, "simrank", state, n_fingerprints=20, seed=3)
    assert opened.pages.page("https://x/7") == 7 and opened.pages.page("https://x/none") is None
    assert opened.pages.url(12) == "https://x/12"
    # A load moved the graph on: every read refuses, naming what to run; nothing is rebuilt.
    later = dict(state, version=4, links=161)
    with pytest.raises(store.IndexMismatch, match=r"stale: it was built from version 3 .*version 4 ") as info:
        store.open_current(tmp_path, "simrank", later)
    assert on_the_command_line(info.value).endswith("build one with `linksim index simrank`")
    with pytest.raises(store.IndexNotFound, match=r"no stored simrank index fits .*\.index\(length=5\)") as info:
        store.open_current(tmp_path, "simrank", state, length=5)
    assert on_the_command_line(info.value).endswith("`linksim index simrank --length 5`")
    with pytest.raises(store.IndexNotFound, match="fits ") as info:
        store.open_current(tmp_path, "simrank", state, n_fingerprints=500)
    assert on_the_command_line(info.value).endswith("`linksim index simrank --fingerprints 500`")  # the flag, as typed
    with pytest.raises(store.IndexNotFound, match="no psimrank index ") as info:
        store.open_current(tmp_path, "psimrank", state)
    assert on_the_command_line(info.value).endswith("build one with `linksim index psimrank`")
    # The same links under a newer version: recorded, and the index answers again.
    store.record_state(store.path_of(tmp_path, "simrank", large.parameters), later)
    assert store.open_current(tmp_path, "simrank", later).index.n_fingerprints == 60
    assert len(store.verify(tmp_path, "simrank")) == 2


def test_the_page_table_finds_every_url_by_bisection() -> None:
    from linksim.store.pagetable import PageTable

    urls = [f"https://e.org/{word}" for word in ("zeta", "alpha", "mu", "Ünïcode", "alpha/x", "b")] + ["42"]
    table = PageTable.from_urls(urls)
    assert [table.page(url) for url in urls] == list(range(len(urls)))
    assert table.urls(range(len(urls))) == urls
    assert table.page("https://e.org/") is None and table.page("zzz") is None and table.page("") is None
    empty = PageTable.from_urls([])
    assert len(empty) == 0 and empty.page("x") is None


@pytest.mark.parametrize("method", ["simrank", "psimrank"])
def test_an_index_built_on_disk_equals_the_one_built_in_memory(tmp_path, method: str) -> None:
    from linksim.ranking.topk import top_k_all
    from linksim.methods import fingerprint_index

    graph = random_graph(4)
    in_memory = fingerprint_index(graph, method, 25, seed=6)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    on_disk = fingerprint_index(graph, method, 25, seed=6, directory=scratch)
    assert isinstance(on_disk.parent, np.memmap) and isinstance(on_disk.layout().order, np.memmap)
    memory_arrays, disk_arrays = in_memory.store_arrays(), on_disk.store_arrays()
    for name, array in memory_arrays.items():  # the same arrays, bit for bit
        assert disk_arrays[name].dtype == array.dtype and np.array_equal(disk_arrays[name], array), name
    expected = top_k_all(in_memory, top_k=4, workers=1, show_progress=False)
    got = top_k_all(on_disk, top_k=4, workers=1, show_progress=False)
    assert all(np.array_equal(a, b) for a, b in zip(expected, got))
    # The store moves the files built on disk instead of copying them; the stored index loads
    # with the same digests as the one saved from memory.
    store.save(on_disk, tmp_path / "a", method, graph.n, graph.m)
    store.save(in_memory, tmp_path / "b", method, graph.n, graph.m)
    assert sorted(p.name for p in scratch.iterdir()) == []
    meta_a = store.describe(tmp_path / "a", method, store.parameters_of(on_disk))
    meta_b = store.describe(tmp_path / "b", method, store.parameters_of(in_memory))
    assert {k: v["blake2b"] for k, v in meta_a["arrays"].items()} == {
        k: v["blake2b"] for k, v in meta_b["arrays"].items()}
    loaded = store.load(tmp_path / "a", method, graph_fingerprint(graph), verify=True)
    assert [loaded.related(u, top_k=4) for u in range(graph.n)] == [in_memory.related(u, top_k=4)
                                                                  for u in range(graph.n)]


KILLED_SAVE = """
import os, sys
import numpy as np
from linksim import store
from linksim.graph import LinkGraph
from linksim.methods import fingerprint_index

rng = np.random.default_rng(1)
graph = LinkGraph.from_edges(rng.integers(0, 50, 160), rng.integers(0, 50, 160), 50)
index = fingerprint_index(graph, "simrank", n_fingerprints=20, seed=3)
from linksim.store import write
real = write._write_npy
def write_then_die(path, array):
    real(path, array)
    os._exit(9)  # killed half-way through the save: no cleanup of any kind runs
write._write_npy = write_then_die
store.save(index, sys.argv[1], sys.argv[2], graph.n, graph.m)
"""


def test_scratch_of_a_killed_save_is_removed_by_the_next_save_or_load(tmp_path) -> None:
    import os
    import subprocess
    import sys

    def killed_save(method: str) -> list:
        result = subprocess.run([sys.executable, "-c", KILLED_SAVE, str(tmp_path), method], cwd="/", timeout=120)
        assert result.returncode == 9
        return [p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith(".")]

    graph = random_graph(1)
    assert len(killed_save("simrank")) == 1  # a full-size staging folder is left behind
    mine = tmp_path / f".new-{os.getpid()}-psimrank-live"  # a save running now: never touched
    mine.mkdir()
    # The next load of any method removes it (not only the next save of the same method) ...
    with pytest.raises(store.IndexNotFound):
        store.load(tmp_path, "xjaccard")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".new")) == [mine.name]
    # ... and so does the next save.
    assert len(killed_save("psimrank")) == 2
    store.save(build("xjaccard", graph), tmp_path, "xjaccard", graph.n, graph.m)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".new")) == [mine.name]
