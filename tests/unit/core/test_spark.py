"""The Spark jobs (really run, local mode) against the numpy core: the same arrays bit for bit,
whatever the partitioning; PageRank within 1e-9; the same top-k lists."""

from __future__ import annotations

import numpy as np
import pytest

from linksim import spark as jobs
from linksim.graph import LinkGraph
from linksim.fingerprints.minhash import build_minhash_index
from linksim.pagerank import pagerank
from linksim.fingerprints.randomness import draws, order_keys, stream_key
from linksim.methods import METHODS, fingerprint_index


def random_graph(seed: int, n: int = 150, m: int = 700) -> LinkGraph:
    rng = np.random.default_rng(seed)
    # A few hubs get many in-links (coalescing early), some pages none (walks stop).
    target = np.where(rng.random(m) < 0.3, rng.integers(0, 5, m), rng.integers(0, n - 10, m))
    return LinkGraph.from_edges(rng.integers(0, n, m), target, n)


def keyed_graph(seed: int) -> LinkGraph:
    """:func:`random_graph` with URLs: its draws are keyed by the URLs' codes, not the page numbers."""
    graph = random_graph(seed)
    source, target = graph.edges()
    urls = [f"https://site{p % 7}.example/p{p}" for p in range(graph.n)]
    return LinkGraph.from_edges(source, target, graph.n, keys=urls)


def test_hash_columns_equal_the_compiled_draws(spark) -> None:
    from pyspark.sql import functions as F

    key = stream_key(2026, 3, 7)
    pages = np.arange(1_000, dtype=np.uint64)
    frame = spark.range(1_000).select(
        jobs.draw_column(F.lit(jobs.signed(key)), F.col("id")).alias("draw"),
        jobs.order_key_column(F.lit(jobs.signed(key)), F.col("id")).alias("order"),
    ).toPandas()
    np.testing.assert_array_equal(frame["draw"].to_numpy().view(np.uint64), draws(np.uint64(key), pages))
    np.testing.assert_array_equal(frame["order"].to_numpy(), order_keys(np.uint64(key), pages))
    # Keyed by URL codes: the executors' codes of the URLs are the driver's, and so are the draws.
    graph = keyed_graph(1)
    urls = spark.createDataFrame([(p, url) for p, url in enumerate(graph.keys)], "page int, url string")
    codes = jobs.url_codes(urls).orderBy("page").toPandas()
    np.testing.assert_array_equal(codes["code"].to_numpy().view(np.uint64), graph.codes)
    frame = jobs.codes_frame(spark, graph.codes).select(
        "page", jobs.order_key_column(F.lit(jobs.signed(key)), F.col("page"), F.col("code")).alias("order"),
    ).orderBy("page").toPandas()
    np.testing.assert_array_equal(frame["order"].to_numpy(), order_keys(np.uint64(key), graph.codes))
    assert not np.array_equal(graph.codes, pages[: graph.n])


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank"])
def test_fingerprint_graphs_of_a_graph_with_urls_equal_numpy_bit_for_bit(spark, method: str) -> None:
    graph = keyed_graph(3)
    codes = jobs.codes_frame(spark, graph.codes)
    parent, label = jobs.fingerprint_graphs(jobs.edges_frame(spark, graph, 3), graph.n, METHODS[method].walk, 2, 5, seed=11,
                                            partitions=3, codes=codes)
    index = fingerprint_index(graph, method, 2, 5, seed=11)
    np.testing.assert_array_equal(parent, index.parent)
    np.testing.assert_array_equal(label, index.label)
    unkeyed = fingerprint_index(random_graph(3), method, 2, 5, seed=11)
    assert not np.array_equal(unkeyed.parent, index.parent)  # the codes, not the numbers, drew these
    values = jobs.minhash(jobs.edges_frame(spark, graph, 3), graph.n, 3, 3, seed=4, partitions=3, codes=codes)
    np.testing.assert_array_equal(values, build_minhash_index(graph, 3, 3, seed=4).values)


# Each method under two partitionings (3 in the test above): the methods' steps differ in the key
# each step minimises, not in how the rows are partitioned, so the three partition counts are
# spread over the methods rather than crossed with them (nine Spark runs took about 70 s).
@pytest.mark.parametrize(("method", "partitions"), [("simrank", 1), ("psimrank", 2), ("ppsimrank", 7)])
def test_fingerprint_graphs_equal_numpy_bit_for_bit(spark, method: str, partitions: int) -> None:
    graph = random_graph(partitions)
    edges = jobs.edges_frame(spark, graph, partitions)
    # With 2 partitions, the fingerprints walked one batch at a time: the same arrays again.
    parent, label = jobs.fingerprint_graphs(edges, graph.n, METHODS[method].walk, 2, 5, seed=11, partitions=partitions,
                                            batch=1 if partitions == 2 else None)
    index = fingerprint_index(graph, method, 2, 5, seed=11)
    assert (index.parent >= 0).sum() > graph.n  # walks did meet: the comparison says something
    np.testing.assert_array_equal(parent, index.parent)
    np.testing.assert_array_equal(label, index.label)


