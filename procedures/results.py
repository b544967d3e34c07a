"""Typed results of the API, one per mode, the same whichever engine (numpy on one machine, or
Spark) computed them, in the Graph Data Science client's vocabulary: ``did_converge``,
``ran_iterations``, ``*_millis``, the counts written, ``configuration``.

``record`` is the run as stored in Neo4j (:class:`linksim.procedures.runs.RunRecord`: what the
command line prints with ``--json``); stream modes answer DataFrames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from linksim.procedures.runs import RunRecord


def _recorded(field_name: str, doc: str = "") -> property:
    """A result's field read from its stored run."""
    return property(lambda self: getattr(self.record, field_name), doc=doc)


@dataclass(frozen=True)
class _Timed:
    record: RunRecord

    run_id = _recorded("id")
    pages = _recorded("pages")
    links = _recorded("links")
    pre_processing_millis = _recorded("stream_millis", "Streaming the graph out of Neo4j.")
    compute_millis = _recorded("compute_millis")
    write_millis = _recorded("write_millis")

    @property
    def configuration(self) -> dict:
        return dict(self.record.parameters)


@dataclass(frozen=True)
class PageRankStatsResult(_Timed):
    """``ls.pagerank.stats()`` (and ``.run(mode)`` for the modes that write nothing).

    ``top``: the best pages (rank, url, score), ``ranks``: every page's rank in the streamed order
    (None from Spark, whose ranks stay in the cluster and in Neo4j)."""

    top: pd.DataFrame | None = None
    ranks: np.ndarray | None = None
    engine: str = "numpy"

    @property
    def did_converge(self) -> bool:
        return bool(self.record.converged)

    @property
    def ran_iterations(self) -> int:
        return int(self.record.iterations or 0)

    residual = _recorded("residual")


@dataclass(frozen=True)
class PageRankWriteResult(PageRankStatsResult):
    """``ls.pagerank.write()`` and ``ls.spark().pagerank()``: the property written on every page."""

    node_properties_written = _recorded("written")


@dataclass(frozen=True)
class SimilarWriteResult(_Timed):
    """``ls.similar(method).write()`` and ``ls.spark().similar(method)``: the new current
    SIMILAR_TO run."""

    engine: str = "numpy"

    method = _recorded("algorithm")
    relationships_written = _recorded("written")
    lists_sampled = _recorded("lists_sampled", "Lists read from a sample of the fingerprint trees, not proven exact (``sample``).")
    lists_resumed = _recorded("lists_resumed", "Lists read back from a run of the same lists cut short "
                              "(their pages were not computed again).")
    coverage = _recorded("coverage", "The share of the pages with a link (of those asked for) that got a list.")
    lists_rewritten = _recorded("lists_rewritten", "Of an update: the lists that changed since the current run, "
                                "the only ones written (None: every list was written).")


@dataclass(frozen=True)
class SimilarStatsResult:
    """``ls.similar(method).stats()``: what a write would write, written nowhere."""

    method: str
    pages: int
    pairs: int
    score_distribution: dict
    configuration: dict


@dataclass(frozen=True)
class IndexResult:
    """``ls.similar(method).index()`` and ``ls.spark().index(method)``: the stored index.
    ``meta`` is its description as stored (``meta.json``, with its path)."""

    meta: dict
    built: bool
    build_seconds: float
    engine: str = "numpy"

    @property
    def build_millis(self) -> int:
        return int(self.build_seconds * 1000)

    @property
    def method(self) -> str:
        return self.meta["method"]

    @property
    def configuration(self) -> dict:
        return dict(self.meta["parameters"])

    @property
    def path(self) -> str:
        return self.meta["path"]

    @property
    def pages(self) -> int:
        return self.meta["graph"]["pages"]

    @property
    def links(self) -> int:
        return self.meta["graph"]["links"]

    def as_dict(self) -> dict:
        """What ``linksim index --json`` prints."""
        return dict(self.meta, built=self.built, build_seconds=self.build_seconds)
