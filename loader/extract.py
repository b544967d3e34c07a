"""Web archives to a link table on Apache Spark: ``linksim spark extract``.

A crawl of thousands of WARC, WAT or WACZ files is read where its files are, by Spark tasks that
each read one file with the very reader ``linksim load`` uses (the same pages, normalised URLs,
titles, anchors, redirects, skipped records), and is written as a link table, a folder of

- ``pages/``: Parquet of ``id, url, title, crawled, complete`` (ids 0, 1, ... in the order a local
  load meets the pages: by file, then within the file);
- ``links/``: Parquet of ``source, target, count, anchor`` (page ids; one row an ordered pair,
  ``count`` the times the files had it, ``anchor`` the first anchor text in file order);
- ``linksim-links.json``: what was read (the files and their formats, links seen, links to other
  schemes, records skipped by reason).

``linksim load FOLDER`` imports it (in bulk into an empty database): the graph a local load of the
same files gives. The files are merged as a load merges them: a page is crawled (complete) if any
file crawled it (in full), its title is the last file's that titles it, a link's anchor the first
file's that has one.

The input files and the output folder must be where every executor reads and writes (local mode:
this machine; a cluster: a shared file system). The folder appears whole or not at all: the job
writes beside it and renames at the end.
"""

from __future__ import annotations

import json
import pickle
import shutil
import uuid
from pathlib import Path

from linksim.errors import ConfigurationError, LinksimError
from linksim.loader.linktable import MARKER
from linksim.loader.readers import FORMATS, UnreadableInput, detect_format

#: The formats read on Spark; the others load straight into Neo4j (``linksim load``).
ARCHIVE_FORMATS = ("warc", "wat", "wacz")
assert set(ARCHIVE_FORMATS) <= set(FORMATS)


