"""``linksim spark pagerank|index|similar``: the indexes built on Apache Spark."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from linksim.cli.options import add_list_options, add_sampling, add_wait, checked, command
from linksim.methods import sample_methods
from linksim.loader.extract import ARCHIVE_FORMATS
from linksim.procedures.spark import spark_methods


def _spark_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "spark", "Where the jobs run. Needs `pip install 'linksim[spark]'` (pyspark and the Neo4j connector, "
        "whose jars are fetched from Maven Central at the first run).")
    group.add_argument("--master", default="local[2]",
                       help="Spark master: local[N] (this machine, N cores), spark://HOST:PORT, yarn (default local[2])")
    group.add_argument("--partitions", type=checked("partitions"), default=4,
                       help="partitions of the jobs' data (spark.sql.shuffle.partitions; default 4, "
                       "2-4 per core of the cluster is usual)")


def _build_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("index", "As for `linksim index`; unset parameters take the papers' defaults.")
    group.add_argument("--index-dir", type=Path, metavar="DIR",
                       help="index store (env LINKSIM_INDEX_DIR); on a cluster, a folder every executor reads")
    add_sampling(group, "number of fingerprints N",
                 "random seed >= 0 (same seed: the same index as `linksim index`, bit for bit)")


def register(commands: argparse._SubParsersAction, connection: argparse.ArgumentParser) -> None:
    spark = commands.add_parser(
        "spark", help="build PageRank and the similarity indexes on Apache Spark",
        description="The same computations as `linksim pagerank`, `linksim index` and `linksim similar`, run as "
        "Spark jobs: the graph is read from Neo4j and the results written back through the Neo4j Connector "
        "for Apache Spark. Random choices are functions of (seed, fingerprint, step, page), so the index is the "
        "one `linksim index` builds for the same seed, whatever the partitioning.",
    )
    actions = spark.add_subparsers(dest="spark_command", metavar="ACTION", required=True)

    pagerank = command(
        actions, "pagerank", _pagerank, parents=[connection], help="PageRank on Spark, written to each page",
    )
    _spark_options(pagerank)
    pagerank.add_argument("--damping", type=checked("damping"), default=0.85, help="damping factor (default 0.85)")
    pagerank.add_argument("--tol", type=checked("tol"), default=1e-6, help="L1 residual to stop at (default 1e-6)")
    pagerank.add_argument("--max-iter", type=checked("max_iter"), default=100, help="most iterations (default 100)")
    pagerank.add_argument("--write-property", default="pagerank", help="node property (default pagerank)")
    add_wait(pagerank, "PageRank write of the same property")
    pagerank.add_argument("--json", action="store_true", help="print the summary as JSON")

    index = command(actions, "index", _index, parents=[connection], help="build a similarity index on Spark")
    index.add_argument("method", metavar="METHOD", choices=spark_methods(), help=" | ".join(spark_methods()))
    _spark_options(index)
    _build_options(index)
    index.add_argument("--parquet", metavar="DIR", help="also write the index arrays there as Parquet")
    index.add_argument("--edges", metavar="FILE",
                       help="build from this edge list instead of Neo4j (Parquet with columns src, dst, or a "
                       "text file of two page numbers a line, gzip or not); needs --parquet, the only output")
    index.add_argument("--json", action="store_true", help="print the index description as JSON")

    similar = command(
        actions, "similar", _similar, parents=[connection],
        help="every page's related pages on Spark, written as SIMILAR_TO",
    )
    similar.add_argument("method", metavar="METHOD", choices=spark_methods(), help=" | ".join(spark_methods()))
    _spark_options(similar)
    _build_options(similar)
    add_list_options(similar, sample_help=f"as for `linksim similar` ({', '.join(sample_methods())}; default 16, "
                     "PSimRank 8; 0: every list exact)",
                     retire_help="the previous run's relationships: as for `linksim similar`")
    similar.add_argument("--write-partitions", type=checked("write_partitions"), default=1,
                         help="connector writers at once (default 1: parallel writers of one graph lock the same "
                         "hub pages and deadlock, retried)")
    similar.add_argument("--json", action="store_true", help="print the run summary as JSON")

    extract = command(actions, "extract", _extract, help="read web archives on Spark into a link table (Parquet)")
    extract.add_argument("paths", nargs="+", type=Path, metavar="FILE", help="WARC, WAT or WACZ files")
    extract.add_argument("--out", type=Path, required=True, metavar="DIR",
                         help="the link table's folder (new or empty; on a cluster, where every executor writes)")
    _spark_options(extract)
    extract.add_argument("--format", choices=ARCHIVE_FORMATS, help="format of every FILE (default: from the name)")
    extract.add_argument("--on-error", choices=("stop", "skip"), default="stop",
                         help="as for `linksim load`: stop (default) at a bad record, nothing written; skip: count them")
    extract.add_argument("--no-normalize", action="store_true", help="keep web URLs as written (no normalisation)")
    extract.add_argument("--json", action="store_true", help="print the link table's description as JSON")


def _given(args: argparse.Namespace) -> dict:
    from linksim.methods import METHODS

    takes = METHODS[args.method].parameter_names
    return {name: getattr(args, name) for name in takes if getattr(args, name, None) is not None}


def _spark(args: argparse.Namespace):
    from linksim.cli.main import open_facade

    ls = open_facade(args)
    return ls, ls.spark(args.master, args.partitions)


def _pagerank(args: argparse.Namespace) -> int:
    """PageRank (uniform teleport, dangling pages' rank spread uniformly, as `linksim pagerank`)
    computed on Spark and written to --write-property."""

    from linksim.procedures.spark import spark_errors

    ls, spark = _spark(args)
    with ls, spark_errors():
        result = spark.pagerank(args.damping, args.tol, args.max_iter, args.write_property, wait=args.wait)
    summary = {"pages": result.pages, "links": result.links, "iterations": result.ran_iterations,
               "converged": result.did_converge, "residual": result.residual,
               "compute_seconds": result.compute_millis / 1000, "write_seconds": result.write_millis / 1000,
               "read_seconds": result.pre_processing_millis / 1000, "property": args.write_property}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        state = "converged" if summary["converged"] else "did NOT converge"
        print(f"PageRank on Spark ({args.master}) of {summary['pages']:,} pages and {summary['links']:,} links: "
              f"{state} after {summary['iterations']} iterations (residual {summary['residual']:.3g}) in "
              f"{summary['compute_seconds']:.1f} s; written to {summary['property']} in {summary['write_seconds']:.1f} s")
    return 0


def _index(args: argparse.Namespace) -> int:
    """Build the index of METHOD on Spark and store it in the index store, where `linksim related` and
    `linksim similar` find it."""

    from linksim.procedures.spark import spark_errors

    if args.edges:
        with spark_errors():
            return _index_from_file(args)
    ls, spark = _spark(args)
    with ls, spark_errors():
        meta = spark.index(args.method, parquet=args.parquet, **_given(args)).as_dict()
    if args.json:
        print(json.dumps(meta, indent=2, default=str))
        return 0
    parameters = ", ".join(f"{k}={v}" for k, v in meta["parameters"].items())
    print(f"{args.method} index ({parameters}) of {meta['graph']['pages']:,} pages and {meta['graph']['links']:,} "
          f"links: built on Spark ({args.master}) in {meta['build_seconds']:.1f} s; stored in {meta['path']}")
    return 0


def _index_from_file(args: argparse.Namespace) -> int:
    from linksim.errors import ConfigurationError
    from linksim.procedures.spark import index_from_file, session

    if not args.parquet:
        raise ConfigurationError("--edges builds without Neo4j: give --parquet DIR, where the index arrays go")
    meta = index_from_file(session(args.master, args.partitions), args.edges, args.method, args.parquet,
                           args.partitions, **_given(args))
    if args.json:
        print(json.dumps(meta, indent=2, default=str))
        return 0
    print(f"{args.method} index of {meta['graph']['pages']:,} pages and {meta['graph']['links']:,} links from "
          f"{args.edges}: built on Spark ({args.master}) in {meta['build_seconds']:.1f} s; arrays in {args.parquet}")
    return 0


def _similar(args: argparse.Namespace) -> int:
    """As `linksim similar`: the index (built on Spark unless a matching one is stored), every page's
    top-k computed by Spark tasks that each answer a range of pages from the stored index, written
    through the connector as a new run made current in one transaction (readers never see a mix or
    nothing)."""

    from linksim.procedures.spark import spark_errors

    ls, spark = _spark(args)
    with ls, spark_errors():
        record = spark.similar(args.method, args.top_k, args.similarity_cutoff, args.sample,
                               args.write_partitions, wait=args.wait, retire=args.retire, rebuild=args.rebuild,
                               **_given(args)).record
    if args.json:
        print(json.dumps(record.as_dict(), indent=2, default=str))
        return 0
    print(f"{args.method} on Spark ({args.master}): wrote {record.written:,} SIMILAR_TO relationships (run "
          f"{record.id}); compute {record.compute_millis / 1000:.1f} s, write {record.write_millis / 1000:.1f} s")
    return 0


def _extract(args: argparse.Namespace) -> int:
    """Read WARC, WAT or WACZ files on Spark, one task a file, with the reader of `linksim load`, into a
    link table: Parquet pages (id, url, title, crawled, complete) and links (source, target, count,
    anchor) in --out, with linksim-links.json saying what was read. `linksim load DIR` imports it (in
    bulk into an empty database): the graph a local load of the same files gives. No Neo4j is needed."""

    from linksim.loader.extract import extract
    from linksim.procedures.spark import spark_errors
    from linksim.spark import session

    with spark_errors():
        described = extract(lambda: session(args.master, args.partitions), args.paths, args.out, args.format,
                            args.on_error, not args.no_normalize, args.partitions)
    if args.json:
        print(json.dumps(described, indent=2))
        return 0
    skipped = sum(described["skipped"].values())
    print(f"extracted {described['pages']:,} pages and {described['links']:,} links ({described['links_seen']:,} "
          f"seen, {described['non_web_links']:,} to other schemes, {skipped:,} records skipped) from "
          f"{len(described['files']):,} files on Spark ({args.master}) into {args.out}; load it with "
          f"`linksim load {args.out}`")
    return 0
