"""The indexes built on Apache Spark: the same definitions as the numpy core, the same numbers.

Each job takes the link graph as a DataFrame of dense page indices ``(src, dst)`` (duplicates
merged, no self-links: what :class:`linksim.graph.LinkGraph` holds) and the number of pages ``n``.

- :func:`pagerank`: the power iteration of :func:`linksim.pagerank.pagerank` (uniform teleport,
  dangling mass spread uniformly, L1 residual, normalised to 1 every step), one join of the
  ranks with the links per iteration, in double precision.
- :func:`fingerprint_graphs`: SimRank / PSimRank coalescing reversed walks, all N fingerprints
  at once (the 2005 paper's N-way parallelism): a row per active walk ``(fp, start, pos)``; a
  step joins the walks with the in-links of the pages they stand on, draws the choice from
  (seed, fingerprint, step, page) exactly as :mod:`linksim.fingerprints.randomness` does (SplitMix64 in
  Spark's 64-bit integer arithmetic, which wraps like the unsigned one when ANSI mode is off),
  then groups the walks by new position: the smallest start of each group goes on, the others
  get their fingerprint-graph edge ``(parent, label = step)``. Nothing depends on how the rows
  are partitioned, so the arrays equal :func:`linksim.fingerprints.walks.build_index`'s bit for bit.
- :func:`minhash`: extended-Jaccard min-hash fingerprints, one join of the current minima with
  the links per step (2005 paper, Algorithm 3), equal to :func:`linksim.fingerprints.minhash.build_minhash_index`.
- :func:`top_k_lists`: every page's top-k, the pages shared out to Spark tasks, each task
  answering its pages from the stored index with the single-machine compiled query (the
  fingerprint trees read level by level with the exact bound c^(t+1), then Lemma 2): no pair of
  a giant tree is generated, and the lists are the single machine's, float for float.

pyspark is imported only here (``pip install 'linksim[spark]'``); the core stays usable without it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from linksim.errors import ConfigurationError, LinksimError
from linksim.fingerprints.index import NO_PARENT
from linksim.fingerprints.randomness import GAMMA, MIX_1, MIX_2, inward, signed, stream_key


def _functions():
    try:
        from pyspark.sql import functions
    except ImportError:  # pragma: no cover - the message is the point
        raise ConfigurationError("Spark is not installed: pip install 'linksim[spark]'") from None
    return functions


def session(master: str = "local[2]", partitions: int = 4, app_name: str = "linksim", config: dict | None = None):
    """A SparkSession for linksim's jobs: ``spark.sql.shuffle.partitions`` = ``partitions`` (the
    default 200 makes each small shuffle of local mode slow), ANSI mode off (the hashing wraps on
    purpose), no web UI, the driver on loopback in local mode; ``config``: more settings (the jars
    of a connector, for instance). An active session is reused: its settings are checked."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise ConfigurationError("Spark is not installed: pip install 'linksim[spark]'") from None
    # The tasks' Python must import linksim from where it is installed, never from a `linksim`
    # folder in the working directory (a source checkout): Python >= 3.11 leaves the unsafe path
    # out of sys.path under PYTHONSAFEPATH, in the workers of local mode (which inherit this
    # process's environment) and on a cluster's executors.
    os.environ.setdefault("PYTHONSAFEPATH", "1")
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.executorEnv.PYTHONSAFEPATH", "1")
               .config("spark.sql.shuffle.partitions", str(partitions))
               .config("spark.default.parallelism", str(partitions))
               .config("spark.sql.ansi.enabled", "false")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.adaptive.enabled", "false"))
    if master.startswith("local"):
        import sys

        # The tasks' Python is this one (with linksim and numpy), not the first `python3` on PATH.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    spark.conf.set("spark.sql.ansi.enabled", "false")
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def edges_frame(spark, graph, partitions: int = 4):
    """A :class:`LinkGraph`'s links as a DataFrame ``(src, dst)`` of ``partitions`` partitions."""
    import pandas as pd

    source, target = graph.edges()
    frame = pd.DataFrame({"src": source.astype(np.int32), "dst": target.astype(np.int32)})
    return spark.createDataFrame(frame, "src int, dst int").repartition(partitions)


