"""procedures/results.py: the typed results read their stored run in the GDS client's vocabulary."""

from __future__ import annotations

from linksim.procedures.results import IndexResult, PageRankWriteResult, SimilarWriteResult
from linksim.procedures.runs import RunRecord


def test_the_results_say_what_the_run_recorded() -> None:
    run = RunRecord("pagerank", "write", {"damping": 0.85}, id=3, iterations=17, converged=True, residual=2e-7,
                    pages=10, links=30, written=10, stream_millis=4, compute_millis=5, write_millis=6)
    result = PageRankWriteResult(run, engine="spark")
    assert (result.did_converge, result.ran_iterations, result.residual, result.node_properties_written) == (
        True, 17, 2e-7, 10)
    assert (result.run_id, result.pages, result.links, result.configuration) == (3, 10, 30, {"damping": 0.85})
    assert (result.pre_processing_millis, result.compute_millis, result.write_millis) == (4, 5, 6)
    result.configuration["damping"] = 0.5  # a copy: the record stays as stored
    assert run.parameters == {"damping": 0.85}
    similar = SimilarWriteResult(RunRecord("psimrank", "write", {"topK": 10}, id=9, written=40, lists_sampled=2))
    assert (similar.method, similar.relationships_written, similar.lists_sampled, similar.run_id) == ("psimrank", 40, 2, 9)
    index = IndexResult({"method": "simrank", "parameters": {"n_fingerprints": 5}, "path": "/x",
                         "graph": {"pages": 3, "links": 4}}, built=True, build_seconds=1.25)
    assert (index.method, index.pages, index.links, index.build_millis) == ("simrank", 3, 4, 1250)
    assert index.as_dict()["build_seconds"] == 1.25 and index.as_dict()["built"] is True
