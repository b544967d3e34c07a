"""The graph streamed from a real Neo4j through the spool on disk (forced: 5,000 links in memory)
is the graph streamed in memory, bit for bit, and so is the SimRank index built from it."""

from __future__ import annotations

import numpy as np

from linksim.methods import method
from linksim.procedures import QueryRunner
from linksim.procedures.stream import stream_link_graph


def test_the_graph_streamed_through_the_spool_is_the_graph_streamed_in_memory(wikispeedia: QueryRunner, tmp_path,
                                                                              monkeypatch) -> None:
    monkeypatch.setenv("LINKSIM_HOME", str(tmp_path))  # where the spool goes
    in_memory = stream_link_graph(wikispeedia, show_progress=False, chunk=500).graph
    spooled = stream_link_graph(wikispeedia, show_progress=False, chunk=500, spool_links=5_000).graph
    assert in_memory.m > 100_000
    for name in ("out_indptr", "out_indices", "in_indptr", "in_indices"):
        a, b = getattr(in_memory, name), getattr(spooled, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert in_memory.keys == spooled.keys
    assert [p.name for p in (tmp_path / "spool").iterdir()] == []  # the spool went with the stream
    a = method("simrank").build_index(in_memory, n_fingerprints=20, length=6).store_arrays()
    b = method("simrank").build_index(spooled, n_fingerprints=20, length=6).store_arrays()
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)