class EdgeListError(LinksimError):
    """An edge list that cannot be read as links between page numbers."""

    exit_code = 4


def read_edges(spark, path: str, partitions: int = 4):
    """``(edges, n)`` from a crawl's edge list of page numbers: Parquet (columns ``src``, ``dst``)
    or text (``.tsv``, ``.txt``, ``.edges``, gzip or not: two integers a line, ``#`` comments),
    the format of ``../shared/data/cnr-2000``. Pages are ``0 .. max``; duplicates and self-links
    are dropped, as :meth:`LinkGraph.from_edges` does, so the index equals the one numpy builds
    from the same file."""
    F = _functions()
    from pathlib import Path

    name = Path(path).name.lower()
    if "://" not in str(path) and not Path(path).exists():
        raise EdgeListError(f"{path}: no such file")
    if name.endswith(".parquet") or Path(path).is_dir():
        raw = spark.read.parquet(str(path))
        if not {"src", "dst"} <= set(raw.columns):
            raise EdgeListError(f"{path}: a Parquet edge list needs columns src and dst, has {raw.columns}")
        raw = raw.select(F.col("src").cast("long"), F.col("dst").cast("long"), F.lit(None).cast("string").alias("line"))
    else:
        raw = spark.read.csv(str(path), sep="\t", comment="#", schema="src long, dst long, line string",
                             columnNameOfCorruptRecord="line")
    bad = raw.where(F.col("src").isNull() | F.col("dst").isNull() | F.col("line").isNotNull() | (F.col("src") < 0)
                    | (F.col("dst") < 0) | (F.col("src") >= 2**31 - 1) | (F.col("dst") >= 2**31 - 1)).limit(1).collect()
    if bad:
        shown = bad[0]["line"] or f"{bad[0]['src']}\t{bad[0]['dst']}"
        raise EdgeListError(f"{path}: every line needs two page numbers in 0 .. 2^31 - 2, tab-separated; "
                            f"found {shown!r}. Nothing was built.")
    edges = (raw.where(F.col("src") != F.col("dst")).select(F.col("src").cast("int"), F.col("dst").cast("int"))
             .distinct().repartition(partitions).localCheckpoint(eager=True))
    top = edges.agg(F.max(F.greatest("src", "dst"))).first()[0]
    return edges, (0 if top is None else int(top) + 1)


# SplitMix64 in Spark Column arithmetic ------------------------------------------------------------
def _mix(z):
    F = _functions()
    z = z.bitwiseXOR(F.shiftrightunsigned(z, 30)) * F.lit(signed(MIX_1))
    z = z.bitwiseXOR(F.shiftrightunsigned(z, 27)) * F.lit(signed(MIX_2))
    return z.bitwiseXOR(F.shiftrightunsigned(z, 31))


def draw_column(key, code):
    """``draw(key, code)`` of :mod:`linksim.fingerprints.randomness` as a Spark long Column (same 64
    bits; ``code``: a page's draw code, a long of the same bits as the uint64)."""
    F = _functions()
    return _mix(key + code.cast("long") * F.lit(signed(GAMMA)))


def order_key_column(key, page, code=None):
    """``(draw(key, code) >> 33) << 32 | page``: a page's place in the stream's random order
    (non-negative; ``code`` by default the page's number)."""
    F = _functions()
    code = page if code is None else code
    return F.shiftleft(F.shiftrightunsigned(draw_column(key, code), 33), 32).bitwiseOR(page.cast("long"))


