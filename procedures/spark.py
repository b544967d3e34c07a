"""The Spark path: the link graph read from Neo4j through the Neo4j Connector for Apache Spark,
the indexes built by the Spark jobs of :mod:`linksim.spark`, the results written back through the
connector (``pagerank``; ``SIMILAR_TO`` with the run-swap protocol of
:mod:`linksim.procedures.similarity`) and the index saved in the linksim index store, where
``linksim related`` finds it as it finds a local one.

Versions (``pip install 'linksim[spark]'``): pyspark 4.x (Scala 2.13, Java 17) with the connector
``org.neo4j:neo4j-connector-apache-spark_2.13:5.3.8_for_spark_3``, the newest connector Maven
Central serves; its Scala 2.12 builds for pyspark 3.5 need a ``_common`` artifact that Maven
Central does not serve (measured), so the Scala 2.13 pair is the one that resolves and runs here.
The jars are resolved by Spark's Ivy from Maven Central into ``$LINKSIM_HOME/ivy`` at the first
session (about 30 s), from there afterwards.

The connector reads with fixed Cypher (no value of a user's is put in a query); the values the
writes need (method, run id, property name) travel as columns of the rows, read as ``event.*``.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass

from linksim.errors import ConfigurationError, LinksimError
from linksim.methods import method as registered
from linksim.parameters import Query

log = logging.getLogger(__name__)

class SparkJobError(LinksimError):
    """A Spark job failed (the connector could not reach Neo4j, an executor died, ...): the message
    is Spark's first line; nothing was made current (a SIMILAR_TO run is switched only at the end)."""

    exit_code = 5


@contextmanager
def spark_errors():
    """Spark's and the connector's failures as a :class:`SparkJobError` (the CLI prints one line,
    not a Java stack trace)."""
    try:
        yield
    except LinksimError:
        raise
    except Exception as error:  # noqa: BLE001 - only Spark's own kinds are translated
        kind = type(error).__module__
        if not (kind.startswith("pyspark") or kind.startswith("py4j")):
            raise
        text = str(error).strip().splitlines()
        first = next((line for line in text if line.strip()), type(error).__name__)
        raise SparkJobError(f"the Spark job failed: {first[:500]}") from error


CONNECTOR = "org.neo4j:neo4j-connector-apache-spark_2.13:5.3.8_for_spark_3"
SOURCE = "org.neo4j.spark.DataSource"
def spark_methods() -> list[str]:
    """The registered methods that have a Spark build."""
    from linksim.methods import METHODS

    return [name for name, entry in METHODS.items() if entry.spark_rows is not None]

# id() is what stream_link_graph numbers pages by (page i: the i-th smallest id), so both paths
# give the same page numbers, the same graph fingerprint and so the same index.
READ_PAGES = "MATCH (p:Page) RETURN id(p) AS id, p.url AS url"
READ_LINKS = "MATCH (a:Page)-[:LINKS_TO]->(b:Page) WHERE a <> b RETURN id(a) AS s, id(b) AS t"

WRITE_PAGERANK = "MATCH (p) WHERE id(p) = event.id SET p[event.property] = event.rank"

WRITE_SIMILAR = """
MATCH (a) WHERE id(a) = event.source
MATCH (b) WHERE id(b) = event.target
CREATE (a)-[:SIMILAR_TO {score: event.score, method: event.method, rank: event.rank, run: event.run}]->(b)
"""

COUNT_RUN = "MATCH ()-[s:SIMILAR_TO {run: $run}]->() RETURN count(s) AS written"


# Spark's Ivy told to resolve from one Maven repository alone, Maven Central or the local
# server's LINKSIM_MAVEN_REPOSITORY (a mirror): with its default chain a partial ~/.m2 (a pom
# without its jar) breaks the resolution.
IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="central"/>
  <caches defaultCacheDir={cache}/>
  <resolvers><ibiblio name="central" m2compatible="true" root={repository}/></resolvers>
