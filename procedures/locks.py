"""Writer locks held in the database: one writer at a time of a method's SIMILAR_TO, of a PageRank
property, of a load.

A lock is a ``(:LinksimLock {name})`` node (``name`` is unique: ``similar:simrank``,
``pagerank:pagerank``, ``load``) naming its holder: a random owner token, the process id, the
host, the command and a heartbeat that a thread of the holder refreshes every
:data:`HEARTBEAT_SECONDS`. A second writer finds the lock held and is refused with who holds it, or
waits for it (``wait`` seconds). A holder that died (``kill -9``, a lost machine) is recognised
and its lock taken over: at once when it ran on this host and its process is gone, otherwise once
its heartbeat is :data:`STALE_SECONDS` old.

Taking the lock writes the node first (``SET``), so the node's write lock is held while the
holder is read and replaced: two writers deciding at once are serialised by the database. The
holder's token is a fencing token: the steps that publish a result (making a SIMILAR_TO run
current) check in their own transaction that the token still holds the lock.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field

from linksim.errors import LinksimError

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 5.0
STALE_SECONDS = 60.0

# Owner tokens of the locks this process holds now. A lock of this process whose token is not here
# was left by a writer of ours whose release failed (the server was away): it is taken over like
# a dead process's.
_HELD: set[str] = set()

ACQUIRE = """
MERGE (l:LinksimLock {name: $name})
SET l.touched = timestamp()
WITH l, l.owner IS NULL OR l.owner IN [$owner, $dead] OR l.heartbeat < timestamp() - $stale AS free
CALL (l, free) {
  WITH l, free WHERE free
  SET l.owner = $owner, l.pid = $pid, l.host = $host, l.command = $command,
      l.since = timestamp(), l.heartbeat = timestamp()
}
RETURN free AS acquired, l.owner AS owner, l.pid AS pid, l.host AS host, l.command AS command,
       l.since AS since, timestamp() - l.heartbeat AS silent
"""

HOLDER = """
MATCH (l:LinksimLock {name: $name})
RETURN l.owner AS owner, l.pid AS pid, l.host AS host, timestamp() - l.heartbeat AS silent
"""

HEARTBEAT = """
MATCH (l:LinksimLock {name: $name, owner: $owner})
SET l.heartbeat = timestamp()
RETURN count(l) AS held
"""

RELEASE = """
MATCH (l:LinksimLock {name: $name, owner: $owner})
DELETE l
"""


class LockHeld(LinksimError):
    """Another writer holds the lock."""

    exit_code = 7


def holder_alive(runner, name: str) -> bool:
    """Whether a live writer holds the lock ``name``: on this host, a writer not :func:`_gone`;
    elsewhere, one whose heartbeat is younger than :data:`STALE_SECONDS`."""
    rows = runner.run(HOLDER, {"name": name})
    if not rows or not rows[0]["owner"]:
        return False
    row = rows[0]
    if row["host"] == socket.gethostname() and row["pid"] is not None:
        return not _gone(row)
    return row["silent"] is not None and row["silent"] < STALE_SECONDS * 1000


def _gone(holder: dict) -> bool:
    """Whether a lock's holder is a writer of this host known to be gone: its process ended, or it
    is this process and the lock is not one it holds now (a release that failed)."""
    if holder["host"] != socket.gethostname() or holder["pid"] is None:
        return False
    pid = int(holder["pid"])
    return not _process_alive(pid) or (pid == os.getpid() and holder["owner"] not in _HELD)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def _command_line() -> str:
    return " ".join(os.path.basename(arg) if i == 0 else arg for i, arg in enumerate(sys.argv))[:300]


@dataclass
class WriterLock:
    """A lock taken by :func:`acquire`; release it with :meth:`release` (or use ``with``)."""

    runner: object
    name: str
    owner: str
    lost: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                rows = self.runner.write_returning(HEARTBEAT, {"name": self.name, "owner": self.owner})[0]
            except Exception as exc:  # noqa: BLE001 - the server may be away for a moment: retry later
                log.debug("heartbeat of lock %s failed: %s", self.name, exc)
                continue
            if not rows or not rows[0][0]:
                log.warning("the lock %s was taken over by another writer", self.name)
                self.lost.set()
                return

    def start_heartbeat(self) -> None:
        self._thread = threading.Thread(target=self._beat, name=f"lock {self.name}", daemon=True)
        self._thread.start()

    def stop_heartbeat(self) -> None:
        """Stop refreshing the heartbeat (before the server goes down on purpose, for a bulk
        import that replaces the store and this lock with it)."""
        self._stop.set()

    def check(self) -> None:
        """Raise if the lock was taken over (this writer was thought dead)."""
        if self.lost.is_set():
            raise LockHeld(
                f"another writer took over the lock {self.name!r} while this run was silent for "
                f"over {STALE_SECONDS:.0f} s; this run's results were not published"
            )

    def release(self) -> None:
        _HELD.discard(self.owner)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=HEARTBEAT_SECONDS + 1)
        try:
            self.runner.write_autocommit(RELEASE, {"name": self.name, "owner": self.owner})
        except Exception as exc:  # noqa: BLE001 - a lock left behind is recovered by the next writer
            log.warning("could not release the lock %s (%s): the next writer will take it over",
                        self.name, type(exc).__name__)

    def __enter__(self) -> "WriterLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _refusal(name: str, row: dict, waited: float | None) -> LockHeld:
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(row["since"] / 1000)) if row["since"] else "?"
    after = f" (waited {waited:.0f} s)" if waited else ""
    return LockHeld(
        f"another linksim run holds the lock {name!r}{after}: pid {row['pid']} on {row['host']}, since "
        f"{since}, `{row['command']}`. Wait for it to finish, or rerun with --wait SECONDS. A run that "
        f"died is recovered at once on its own host, elsewhere after {STALE_SECONDS:.0f} s without "
        "a heartbeat."
    )


def acquire(runner, name: str, wait: float = 0.0, poll: float = 0.5) -> WriterLock:
    """Take the lock ``name`` for this process, waiting up to ``wait`` seconds for its holder.

    Raises
    ------
    LockHeld
        Another live writer holds it (after ``wait`` seconds).
    """
    from linksim.procedures.schema import ensure_lock_constraint

    ensure_lock_constraint(runner)
    owner = uuid.uuid4().hex
    host = socket.gethostname()
    began = time.monotonic()
    while True:
        dead = ""
        holder = runner.run(HOLDER, {"name": name})
        if holder and holder[0]["owner"] and _gone(holder[0]):
            dead = holder[0]["owner"]
            log.info("taking over the lock %s left by pid %s, whose writer is gone", name, holder[0]["pid"])
        rows, _ = runner.write_returning(ACQUIRE, {
            "name": name, "owner": owner, "dead": dead, "pid": os.getpid(), "host": host,
            "command": _command_line(), "stale": int(STALE_SECONDS * 1000),
        })
        row = dict(zip(("acquired", "owner", "pid", "host", "command", "since", "silent"), rows[0]))
        if row["acquired"]:
            _HELD.add(owner)
            lock = WriterLock(runner, name, owner)
            lock.start_heartbeat()
            return lock
        waited = time.monotonic() - began
        if waited >= wait:
            raise _refusal(name, row, waited if wait > 0 else None)
        log.info("waiting for the lock %s (pid %s on %s)", name, row["pid"], row["host"])
        time.sleep(min(poll, max(0.0, wait - waited)))