def codes_frame(spark, codes: np.ndarray):
    """The pages' draw codes (:attr:`linksim.graph.LinkGraph.codes`) as a DataFrame ``(page, code)``
    (the uint64 codes as longs of the same bits), for the jobs' ``codes``."""
    import pandas as pd

    frame = pd.DataFrame({"page": np.arange(len(codes), dtype=np.int32),
                          "code": np.asarray(codes, dtype=np.uint64).view(np.int64)})
    return spark.createDataFrame(frame, "page int, code long")


def url_codes(pages):
    """The draw codes of pages ``(page, url)`` as ``(page, code)``: :func:`linksim.graph.key_codes`
    of each URL, computed by the executors (the same function as the numpy build's)."""
    F = _functions()

    @F.pandas_udf("long")  # its type hints name the module's pd, as Spark reads them
    def code(urls: pd.Series) -> pd.Series:
        from linksim.graph import key_codes

        return pd.Series(key_codes(urls.tolist()).view(np.int64))

    return pages.select("page", code("url").alias("code"))


def _with_code(frame, column: str, codes, alias: str):
    """``frame`` with the draw code of the page in ``column`` as ``alias``: from ``codes``
    (:func:`codes_frame`), or the page's number when there are none (a graph without keys)."""
    F = _functions()
    if codes is None:
        return frame.withColumn(alias, F.col(column).cast("long"))
    return frame.join(codes.select(F.col("page").alias(column), F.col("code").alias(alias)), column)


def _keys(spark, seed: int, fingerprints: range, step: int):
    """The stream key of each fingerprint at ``step`` and its direction coin (P-PSimRank):
    ``(fp, key, inward)``, a small table to broadcast."""
    F = _functions()
    rows = []
    for i in fingerprints:
        key = stream_key(seed, i, step)
        rows.append((i, signed(key), inward(key)))
    return F.broadcast(spark.createDataFrame(rows, "fp int, key long, inward boolean"))


def closed_neighbourhoods(edges, n: int, partitions: int, codes=None):
    """``(pos, inward, cand, cand_code)``: each page's closed in-neighbourhood (``inward`` true:
    the page and the pages linking to it) and closed out-neighbourhood (false: the page and the
    pages it links to), the choice sets of P-PSimRank's walks, with each candidate's draw code."""
    F = _functions()
    spark = edges.sparkSession
    pages = spark.range(n).select(F.col("id").cast("int").alias("pos"), F.col("id").cast("int").alias("cand"))
    parts = [edges.select(F.col("dst").alias("pos"), F.lit(True).alias("inward"), F.col("src").alias("cand")),
             edges.select(F.col("src").alias("pos"), F.lit(False).alias("inward"), F.col("dst").alias("cand")),
             pages.select("pos", F.lit(True).alias("inward"), "cand"),
             pages.select("pos", F.lit(False).alias("inward"), "cand")]
    return _materialise(_with_code(_union(parts, spark, "pos int, inward boolean, cand int"), "cand", codes,
                                   "cand_code"), partitions)


def _check_spark_settings(spark, partitions: int | None = None) -> None:
    if partitions is not None:  # the joins and groupings of the job make this many partitions
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    if spark.conf.get("spark.sql.ansi.enabled", "false").lower() == "true":
        raise ConfigurationError("linksim's Spark jobs need spark.sql.ansi.enabled=false (64-bit hashing wraps "
                                 "around on purpose); linksim.spark.session sets it")


def _materialise(frame, partitions: int):
    """Cut the lineage of an iterated frame (each step builds on the last) and keep it in memory."""
    return frame.localCheckpoint(eager=True)


# PageRank -------------------------------------------------------------------------------------------
@dataclass
class SparkPageRank:
    ranks: np.ndarray  # float64, one per page
    iterations: int
    converged: bool
    residual: float
    seconds: float


