"""linksim's Python API: one object per database, in the style of the GDS Python client.

```python
import linksim

ls = linksim.connect()                       # options, then NEO4J_* variables, then the local server
ls.load(["crawl.warc.gz"])                   # -> LoadSummary
ls.pagerank.write()                          # -> PageRankWriteResult (.did_converge, .ran_iterations, .top, ...)
ls.pagerank.stream()                         # -> DataFrame: url, pagerank of every page
ls.similar("psimrank").write(top_k=10)       # -> SimilarWriteResult: the new current SIMILAR_TO run
ls.similar("psimrank").stream(top_k=10)      # -> DataFrame: source, target, score, rank (every pair)
ls.related("https://en.wikipedia.org/wiki/Paris", top_k=20)   # -> DataFrame: rank, url, title, score, pagerank
ls.sim(url_a, url_b, method="xjaccard")      # -> float
ls.hosts()                                   # -> HostGraph: (:Host)-[:HOST_LINKS_TO]->(:Host) from the pages
ls.similar("simrank", graph="hosts").write() # every method, and PageRank, on the host graph too
ls.related("www.uni-lj.si", graph="hosts")   # -> DataFrame: rank, host, pages, score, pagerank
sp = ls.spark(master="local[2]")             # the same on Apache Spark (pip install 'linksim[spark]')
sp.pagerank()                                # -> PageRankWriteResult, the property written through the connector
sp.index("simrank", n_fingerprints=100)      # -> IndexResult: the stored index, equal to ls.similar(...).index()'s
sp.similar("psimrank", top_k=10)             # -> SimilarWriteResult, SIMILAR_TO written through the connector
```

Results are one typed class per mode, the same from both engines (:mod:`linksim.procedures.results`:
``did_converge``, ``ran_iterations``, ``*_millis``, the counts written, ``configuration``; ``record``
is the run as stored in Neo4j).

Keyword names are those of the command line's flags (``top_k`` for ``--top-k``); URLs are
normalised as the loader stores them. ``related`` and ``sim`` read the stored index only: they
check in one constant-time query that it still fits the graph, and never stream or build (``index``
and ``write`` do). The command line is a shell over this module.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from linksim.errors import ConfigurationError
from linksim.loader.urls import stored_key
from linksim.methods import DEFAULT_METHOD, method as registered
from linksim.parameters import Query
from linksim.procedures.results import IndexResult, SimilarStatsResult, SimilarWriteResult


class PageRank:
    """``ls.pagerank``: write, stream or stats, with the same keywords in every mode."""

    def __init__(self, client: "Linksim") -> None:
        self._client = client

    def run(self, mode: str = "write", **options):
        """PageRank in any mode, with the command line's keywords.

        Parameters
        ----------
        mode : {"write", "stats", "stream"}
            Write the ``write_property`` of every page, or only compute.
        **options
            ``damping``, ``tol``, ``max_iter``, ``dangling``, ``personalization``, ``write_property``,
            ``crawled_only``, ``top``, ``batch_size``, ``wait``, ``memory_budget``, ``warm_start``,
            ``graph`` (``"pages"`` or ``"hosts"``): ``linksim pagerank --help`` says what each does.

        Returns
        -------
        PageRankStatsResult or PageRankWriteResult
            ``did_converge``, ``ran_iterations``, ``record`` (the run as stored) and ``top``, the best
            pages as a DataFrame.
        """
        from linksim.procedures.pagerank import run_pagerank

        options.setdefault("show_progress", self._client.show_progress)
        return run_pagerank(self._client.runner, mode=mode, **options)

    def estimate(self, graph: str = "pages"):
        """Memory the run would take on the graph as it is now; nothing is read but the counts.

        Parameters
        ----------
        graph : {"pages", "hosts"}
            The page graph, or the host graph of :meth:`Linksim.hosts`.

        Returns
        -------
        linksim.estimate.Estimate
            ``bytes_min``, ``bytes_max``, ``parts`` and ``lines()``, what each stage holds.
        """
        from linksim.procedures.budget import estimate_run

        return estimate_run(self._client.runner, "pagerank", graph=graph)

    def write(self, **options):
        """Compute PageRank and write it as a property of every page.

        Parameters
        ----------
        **options
            As in :meth:`run`; ``write_property`` names the property (default ``pagerank``),
            ``graph="hosts"`` ranks the hosts.

        Returns
        -------
        PageRankWriteResult
            ``did_converge``, ``ran_iterations``, ``node_properties_written``, ``top``.
        """
        return self.run("write", **options)

    def stats(self, **options):
        """Compute PageRank and write nothing.

        Parameters
        ----------
        **options
            As in :meth:`run`.

        Returns
        -------
        PageRankStatsResult
            ``did_converge``, ``ran_iterations``, the residual and ``top``.
        """
        return self.run("stats", **options)

    def stream(self, **options) -> pd.DataFrame:
        """Every page's PageRank, best first, written nowhere.

        Parameters
        ----------
        **options
            As in :meth:`run`.

        Returns
        -------
        pandas.DataFrame
            Columns ``rank, url, pagerank``, one row a page.
        """
        run = self.run("stream", top=None, **options)
        return run.top


class Similar:
    """``ls.similar(method)``: build its index, write or stream every page's top k;
    ``ls.similar(method, graph="hosts")``: the same on the host graph (``ls.hosts()``), every
    host's top k."""

    def __init__(self, client: "Linksim", method: str, graph: str = "pages") -> None:
        from linksim.parameters import check_graph

        registered(method)
        self._client, self.method, self.graph = client, method, check_graph(graph)

    def estimate(self, *, top_k: int | None = 10, memory_budget: str | int | None = None, **parameters):
        """Memory and disk that :meth:`write` (or, with ``top_k=None``, :meth:`index`) would take on the
        graph as it is now; nothing is read but the counts.

        Parameters
        ----------
        top_k : int or None
            Pages per list; None estimates the index alone.
        memory_budget : str or int, optional
            The budget the run would have (default: ``LINKSIM_MEMORY_BUDGET``, else the memory
            available); an index that does not fit it in memory is built on disk, and the estimate
            says so.
        **parameters
            The method's own parameters, as in :meth:`index`.

        Returns
        -------
        linksim.estimate.Estimate
            ``bytes_min``, ``bytes_max``, ``parts``, ``on_disk`` and ``lines()``.
        """
        from linksim.parameters import check_parameters
        from linksim.procedures.budget import estimate_run

        check_parameters(top_k=top_k)
        task = "index" if top_k is None else "similar"
        return estimate_run(self._client.runner, task, self.method, top_k=top_k, memory_budget=memory_budget,
                            graph=self.graph, **parameters)

    def index(self, *, rebuild: bool = False, crawled_only: bool = False, memory_budget: str | int | None = None,
              **parameters) -> IndexResult:
        """Build (or reuse) the method's index.

        Parameters
        ----------
        rebuild : bool
            Build anew even if an index of these parameters is stored for this graph.
        crawled_only : bool
            Index the crawled pages only.
        memory_budget : str or int, optional
            Refuse to start (exit 8 on the command line) when the estimate exceeds it; an index that
            fits only on disk is built there (``"8G"``, ``"none"``; default: the memory available).
        **parameters
            The method's own parameters (``METHODS[method].defaults``: ``n_fingerprints``, ``length``,
            ``decay``, ``seed``, ``radius``, ...), each checked by the registry.

        Returns
        -------
        IndexResult
            ``meta`` (the description as stored), ``built``, ``build_millis``, ``configuration``.

        Examples
        --------
        >>> ls.similar("simrank").index(n_fingerprints=300).built  # doctest: +SKIP
        True
        """
        from linksim import store
        from linksim.procedures.indexes import obtain_index

        client = self._client
        handle = obtain_index(client.runner, self.method, client.index_root, rebuild=rebuild,
                              crawled_only=crawled_only, show_progress=client.show_progress,
                              memory_budget=memory_budget, graph=self.graph, **parameters)
        return IndexResult(store.describe_path(handle.path, self.method), handle.built, handle.build_seconds)

    def write(self, *, top_k: int = 10, similarity_cutoff: float = 0.0, batch_size: int | None = None, wait: float = 0.0,
              rebuild: bool = False, crawled_only: bool = False, memory_budget: str | int | None = None,
              retire: str = "wait", source_pages=None, sample: int | None = None, rewrite: bool = False,
              targets=None, **parameters) -> SimilarWriteResult:
        """Write every page's top ``top_k`` as ``SIMILAR_TO`` of a new current run; where the
        method's current lists were kept, only the lists that changed (an update: the same lists
        as a full run, ``lists_rewritten`` says how many were written).

        One writer per method: readers see the lists before the run or after it, never a mix or nothing.

        Parameters
        ----------
        top_k, similarity_cutoff : int, float
            Pages per list, and the lowest score kept (exclusive).
        batch_size : int, optional
            Relationships per write transaction (default 500) and, when given, per retirement
            transaction (default 50,000).
        wait : float
            Seconds to wait for another writer of the method (0: refuse at once, naming it).
        rebuild, crawled_only, memory_budget
            As in :meth:`index`.
        retire : {"wait", "background"}
            ``background`` returns once the new run is current; a process of its own deletes the old
            run's relationships.
        source_pages : str or list of URLs, optional
            Write lists for these pages only (``"crawled"``, ``"pagerank>=0.9"``, URLs); all pages stay
            candidates.
        sample : int, optional
            The fingerprint-tree methods: members read from each large range of a page's trees
            (default 16, PSimRank 8: a sample, every score exact; 0: every member, the exact lists); see
            ``linksim similar --help``.
        rewrite : bool
            Write every list, also where only some changed since the current run.
        targets : str or list of URLs, optional
            Only these pages in the lists, chosen while they are ranked (a list is still ``top_k``
            long where that many pass): ``"other-hosts"``, ``"same-host"``, ``"crawled"``,
            ``"label:NAME"`` or URLs. The run is current under ``<method>@<filter>``
            (``spectral@other-hosts``), beside the unfiltered one.
        **parameters
            The method's own parameters, as in :meth:`index`.

        Returns
        -------
        SimilarWriteResult
            ``run_id``, ``relationships_written`` (the relationships the method's lists now hold),
            ``lists_rewritten``, ``lists_sampled``, ``lists_resumed``, ``*_millis``, ``configuration``.

        Examples
        --------
        >>> ls.similar("psimrank").write(top_k=10).relationships_written  # doctest: +SKIP
        46040
        """
        from linksim.procedures.similarity import similar

        client = self._client
        query = Query.checked(top_k, similarity_cutoff)  # the one check of every path below
        return SimilarWriteResult(similar(
            client.runner, self.method, client.index_root, query,
            batch_size=batch_size, wait=wait, rebuild=rebuild, crawled_only=crawled_only,
            show_progress=client.show_progress, memory_budget=memory_budget, retire=retire,
            source_pages=source_pages, sample=sample, graph=self.graph, rewrite=rewrite, targets=targets,
            **parameters))

    def stream(self, *, top_k: int = 10, similarity_cutoff: float = 0.0, rebuild: bool = False,
               crawled_only: bool = False, sample: int | None = None, **parameters) -> pd.DataFrame:
        """Every page's top ``top_k``, computed from the index and written nowhere.

        Parameters
        ----------
        top_k, similarity_cutoff : int, float
            Pages per list, and the lowest score kept (exclusive).
        rebuild, crawled_only
            As in :meth:`index`.
        sample : int, optional
            As in :meth:`write` (``linksim similar --sample``).
        **parameters
            The method's own parameters, as in :meth:`index`.

        Returns
        -------
        pandas.DataFrame
            Columns ``source, target, score, rank`` (URLs), one row a pair.
        """
        from linksim.methods import check_sample
        from linksim.parameters import check_parameters
        from linksim.procedures.indexes import obtain_index
        from linksim.ranking.topk import lists_of_all

        query = Query.checked(top_k, similarity_cutoff)
        check_parameters(sample=sample)
        check_sample(self.method, sample)
        client = self._client
        handle = obtain_index(client.runner, self.method, client.index_root, rebuild=rebuild,
                              crawled_only=crawled_only, show_progress=client.show_progress, graph=self.graph,
                              **parameters)
        source, target, score, rank = lists_of_all(handle.index, query, show_progress=client.show_progress,
                                                   sample=sample)
        urls = np.asarray(handle.streamed.urls, dtype=object)
        return pd.DataFrame({"source": urls[source], "target": urls[target], "score": score, "rank": rank})

    def stats(self, *, top_k: int = 10, similarity_cutoff: float = 0.0, **parameters) -> SimilarStatsResult:
        """The summary of :meth:`stream`, written nowhere.

        Parameters
        ----------
        top_k, similarity_cutoff, **parameters
            As in :meth:`stream`.

        Returns
        -------
        SimilarStatsResult
            The pages with a list, the pairs, and the scores' min, median, 90th percentile and max.
        """
        frame = self.stream(top_k=top_k, similarity_cutoff=similarity_cutoff, **parameters)
        scores = frame["score"].to_numpy()
        quantiles = np.quantile(scores, [0.0, 0.5, 0.9, 1.0]) if len(scores) else [np.nan] * 4
        configuration = dict(registered(self.method).parameters_for(**parameters), topK=top_k,
                             similarityCutoff=similarity_cutoff)
        return SimilarStatsResult(self.method, int(frame["source"].nunique()), len(frame),
                                  dict(zip(("min", "p50", "p90", "max"), map(float, quantiles))), configuration)