def test_minhash_equals_numpy(spark) -> None:
    graph = random_graph(5)
    values = jobs.minhash(jobs.edges_frame(spark, graph, 7), graph.n, 3, 3, seed=4, partitions=7)
    np.testing.assert_array_equal(values, build_minhash_index(graph, 3, 3, seed=4).values)


def test_pagerank_within_1e9_of_numpy(spark) -> None:
    graph = random_graph(6)
    assert (graph.out_degree == 0).any()  # dangling pages: their rank is spread
    # damping 0.6 (a parameter passed through): converged to 1e-10 in fewer Spark iterations
    result = jobs.pagerank(jobs.edges_frame(spark, graph, 2), graph.n, damping=0.6, tol=1e-10, max_iter=300,
                           partitions=2)
    reference = pagerank(graph, damping=0.6, tol=1e-10, max_iter=300, dtype=np.float64)
    assert result.converged and result.iterations == reference.iterations
    assert np.abs(result.ranks - reference.ranks).sum() < 1e-9
    assert abs(result.ranks.sum() - 1.0) < 1e-12


def test_top_k_lists_of_spark_tasks_equal_the_single_machine(spark, tmp_path) -> None:
    from linksim import store
    from linksim.ranking.topk import top_k_all

    graph = random_graph(7)
    index = fingerprint_index(graph, "psimrank", 20, 6, seed=1)
    index.graph_fingerprint = "g"
    path = store.save(index, tmp_path, "psimrank", graph.n, graph.m)
    frame = jobs.top_k_lists(spark, str(path), graph.n, top_k=5, partitions=3).toPandas()
    frame = frame.sort_values(["source", "rank"])
    source, target, score, rank = top_k_all(index, top_k=5, show_progress=False, workers=1)
    assert len(frame) == len(source) > 0
    np.testing.assert_array_equal(frame["source"], source)
    np.testing.assert_array_equal(frame["target"], target)
    np.testing.assert_array_equal(frame["score"], score)
    np.testing.assert_array_equal(frame["rank"], rank)


def test_ansi_mode_is_refused(spark) -> None:
    from linksim.errors import ConfigurationError

    graph = random_graph(8)
    edges = jobs.edges_frame(spark, graph, 1)
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        with pytest.raises(ConfigurationError, match="ansi"):
            jobs.fingerprint_graphs(edges, graph.n, METHODS["simrank"].walk, 1, 2, seed=0, partitions=1)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", "false")


def test_an_index_built_from_an_edge_file_is_written_as_parquet(spark, tmp_path, capsys) -> None:
    """`linksim spark index --edges FILE --parquet DIR`: no Neo4j; duplicates and self-links of
    the file dropped as LinkGraph drops them; the Parquet rows are numpy's arrays."""
    import gzip
    import json

    from linksim.cli.main import main

    rng = np.random.default_rng(9)
    source, target = rng.integers(0, 80, 400), rng.integers(0, 80, 400)
    path = tmp_path / "crawl.tsv.gz"
    with gzip.open(path, "wt") as out:
        out.write("# source\ttarget\n" + "".join(f"{s}\t{t}\n" for s, t in zip(source, target)))
    n = int(max(source.max(), target.max())) + 1
    assert main(["-q", "spark", "index", "psimrank", "--edges", str(path), "--parquet", str(tmp_path / "out"),
                 "--fingerprints", "3", "--length", "5", "--seed", "2", "--json"]) == 0
    meta = json.loads(capsys.readouterr().out)
    graph = LinkGraph.from_edges(source, target, n)
    assert meta["graph"] == {"pages": graph.n, "links": graph.m}
    expected = fingerprint_index(graph, "psimrank", 3, 5, seed=2)
    rows = spark.read.parquet(str(tmp_path / "out")).toPandas()
    parent = np.full((3, n), -1, dtype=np.int32)
    label = np.zeros((3, n), dtype=np.int8)
    parent[rows["fp"], rows["page"]] = rows["parent"]
    label[rows["fp"], rows["page"]] = rows["label"]
    np.testing.assert_array_equal(parent, expected.parent)
    np.testing.assert_array_equal(label, expected.label)
    assert main(["-q", "spark", "index", "psimrank", "--edges", str(path)]) == 2  # where would it go?
    assert "--parquet" in capsys.readouterr().err