def pagerank(edges, n: int, damping: float = 0.85, tol: float = 1e-6, max_iter: int = 100,
             partitions: int = 4, log=None) -> SparkPageRank:
    """PageRank with uniform teleport and dangling spread (see module); ``edges``: ``(src, dst)``."""
    F = _functions()
    from linksim.parameters import check_parameters

    check_parameters(damping=damping, tol=tol, max_iter=max_iter)
    spark = edges.sparkSession
    _check_spark_settings(spark, partitions)
    began = time.monotonic()
    degree = edges.groupBy("src").agg(F.count("*").alias("degree"))
    links = _materialise(
        edges.join(degree, "src").select("src", "dst", (F.lit(1.0) / F.col("degree")).alias("weight")), partitions
    )
    pages = spark.range(n).select(F.col("id").cast("int").alias("page"))
    flagged = pages.join(degree.withColumnRenamed("src", "page"), "page", "left")
    ranks = _materialise(flagged.select("page", F.lit(1.0 / n).alias("rank"), F.col("degree").isNull().alias("dangling")),
                         partitions)
    lost = ranks.where("dangling").agg(F.sum("rank")).first()[0] or 0.0  # the dangling pages' rank
    residual, converged, iteration = float("inf"), False, 0
    for iteration in range(1, max_iter + 1):
        received = (links.join(ranks.select(F.col("page").alias("src"), "rank"), "src")
                    .groupBy("dst").agg(F.sum(F.col("rank") * F.col("weight")).alias("received")))
        following = _materialise(
            ranks.join(received.withColumnRenamed("dst", "page"), "page", "left")
            .select("page", "dangling", F.col("rank").alias("before"),
                    (F.lit(damping) * F.coalesce(F.col("received"), F.lit(0.0)) + F.lit((1.0 - damping) / n)
                     + F.lit(damping * lost / n)).alias("rank")),
            partitions,
        )
        # One pass: the total (the ranks are then normalised to exactly 1, as the numpy path does),
        # the dangling pages' share, and the L1 residual (before the division by a total within
        # 1e-15 of 1: the same residual to that precision).
        total, lost, residual = following.agg(
            F.sum("rank"), F.sum(F.when(F.col("dangling"), F.col("rank"))),
            F.sum(F.abs(F.col("rank") - F.col("before"))),
        ).first()
        lost = (lost or 0.0) / total
        ranks = following.select("page", "dangling", (F.col("rank") / F.lit(total)).alias("rank"))
        if log:
            log(f"PageRank iteration {iteration}: residual {residual:.3g}")
        if residual < tol:
            converged = True
            break
    values = np.zeros(n, dtype=np.float64)
    frame = ranks.toPandas()
    values[frame["page"].to_numpy()] = frame["rank"].to_numpy()
    return SparkPageRank(values, iteration, converged, residual, time.monotonic() - began)


# Fingerprint graphs -------------------------------------------------------------------------------------
def fingerprint_graphs(edges, n: int, walk, n_fingerprints: int, length: int, seed: int,
                       partitions: int = 4, log=None, stats: dict | None = None,
                       batch: int | None = None, codes=None) -> tuple[np.ndarray, np.ndarray]:
    """``(parent, label)`` arrays, (N, n) int32 and int8, of :func:`linksim.fingerprints.walks.build_index`,
    collected from :func:`fingerprint_rows`."""
    return fingerprint_arrays(fingerprint_rows(edges, n, walk, n_fingerprints, length, seed, partitions, log,
                                               stats, batch, codes), n_fingerprints, n)