class Spark:
    """``ls.spark(master, partitions)``: PageRank, indexes and SIMILAR_TO built on Apache Spark
    (:mod:`linksim.procedures.spark`); the session starts at the first call and is kept."""

    def __init__(self, client: "Linksim", master: str = "local[2]", partitions: int = 4) -> None:
        from linksim.parameters import check_parameters

        check_parameters(partitions=partitions)
        self._client, self.master, self.partitions = client, master, partitions
        self._session = None

    @property
    def session(self):
        """The SparkSession with the Neo4j connector, started at the first use and kept."""
        from linksim.procedures.spark import session

        if self._session is None:
            self._session = session(self.master, self.partitions)
        return self._session

    def pagerank(self, damping: float = 0.85, tol: float = 1e-6, max_iter: int = 100, write_property: str = "pagerank",
                 wait: float = 0.0):
        """PageRank on Spark, written through the connector to every page (``linksim spark pagerank``).

        Parameters
        ----------
        damping : float
            The probability of following a link rather than jumping to a random page.
        tol : float
            The L1 change between two iterations under which the ranks have converged.
        max_iter : int
            Iterations at most.
        write_property : str
            The page property the ranks are written to.
        wait : float
            Seconds to wait for a run of the same property in progress (0: fail at once).

        Returns
        -------
        PageRankWriteResult
            As :meth:`PageRank.write` answers, from the Spark engine.
        """
        from linksim.procedures.spark import spark_pagerank

        c = self._client
        return spark_pagerank(c.runner, c.connection, self.master, self.partitions, damping, tol, max_iter,
                              write_property, spark=self.session, wait=wait)

    def index(self, method: str, parquet: str | None = None, **parameters) -> IndexResult:
        """Build the method's index on Spark and store it as ``Similar.index`` would (``linksim spark index``).

        Parameters
        ----------
        method : str
            A method of :data:`linksim.METHODS`.
        parquet : str, optional
            A folder to write the index's arrays to as Parquet, beside the store.
        **parameters : object
            The method's own parameters (``n_fingerprints``, ``path_length``, ...).

        Returns
        -------
        IndexResult
            The stored index's description, its build time and ``engine="spark"``.
        """
        from linksim.procedures.spark import spark_index

        c = self._client
        described = spark_index(c.runner, c.connection, c.index_root, method, self.master, self.partitions,
                                spark=self.session, parquet=parquet, **parameters)
        meta = {k: v for k, v in described.items() if k not in ("built", "build_seconds")}
        return IndexResult(meta, described["built"], described["build_seconds"], engine="spark")

    def similar(self, method: str, top_k: int = 10, similarity_cutoff: float = 0.0, sample: int | None = None,
                write_partitions: int = 1, wait: float = 0.0, retire: str = "wait", rebuild: bool = False,
                **parameters):
        """Every page's top ``top_k`` computed on Spark and written as ``SIMILAR_TO`` by the connector.

        Parameters
        ----------
        method : str
            A method of :data:`linksim.METHODS`.
        top_k : int
            Pages in each list.
        similarity_cutoff : float
            Scores at or below it are left out of the lists.
        sample : int, optional
            As in :meth:`Similar.write`: members a list reads per large tree range (0: exact lists).
        wait : float
            Seconds to wait for a run of the same method in progress (0: fail at once).
        retire : {"wait", "background"}
            As in :meth:`Similar.write`: when the run this one replaces is deleted.
        rebuild : bool
            Build the index again even where a matching one is stored.
        write_partitions : int
            Partitions writing at once (1: one writer, no lock contention between them).
        **parameters : object
            The method's own parameters.

        Returns
        -------
        SimilarWriteResult
            As :meth:`Similar.write` answers, from the Spark engine.
        """
        from linksim.procedures.spark import spark_similar

        c = self._client
        return SimilarWriteResult(spark_similar(
            c.runner, c.connection, c.index_root, method, self.master, self.partitions,
            Query.checked(top_k, similarity_cutoff), sample, write_partitions, wait=wait, retire=retire,
            spark=self.session, rebuild=rebuild, **parameters), engine="spark")


