"""How a fingerprint walk chooses its next page: one object a kind of walk, which the method that
walks so holds (:class:`linksim.methods.method.Method`'s ``walk``) and passes down to the build,
the index, its updates, the Spark build and the explanations. None of them looks a method up by
name: what they ask of a walk is here, as flags and a draw."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linksim.fingerprints.randomness import closed_smallest_choices, inward, smallest_choices, uniform_choices


@dataclass(frozen=True)
class WalkKind:
    """A kind of fingerprint walk.

    Attributes
    ----------
    name : str
        How reports and errors word it.
    code : int
        Its number in the update kernels (:mod:`linksim.fingerprints.update`), which are compiled
        once for every kind.
    closed : bool
        A step chooses among the page itself and its in-links or its out-links, the direction
        drawn once for every walk of the step's stream (:func:`randomness.inward`): the walk
        never stops. Otherwise among the in-links only, and a page without one stops the walk.
    own_stream : bool
        The order of the in-links is drawn from the page's own stream (SimRank's uniform choice);
        otherwise one order of all pages a stream (PSimRank's min-hash coupling).
    """

    name: str
    code: int
    closed: bool = False
    own_stream: bool = False

    def draw(self, key, pages: np.ndarray, graph, choice: np.ndarray) -> None:
        """``choice[j]``: where a walk on ``pages[j]`` goes in the stream ``key`` (-1: it stops)."""
        if self.closed:
            inwards = inward(int(key))
            indptr, indices = ((graph.in_indptr, graph.in_indices) if inwards
                               else (graph.out_indptr, graph.out_indices))
            closed_smallest_choices(key, pages, indptr, indices, graph.codes, choice)
        elif self.own_stream:
            uniform_choices(key, pages, graph.in_indptr, graph.in_indices, graph.codes, choice)
        else:
            smallest_choices(key, pages, graph.in_indptr, graph.in_indices, graph.codes, choice)


#: SimRank's walk: a uniform in-neighbour (the first in the page's own random order).
UNIFORM = WalkKind("uniform", 0, own_stream=True)
#: PSimRank's walk: the in-neighbour first in the stream's random order of all pages (coupled walks).
SMALLEST = WalkKind("smallest", 1)
#: P-PSimRank's walk: the first in the stream's order among the page and its in- or out-links.
BOTH = WalkKind("both", 2, closed=True)
#: Every kind, in the order of their codes (the update kernels' warm-up walks each).
KINDS = (UNIFORM, SMALLEST, BOTH)