def fingerprint_arrays(rows, n_fingerprints: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows of :func:`fingerprint_rows` gathered in the driver as ``(parent, label)``."""
    parent = np.full((n_fingerprints, n), NO_PARENT, dtype=np.int32)
    label = np.zeros((n_fingerprints, n), dtype=np.int8)
    frame = rows.toPandas()
    fp, page = frame["fp"].to_numpy(), frame["page"].to_numpy()
    parent[fp, page] = frame["parent"].to_numpy()
    label[fp, page] = frame["label"].to_numpy()
    return parent, label


def fingerprint_rows(edges, n: int, walk, n_fingerprints: int, length: int, seed: int,
                     partitions: int = 4, log=None, stats: dict | None = None, batch: int | None = None, codes=None):
    """The fingerprint-graph edges as a DataFrame ``(fp, page, parent, label)``, one row per page
    and fingerprint whose walk met another (the others have no parent): what is written as
    Parquet from the executors, never gathered in the driver. ``walk``: how a walk chooses
    (:mod:`linksim.fingerprints.kinds`).
    ``stats``, if given, receives ``walk_steps``: the walks that took a step, summed over steps.
    ``batch``: fingerprints walked at once (default all N): the first step holds ``batch · n``
    walks, so a crawl too large for the cluster's memory at N is walked in batches (same rows).
    ``codes``: the pages' draw codes (:func:`codes_frame`; default: each page's number, as for a
    :class:`LinkGraph` without keys)."""
    from linksim.parameters import check_parameters

    check_parameters(n_fingerprints=n_fingerprints, length=length, seed=seed)
    from linksim.fingerprints.kinds import WalkKind

    if not isinstance(walk, WalkKind):
        raise ConfigurationError(f"walk must be a kind of walk (linksim.fingerprints.kinds), got {walk!r}")
    batch = n_fingerprints if batch is None else max(1, min(batch, n_fingerprints))
    frames = [_fingerprint_rows(edges, n, walk, range(first, min(first + batch, n_fingerprints)), length, seed,
                                partitions, log, stats, codes) for first in range(0, n_fingerprints, batch)]
    return _union(frames, edges.sparkSession, "fp int, page int, parent int, label byte")


def _union(frames: list, spark, schema: str):
    if not frames:
        return spark.createDataFrame([], schema)
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def _fingerprint_rows(edges, n: int, walk, fingerprints: range, length: int, seed: int,
                      partitions: int, log, stats: dict | None, codes=None):
    F = _functions()
    from pyspark.sql import Window

    spark = edges.sparkSession
    _check_spark_settings(spark, partitions)
    if walk.closed:
        closed = closed_neighbourhoods(edges, n, partitions, codes)
    else:  # each page's in-links, with the draw codes of both ends
        sources = _with_code(_with_code(edges.select(F.col("dst").alias("pos"), "src"), "src", codes, "src_code"),
                             "pos", codes, "pos_code")
        sources = _materialise(sources, partitions)
    fps = spark.range(fingerprints.start, fingerprints.stop).select(F.col("id").cast("int").alias("fp"))
    walks = _materialise(
        fps.crossJoin(spark.range(n).select(F.col("id").cast("int").alias("start")))
        .select("fp", "start", F.col("start").alias("pos")),
        partitions,
    )
    met_parts = []
    walk_steps = 0
    for step in range(1, length + 1):
        keyed = walks.join(_keys(spark, seed, fingerprints, step), "fp")
        if walk.own_stream:  # SimRank: the in-neighbour first in the page's own order (a uniform choice)
            own = draw_column(F.col("key"), F.col("pos_code"))  # randomness.page_stream
            chosen = (keyed.join(sources, "pos")  # a walk on a page without in-links stops
                      .select("fp", "start", order_key_column(own, F.col("src"), F.col("src_code")).alias("order"))
                      .groupBy("fp", "start").agg(F.min("order").alias("order"))
                      .select("fp", "start", (F.col("order").bitwiseAND(F.lit(0xFFFFFFFF))).cast("int").alias("pos")))
        elif walk.closed:  # P-PSimRank: first in the order among the closed neighbourhood, this step's way
            chosen = (keyed.join(closed, ["pos", "inward"])
                      .select("fp", "start", order_key_column(F.col("key"), F.col("cand"), F.col("cand_code"))
                              .alias("order"))
                      .groupBy("fp", "start").agg(F.min("order").alias("order"))
                      .select("fp", "start", (F.col("order").bitwiseAND(F.lit(0xFFFFFFFF))).cast("int").alias("pos")))
        else:  # PSimRank: the in-neighbour first in the step's random order of the pages
            chosen = (keyed.join(sources, "pos")
                      .select("fp", "start", order_key_column(F.col("key"), F.col("src"), F.col("src_code"))
                              .alias("order"))
                      .groupBy("fp", "start").agg(F.min("order").alias("order"))
                      .select("fp", "start", (F.col("order").bitwiseAND(F.lit(0xFFFFFFFF))).cast("int").alias("pos")))
        grouped = _materialise(chosen.withColumn("first", F.min("start").over(Window.partitionBy("fp", "pos"))),
                               partitions)
        met_parts.append(grouped.where(F.col("start") != F.col("first"))
                         .select("fp", F.col("start").alias("page"), F.col("first").alias("parent"),
                                 F.lit(step).cast("byte").alias("label")))
        walks = grouped.where(F.col("start") == F.col("first")).select("fp", "start", "pos")
        if log or stats is not None:
            moved, going_on = grouped.agg(F.count("*"), F.sum((F.col("start") == F.col("first")).cast("long"))).first()
            walk_steps += moved
            if log:
                log(f"{walk.name} walks, step {step}: {going_on or 0:,} walks go on")
            if not going_on:
                break
        elif walks.isEmpty():
            break
    if stats is not None:
        stats["walk_steps"] = stats.get("walk_steps", 0) + walk_steps
    return _union(met_parts, spark, "fp int, page int, parent int, label byte")


# Extended Jaccard -------------------------------------------------------------------------------------
def minhash(edges, n: int, n_fingerprints: int, length: int, seed: int, partitions: int = 4,
            log=None, codes=None) -> np.ndarray:
    """``values`` (N, length, n) int32 of :func:`linksim.fingerprints.minhash.build_minhash_index`, collected
    from :func:`minhash_rows`."""
    return minhash_arrays(minhash_rows(edges, n, n_fingerprints, length, seed, partitions, log, codes),
                          n_fingerprints, length, n)


def minhash_arrays(rows, n_fingerprints: int, length: int, n: int) -> np.ndarray:
    """The rows of :func:`minhash_rows` gathered in the driver as ``values`` (N, length, n)."""
    values = np.empty((n_fingerprints, length, n), dtype=np.int32)
    frame = rows.toPandas()
    values[frame["fp"].to_numpy(), frame["step"].to_numpy() - 1, frame["page"].to_numpy()] = frame["value"].to_numpy()
    return values


def minhash_rows(edges, n: int, n_fingerprints: int, length: int, seed: int, partitions: int = 4, log=None,
                 codes=None):
    """The min-hashes as a DataFrame ``(fp, step, page, value)``: ``value`` is the first page of
    ``I_step(page)`` in fingerprint ``fp``'s random order."""
    F = _functions()
    from linksim.parameters import check_parameters

    check_parameters(n_fingerprints=n_fingerprints, length=length, seed=seed)
    spark = edges.sparkSession
    _check_spark_settings(spark, partitions)
    pages = _with_code(spark.range(n).select(F.col("id").cast("int").alias("page")), "page", codes, "code")
    current = _materialise(
        pages.crossJoin(_keys(spark, seed, range(n_fingerprints), 0))
        .select("fp", "page", order_key_column(F.col("key"), F.col("page"), F.col("code")).alias("value")),
        partitions,
    )
    links = edges.select(F.col("src").alias("page"), F.col("dst"))
    steps = []
    for k in range(1, length + 1):
        spread = current.join(links, "page").select("fp", F.col("dst").alias("page"), "value")
        current = _materialise(current.unionByName(spread).groupBy("fp", "page").agg(F.min("value").alias("value")),
                               partitions)
        steps.append(current.select("fp", F.lit(k).cast("byte").alias("step"), "page",
                                    F.col("value").bitwiseAND(F.lit(0xFFFFFFFF)).cast("int").alias("value")))
        if log:
            log(f"xjaccard step {k} of {length}")
    return _union(steps, spark, "fp int, step byte, page int, value int")