def _read_one(task: tuple, raw: str) -> list[dict]:
    """A Spark task: one file read into a graph of its own, written as Parquet part files under
    ``raw`` (its pages and its links, pairs aggregated within the file); its statistics."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from linksim.loader.graph import CrawlGraph
    from linksim.loader.readers import ErrorPolicy, read_input

    number, path, fmt, on_error, normalize = task
    with CrawlGraph() as graph:
        try:
            used = read_input(Path(path), graph, ErrorPolicy(on_error, graph), normalize, fmt)
        except LinksimError as error:  # the load's first error, in file order, is the driver's to raise
            return [{"file": number, "error": pickle.dumps(error)}]
        links = graph.links()
        chunks = list(links.chunks(1 << 22))
        sources, targets, counts = (np.concatenate([chunk[column] for chunk in chunks]).astype(np.int64)
                                    if chunks else np.zeros(0, dtype=np.int64) for column in range(3))
        anchors = [graph.anchors.get(pair) for pair in zip(sources.tolist(), targets.tolist())]
        urls = np.array(graph.urls, dtype=object)
        pages = pa.table({
            "file": pa.array(np.full(len(urls), number, dtype=np.int32)),
            "order": pa.array(np.arange(len(urls), dtype=np.int64)),
            "url": pa.array(graph.urls, type=pa.string()),
            "title": pa.array([graph.titles.get(page) for page in range(len(urls))], type=pa.string()),
            "crawled": pa.array(np.frombuffer(bytes(graph.crawled), dtype=np.uint8).astype(bool)),
            "complete": pa.array(np.frombuffer(bytes(graph.complete), dtype=np.uint8).astype(bool)),
        })
        pq.write_table(pages, f"{raw}/pages/{number:06d}.parquet")
        pq.write_table(pa.table({
            "file": pa.array(np.full(len(sources), number, dtype=np.int32)),
            "source": pa.array(urls[sources] if len(sources) else [], type=pa.string()),
            "target": pa.array(urls[targets] if len(targets) else [], type=pa.string()),
            "count": pa.array(counts.astype(np.int64)),
            "anchor": pa.array(anchors, type=pa.string()),
        }), f"{raw}/links/{number:06d}.parquet")
        return [{"file": number, "format": used, "seen": links.seen, "non_web": graph.non_web,
                 "skipped": dict(graph.skipped.counts),
                 "examples": {reason: list(found) for reason, found in graph.skipped.examples.items()}}]


def extract(spark, paths: list[str | Path], out: str | Path, fmt: str | None = None, on_error: str = "stop",
            normalize: bool = True, partitions: int = 4) -> dict:
    """Read ``paths`` on Spark into the link table ``out`` (see the module); its description.
    ``spark``: a session, or a function that makes one, called once the inputs are judged (a
    refused input never waits for Spark to start)."""
    paths = [Path(path).resolve() for path in paths]
    out = Path(out).resolve()
    if not paths:
        raise ConfigurationError("nothing to extract: give at least one WARC, WAT or WACZ file")
    missing = next((path for path in paths if not path.exists()), None)
    if missing is not None:
        raise UnreadableInput(missing, "no such file or folder")
    formats = [fmt or detect_format(path) for path in paths]
    others = sorted({f for f in formats if f not in ARCHIVE_FORMATS})
    if others:
        raise ConfigurationError(f"spark extract reads {', '.join(ARCHIVE_FORMATS)} files; {', '.join(others)} "
                                 "input loads straight into Neo4j with `linksim load`")
    if out.exists() and any(out.iterdir()):
        raise ConfigurationError(f"{out} exists and is not empty: give a new folder for the link table")
    if callable(spark):
        spark = spark()
    work = out.with_name(f".{out.name}.partial-{uuid.uuid4().hex[:8]}")
    raw = work / "raw"
    (raw / "pages").mkdir(parents=True)
    (raw / "links").mkdir()
    try:
        tasks = [(number, str(path), fmt, on_error, normalize) for number, path in enumerate(paths)]
        stats = sorted(spark.sparkContext.parallelize(tasks, len(tasks))
                       .flatMap(lambda task: _read_one(task, str(raw))).collect(), key=lambda row: row["file"])
        failed = next((row for row in stats if "error" in row), None)
        if failed is not None:
            raise pickle.loads(failed["error"])
        summary = _tables(spark, raw, work, partitions)
        shutil.rmtree(raw)
        summary.update(_described(paths, stats))
        (work / MARKER).write_text(json.dumps(summary, indent=1))
        if out.exists():
            out.rmdir()
        work.rename(out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return summary


def _tables(spark, raw: Path, work: Path, partitions: int) -> dict:
    """The files' pages and links merged as a load merges them, written as ``pages/`` and ``links/``."""
    from pyspark.sql import functions as F

    pages = spark.read.parquet(str(raw / "pages"))
    first = F.struct("file", "order")
    titled = F.when(F.col("title").isNotNull(), first)
    merged = (pages.groupBy("url")
              .agg(F.min(first).alias("first"), F.max("crawled").alias("crawled"), F.max("complete").alias("complete"),
                   F.max_by("title", titled).alias("title")))
    # Ids in the order a local load numbers the pages (zipWithIndex: no single-partition window).
    ordered = merged.orderBy(F.col("first.file"), F.col("first.order")).select("url", "title", "crawled", "complete")
    numbered = ordered.rdd.zipWithIndex().map(lambda pair: (pair[1], *pair[0]))
    ids = spark.createDataFrame(numbered, "id long, url string, title string, crawled boolean, complete boolean")
    ids.write.parquet(str(work / "pages"))
    ids = spark.read.parquet(str(work / "pages")).select("id", "url")
    links = spark.read.parquet(str(raw / "links"))
    anchored = F.when(F.col("anchor").isNotNull(), F.col("file"))
    pairs = (links.groupBy("source", "target")
             .agg(F.sum("count").alias("count"), F.min_by("anchor", anchored).alias("anchor")))
    table = (pairs.join(ids.withColumnRenamed("url", "source").withColumnRenamed("id", "source_id"), "source")
             .join(ids.withColumnRenamed("url", "target").withColumnRenamed("id", "target_id"), "target")
             .select(F.col("source_id").alias("source"), F.col("target_id").alias("target"), "count", "anchor")
             .repartition(partitions).sortWithinPartitions("source", "target"))
    table.write.parquet(str(work / "links"))
    written = spark.read.parquet(str(work / "links"))
    return {"pages": spark.read.parquet(str(work / "pages")).count(), "links": written.count()}


def _described(paths: list[Path], stats: list[dict]) -> dict:
    skipped: dict[str, int] = {}
    examples: dict[str, list[str]] = {}
    for row in stats:
        for reason, count in row["skipped"].items():
            skipped[reason] = skipped.get(reason, 0) + count
            examples.setdefault(reason, []).extend(row["examples"].get(reason, []))
    return {"files": [str(path) for path in paths], "formats": [row["format"] for row in stats],
            "links_seen": sum(row["seen"] for row in stats), "non_web_links": sum(row["non_web"] for row in stats),
            "skipped": skipped, "skipped_examples": {reason: found[:3] for reason, found in examples.items()}}