class Linksim:
    """A connection to one database of one Neo4j server and its index store."""

    def __init__(self, runner, index_root: Path, show_progress: bool = True, local_server=None,
                 connection=None) -> None:
        self.runner, self.index_root, self.show_progress = runner, Path(index_root), show_progress
        self.local_server = local_server
        self.connection = connection  # what the Spark connector connects with
        self.pagerank = PageRank(self)
        self._open: dict = {}

    # Loading ------------------------------------------------------------------------------------
    def load(self, paths, format: str | None = None, mode: str = "auto", batch_size: int = 10_000,  # noqa: A002
             on_error: str = "stop", normalize: bool = True, wait: float = 0.0, recrawl: bool = False):
        """Load crawl files into the database (``linksim load``).

        Parameters
        ----------
        paths : path or list of paths
            Crawl files or a Wikispeedia folder, read in order into one graph.
        format : str, optional
            ``edges``, ``cites``, ``csv``, ``jsonl``, ``pajek``, ``warc`` or ``wikispeedia``; default:
            detected from each name and content.
        mode : {"auto", "online", "bulk"}
            Batched transactions, or Neo4j's import tool on an empty local database.
        batch_size : int
            Rows per write transaction (online).
        on_error : {"stop", "skip"}
            Stop at the first bad record before anything is written, or skip and count bad records.
        normalize : bool
            Normalise URLs (scheme and host case, default ports, fragments, percent-encoding).
        wait : float
            Seconds to wait for another load of the database.
        recrawl : bool
            The input's pages were crawled again: their out-links replace those in the graph.

        Returns
        -------
        linksim.loader.load.LoadSummary
            Pages and links created and updated, duplicates, records skipped by reason, timings.
        """
        from linksim.procedures.load import load

        return load([Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)], self.runner,
                    fmt=format, mode=mode, batch_size=batch_size, on_error=on_error, normalize=normalize,
                    local_server=self.local_server, show_progress=self.show_progress, wait=wait, recrawl=recrawl)

    def tour(self, folder, pages, top_k: int = 10, pagesim_radius: int = 2, rebuild: bool = False, **steps):
        """``linksim demo`` on this database: Wikispeedia, PageRank, each demo method's SIMILAR_TO
        (skipped when already there), graded, and the related pages of a few articles.

        Parameters
        ----------
        folder : path
            The Wikispeedia folder.
        pages : list of str
            Article names whose related pages the tour shows.
        top_k, pagesim_radius, rebuild
            Pages per list, PageSim's radius, and whether to recompute what is there.

        Returns
        -------
        linksim.procedures.demo.Tour
            The steps taken, their timings and the related pages side by side.
        """
        from linksim.procedures.demo import tour

        return tour(self, Path(folder), pages, top_k=top_k, pagesim_radius=pagesim_radius, rebuild=rebuild, **steps)

    def report(self, out, categories: dict | None = None, texts=None, quick: bool = False):
        """``linksim report``: the papers' experiments on this crawl, in one HTML file.

        Parameters
        ----------
        out : path
            The HTML file written.
        categories : dict, optional
            URL to category paths; default the pages' ``categories`` property.
        texts : path, optional
            The pages' texts, for the text-based Delta(A, T).
        quick : bool
            Fewer fingerprints and pages: a quick look.

        Returns
        -------
        linksim.procedures.report.Report
            The path, its sections and its findings.
        """
        from linksim.procedures.report import write_report

        return write_report(self, Path(out), categories, Path(texts) if texts else None, quick)

    def init_schema(self) -> dict:
        """Create linksim's constraints and indexes where missing (idempotent).

        Returns
        -------
        dict
            The number of constraints and indexes added, by kind.
        """
        from linksim.procedures.schema import apply_schema

        return apply_schema(self.runner)

    def label_tiers(self, write_property: str = "pagerank"):
        """Label the top pages by PageRank for the Browser's style (``:PageRankTop1``, ``:PageRankTop10``).

        Parameters
        ----------
        write_property : str
            The PageRank property the tiers are read from.

        Returns
        -------
        linksim.procedures.browser.TierCounts
            The pages labelled in each tier.
        """
        from linksim.procedures.browser import label_pagerank_tiers

        return label_pagerank_tiers(self.runner, write_property)

    def evaluate(self, categories: dict | None = None, methods: list[str] | None = None, depth: int = 2,
                 top: int = 100, exact: bool = False, texts: dict | None = None,
                 anchors: bool | list[str] = False, targets=None) -> list[dict]:
        """Grade the current SIMILAR_TO lists of each method against the pages' categories.

        Parameters
        ----------
        categories : dict, optional
            URL to category paths; default the pages' ``categories`` property.
        methods : list of str, optional
            The methods graded; default every method with a current run.
        depth, top : int
            Category depth that counts as the same topic, and pages per list read.
        exact : bool
            Also grade the exact lists (small graphs).
        texts : dict, optional
            The pages' texts, for Delta(A, T).
        anchors : bool or list of str
            Also grade the anchors of :mod:`linksim.evaluation.anchors` (True: all of them).
        targets : str or list of URLs, optional
            Grade the runs written with this target filter (``<method>@<filter>``) and the anchors'
            lists filtered the same way (as :meth:`Similar.write`).

        Returns
        -------
        list of dict
            One row a method or anchor: precision_at_10, hits_at_10, gamma, coverage, ...
        """
        from linksim.procedures.evaluation import evaluate

        return evaluate(self.runner, categories, methods, depth=depth, top=top, exact=exact, texts=texts,
                        show_progress=self.show_progress, anchors=anchors, targets=targets)

    # Similarity ---------------------------------------------------------------------------------
    def similar(self, method: str = DEFAULT_METHOD, graph: str = "pages") -> Similar:
        """A method's index and SIMILAR_TO lists.

        Parameters
        ----------
        method : str
            A method of :data:`linksim.METHODS`; default :data:`linksim.DEFAULT_METHOD`.
        graph : {"pages", "hosts"}
            The page graph, or the host graph built by :meth:`hosts`.

        Returns
        -------
        Similar
            ``index()``, ``write()``, ``stream()``, ``stats()`` and ``estimate()`` of that method.
        """
        return Similar(self, method, graph)

    def spark(self, master: str = "local[2]", partitions: int = 4) -> Spark:
        """The Spark path: PageRank, indexes and SIMILAR_TO built on Apache Spark.

        Parameters
        ----------
        master : str
            ``local[N]``, ``spark://HOST:PORT`` or ``yarn``.
        partitions : int
            Partitions of the link graph.

        Returns
        -------
        Spark
            Its session starts at the first call and is kept.
        """
        return Spark(self, master, partitions)

    def _handle(self, method: str, n_fingerprints: int | None, crawled_only: bool, graph: str = "pages"):
        """The stored index for queries, kept open between calls; every call checks in one
        constant-time query that it still fits the graph (else the store says what to run)."""
        from linksim.parameters import check_graph
        from linksim.procedures.indexes import open_index
        from linksim.procedures.stream import graph_state

        key = (method, n_fingerprints, crawled_only, check_graph(graph))
        state = graph_state(self.runner, graph)
        cached = self._open.get(key)
        if cached is not None and cached[0] == state:
            return cached[1]
        given = {"n_fingerprints": n_fingerprints} if registered(method).samples else {}
        handle = open_index(self.runner, method, self.index_root, crawled_only, state, graph=graph, **given)
        self._open[key] = (state, handle)
        return handle

    def related(self, url: str | Sequence[str], method: str = DEFAULT_METHOD, top_k: int = 10,
                similarity_cutoff: float = 0.0, n_fingerprints: int | None = None, crawled_only: bool = False,
                pool: int | None = None, graph: str = "pages", targets=None) -> pd.DataFrame:
        """The pages most similar to a page, or to a set of pages, read from the stored index.

        One constant-time query checks that the index still fits the graph; the first call opens it,
        later calls take milliseconds.

        Parameters
        ----------
        url : str or list of str
            A page's URL (normalised as the loader stores it), or a list: the pages most similar to
            them together (the mean of each page's scores in their lists of ``pool`` pages, the given
            pages left out). With ``graph="hosts"``, host names.
        method : str
            A method of :data:`linksim.METHODS`; default :data:`linksim.DEFAULT_METHOD`.
        top_k, similarity_cutoff : int, float
            Pages answered, and the lowest score kept (exclusive).
        n_fingerprints : int, optional
            Read only the first N fingerprints of the index.
        crawled_only : bool
            The index of the crawled pages only.
        pool : int, optional
            For a list of URLs: pages read from each given page's list (default 100).
        graph : {"pages", "hosts"}
            The page graph or the host graph.
        targets : str or list of URLs, optional
            Only these pages, chosen while the list is ranked: ``"other-hosts"``, ``"same-host"``,
            ``"crawled"``, ``"label:NAME"`` or URLs (as :meth:`Similar.write`); for a set, other
            hosts than all the given pages' (``same-host``: one of theirs).

        Returns
        -------
        pandas.DataFrame
            ``rank, url, title, score, pagerank`` (for a set also ``lists``, how many of the given
            pages' lists hold the page; for hosts ``rank, host, pages, score, pagerank``).

        Raises
        ------
        linksim.store.IndexStoreError
            No stored index fits the graph; the message names the call that builds it.
        """
        from linksim.parameters import check_parameters
        from linksim.procedures.similarity import related_pages, related_to_set
        from linksim.procedures.targets import parse_targets

        query = Query.checked(top_k, similarity_cutoff)
        check_parameters(n_fingerprints=n_fingerprints, pool=pool)
        targets = parse_targets(targets)  # a bad filter is refused before an index is opened
        if isinstance(url, str):
            if pool is not None:
                raise ConfigurationError("pool applies to a set of pages (a list of URLs), not to one URL")
            key = _key(url, graph)  # a bad URL is the caller's error, whatever the store holds
            handle = self._handle(method, n_fingerprints, crawled_only, graph)
            return related_pages(handle, self.runner, key, query, n_fingerprints=n_fingerprints, targets=targets)
        keys = [_key(one, graph) for one in url]
        if not keys:
            raise ConfigurationError("give at least one URL")
        handle = self._handle(method, n_fingerprints, crawled_only, graph)
        return related_to_set(handle, self.runner, keys, query, n_fingerprints=n_fingerprints, pool=pool,
                              targets=targets)

    def sim(self, url: str, other: str, method: str = DEFAULT_METHOD, n_fingerprints: int | None = None,
            crawled_only: bool = False, graph: str = "pages") -> float:
        """The similarity of two pages by a method, read from the stored index.

        Parameters
        ----------
        url, other : str
            The two pages' URLs (host names with ``graph="hosts"``).
        method, n_fingerprints, crawled_only, graph
            As in :meth:`related`.

        Returns
        -------
        float
            The score in [0, 1]; 1 for a page and itself.
        """
        from linksim.parameters import check_parameters
        from linksim.procedures.similarity import similarity

        check_parameters(n_fingerprints=n_fingerprints)
        keys = _key(url, graph), _key(other, graph)
        handle = self._handle(method, n_fingerprints, crawled_only, graph)
        return similarity(handle, *keys, n_fingerprints=n_fingerprints)

    def hosts(self, batch_size: int = 10_000, wait: float = 0.0):
        """Build the host graph, or bring it up to date: ``(:Host)``, ``ON_HOST`` and ``HOST_LINKS_TO``.

        Parameters
        ----------
        batch_size : int
            Rows per write transaction.
        wait : float
            Seconds to wait for a load of the database that runs.

        Returns
        -------
        linksim.procedures.hosts.HostGraph
            The hosts, the pages on them, the host links and the page links they count.
        """
        from linksim.procedures.hosts import build_host_graph

        return build_host_graph(self.runner, batch_size, self.show_progress, wait)

    def explain(self, url: str, other: str, method: str = DEFAULT_METHOD, n_fingerprints: int | None = None,
                crawled_only: bool = False) -> pd.DataFrame:
        """Why two pages are related by a method: the terms of their similarity, largest first.

        For the walk methods, the fingerprints where the walks met (step, meeting page, each walk's
        pages); for extended Jaccard the shared pages of the k-step in-neighbourhoods; for PageSim
        the sources whose PageRank both received; for the default method also the link embedding's
        share. Reads the stored index and the links of the pages on the way.

        Parameters
        ----------
        url, other : str
            The two pages' URLs.
        method, n_fingerprints, crawled_only
            As in :meth:`related`.

        Returns
        -------
        pandas.DataFrame
            ``kind, share, fingerprint, step, page, path_a, path_b, received_a, received_b``; the
            shares add up to :meth:`sim`.
        """
        from linksim.parameters import check_parameters
        from linksim.procedures.explain import explain_pages

        check_parameters(n_fingerprints=n_fingerprints)
        keys = stored_key(url), stored_key(other)
        handle = self._handle(method, n_fingerprints, crawled_only)
        return explain_pages(handle, self.runner, *keys, n_fingerprints=n_fingerprints)

    def close(self) -> None:
        """Close the connection to Neo4j (also on leaving a ``with`` block).

        Returns
        -------
        None
        """
        self.runner.close()

    def __enter__(self) -> "Linksim":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _key(name: str, graph: str) -> str:
    """A page's URL as the loader stores it, or a host's name as given (host names are stored in
    lower case, as the URLs' hosts)."""
    from linksim.parameters import check_graph

    if check_graph(graph) == "pages":
        return stored_key(name)
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"a host name must be a non-empty string, got {name!r}")
    return name.strip().lower()


