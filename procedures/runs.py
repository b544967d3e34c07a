"""The run protocol of every writer of results (``linksim similar``, ``linksim spark similar``,
``linksim pagerank``): run ids, the ``(:LinksimRun)`` record, the switch and the retirement.

``SIMILAR_TO`` write-back of a method, so that a reader never sees a mix of runs or nothing:

1. the writer takes the method's lock (:mod:`linksim.procedures.locks`, ``similar:<method>``)
   before it reads the graph: a second writer of the method waits or is refused;
2. the new relationships are created with ``run: <new id>`` beside the old ones;
3. one transaction, which checks that the writer still holds the lock, records the run as a
   ``(:LinksimRun)`` and points the method's one ``(:LinksimCurrent {algorithm})`` node at it
   (``run``, updated in place);
4. after :data:`RETIRE_GRACE_SECONDS`, the relationships of every other run of the method are
   deleted in batches (the old run, and those of runs that died before step 3).

A method's current lists are the relationships of its current runs, ``LinksimCurrent.runs``: the
run of its last full write and the updates since, each of which rewrote only the lists that
changed (:func:`publish_update`). An update writes the new lists under its own run id and marks
the relationships of the lists it replaces ``until: <its id>`` before its switch, which adds its
id to ``runs``; after the grace period it deletes them. A relationship is current when its
``run`` is in ``runs`` and its ``until`` is not::

    MATCH (current:LinksimCurrent {algorithm: $method})
    WITH coalesce(current.runs, [current.run]) AS runs
    MATCH (p:Page {url: $url})-[s:SIMILAR_TO]->(q:Page)
    WHERE s.run IN runs AND NOT coalesce(s.until, 0) IN runs

A reader reads ``runs`` once and then those relationships: under read-committed isolation it
sees the lists before the switch or after it, whole; the grace period lets a reader that took the
old runs just before the switch finish before what they name is deleted. An interrupted write
leaves the current runs and their relationships intact (an ``until`` of a run that never became
current means nothing); the next writer of the method cleans up. A full write makes its run the
only current one and retires all the others.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from linksim.errors import ConfigurationError

log = logging.getLogger(__name__)

# The one way a run is recorded: its properties as one map (record_values), so that the PageRank
# record and the SIMILAR_TO switch store the same fields.
RECORD_RUN = """
CREATE (r:LinksimRun) SET r = $run
"""

#: The one source of the rule of current lists (the module's docstring): a method's current runs,
#: read once from its ``current`` node, and :func:`is_current` below. Every Python query is built
#: from these; the shipped ``.cypher`` files, pasted into Browser as they are (Cypher has no
#: include), spell them out and ``tests/unit/test_current_rule.py`` holds each spelling to them.
RUNS_OF_CURRENT = "coalesce(current.runs, [current.run])"


def is_current(runs: str = "runs", relationship: str = "s") -> str:
    """The predicate of a current ``SIMILAR_TO`` relationship given the current runs ``runs`` (a
    variable holding :data:`RUNS_OF_CURRENT`, or a parameter such as ``$runs``): written by one of
    them and replaced by none of them."""
    return f"{relationship}.run IN {runs} AND NOT coalesce({relationship}.until, 0) IN {runs}"


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
    lists_sampled: int = 0  # top-k lists read from a sample of the trees (similar --sample)
    lists_resumed: int = 0  # SIMILAR_TO runs: lists read back from a run of the same lists cut short
    answered: int | None = None  # SIMILAR_TO runs: pages given a non-empty list
    linked: int | None = None  # ... of the pages asked for that have a link (self-links aside)
    key: str | None = None  # SIMILAR_TO runs: the method's key on its graph (procedures.graphs.run_key)
    lists_rewritten: int | None = None  # SIMILAR_TO updates: the lists that changed, written again

    @property
    def millis(self) -> int:
        return self.stream_millis + self.compute_millis + self.write_millis

    @property
    def coverage(self) -> float | None:
        """The share of the pages with a link that got a list (None where not a SIMILAR_TO run)."""
        if self.answered is None or not self.linked:
            return None
        return self.answered / self.linked

    def as_dict(self) -> dict[str, object]:
        values = dict(asdict(self), millis=self.millis, coverage=self.coverage)
        if values["key"] is None:
            del values["key"]
        return values


def record_values(run: RunRecord) -> dict[str, object]:
    """The run's ``(:LinksimRun)`` properties (camelCase, its parameters as a JSON string, the
    start as a date-time); None values are not stored."""
    return {
        "id": run.id, "algorithm": run.algorithm, "mode": run.mode,
        "parameters": json.dumps(run.parameters, sort_keys=True),
        "iterations": run.iterations, "converged": run.converged, "residual": run.residual,
        "pages": run.pages, "links": run.links, "written": run.written,
        "started": datetime.fromisoformat(run.started), "millis": run.millis,
        "streamMillis": run.stream_millis, "computeMillis": run.compute_millis, "writeMillis": run.write_millis,
        "listsSampled": run.lists_sampled, "listsResumed": run.lists_resumed, "answered": run.answered, "linked": run.linked,
        "listsRewritten": run.lists_rewritten,
    }


def record_run(runner, run: RunRecord) -> None:
    """Store the run as a ``(:LinksimRun)`` node."""
    runner.write(RECORD_RUN, {"run": record_values(run)})


# A run id is an integer from one counter of the database (inline in the relationship's property
# record, where the 32-character id of earlier versions took a string record of its own). The
# counter node is locked (`_lock`) before it is read, so two writers never get the same number.
# The run is noted as the method's `writing` run: one that dies before its switch leaves it there,
# and the next writer moves it to `retiring`, the runs whose relationships are to be deleted.
ALLOCATE_RUN = """
MATCH (lock:LinksimLock {name: $lock, owner: $owner})
MERGE (counter:LinksimCounter {name: 'run'})
SET counter._lock = true
WITH counter, coalesce(counter.value, 0) + 1 AS run
SET counter.value = run
REMOVE counter._lock
MERGE (current:LinksimCurrent {algorithm: $algorithm})
SET current.retiring = coalesce(current.retiring, []) +
      CASE WHEN current.writing IS NULL OR current.writing = current.run THEN [] ELSE [current.writing] END,
    current.writing = run
