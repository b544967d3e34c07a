"""PageRank: exact references, invariants, precision, the block-based variant, orderings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linksim.errors import ConfigurationError
from linksim.graph import LinkGraph
from linksim.ordering import position_differences, position_histogram, top_n_similarity
from linksim.pagerank import dangling_layers, pagerank, pagerank_blocked, pagerank_exact

CNR = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "cnr-2000" / "cnr-2000.edges.tsv.gz"


def random_graph(seed: int, n: int = 80, m: int = 240) -> LinkGraph:
    rng = np.random.default_rng(seed)
    graph = LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)
    assert (graph.out_degree == 0).sum() > 0  # the cases of interest have dangling pages
    return graph


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("damping", [0.5, 0.85, 0.95])
def test_equals_the_exact_solution(seed: int, damping: float) -> None:
    graph = random_graph(seed)
    result = pagerank(graph, damping=damping, tol=1e-12, max_iter=1000, dtype=np.float64)
    assert result.converged
    assert np.abs(result.ranks - pagerank_exact(graph, damping)).sum() <= 1e-6
    assert result.ranks.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_float32_default_is_within_tolerance(seed: int) -> None:
    graph = random_graph(seed)
    result = pagerank(graph, tol=1e-7)
    assert result.ranks.dtype == np.float32 and result.converged
    assert np.abs(result.ranks - pagerank_exact(graph)).sum() <= 1e-6
    assert float(result.ranks.sum(dtype=np.float64)) == pytest.approx(1.0, abs=1e-6)
    assert (result.ranks > 0).all()


@pytest.mark.parametrize("seed", range(4))
def test_personalized_equals_exact_personalized(seed: int) -> None:
    graph = random_graph(seed)
    weights = {3: 2.0, 17: 1.0, 40: 1.0}
    result = pagerank(graph, personalization=weights, tol=1e-12, max_iter=1000, dtype=np.float64)
    exact = pagerank_exact(graph, personalization=weights)
    assert np.abs(result.ranks - exact).sum() <= 1e-6
    vector = np.zeros(graph.n)
    vector[[3, 17, 40]] = [0.5, 0.25, 0.25]
    same = pagerank(graph, personalization=vector, tol=1e-12, max_iter=1000, dtype=np.float64)
    np.testing.assert_allclose(same.ranks, result.ranks, atol=1e-12)
    # Personalization moves rank towards the chosen pages.
    assert exact[3] > pagerank_exact(graph)[3]


def test_known_small_graph() -> None:
    # A 2-cycle with a dangling third page linked from both: by symmetry pages 0 and 1 are equal.
    graph = LinkGraph.from_edges(np.array([0, 1, 0, 1]), np.array([1, 0, 2, 2]), 3)
    ranks = pagerank(graph, tol=1e-12, dtype=np.float64).ranks
    c = 0.85
    # x0 = x1 = a, x2 = b: a = (1-c)/3 + c(a/2 + b/3), b = (1-c)/3 + c(a + b/3), 2a + b = 1.
    matrix = np.array([[1 - c / 2, -c / 3], [-c, 1 - c / 3]])
    a, b = np.linalg.solve(matrix, [(1 - c) / 3, (1 - c) / 3])
    a, b = a / (2 * a + b), b / (2 * a + b)
    np.testing.assert_allclose(ranks, [a, a, b], atol=1e-10)


@pytest.mark.parametrize("block_size", [1, 7, 30, 1000])
def test_blocked_equals_in_memory(block_size: int, tmp_path: Path) -> None:
    graph = random_graph(5, n=120, m=500)
    memory = pagerank(graph, tol=1e-7, max_iter=200)
    blocked = pagerank_blocked(graph, tol=1e-7, max_iter=200, block_size=block_size, workdir=tmp_path)
    assert blocked.parameters["blocks"] == -(-graph.n // min(block_size, graph.n))
    assert memory.converged and blocked.converged
    assert abs(blocked.iterations - memory.iterations) <= 1
    assert np.abs(blocked.ranks - memory.ranks).sum() <= 1e-6
    personal = {0: 1.0, 5: 3.0}
    assert np.abs(
        pagerank_blocked(graph, personalization=personal, block_size=block_size).ranks
        - pagerank(graph, personalization=personal).ranks
    ).sum() <= 1e-6


def test_blocked_memory_limit_sets_the_blocks() -> None:
    graph = random_graph(2, n=20_000, m=60_000)
    result = pagerank_blocked(graph, memory_limit=1 << 16)
    assert result.parameters["block_size"] == (1 << 16) * 3 // 4 // 8
    assert result.parameters["blocks"] == -(-graph.n // result.parameters["block_size"])
    assert np.abs(result.ranks - pagerank(graph).ranks).sum() <= 1e-5


def test_dangling_removal_follows_the_paper() -> None:
    # 0 <-> 1 core; 1 -> 2 -> 3 chain: 3 is dangling, then 2 becomes dangling.
    graph = LinkGraph.from_edges(np.array([0, 1, 1, 2]), np.array([1, 0, 2, 3]), 4)
    layers = dangling_layers(graph)
    assert [layer.tolist() for layer in layers] == [[3], [2]]
    result = pagerank(graph, dangling="remove", tol=1e-12, dtype=np.float64)
    assert result.parameters["removed_dangling"] == 2 and result.parameters["removal_passes"] == 2
    c, n = 0.85, 4
    core = 0.5  # the 2-cycle alone has rank 1/2 each
    r2 = (1 - c) / n + c * core / 1  # page 1 had out-degree 2 in the full graph: 1 -> 0, 1 -> 2
    r2 = (1 - c) / n + c * core / 2
    r3 = (1 - c) / n + c * r2 / 1
    expected = np.array([core, core, r2, r3])
    np.testing.assert_allclose(result.ranks, expected / expected.sum(), atol=1e-10)


def test_does_not_converge_and_says_so(caplog) -> None:
    graph = random_graph(1)
    result = pagerank(graph, tol=1e-15, max_iter=5)
    assert not result.converged and result.iterations == 5
    assert "did not converge" in caplog.text
    assert [i for i, _ in result.residuals] == [1, 2, 3, 4, 5]


def test_residual_every_k_and_snapshots() -> None:
    graph = random_graph(3)
    result = pagerank(graph, tol=1e-7, check_every=5, snapshot_every=10)
    assert all(i % 5 == 0 for i, _ in result.residuals[:-1])
    assert result.iterations % 5 == 0 or result.iterations == 100
    assert sorted(result.snapshots) == list(range(10, result.iterations + 1, 10))
    residuals = [r for _, r in result.residuals]
    assert residuals == sorted(residuals, reverse=True)  # the residual shrinks geometrically


@pytest.mark.parametrize(
    "kwargs, message",
    [({"damping": 1.0}, "damping"), ({"tol": 0}, "tol"), ({"max_iter": 0}, "max_iter"),
     ({"dangling": "drop"}, "dangling"), ({"personalization": {999: 1.0}}, "outside"),
     ({"personalization": {1: 0.0}}, "sum to 0")],
)
def test_bad_parameters_name_the_value(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        pagerank(random_graph(0), **kwargs)


def test_ordering_measures() -> None:
    a = np.array([0.4, 0.3, 0.2, 0.1])
    b = np.array([0.3, 0.4, 0.1, 0.2])
    np.testing.assert_allclose(top_n_similarity(a, b, [1, 2, 3, 4]), [0.0, 1.0, 0.5, 1.0])
    assert sorted(position_differences(a, b, top=2).tolist()) == [1, 1]
    counts, starts = position_histogram(a, b, top=4, bucket=1)
    assert counts.tolist() == [0, 4] and starts.tolist() == [0, 1]
    assert top_n_similarity(a, a, [1, 2, 3]).tolist() == [1.0, 1.0, 1.0]


def test_float32_within_1e4_of_float64_on_cnr() -> None:
    if not CNR.exists():
        pytest.fail(f"shared data set missing: {CNR}")
    import pandas as pd

    edges = pd.read_csv(CNR, sep="\t", header=None, names=["s", "t"], comment="#")
    graph = LinkGraph.from_edges(edges.s.to_numpy(), edges.t.to_numpy())
    single = pagerank(graph, max_iter=200)
    double = pagerank(graph, tol=1e-12, max_iter=500, dtype=np.float64)
    assert single.converged and double.converged
    assert np.abs(single.ranks.astype(np.float64) - double.ranks).sum() <= 1e-4


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_threads_do_not_change_the_result(threads: int) -> None:
    graph = random_graph(6, n=3000, m=12000)
    single = pagerank(graph, threads=1)
    parallel = pagerank(graph, threads=threads)
    assert parallel.iterations == single.iterations
    np.testing.assert_array_equal(parallel.ranks, single.ranks)


def changed(graph: LinkGraph, seed: int, share: float) -> LinkGraph:
    """``graph`` with ``share`` of its links moved to random targets (a recrawl's change)."""
    rng = np.random.default_rng(seed)
    source, target = graph.edges()
    moved = rng.random(len(target)) < share
    target = target.copy()
    target[moved] = rng.integers(0, graph.n, int(moved.sum()))
    return LinkGraph.from_edges(source, target, graph.n)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dangling", ["uniform", "remove"])
def test_a_warm_start_converges_to_the_same_ranks_in_fewer_iterations(seed: int, dangling: str) -> None:
    old = random_graph(seed, n=400, m=1600)
    new = changed(old, seed, 0.02)
    previous = pagerank(old, tol=1e-12, max_iter=1000, dtype=np.float64, dangling=dangling).ranks.copy()
    previous[::37] = np.nan  # pages new since start where a cold start does
    cold = pagerank(new, tol=1e-10, max_iter=1000, dtype=np.float64, dangling=dangling)
    warm = pagerank(new, tol=1e-10, max_iter=1000, dtype=np.float64, dangling=dangling, start=previous)
    assert cold.converged and warm.converged and warm.parameters["warm_start"]
    assert warm.iterations < cold.iterations
    # Both stop within c/(1-c) times the last residual of the fixed point.
    bound = 0.85 / 0.15 * 1e-10
    if dangling == "uniform":
        assert np.abs(warm.ranks - pagerank_exact(new)).sum() <= bound
    assert np.abs(warm.ranks - cold.ranks).sum() <= 2 * bound
    assert warm.ranks.sum() == pytest.approx(1.0, abs=1e-12)


def test_a_warm_start_after_a_one_percent_change_of_cnr_saves_iterations_and_keeps_the_ranks() -> None:
    if not CNR.exists():
        pytest.fail(f"shared data set missing: {CNR}")
    import pandas as pd

    edges = pd.read_csv(CNR, sep="\t", header=None, names=["s", "t"], comment="#")
    old = LinkGraph.from_edges(edges.s.to_numpy(), edges.t.to_numpy())
    new = changed(old, 1, 0.01)
    previous = pagerank(old, max_iter=200)
    cold = pagerank(new, max_iter=200)
    warm = pagerank(new, max_iter=200, start=previous.ranks)
    assert cold.converged and warm.converged
    assert warm.iterations < cold.iterations * 0.8, (warm.iterations, cold.iterations)  # 47 against 61
    assert np.abs(warm.ranks.astype(np.float64) - cold.ranks).sum() <= 0.85 / 0.15 * 2e-6 + 1e-6


@pytest.mark.parametrize("start, message", [
    (np.ones(5), "shape"), (-np.ones(80), "non-negative"), (np.zeros(80), "not all 0"),
    (np.full(80, np.inf), "finite"),
])
def test_a_bad_start_vector_is_refused(start, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        pagerank(random_graph(0), start=start)
