"""Top-k of every page: the same lists as one query per page, with any number of workers."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.fingerprints import build_index, build_minhash_index
from linksim.graph import LinkGraph
from linksim.topk import top_k_all


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("kind", ["psimrank", "xjaccard"])
def test_top_k_all_equals_related_per_page(workers: int, kind: str) -> None:
    rng = np.random.default_rng(3)
    graph = LinkGraph.from_edges(rng.integers(0, 70, 250), rng.integers(0, 70, 250), 70)
    index = build_minhash_index(graph, 30, seed=1) if kind == "xjaccard" else build_index(graph, kind, 30, seed=1)
    source, target, score, rank = top_k_all(index, top_k=4, threshold=0.01, workers=workers, chunk=9,
                                            show_progress=False)
    got: dict[int, list] = {}
    for s, t, v, r in zip(source, target, score, rank):
        got.setdefault(int(s), []).append((int(t), float(v), int(r)))
    for u in range(graph.n):
        expected = index.related(u, top_k=4, threshold=0.01)
        assert [(t, v) for t, v, _ in got.get(u, [])] == expected
        assert [r for _, _, r in got.get(u, [])] == list(range(1, len(expected) + 1))
    assert len(got) > 0