def test_a_bad_edge_file_is_refused_with_its_line(spark, tmp_path, capsys) -> None:
    from linksim.cli.main import main

    path = tmp_path / "bad.tsv"
    path.write_text("0\t1\n1\t2\nthree\t4\n")
    out = tmp_path / "out"
    assert main(["-q", "spark", "index", "simrank", "--edges", str(path), "--parquet", str(out)]) == 4
    err = capsys.readouterr().err
    assert "three" in err and "Nothing was built" in err and "Traceback" not in err
    assert not out.exists()  # nothing half-written
    assert main(["-q", "spark", "index", "simrank", "--edges", str(tmp_path / "missing.tsv"), "--parquet",
                 str(out)]) == 4


WORKERS_IN_A_CHECKOUT = """
import sys
import numpy as np
from linksim import spark as jobs, store
from linksim.graph import LinkGraph
from linksim.methods import METHODS, fingerprint_index

rng = np.random.default_rng(3)
graph = LinkGraph.from_edges(rng.integers(0, 40, 160), rng.integers(0, 40, 160), 40)
index = fingerprint_index(graph, "psimrank", 5, 4, seed=1)
index.graph_fingerprint = "g"
path = store.save(index, sys.argv[1], "psimrank", graph.n, graph.m)
spark = jobs.session("local[1]", 2)
rows = jobs.top_k_lists(spark, str(path), graph.n, top_k=3, partitions=2).count()
print("rows", rows)
"""


def test_spark_tasks_import_the_installed_linksim_not_a_folder_in_the_working_directory(tmp_path) -> None:
    """A user in a source checkout (a `linksim` folder where the command runs): the tasks'
    Python must not import it (it imports nothing but fails here, as an old checkout would)."""
    import subprocess
    import sys

    checkout = tmp_path / "checkout"
    (checkout / "linksim").mkdir(parents=True)
    (checkout / "linksim" / "__init__.py").write_text("raise ImportError('the checkout, not the installed linksim')\n")
    script = tmp_path / "job.py"  # outside the checkout: the driver imports the installed linksim
    script.write_text(WORKERS_IN_A_CHECKOUT)
    result = subprocess.run([sys.executable, str(script), str(tmp_path / "indexes")], cwd=checkout,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "rows " in result.stdout and "the checkout, not the installed" not in result.stderr


def test_spectral_index_on_spark_equals_numpy_bit_for_bit(spark) -> None:
    from linksim.spectral import NEAREST, build_spectral_index

    graph = random_graph(12, n=260, m=1_300)
    parameters = {"n_fingerprints": 6, "length": 3, "seed": 2, "decay": 0.6}
    rows = jobs.spectral_rows(jobs.edges_frame(spark, graph, 3), graph.n, 6, 3, 2, partitions=3)
    built = jobs.spectral_index(rows, parameters, graph.n)
    expected = build_spectral_index(graph, 6, 3, seed=2)
    np.testing.assert_array_equal(built.fingerprints.parent, expected.fingerprints.parent)
    np.testing.assert_array_equal(built.fingerprints.label, expected.fingerprints.label)
    np.testing.assert_array_equal(built.neighbour_indptr, expected.neighbour_indptr)
    np.testing.assert_array_equal(built.neighbour_indices, expected.neighbour_indices)
    assert built.embedding.shape == expected.embedding.shape and expected.embedding.any()
    np.testing.assert_array_equal(built.embedding, expected.embedding)
    np.testing.assert_array_equal(built.nearest, expected.nearest)
    for u in range(graph.n):
        assert built.related(u, top_k=NEAREST) == expected.related(u, top_k=NEAREST)


def test_the_embedding_solved_on_the_executors_equals_numpy_bit_for_bit(spark, monkeypatch) -> None:
    import linksim.embedding
    import linksim.lowrank
    from linksim.spark_lowrank import embedding_and_share as on_executors

    # Chunks of 64 pages (five, the last short): the start block, Gram matrices, rotations and
    # Rayleigh-Ritz products are each the one-machine solver's over the same chunks, which it is told
    # to use too. (spectral_rows' test covers one chunk, at the default's passes and rank.)
    chunk = 64
    monkeypatch.setattr(linksim.lowrank, "CHUNK", chunk)
    monkeypatch.setattr(linksim.embedding, "CHUNK", chunk)
    graph = random_graph(5, n=300, m=1_600)
    expected, held = linksim.embedding.embedding_and_share(graph, 20, seed=3, passes=2)
    blocks, share = on_executors(jobs.edges_frame(spark, graph, 3), graph.n, 20, seed=3, passes=2, partitions=3,
                                 chunk=chunk)
    got = np.concatenate([rows for _, rows in sorted(blocks.collect(), key=lambda item: item[0])])
    assert expected.shape == (300, 20) and np.abs(expected).sum() > 0
    np.testing.assert_array_equal(got, expected)
    assert share == held and 0 < share <= 1