def index_root(uri: str, database: str, index_dir: str | Path | None = None) -> Path:
    """Where the indexes of a database live: ``index_dir``, else ``$LINKSIM_INDEX_DIR``, else
    ``$LINKSIM_HOME/indexes/<server>-<database>-<hash>``."""
    from linksim.procedures.indexes import default_index_root

    if index_dir is not None:
        return Path(index_dir)
    if os.environ.get("LINKSIM_INDEX_DIR"):
        return Path(os.environ["LINKSIM_INDEX_DIR"])
    return default_index_root(uri, database)


def connect(uri: str | None = None, user: str | None = None, password_file: str | Path | None = None,
            database: str | None = None, index_dir: str | Path | None = None, show_progress: bool = True) -> Linksim:
    """Connect to Neo4j and check that it answers.

    The command line's precedence: these arguments, then ``NEO4J_URI``, ``NEO4J_USER``,
    ``NEO4J_PASSWORD`` / ``NEO4J_PASSWORD_FILE`` and ``NEO4J_DATABASE``, then the local server of
    ``linksim neo4j start``.

    Parameters
    ----------
    uri : str, optional
        A Bolt or Neo4j URI.
    user : str, optional
        Default ``neo4j``.
    password_file : path, optional
        A file holding the password, readable by its owner only.
    database : str, optional
        Default ``neo4j``.
    index_dir : path, optional
        The index store; default ``LINKSIM_INDEX_DIR``, else a folder of the linksim home per
        server and database.
    show_progress : bool
        Progress bars on standard error for long steps.

    Returns
    -------
    Linksim
        The API object; the command line is a shell over it.

    Examples
    --------
    >>> import linksim
    >>> ls = linksim.connect()  # doctest: +SKIP
    >>> ls.related("https://en.wikipedia.org/wiki/Paris", top_k=5)  # doctest: +SKIP
    """
    from linksim.allocator import return_freed_memory
    from linksim.procedures.runner import QueryRunner
    from linksim.server.connection import resolve_connection

    return_freed_memory()  # what the estimates assume of a process that builds indexes
    connection = resolve_connection(uri=uri, user=user, password_file=password_file, database=database)
    local = None
    if connection.source == "local":
        from linksim.server import LocalServer, ServerSettings

        local = LocalServer(LocalServer(ServerSettings.from_env()).running_settings())
    runner = QueryRunner.connect(connection)
    return Linksim(runner, index_root(connection.uri, connection.database, index_dir), show_progress, local,
                   connection)
