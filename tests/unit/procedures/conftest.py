"""A recording query runner: the Cypher and parameters each procedure sends, without a server."""

from __future__ import annotations

import os
import socket
from types import SimpleNamespace

import pytest


class RecordingRunner:
    """Answers every query from ``answers`` (the first key found in the query text gives the
    rows) and records what was sent, in order, as ``(kind, query, parameters)``."""

    database = "neo4j"

    def __init__(self, answers: dict | None = None) -> None:
        self.answers = dict(answers or {})
        self.sent: list[tuple[str, str, dict]] = []

    def _answer(self, query: str, parameters=None):
        for key, rows in self.answers.items():
            if key in query:
                return rows(dict(parameters or {})) if callable(rows) else rows
        return []

    def run(self, query, parameters=None):
        self.sent.append(("run", query, dict(parameters or {})))
        return self._answer(query, parameters)

    def read_one(self, query, parameters=None, fetch_size=0):
        self.sent.append(("read", query, dict(parameters or {})))
        return self._answer(query, parameters)

    def write(self, query, parameters=None):
        self.sent.append(("write", query, dict(parameters or {})))
        return self._answer(query, parameters) or {}

    def retried(self, attempt, before_retry=None):
        return attempt(0)

    def write_many(self, statements):
        self.sent.append(("transaction", "\n;\n".join(q for q, _ in statements), {"statements": statements}))
        return [self._answer(q, p) or {} for q, p in statements]

    def reset_bookmarks(self) -> None:
        pass

    def write_returning(self, query, parameters=None):
        self.sent.append(("write", query, dict(parameters or {})))
        return self._answer(query, parameters), {}

    def write_autocommit(self, query, parameters=None):
        self.sent.append(("autocommit", query, dict(parameters or {})))
        return self._answer(query, parameters) or {}

    def stream(self, query, parameters=None, fetch_size=0):
        self.sent.append(("stream", query, dict(parameters or {})))
        return iter(self._answer(query, parameters))

    def queries(self, containing: str) -> list[tuple[str, str, dict]]:
        return [sent for sent in self.sent if containing in sent[1]]

    def close(self) -> None:
        pass


@pytest.fixture
def recording():
    return RecordingRunner


# A four-page graph as the database would stream it, and the answers of a free (or held) lock.
STATE = {"id": "g1", "version": 2, "pages": 4, "links": 5}
URLS = ["http://e.org/a", "http://e.org/b", "http://e.org/c", "http://e.org/d"]
IDS = [10, 11, 12, 13]
EDGES = ([0, 0, 1, 2, 3], [1, 2, 2, 3, 0])


def lock_answers(free: bool = True, pid: int | None = None) -> dict:
    holder = [] if free else [{"owner": "someone", "pid": pid or os.getpid(), "host": socket.gethostname()}]
    row = [free, "me" if free else "someone", pid or os.getpid(), socket.gethostname(), "linksim similar", 0, 0]
    return {"SHOW CONSTRAINTS": [{"name": "linksim_lock_name"}], "RETURN l.owner AS owner": holder,
            "MERGE (l:LinksimLock": [row]}


def graph_answers() -> dict:
    sources = [IDS[s] for s in EDGES[0]]
    targets = [IDS[t] for t in EDGES[1]]
    return {"LinksimGraph {name: 'links'}": [STATE], "collect(id) AS ids": [{"ids": IDS, "urls": URLS,
                                                                                   "degrees": [2, 1, 1, 1]}],
            "UNWIND $sources AS source": lambda p: [[s for s in sources if s in p["sources"]],
                                                    [t for s, t in zip(sources, targets) if s in p["sources"]]]}


@pytest.fixture
def fake():
    """The fake graph and lock answers above, for the procedures' tests."""
    return SimpleNamespace(STATE=STATE, URLS=URLS, IDS=IDS, EDGES=EDGES, lock_answers=lock_answers,
                           graph_answers=graph_answers)
