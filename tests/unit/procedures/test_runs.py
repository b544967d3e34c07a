"""procedures/runs.py: the run record every writer stores, and a writer that lost its lock never
publishes."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from linksim.procedures.locks import LockHeld
from linksim.procedures.runs import RunRecord, publish_run, record_values


def test_a_run_is_stored_as_one_map_of_camel_case_properties() -> None:
    run = RunRecord("pagerank", "write", {"damping": 0.85}, id=4, iterations=12, converged=True, residual=1e-7,
                    pages=10, links=20, written=10, stream_millis=5, compute_millis=6, write_millis=7)
    values = record_values(run)
    assert values["id"] == 4 and values["algorithm"] == "pagerank" and values["mode"] == "write"
    assert json.loads(values["parameters"]) == {"damping": 0.85}
    assert isinstance(values["started"], datetime) and values["started"].tzinfo is not None
    assert (values["streamMillis"], values["computeMillis"], values["writeMillis"], values["millis"]) == (5, 6, 7, 18)
    assert values["listsSampled"] == 0 and values["converged"] is True
    assert values["answered"] is None and run.coverage is None  # not a SIMILAR_TO run
    similar = RunRecord("ppsimrank", "write", {}, answered=45, linked=50)
    assert similar.coverage == 0.9 and similar.as_dict()["coverage"] == 0.9
    assert (record_values(similar)["answered"], record_values(similar)["linked"]) == (45, 50)


class _Lock:
    name, owner = "similar:psimrank", "me"

    def __init__(self) -> None:
        import threading

        self.lost = threading.Event()

    def check(self) -> None:
        if self.lost.is_set():
            raise LockHeld("taken over")


def test_a_writer_whose_lock_was_taken_over_writes_and_publishes_nothing(recording) -> None:
    runner = recording({"MERGE (counter:LinksimCounter": []})  # the fenced allocation finds no lock of ours
    written = []
    with pytest.raises(LockHeld):
        publish_run(runner, _Lock(), RunRecord("psimrank", "write", {}), lambda run: written.append(run) or 0)
    assert written == [] and not runner.queries("CREATE (r:LinksimRun")
