"""A recording query runner: the Cypher and parameters each procedure sends, without a server."""

from __future__ import annotations

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

    def stream(self, query, parameters=None):
        self.sent.append(("stream", query, dict(parameters or {})))
        return iter(self._answer(query, parameters))

    def queries(self, containing: str) -> list[tuple[str, str, dict]]:
        return [sent for sent in self.sent if containing in sent[1]]

    def close(self) -> None:
        pass


@pytest.fixture
def recording():
    return RecordingRunner
