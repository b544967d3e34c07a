"""The one place that sends Cypher to Neo4j.

Every query goes through a :class:`QueryRunner`, with its values as parameters; unit tests give a
recording runner instead of a driver to see the Cypher sent.
"""

from __future__ import annotations

import random
import time
from typing import Any, Iterator

from linksim.errors import LinksimError
from linksim.server.connection import Connection, retry_seconds


class ServerUnreachable(LinksimError):
    """Neo4j cannot be reached, refused the credentials, or failed a query: the driver's errors as
    one message (exit code 3)."""

    exit_code = 3


def driver_error(error: Exception, connection: Connection | None = None) -> LinksimError | None:
    """The one wording of the driver's errors, as a :class:`ServerUnreachable` (exit code 3) to
    raise or print; None for what is not the driver's."""
    from neo4j import exceptions

    where = f"Neo4j at {connection.uri}" if connection is not None else "Neo4j"
    if isinstance(error, exceptions.AuthError):
        return ServerUnreachable(
            f"{where} refused the credentials" + (f" of user {connection.user!r}" if connection else "")
            + f" ({error.message}). Check --user and --password-file, or NEO4J_USER and NEO4J_PASSWORD."
        )
    unreachable = (exceptions.ServiceUnavailable, exceptions.SessionExpired)
    if isinstance(error, unreachable) or (connection is not None and isinstance(error, OSError)):
        hint = ("Start the local server with `linksim neo4j start`, or check --uri / NEO4J_URI"
                if connection is None or connection.source == "local"
                else "Check --uri / NEO4J_URI and that the server runs")
        return ServerUnreachable(
            f"cannot reach {where}: the server is not running, or closed the connection "
            f"({type(error).__name__}). {hint}, then run the command again."
        )
    if isinstance(error, exceptions.Neo4jError) and "MemoryPoolOutOfMemoryError" in (error.code or ""):
        # The server's transaction memory (dbms.memory.transaction.total.max, 70 % of the heap by
        # default) was too small for a query: its heap, not linksim's budget, is what to raise.
        local = connection is None or connection.source == "local"
        return ServerUnreachable(
            f"Neo4j error {error.code}: {error.message} The server's heap is too small for this graph: "
            + ("restart the local server with a larger heap (`linksim neo4j stop`, then `linksim neo4j start "
               "--heap 4g` or LINKSIM_HEAP)" if local else "raise its server.memory.heap.max_size (or "
               "dbms.memory.transaction.total.max)") + ", then run the command again."
        )
    if isinstance(error, exceptions.Neo4jError):
        return ServerUnreachable(f"Neo4j error {error.code}: {error.message}")
    if isinstance(error, exceptions.ConfigurationError):
        return ServerUnreachable(f"invalid Neo4j connection setting: {error}")
    return None


