"""What the index store raises: each error says what would mend it."""

from __future__ import annotations

from linksim.errors import LinksimError


class IndexStoreError(LinksimError):
    """An index that is missing, unreadable or built for something else.

    Its fields say what would mend it, for each caller to word in its own terms (the command line
    as a ``linksim index`` command, see :func:`linksim.cli.main`): ``method``, the ``parameters``
    to build it with, and ``rebuild`` (the one stored must be built again)."""

    exit_code = 6

    def __init__(self, reason: str, method: str | None = None, parameters: dict | None = None,
                 rebuild: bool = False) -> None:
        self.reason, self.method, self.rebuild = reason, method, rebuild
        self.parameters = {k: v for k, v in (parameters or {}).items() if v is not None}
        super().__init__(self.worded(remedy))

    def worded(self, word) -> str:
        """The message with the remedy as ``word(method, parameters, rebuild)`` spells it."""
        if self.method is None:
            return self.reason
        return f"{self.reason}: {word(self.method, self.parameters, self.rebuild)}"


def remedy(method: str, parameters: dict, rebuild: bool) -> str:
    """The remedy in the API's terms: the index of ``method`` to build (again)."""
    shown = ", ".join([f"{k}={v!r}" for k, v in parameters.items()] + (["rebuild=True"] if rebuild else []))
    return f"build it again with ls.similar({method!r}).index({shown})" if rebuild else \
        f"build one with ls.similar({method!r}).index({shown})"


class IndexStoreFull(IndexStoreError):
    """The index store's file system is full (or the index is over a size limit): the exit code
    of a run that does not fit the free disk, not that of a stale index."""

    exit_code = 8


class IndexNotFound(IndexStoreError):
    pass


class IndexMismatch(IndexStoreError):
    pass


class IndexCorrupt(IndexMismatch):
    """A stored file differs from what was written: reported, never rebuilt over silently."""


class IndexOutdated(IndexMismatch):
    """An index written by another linksim (another format version, an array missing): queries
    refuse it, a build (:func:`open_built`) builds it again in its place."""