# All-pages top-k -------------------------------------------------------------------------------------
# Spectral P-PSimRank ------------------------------------------------------------------------------
SPECTRAL_SCHEMA = "part byte, fp int, page int, parent int, label byte, neighbour int, vector array<float>"
FINGERPRINT_PART, EMBEDDING_PART, NEIGHBOUR_PART = 0, 1, 2
SHARE_PAGE = -1  #: the embedding part's row that holds the embedding's share of the features' weight


def spectral_rows(edges, n: int, n_fingerprints: int, length: int, seed: int, partitions: int = 4, log=None,
                  codes=None):
    """Spectral P-PSimRank's index (:mod:`linksim.spectral`) as one DataFrame of
    :data:`SPECTRAL_SCHEMA`: ``part`` 0, P-PSimRank's fingerprint-graph edges (``fp, page, parent,
    label``: :func:`fingerprint_rows`, bit for bit numpy's); ``part`` 1, a page's row of the link
    embedding (``page, vector``: :func:`link_embedding_rows`, bit for bit numpy's); ``part`` 2, a page's neighbour over
    links both ways (``page, neighbour``). Written as Parquet by the executors."""
    F = _functions()
    from linksim.spectral import RANK, WALK

    spark = edges.sparkSession
    null = {name: F.lit(None).cast(kind) for name, kind in
            (("fp", "int"), ("parent", "int"), ("label", "byte"), ("neighbour", "int"), ("vector", "array<float>"))}

    def shaped(frame, part: int):
        columns = [F.lit(part).cast("byte").alias("part")]
        for name in ("fp", "page", "parent", "label", "neighbour", "vector"):
            columns.append(F.col(name) if name in frame.columns else null[name].alias(name))
        return frame.select(*columns)

    walks = fingerprint_rows(edges, n, WALK, n_fingerprints, length, seed, partitions, log, codes=codes)
    embedding = link_embedding_rows(edges, n, RANK, seed, log, partitions)
    neighbours = _union([edges.select(F.col("src").alias("page"), F.col("dst").alias("neighbour")),
                         edges.select(F.col("dst").alias("page"), F.col("src").alias("neighbour"))],
                        spark, "page int, neighbour int").distinct()
    return _union([shaped(walks, FINGERPRINT_PART), shaped(embedding, EMBEDDING_PART),
                   shaped(neighbours, NEIGHBOUR_PART)], spark, SPECTRAL_SCHEMA)