class QueryRunner:
    """Run parameterised Cypher against one database of one server.

    Parameters
    ----------
    driver : neo4j.Driver
        An open driver. The runner does not own it unless created by :meth:`connect`.
    database : str
        The database every query runs against.
    """

    def __init__(self, driver: Any, database: str) -> None:
        self.driver = driver
        self.database = database
        self._owns_driver = False
        self.connection = None
        self._unreachable_since: float | None = None
        self.retry_seconds = retry_seconds()
        self.reset_bookmarks()

    def reset_bookmarks(self) -> None:
        """Forget the causal-consistency bookmarks of earlier transactions.

        Needed after the store was replaced offline (bulk import): the new store's transaction
        ids start again from zero, and an old bookmark would make the server wait for a
        transaction that will never come.
        """
        from neo4j import GraphDatabase

        self.bookmarks = GraphDatabase.bookmark_manager()

    @classmethod
    def connect(cls, connection: Connection) -> "QueryRunner":
        """Open a driver for ``connection`` and check at once that the server answers.

        Raises
        ------
        ServerUnreachable
            The server cannot be reached or refuses the credentials (no retry loop: a wrong
            URI fails in a second, not after the driver's 30 s of retries).
        """
        from neo4j import exceptions

        driver = connection.driver()
        try:
            driver.verify_connectivity()
        except (exceptions.AuthError, exceptions.ServiceUnavailable, OSError) as exc:
            driver.close()
            raise driver_error(exc, connection) from None
        runner = cls(driver, connection.database)
        runner._owns_driver = True
        runner.connection = connection  # for a background job that connects again (retirement)
        return runner

    def _managed(self, access: str, work, **session):
        """Run ``work(tx)`` in a managed transaction, retried as :meth:`retried` says (the
        driver's own loop, per call, is set to a single attempt)."""

        def attempt(_: int):
            with self.driver.session(database=self.database, bookmark_manager=self.bookmarks,
                                     max_transaction_retry_time=0, **session) as opened:
                run = opened.execute_write if access == "write" else opened.execute_read
                return run(work)

        return self.retried(attempt)

    def retried(self, attempt, before_retry=None):
        """``attempt(tries)`` (``tries``: the attempts before it), called again on the driver's
        retryable errors (a deadlock, a server restarting) with a growing, jittered pause, for at
        most :attr:`retry_seconds`: from the call's start, or, while the server cannot be reached,
        from when it was first found unreachable by any call of this runner. So the writes in
        flight and those after them give up together, one retry time after the server went away,
        not one retry time each. ``before_retry(error, tries)`` runs before each new attempt (to
        undo what a query that commits in parts left)."""
        from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired

        started = time.monotonic()
        delay, tries = 0.5, 0
        while True:
            try:
                result = attempt(tries)
                self._unreachable_since = None
                return result
            except (DriverError, Neo4jError) as error:
                if not error.is_retryable():
                    raise
                now = time.monotonic()
                deadline = started + self.retry_seconds
                if isinstance(error, (ServiceUnavailable, SessionExpired)):
                    if self._unreachable_since is None:
                        self._unreachable_since = now
                    deadline = min(deadline, self._unreachable_since + self.retry_seconds)
                if now >= deadline:
                    raise
                time.sleep(min(delay * random.uniform(0.8, 1.2), deadline - now))
                delay = min(delay * 2, 8.0)
                tries += 1
                if before_retry is not None:
                    before_retry(error, tries)

    def verify(self) -> None:
        """Raise if the server cannot be reached or refuses the credentials."""
        self.driver.verify_connectivity()
        self.run("RETURN 1 AS ok")

    def run(self, query: str, parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a read or schema query; return its records as dicts (eagerly: small results only)."""
        return self._managed("write", lambda tx: [record.data() for record in tx.run(query, parameters or {})])

    def write(self, query: str, parameters: dict[str, Any] | None = None) -> dict[str, int]:
        """Run a write query in a managed (retried) transaction; return its update counters.

        The query must be idempotent (MERGE, or delete-then-create keyed by run), since a managed
        transaction may be retried after a transient error.
        """
        return self._managed("write", lambda tx: _counters(tx.run(query, parameters or {}).consume()))

    def write_many(self, statements: list[tuple[str, dict[str, Any] | None]]) -> list[dict[str, int]]:
        """Run several write queries in one managed (retried) transaction: all commit or none;
        return the update counters of each."""
        return self._managed("write", lambda tx: [_counters(tx.run(query, parameters or {}).consume())
                                                  for query, parameters in statements])

    def write_returning(
        self, query: str, parameters: dict[str, Any] | None = None
    ) -> tuple[list[list[Any]], dict[str, int]]:
        """Like :meth:`write`, also returning the rows of the query as lists of values."""

        def work(tx: Any) -> tuple[list[list[Any]], dict[str, int]]:
            result = tx.run(query, parameters or {})
            rows = result.values()
            return rows, _counters(result.consume())

        return self._managed("write", work)

    def write_autocommit(self, query: str, parameters: dict[str, Any] | None = None) -> dict[str, int]:
        """Run a write query once, in an auto-commit transaction, not retried; return its update
        counters. For ``CALL { ... } IN TRANSACTIONS`` (which commits batch by batch) and for
        what must not wait out the driver's retries (releasing a lock while the server is gone)."""
        with self.driver.session(database=self.database, bookmark_manager=self.bookmarks) as session:
            return _counters(session.run(query, parameters or {}).consume())

    def values(self, query: str, parameters: dict[str, Any] | None = None) -> list[list[Any]]:
        """The records of a read query as lists of values (eagerly: no dict a row), in a managed
        read transaction."""
        return self._managed("read", lambda tx: tx.run(query, parameters or {}).values())

    def read_one(self, query: str, parameters: dict[str, Any] | None = None, fetch_size: int = 50_000) -> list[Any]:
        """The values of the one record of a read query, read in a managed read transaction on a
        session of its own (so that several threads can read at once)."""
        return self._managed("read", lambda tx: tx.run(query, parameters or {}).single(strict=True).values(),
                             fetch_size=fetch_size)

    def stream(self, query: str, parameters: dict[str, Any] | None = None, fetch_size: int = 10_000) -> Iterator[Any]:
        """Yield the records of a read query lazily, without holding the whole result (the driver
        holds ``fetch_size`` records at a time)."""
        with self.driver.session(
            database=self.database, fetch_size=fetch_size, bookmark_manager=self.bookmarks
        ) as session:
            with session.begin_transaction() as tx:
                yield from tx.run(query, parameters or {})

    def close(self) -> None:
        if self._owns_driver:
            self.driver.close()

    def __enter__(self) -> "QueryRunner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _counters(summary: Any) -> dict[str, int]:
    return {
        key: value
        for key, value in vars(summary.counters).items()
        if isinstance(value, int) and not key.startswith("_")
    }