RETURN run
"""


#: Seconds between making a new run current and deleting the old one: a reader that read the
#: old run id just before the switch finishes its query (milliseconds) before its rows go.
RETIRE_GRACE_SECONDS = 2.0


# Nothing happens unless the writer still holds the lock (a fencing token: a writer taken for
# dead and overtaken must not publish).
MAKE_CURRENT = """
MATCH (lock:LinksimLock {name: $lock, owner: $owner})
MERGE (current:LinksimCurrent {algorithm: $algorithm})
WITH current, current.run AS previous,
     coalesce(current.retiring, []) +
       coalesce(current.runs, CASE WHEN current.run IS NULL THEN [] ELSE [current.run] END) AS retiring
CREATE (r:LinksimRun) SET r = $run
SET current.run = $run.id, current.runs = [$run.id], current.since = datetime(), current.retiring = retiring
RETURN previous, retiring
"""

# An update's switch: its run joins the current runs ($runs, those it was computed against, which
# the lock keeps as they were), and the relationships it marked superseded (`until: <its id>`)
# leave the lists in the same transaction.
MAKE_UPDATE_CURRENT = f"""
MATCH (lock:LinksimLock {{name: $lock, owner: $owner}})
MATCH (current:LinksimCurrent {{algorithm: $algorithm}})
WHERE {RUNS_OF_CURRENT} = $runs
CREATE (r:LinksimRun) SET r = $run
SET current.run = $run.id, current.runs = $runs + [$run.id], current.since = datetime()
RETURN coalesce(current.retiring, []) AS retiring
"""


# The relationships of the runs given (the one current before, runs that died before their switch
# and runs whose retirement was cut short: the method's `retiring` list, which the switch extends
# in its own transaction), found by a scan of the SIMILAR_TO type (no property index: see
# cypher/schema.cypher) and deleted in batches of $batch; then those runs leave the list. No other
# run is touched, whoever writes meanwhile.
RETIRE = """
MATCH ()-[s:SIMILAR_TO]->() WHERE s.run IN $runs
CALL (s) { DELETE s } IN TRANSACTIONS OF $batch ROWS
"""


FORGET_RETIRED = """
MATCH (current:LinksimCurrent {algorithm: $algorithm})
SET current.retiring = [run IN coalesce(current.retiring, []) WHERE NOT run IN $runs]
"""


# What the run that was current before wrote, as it recorded it.
PREVIOUS = """
MATCH (r:LinksimRun {id: $previous})
RETURN r.written AS written
"""


def current_runs(runner) -> dict[str, dict]:
    """The current SIMILAR_TO run of each method: ``{method: {run, started, parameters, pages,
    relationships}}`` (parameters decoded)."""
    from linksim import cypher

    runs = {}
    for row in runner.run(cypher.query("related_pages", "similarity_runs")):
        runs[row.pop("method")] = dict(row, parameters=json.loads(row["parameters"] or "{}"))
    return runs


def related_procedure(runner) -> bool:
    """Whether the server has ``linksim.related`` (:mod:`linksim.server.plugin`), which reads
    this protocol inside the server: the short related-pages query."""
    rows = runner.run("SHOW PROCEDURES YIELD name WHERE name = $name RETURN count(*) AS n",
                      {"name": "linksim.related"})
    return bool(rows and rows[0]["n"])


def publish_run(runner, lock, record: RunRecord, write_lists, grace: float | None = None, retire_mode: str = "wait",
                batch_size: int = 50_000) -> RunRecord:
    """Steps 2 to 4 of the protocol (see module) for a writer holding the method's ``lock``: a new
    run id, ``write_lists(run)`` creates the relationships with ``run`` (and returns how many),
    the switch, then the retirement of the other runs. Shared by ``linksim similar`` and
    ``linksim spark similar`` (whose relationships the Spark connector writes). The run becomes
    current under ``record.key`` (the method on the host graph: ``<method>@hosts``), else its method."""
    method = record.key or record.algorithm
    previous, retiring = _write_and_switch(runner, lock, record, method, write_lists, MAKE_CURRENT, {}, grace)
    if retire_mode == "background" and retire_in_background(runner, method, batch_size):
        return record
    _retire_after_switch(runner, method, record, record.id, previous=previous, retiring=retiring, batch=batch_size)
    return record


def _cut_short() -> tuple:
    """What cuts a retirement short without undoing the run: the server gone or failing (its disk
    full), the connection lost."""
    from neo4j.exceptions import DriverError, Neo4jError

    from linksim.procedures.runner import ServerUnreachable

    return DriverError, Neo4jError, ServerUnreachable, OSError


def _retire_after_switch(runner, method: str, record: RunRecord, keep_run, **retiring) -> None:
    """:func:`retire` once ``record`` is current: the run is published whatever happens now. A
    retirement cut short (the server gone, its disk full) leaves the runs in the method's retiring
    list, which the next writer of the method retires first; the run says so, and does not fail."""
    try:
        retire(runner, method, keep_run, **retiring)
    except _cut_short() as error:
        log.warning("%s run %s is current, but deleting the relationships of the runs it replaced was cut short "
                    "(%s): the next run of %s deletes them", method, record.id, str(error).splitlines()[0], method)


def publish_update(runner, lock, record: RunRecord, runs: list[int], write_changes, drop_superseded,
                   grace: float | None = None, batch_size: int = 50_000) -> RunRecord:
    """The protocol of an update (see module) for a writer holding the method's ``lock`` whose
    lists were computed against the current ``runs``: a new run id, ``write_changes(run)`` writes
    the lists that changed under ``run`` and marks those they replace ``until: run`` (and returns
    how many relationships the method's lists now hold), the switch that adds the run to the
    current ones, then, after the grace period, ``drop_superseded(run)`` deletes the marked
    relationships and the runs of writers that died are retired."""
    method = record.key or record.algorithm
    (retiring,) = _write_and_switch(runner, lock, record, method, write_changes, MAKE_UPDATE_CURRENT,
                                    {"runs": list(runs)}, grace)
    drop_superseded(record.id)
    if retiring:
        _retire_after_switch(runner, method, record, [*runs, record.id], retiring=retiring, batch=batch_size)
    return record


def _write_and_switch(runner, lock, record: RunRecord, method: str, write, switch: str, parameters: dict,
                      grace: float | None):
    """A new run id for ``record``, ``write(run)`` (how many relationships the lists hold after),
    the ``switch`` query under the lock (a fencing token: a writer taken for dead and overtaken
    publishes nothing), then the grace period; returns the switch's row."""
    began = time.monotonic()
    rows, _ = runner.write_returning(ALLOCATE_RUN, {"lock": lock.name, "owner": lock.owner, "algorithm": method})
    if not rows:
        lock.lost.set()
        lock.check()
    record.id = int(rows[0][0])
    record.written = write(record.id)
    record.write_millis = int((time.monotonic() - began) * 1000)
    lock.check()
    rows, _ = runner.write_returning(switch, dict(parameters, run=record_values(record), algorithm=method,
                                                  lock=lock.name, owner=lock.owner))
    if not rows:
        lock.lost.set()
        lock.check()
    grace = RETIRE_GRACE_SECONDS if grace is None else grace
    if grace > 0:
        time.sleep(grace)
    return rows[0]


RETIRE_MODES = ("wait", "background")


def retire_in_background(runner, method: str, batch: int) -> bool:
    """Start a detached process that deletes the relationships of the method's ``retiring`` runs
    (``python -m linksim.procedures.retirement``); False if this runner cannot be reconnected to
    (then the caller retires them itself). The connection reaches the process through its
    environment, never its command line; its log is ``<linksim home>/logs/retire-<method>.log``.
    A retirement cut short leaves the runs in the list, for the next run of the method.
    """
    import os
    import subprocess
    import sys

    connection = getattr(runner, "connection", None)
    if connection is None:
        return False
    env = dict(os.environ, NEO4J_URI=connection.uri, NEO4J_USER=connection.user,
               NEO4J_PASSWORD=connection.password, NEO4J_DATABASE=connection.database)
    env.pop("NEO4J_PASSWORD_FILE", None)
    try:
        path = retirement_log(method)
        with open(path, "ab") as log_file:
            subprocess.Popen(
                [sys.executable, "-m", "linksim.procedures.retirement", method, "--batch", str(int(batch))],
                env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file, cwd="/",
                start_new_session=True,  # not killed with the command's terminal or process group
            )
    except (OSError, ConfigurationError) as error:  # the home changed since the check: retire here
        log.warning("cannot start the background retirement (%s): retiring the old run now", error)
        return False
    log.info("the previous %s run's relationships are deleted in the background (log: %s)", method, path)
    return True


def retirement_log(method: str) -> Path:
    """The background retirement's log file, ``<linksim home>/logs/retire-<method>.log``, made
    writable now: a home that cannot hold it is one message before anything is started."""
    from linksim.home import home_folder, linksim_home

    folder = linksim_home() / "logs"
    try:
        home_folder(folder, "--retire background writes its log to")
        with open(folder / f"retire-{method}.log", "ab"):
            pass
    except (ConfigurationError, OSError) as error:
        raise ConfigurationError(f"{error}, or use --retire wait") from None
    return folder / f"retire-{method}.log"


CURRENT_AND_RETIRING = f"""
MATCH (current:LinksimCurrent {{algorithm: $algorithm}})
RETURN {RUNS_OF_CURRENT} AS run, coalesce(current.retiring, []) AS retiring
"""


def retire_pending(runner, method: str, batch: int = 50_000, attempts: int = 5) -> int:
    """Delete the relationships of the method's ``retiring`` runs (never its current run),
    retrying when a writer of the same nodes makes a transaction fail; returns how many."""
    from neo4j.exceptions import TransientError

    deleted = 0
    for attempt in range(attempts):
        rows = runner.run(CURRENT_AND_RETIRING, {"algorithm": method})
        if not rows or not rows[0]["retiring"]:
            return deleted
        if attempt == 0:
            log.info("deleting the relationships of earlier %s runs: %s", method,
                     ", ".join(str(run) for run in rows[0]["retiring"]))
        try:
            deleted += retire(runner, method, rows[0]["run"], retiring=rows[0]["retiring"], batch=batch)
            return deleted
        except TransientError as error:  # a deadlock with a writer: what was committed stays deleted
            log.info("retiring %s runs: %s; again (%d)", method, error.code, attempt + 1)
            time.sleep(1.0 + attempt)
    return deleted


def retire_leftovers(runner, method: str, batch: int = 50_000) -> int:
    """Before a writer holding the method's lock writes: the relationships of the runs whose
    retirement was cut short (the method's retiring list: past their grace period, read by no
    one), so that the store's room they hold is the new run's, not more disk. One cut short
    again warns and leaves them to the retirement after the switch; returns how many went."""
    try:
        return retire_pending(runner, method, batch)
    except _cut_short() as error:
        log.warning("deleting the relationships of earlier %s runs was cut short again (%s): they are deleted "
                    "after this run's switch", method, str(error).splitlines()[0])
        return 0


def retire(runner, method: str, keep_run, previous=None, retiring=(), batch: int = 50_000) -> int:
    """Delete the SIMILAR_TO relationships of the method's ``retiring`` runs (the run ``previous``,
    current before ``keep_run``, writers that died before their switch, retirements cut short);
    returns how many. Only the runs named are touched, so a writer that runs meanwhile loses nothing;
    never ``keep_run`` (a run id, or the list of the current runs).
    """
    began = time.monotonic()
    keep = set(keep_run) if isinstance(keep_run, (list, tuple)) else {keep_run}
    runs = list(dict.fromkeys(run for run in [previous, *retiring] if run is not None and run not in keep))
    if not runs:
        return 0
    if previous is not None:
        rows = runner.run(PREVIOUS, {"previous": previous})
        if rows and rows[0]["written"]:
            log.info("deleting the %s SIMILAR_TO relationships of the previous %s run %s",
                     f"{rows[0]['written']:,}", method, previous)
    counters = runner.write_autocommit(RETIRE, {"runs": runs, "batch": int(batch)})
    runner.write(FORGET_RETIRED, {"algorithm": method, "runs": runs})
    deleted = counters.get("relationships_deleted", 0)
    if deleted:
        log.info("deleted %s SIMILAR_TO relationships of earlier %s runs in %.1f s", f"{deleted:,}", method,
                 time.monotonic() - began)
    return deleted