def link_embedding_rows(edges, n: int, rank: int, seed: int = 0, log=None, partitions: int = 4):
    """``(page, vector)``: :func:`linksim.embedding.link_embedding` of the links, one row per page
    with a direction, and the share of the features' weight it holds as the vector of page
    :data:`SHARE_PAGE` (float32, as the one-machine build rounds it): the same solver, start block
    and sums as the one-machine build, so the same vectors bit for bit, with the block of vectors on
    the executors (:mod:`linksim.spark_lowrank`)."""
    from linksim.lowrank import CHUNK
    from linksim.spark_lowrank import embedding_and_share

    spark = edges.sparkSession
    began = time.monotonic()
    embedding, held = embedding_and_share(edges, n, rank, seed, partitions=partitions, log=log)

    def rows_of(item):
        c, rows = item
        first = c * CHUNK
        return [(first + int(i), rows[i].tolist()) for i in np.flatnonzero(rows.any(axis=1)).tolist()]

    share = spark.createDataFrame([(SHARE_PAGE, [held])], "page int, vector array<float>")
    frame = spark.createDataFrame(embedding.flatMap(rows_of), "page int, vector array<float>").unionByName(share)
    if log:
        log(f"link embedding: rank {rank}, {time.monotonic() - began:.1f} s")
    return frame


