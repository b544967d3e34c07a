"""What the lists of all pages ask of an index beyond the protocol's ``related(u)``
(:class:`linksim.methods.method.SimilarityIndex`): :class:`ListsOfAllPages`, whose every hook does
the plain thing by default. An index class says what it does better by deriving from it and
overriding; an index that does not derive from it (a plug-in method's) is read page by page
through :func:`lists_reader`. The lists (:mod:`linksim.ranking.topk`, :mod:`linksim.ranking.targets`)
and the run that makes them (:mod:`linksim.procedures.similarity`) call the hooks, never ask
whether an index has one.

The lists take a checked :class:`linksim.parameters.Query`: :meth:`ListsOfAllPages.related_many`
is the facade that checks, :meth:`~ListsOfAllPages.lists` and :meth:`~ListsOfAllPages.related_one`
the hooks below it that trust."""

from __future__ import annotations

import numpy as np

from linksim.parameters import Query


class ListsOfAllPages:
    """The hooks of the lists of all pages, each the plain reading by default."""

    #: The lists answered so far from a sample of the index (this process), not proven exact.
    lists_sampled = 0
    #: Its lists take ``sample`` (how many members of a large range they read).
    reads_sample = False
    #: :meth:`related_many` takes ``targets`` and filters while it ranks (:mod:`linksim.ranking.targets`).
    filters_targets = False

    def related_many(self, pages: np.ndarray, top_k: int | None = 10, similarity_cutoff: float = 0.0,
                     **options) -> list[list[tuple[int, float]]]:
        """The lists of ``pages``, as ``related`` answers each: :meth:`lists` of the checked query."""
        return self.lists(pages, Query.checked(top_k, similarity_cutoff), **options)

    def lists(self, pages: np.ndarray, query: Query, **options) -> list[list[tuple[int, float]]]:
        """The lists of ``pages`` for a checked ``query``, as :meth:`related_one` answers each."""
        return [self.related_one(u, query, **options) for u in np.asarray(pages).tolist()]

    def related_one(self, u: int, query: Query, **options) -> list[tuple[int, float]]:
        """``related(u)`` for a checked ``query``; an index of the protocol alone (a plug-in's)
        is asked through its ``related``, which checks what it takes."""
        return self.related(u, top_k=query.top_k, similarity_cutoff=query.similarity_cutoff, **options)

    def read_lists_as(self, page_major: bool, folder, bands: bool) -> None:
        """How a run that makes every page's list reads the index, as its memory budget allows:
        from page-major copies (``page_major``, written to ``folder`` when not None), with the
        first-step bands (``bands``); what the lists never read may be let go."""

    def prepare_all_pages(self) -> None:
        """Before the workers fork: what makes the lists of all pages faster, shared by them."""

    def prepare_targets(self, targets) -> None:
        """Before the workers fork: what a filter (:class:`linksim.ranking.targets.Targets`) needs."""

    def list_order(self, pages: np.ndarray) -> np.ndarray:
        """The order in which the lists of ``pages`` are best made (pages that share work in a row)."""
        return pages


class _PageByPage(ListsOfAllPages):
    """An index of the protocol alone, read through the plain hooks."""

    def __init__(self, index) -> None:
        self.index = index

    @property
    def n(self) -> int:
        return self.index.n

    @property
    def method(self) -> str:
        return type(self.index).__name__

    def related(self, u: int, top_k: int | None = 10, similarity_cutoff: float = 0.0, **options):
        return self.index.related(u, top_k=top_k, similarity_cutoff=similarity_cutoff, **options)


def lists_reader(index) -> ListsOfAllPages:
    """``index`` itself where its class derives from :class:`ListsOfAllPages`, else the plain
    reading of it (a plug-in method's index, which implements the protocol alone)."""
    return index if isinstance(index, ListsOfAllPages) else _PageByPage(index)
