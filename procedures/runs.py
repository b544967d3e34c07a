"""``(:LinksimRun)`` nodes: one per indexer run, with its parameters, outcome and timings."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

RECORD_RUN = """
CREATE (r:LinksimRun {
  id: $id, algorithm: $algorithm, mode: $mode, parameters: $parameters,
  iterations: $iterations, converged: $converged, residual: $residual,
  pages: $pages, links: $links, written: $written,
  started: datetime($started), millis: $millis,
  streamMillis: $stream_millis, computeMillis: $compute_millis, writeMillis: $write_millis
})
"""


@dataclass
class RunRecord:
    """What one indexer run did, as stored in its ``LinksimRun`` node."""

    algorithm: str
    mode: str
    parameters: dict[str, object]
    id: str | int = field(default_factory=lambda: uuid.uuid4().hex)  # SIMILAR_TO runs: an integer
    started: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat())
    iterations: int | None = None
    converged: bool | None = None
    residual: float | None = None
    pages: int = 0
    links: int = 0
    written: int = 0
    stream_millis: int = 0
    compute_millis: int = 0
    write_millis: int = 0
    lists_cut: int = 0  # top-k lists a member budget cut (similar --max-members)

    @property
    def millis(self) -> int:
        return self.stream_millis + self.compute_millis + self.write_millis

    def as_dict(self) -> dict[str, object]:
        return dict(asdict(self), millis=self.millis)


def record_values(run: RunRecord) -> dict[str, object]:
    """The run as query parameters (its parameters as a JSON string)."""
    values = run.as_dict()
    values["parameters"] = json.dumps(run.parameters, sort_keys=True)
    return values


def record_run(runner, run: RunRecord) -> None:
    """Store the run as a ``(:LinksimRun)`` node."""
    runner.write(RECORD_RUN, record_values(run))