def spectral_index(rows, parameters: dict, n: int):
    """The rows of :func:`spectral_rows` gathered in the driver as a
    :class:`linksim.spectral.SpectralIndex`."""
    from linksim.fingerprints.index import FingerprintIndex
    from linksim.spectral import WALK, WALK_METHOD, SpectralIndex, cosine_share, nearest_pages

    F = _functions()
    walks = rows.where(F.col("part") == FINGERPRINT_PART).select("fp", "page", "parent", "label")
    parent, label = fingerprint_arrays(walks, parameters["n_fingerprints"], n)
    fingerprints = FingerprintIndex(parent, label, WALK_METHOD, parameters["length"], parameters["seed"], "",
                                    parameters["decay"], walk=WALK)
    vectors = rows.where(F.col("part") == EMBEDDING_PART).select("page", "vector").toPandas()
    held = vectors["vector"][vectors["page"] == SHARE_PAGE]
    share = cosine_share(float(held.iloc[0][0]) if len(held) else 0.0)
    vectors = vectors[vectors["page"] != SHARE_PAGE]
    width = len(vectors["vector"].iloc[0]) if len(vectors) else 0
    embedding = np.zeros((n, width), dtype=np.float32)
    if len(vectors):
        embedding[vectors["page"].to_numpy()] = np.stack(vectors["vector"].to_numpy()).astype(np.float32)
    pairs = rows.where(F.col("part") == NEIGHBOUR_PART).select("page", "neighbour").toPandas()
    page, neighbour = pairs["page"].to_numpy(np.int64), pairs["neighbour"].to_numpy(np.int32)
    order = np.lexsort((neighbour, page))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(page, minlength=n), out=indptr[1:])
    # The nearest pages from the gathered embedding, as the one-machine build finds them.
    return SpectralIndex(fingerprints, embedding, indptr, neighbour[order],
                         nearest_pages(embedding, seed=parameters["seed"]), share=share)


def top_k_lists(spark, index_path: str, n: int, top_k: int = 10, similarity_cutoff: float = 0.0, sample: int | None = None,
                partitions: int = 4):
    """Every page's top-k as a DataFrame ``(source, target, score, rank)``, from the index stored
    in ``index_path`` (a folder every executor reads: local disk in local mode, a shared file
    system on a cluster): the values checked, then :func:`lists_on_spark`."""
    from linksim.parameters import Query, check_parameters

    check_parameters(sample=sample)
    return lists_on_spark(spark, index_path, n, Query.checked(top_k, similarity_cutoff), sample, partitions)


def lists_on_spark(spark, index_path: str, n: int, query, sample: int | None = None, partitions: int = 4):
    """:func:`top_k_lists` of a checked ``query`` (:class:`linksim.parameters.Query`). Each task
    opens the index (memory-mapped) and answers a contiguous range of pages with
    :func:`linksim.ranking.topk.lists_of_all` (one worker per task)."""
    from pyspark.sql import types as T

    bounds = np.linspace(0, n, partitions + 1).astype(np.int64).tolist()
    spans = [(bounds[i], bounds[i + 1]) for i in range(partitions) if bounds[i + 1] > bounds[i]]

    def answer(rows):
        from linksim.store import open_path
        from linksim.ranking.topk import lists_of_all

        index = open_path(index_path)
        for first, last in rows:
            source, target, score, rank = lists_of_all(
                index, query, pages=np.arange(first, last, dtype=np.int64),
                workers=1, show_progress=False, sample=sample,
            )
            for row in zip(source.tolist(), target.tolist(), score.tolist(), rank.tolist()):
                yield row

    schema = T.StructType([
        T.StructField("source", T.IntegerType(), False), T.StructField("target", T.IntegerType(), False),
        T.StructField("score", T.DoubleType(), False), T.StructField("rank", T.IntegerType(), False),
    ])
    rdd = spark.sparkContext.parallelize(spans, len(spans)).mapPartitions(answer)
    return spark.createDataFrame(rdd, schema)