</ivysettings>
"""


def ivy_settings(cache, repository: str) -> str:
    """Spark's Ivy settings: its cache folder and the Maven repository it resolves from, each an
    XML attribute value (quoted and escaped)."""
    from xml.sax.saxutils import quoteattr

    return IVY_SETTINGS.format(cache=quoteattr(str(cache)), repository=quoteattr(repository))


def session(master: str = "local[2]", partitions: int = 4, config: dict | None = None):
    """A SparkSession with the Neo4j connector (see module), resolved from Maven Central (or
    ``LINKSIM_MAVEN_REPOSITORY``) into ``<linksim home>/ivy``, and linksim's settings
    (:func:`linksim.spark.session`). Sessions of one linksim home start one at a time (a file
    lock): Ivy does not lock its cache, and two processes resolving into it at once (two
    commands, two test workers) can leave it broken."""
    from filelock import FileLock

    from linksim import spark as jobs
    from linksim.home import home_folder, linksim_home
    from linksim.server.settings import ServerSettings

    ivy = home_folder(linksim_home() / "ivy", "Spark's package cache")
    with FileLock(ivy / ".resolve.lock"):
        settings = ivy / "ivysettings.xml"
        settings.write_text(ivy_settings(ivy / "cache", ServerSettings.from_env().maven_repository))
        jars = {"spark.jars.packages": CONNECTOR, "spark.jars.ivy": str(ivy), "spark.jars.ivySettings": str(settings)}
        return jobs.session(master, partitions, config={**jars, **(config or {})})


def _options(connection) -> dict[str, str]:
    return {
        "url": connection.uri, "database": connection.database, "authentication.type": "basic",
        "authentication.basic.username": connection.user, "authentication.basic.password": connection.password,
    }


@dataclass
class SparkGraph:
    """The graph as read through the connector: ``edges`` ``(src, dst)`` of dense page numbers,
    ``pages`` ``(page, id)`` (Neo4j's internal id of page ``page``), ``n`` pages, ``codes``
    ``(page, code)`` the draw codes of their URLs (:func:`linksim.spark.url_codes`)."""

    edges: object
    pages: object
    n: int
    m: int
    seconds: float
    codes: object = None


def read_graph(spark, connection, partitions: int = 4) -> SparkGraph:
    """Pages and links through the connector, numbered as :func:`stream_link_graph` numbers them."""
    from pyspark.sql import functions as F

    from linksim import spark as jobs

    began = time.monotonic()
    reader = spark.read.format(SOURCE).options(**_options(connection))
    raw = reader.option("query", READ_PAGES).load().select(F.col("id").cast("long"), "url")
    raw = raw.localCheckpoint(eager=True)
    ids = raw.select("id").rdd.map(lambda row: row[0]).sortBy(lambda x: x).zipWithIndex()
    pages = spark.createDataFrame(ids, "id long, page long").select(F.col("page").cast("int"), "id")
    pages = pages.localCheckpoint(eager=True)
    codes = jobs.url_codes(pages.join(raw, "id").select("page", "url")).localCheckpoint(eager=True)
    n = pages.count()
    links = reader.option("query", READ_LINKS).load()
    edges = (links.join(pages.select(F.col("id").alias("s"), F.col("page").alias("src")), "s")
             .join(pages.select(F.col("id").alias("t"), F.col("page").alias("dst")), "t")
             .select("src", "dst").distinct().repartition(partitions).localCheckpoint(eager=True))
    m = edges.count()
    seconds = time.monotonic() - began
    log.info("read %s pages and %s links through the Neo4j connector in %.1f s", f"{n:,}", f"{m:,}", seconds)
    return SparkGraph(edges, pages, n, m, seconds, codes)


def _check_method(method: str) -> None:
    registered(method)
    if method not in spark_methods():
        raise ConfigurationError(f"the Spark jobs build {', '.join(spark_methods())}; {method} is built by "
                                 f"`linksim index {method}`")


def index_rows(edges, n: int, method: str, parameters: dict, partitions: int, codes=None):
    """The index of ``method`` as Spark rows (:func:`linksim.spark.fingerprint_rows` or
    :func:`linksim.spark.minhash_rows`): what Parquet receives and the arrays are gathered from.
    ``codes``: the pages' draw codes (None: an edge list's page numbers)."""
    return registered(method).spark_rows(edges, n, parameters, partitions, log=log.info, codes=codes)


def build_index(spark, graph: SparkGraph, method: str, partitions: int = 4, parquet: str | None = None, **given):
    """The index of ``method`` built by Spark (arrays equal to the numpy build's), and the parameters;
    with ``parquet``, its rows are also written there by the executors."""
    _check_method(method)
    parameters = registered(method).parameters_for(**given)
    rows = index_rows(graph.edges, graph.n, method, parameters, partitions, graph.codes)
    if parquet:
        rows.write.mode("overwrite").parquet(parquet)
    return registered(method).spark_index(rows, parameters, graph.n), parameters


def spark_index(runner, connection, root, method: str, master: str = "local[2]", partitions: int = 4,
                spark=None, parquet: str | None = None, graph: SparkGraph | None = None, **given) -> dict:
    """``linksim spark index``: read the graph through the connector, build the index on Spark,
    store it (and, with ``parquet``, write its arrays there as Parquet). Returns the stored
    index's description."""
    from linksim import store
    from linksim.digest import graph_fingerprint
    from linksim.procedures.stream import graph_state, refuse_half_written

    _check_method(method)
    registered(method).parameters_for(**given)  # checked before Spark starts
    state = graph_state(runner)  # before reading: a load meanwhile makes the index stale, never wrong
    refuse_half_written(runner, state)  # a load cut short: nothing built on it (before Spark starts)
    spark = spark or session(master, partitions)
    graph = graph or read_graph(spark, connection, partitions)
    if graph.n == 0:
        raise LinksimError("the database has no pages: load a crawl first (`linksim load`)")
    began = time.monotonic()
    index, parameters = build_index(spark, graph, method, partitions, parquet=parquet, **given)
    seconds = time.monotonic() - began
    local = _local_graph(runner, graph)
    index.graph_fingerprint = graph_fingerprint(local)
    path = store.save(index, root, method, local.n, local.m,
                      extra={"buildSeconds": round(seconds, 3), "builtBy": f"spark {spark.version} {master}"},
                      urls=local.keys, state=state)
    log.info("built on Spark in %.1f s, stored in %s", seconds, path)
    return dict(store.describe_path(path, method), built=True, build_seconds=seconds, read_seconds=graph.seconds)


def _local_graph(runner, graph: SparkGraph):
    """The graph in the driver, as :class:`LinkGraph` with its URLs: what the index store records
    (graph fingerprint, page URLs) so that `linksim related` finds the index."""
    from linksim.graph import LinkGraph
    from linksim.procedures.stream import read_pages

    ids, urls, _ = read_pages(runner)
    edges = graph.edges.toPandas()
    if len(ids) != graph.n:
        raise LinksimError("the pages changed while Spark read them: run it again when no load runs")
    return LinkGraph.from_edges(edges["src"].to_numpy(), edges["dst"].to_numpy(), graph.n, keys=urls)


def index_from_file(spark, path: str, method: str, output: str, partitions: int = 4, **given) -> dict:
    """``linksim spark index METHOD --edges FILE --parquet DIR``: no Neo4j, nothing gathered in the
    driver; the rows of the crawl's index (:func:`linksim.spark.fingerprint_rows`,
    :func:`linksim.spark.minhash_rows`) written by the executors to ``output`` as Parquet."""
    from linksim import spark as jobs

    _check_method(method)
    parameters = registered(method).parameters_for(**given)
    began = time.monotonic()
    edges, n = jobs.read_edges(spark, path, partitions)
    links = edges.count()
    index_rows(edges, n, method, parameters, partitions).write.mode("overwrite").parquet(output)
    return {"method": method, "parameters": parameters, "graph": {"pages": n, "links": links},
            "build_seconds": time.monotonic() - began, "path": output}


# What a PageRank write left: the pages holding the property and the sum of their ranks (1 when
# every page holds this run's rank).
WRITTEN_RANKS = """
MATCH (p:Page) WHERE p[$property] IS NOT NULL
RETURN count(p) AS pages, sum(p[$property]) AS total
"""


def spark_pagerank(runner, connection, master: str = "local[2]", partitions: int = 4, damping: float = 0.85,
                   tol: float = 1e-6, max_iter: int = 100, write_property: str = "pagerank", spark=None,
                   wait: float = 0.0):
    """``linksim spark pagerank``: PageRank on Spark, written through the connector to every page;
    a :class:`~linksim.procedures.results.PageRankWriteResult`."""
    from pyspark.sql import functions as F

    from linksim import spark as jobs
    from linksim.procedures.locks import acquire
    from linksim.procedures.pagerank import _check_property, finish_write
    from linksim.procedures.results import PageRankWriteResult
    from linksim.procedures.runs import RunRecord

    write_property = _check_property(write_property)
    spark = spark or session(master, partitions)
    record = RunRecord(algorithm="pagerank", mode="write", parameters={
        "damping": damping, "tol": tol, "maxIter": max_iter, "dangling": "uniform", "personalization": {},
        "crawledOnly": False, "writeProperty": write_property, "engine": "spark"})
    with acquire(runner, f"pagerank:{write_property}", wait=wait):
        graph = read_graph(spark, connection, partitions)
        result = jobs.pagerank(graph.edges, graph.n, damping, tol, max_iter, partitions, log=log.info)
        began = time.monotonic()
        ranks = spark.createDataFrame([(i, float(r)) for i, r in enumerate(result.ranks)], "page int, rank double")
        rows = (ranks.join(graph.pages, "page").select("id", "rank", F.lit(write_property).alias("property")))
        _write(rows, connection, WRITE_PAGERANK, partitions)
        write_seconds = time.monotonic() - began
        # The connector gives no counts back: the ranks read back say how many pages got this run's.
        written = runner.run(WRITTEN_RANKS, {"property": write_property})[0]
        record.written = written["pages"] if abs((written["total"] or 0.0) - float(result.ranks.sum())) < 1e-9 else 0
        record.pages, record.links = graph.n, graph.m
        record.iterations, record.converged, record.residual = result.iterations, result.converged, result.residual
        record.stream_millis = int(graph.seconds * 1000)
        record.compute_millis = int(result.seconds * 1000)
        record.write_millis = int(write_seconds * 1000)
        finish_write(runner, record, write_property, graph.n)
    return PageRankWriteResult(record, engine="spark")


def _write(frame, connection, query: str, partitions: int) -> None:
    (frame.repartition(partitions).write.format(SOURCE).mode("Append").options(**_options(connection))
     .option("query", query).option("batch.size", "5000").option("transaction.retries", "10").save())


def spark_similar(runner, connection, root, method: str, master: str = "local[2]", partitions: int = 4,
                  query: Query = Query(), sample: int | None = None, write_partitions: int = 1,
                  wait: float = 0.0, retire: str = "wait", spark=None, rebuild: bool = False, **given):
    """``linksim spark similar``: the method's index (built on Spark unless a matching one is
    stored for the graph), every page's list of the checked ``query`` on Spark
    (:func:`linksim.spark.lists_on_spark`), the
    relationships written through the connector as a new run, made current in one transaction."""
    from pyspark.sql import functions as F

    from linksim import spark as jobs
    from linksim import store
    from linksim.parameters import check_parameters
    from linksim.procedures.locks import acquire
    from linksim.procedures.runs import RunRecord
    from linksim.procedures.schema import apply_schema
    from linksim.procedures.budget import check_write_disk
    from linksim.procedures.runs import publish_run
    from linksim.procedures.stream import graph_state, refuse_half_written

    _check_method(method)
    check_parameters(sample=sample)
    parameters = registered(method).parameters_for(**given)
    refuse_half_written(runner, graph_state(runner))  # before Spark starts; again once the lock is held
    spark = spark or session(master, partitions)
    with acquire(runner, f"similar:{method}", wait=wait) as lock:
        began = time.monotonic()
        state = graph_state(runner)
        refuse_half_written(runner, state)
        graph = read_graph(spark, connection, partitions)
        found = None if rebuild else _stored(root, method, parameters, state)
        if found is None:
            described = spark_index(runner, connection, root, method, master, partitions, spark=spark, graph=graph,
                                    **given)
            path, built_seconds = described["path"], described["build_seconds"]
        else:
            path, built_seconds = found["path"], 0.0
            log.info("using the stored %s index in %s", method, path)
        meta = store.describe_path(path, method)
        apply_schema(runner)
        lists = jobs.lists_on_spark(spark, path, graph.n, query, sample, partitions)
        lists = lists.localCheckpoint(eager=True)
        compute_seconds = time.monotonic() - began
        rows = (lists.join(graph.pages.select(F.col("page").alias("source"), F.col("id").alias("source_id")), "source")
                .join(graph.pages.select(F.col("page").alias("target"), F.col("id").alias("target_id")), "target")
                .select(F.col("source_id").alias("source"), F.col("target_id").alias("target"),
                        F.round("score", 12).alias("score"), "rank", F.lit(method).alias("method")))
        expected = lists.count()
        record = RunRecord(algorithm=method, mode="write",
                           parameters=dict(meta["parameters"], topK=query.top_k, similarityCutoff=query.similarity_cutoff,
                                           engine=f"spark {master}",
                                           **({"sample": sample} if sample is not None else {})))
        record.pages, record.links = meta["graph"]["pages"], meta["graph"]["links"]
        record.stream_millis = int(graph.seconds * 1000)
        record.compute_millis = int((compute_seconds + built_seconds) * 1000)
        record.answered = lists.select("source").distinct().count()
        other = graph.edges.where(F.col("src") != F.col("dst"))
        record.linked = other.select(F.col("src").alias("page")).union(other.select(F.col("dst").alias("page"))) \
            .distinct().count()

        def write_lists(run: int) -> int:
            lock.check()
            # One writer partition by default: relationships of many partitions at once lock the
            # same hub pages in turn and deadlock (retried, but slower).
            _write(rows.withColumn("run", F.lit(run)), connection, WRITE_SIMILAR, write_partitions)
            lock.check()
            written = runner.run(COUNT_RUN, {"run": run})[0]["written"]
            if written != expected:
                raise LinksimError(f"the connector wrote {written:,} of {expected:,} SIMILAR_TO relationships: "
                                   "pages were deleted while linksim ran; run it again (the current run is untouched)")
            return written

        check_write_disk(runner, expected, " The index is stored: a rerun computes the lists again and writes them.")
        return publish_run(runner, lock, record, write_lists, retire_mode=retire)


def _stored(root, method: str, parameters: dict, state: dict):
    from linksim import store

    meta = store.describe(root, method, parameters)
    if meta is None or meta.get("graphState") != state:
        return None
    store.check(meta, method)
    return meta
