"""A seeded synthetic web graph with power-law in- and out-degrees, for scale work.

The PageSim term paper generates its synthetic graphs with the (α, β) model of Kumar, Raghavan,
Rajagopalan & Tomkins (VLDB 1999), α = 0.52 and β = 0.58, which it reports to give out- and
in-degree power laws of exponents 2.1 and 2.38 (= 1/(1 − α) and 1/(1 − β)). That paper's text is not
available here, so linksim uses a *copying model* of the same authors (Kumar et al., "Stochastic
models for the Web graph", FOCS 2000) with its parameters set so that its exponents are the same:

* links are added one at a time (after a seed ring of ``SEED_PAGES`` pages);
* the **source** is a new (crawled) page with probability ``p_new_source``, otherwise the source of
  a uniformly chosen earlier link is *copied* (a page is chosen in proportion to its out-degree);
* the **target** is a new page with probability ``p_new_target``; otherwise, with probability
  ``p_copy_target``, the target of a uniformly chosen earlier link is copied (in proportion to
  in-degree); otherwise a uniformly chosen existing page.

A page's degree then grows as ``t**θ`` with θ the copying share (``1 − p_new_source`` for out-links,
``p_copy_target`` for in-links), which gives a power law of exponent ``γ = 1 + 1/θ`` (the rate
equation of the Simon/Yule process). For γ_out = 2.1 and γ_in = 2.38: ``p_new_source = 1/11`` (so
11 out-links per crawled page, as on the Web) and ``p_copy_target = 1/1.38``; ``p_new_target``
(default 0.02) adds pages that are only linked to.

The links are produced chunk by chunk (chunks double up to ``chunk_links``), each link's copy
pointing at an earlier link, resolved by pointer jumping within the chunk: memory is the two
endpoint arrays (which may be memory-mapped files) plus one chunk. The same seed and sizes give the
same graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from linksim.errors import ConfigurationError

SEED_PAGES = 10
OUT_EXPONENT = 2.1
IN_EXPONENT = 2.38


def copying_share(exponent: float) -> float:
    """The copying probability θ that gives a degree power law of ``exponent`` (γ = 1 + 1/θ)."""
    if not exponent > 2.0:
        raise ConfigurationError(f"a degree exponent must be > 2 (finite mean degree), got {exponent}")
    return 1.0 / (exponent - 1.0)


@dataclass(frozen=True)
class CopyingModel:
    """The parameters of the copying model (see the module's description)."""

    out_exponent: float = OUT_EXPONENT
    in_exponent: float = IN_EXPONENT
    p_new_target: float = 0.02

    @property
    def p_new_source(self) -> float:
        return 1.0 - copying_share(self.out_exponent)

    @property
    def p_copy_target(self) -> float:
        return copying_share(self.in_exponent)

    def check(self) -> None:
        copying_share(self.out_exponent)
        copy = self.p_copy_target
        if not 0.0 <= self.p_new_target <= 1.0 - copy:
            raise ConfigurationError(
                f"p_new_target must be in [0, {1.0 - copy:.4f}] (1 minus the in-link copying share "
                f"{copy:.4f}), got {self.p_new_target}"
            )

    def expected_pages(self, links: int) -> int:
        """About how many pages ``links`` links reach (crawled ones and ones only linked to)."""
        return int(SEED_PAGES + (links - SEED_PAGES) * (self.p_new_source + self.p_new_target))


def _copy(values: np.ndarray, start: int, refs: np.ndarray, out: np.ndarray, mask: np.ndarray) -> None:
    """``out[i] = values[refs[i]]`` for ``mask[i]``, where ``values`` holds the resolved links
    before ``start`` and ``out`` (the chunk from ``start`` on) may point into itself."""
    local = refs - start  # >= 0: a link of this chunk, earlier than i
    outside = mask & (local < 0)
    out[outside] = values[refs[outside]]
    pending = np.nonzero(mask & (local >= 0))[0]
    pointer = np.full(len(out), -1, dtype=np.int64)
    pointer[pending] = local[pending]
    # Pointer jumping: a link whose pointed-at link is resolved takes its value; the others jump to
    # where that one points. Pointers only go backwards, so every chain ends.
    while len(pending):
        target = pointer[pending]
        ready = pointer[target] < 0
        done = pending[ready]
        waiting = pending[~ready]
        jumped = pointer[target[~ready]]  # read before this round's links are marked resolved
        out[done] = out[target[ready]]
        pointer[done] = -1
        pointer[waiting] = jumped
        pending = waiting


def generate_links(
    links: int,
    seed: int = 0,
    model: CopyingModel = CopyingModel(),
    source: np.ndarray | None = None,
    target: np.ndarray | None = None,
    chunk_links: int = 1 << 20,
) -> Iterator[tuple[int, int, int]]:
    """Fill ``source`` and ``target`` (int32 arrays of ``links``, e.g. memory-mapped; allocated if
    None) with the links of the copying model, chunk by chunk. Yields ``(start, stop, pages)``
    after each chunk: links ``[start, stop)`` are final and ``pages`` pages exist so far.
    """
    if links < SEED_PAGES:
        raise ConfigurationError(f"links must be at least {SEED_PAGES}, got {links}")
    model.check()
    if source is None:
        source = np.empty(links, dtype=np.int32)
    if target is None:
        target = np.empty(links, dtype=np.int32)
    rng = np.random.default_rng(seed)
    ring = np.arange(SEED_PAGES, dtype=np.int32)
    source[:SEED_PAGES] = ring
    target[:SEED_PAGES] = (ring + 1) % SEED_PAGES
    pages = SEED_PAGES
    yield 0, SEED_PAGES, pages
    start = SEED_PAGES
    p_new_source, p_new_target, p_copy = model.p_new_source, model.p_new_target, model.p_copy_target
    while start < links:
        stop = min(links, start + min(start, chunk_links))
        n = stop - start
        position = np.arange(start, stop, dtype=np.int64)
        new_source = rng.random(n) < p_new_source
        draw = rng.random(n)
        new_target = draw < p_new_target
        copy_target = ~new_target & (draw < p_new_target + p_copy)
        uniform_target = ~new_target & ~copy_target
        created = new_source.astype(np.int64) + new_target
        before = pages + np.cumsum(created) - created  # pages that exist before link i
        source_refs = (rng.random(n) * position).astype(np.int64)
        target_refs = (rng.random(n) * position).astype(np.int64)
        existing = before + new_source  # pages a uniform target is chosen among
        uniform = (rng.random(n) * existing).astype(np.int64)

        src = np.empty(n, dtype=np.int32)
        dst = np.empty(n, dtype=np.int32)
        src[new_source] = before[new_source]
        _copy(source, start, source_refs, src, ~new_source)
        dst[new_target] = existing[new_target]
        dst[uniform_target] = uniform[uniform_target]
        _copy(target, start, target_refs, dst, copy_target)
        source[start:stop] = src
        target[start:stop] = dst
        pages += int(created.sum())
        yield start, stop, pages
        start = stop


def degree_exponent(degrees: np.ndarray, k_min: int) -> tuple[float, int]:
    """Maximum-likelihood exponent of a discrete power law over the degrees ``>= k_min``
    (Clauset, Shalizi & Newman 2009, eq. 3.7: ``1 + n / Σ ln(k / (k_min − 1/2))``) and that n."""
    tail = np.asarray(degrees, dtype=np.float64)
    tail = tail[tail >= k_min]
    if len(tail) == 0:
        raise ValueError(f"no degree is >= {k_min}")
    return 1.0 + len(tail) / float(np.log(tail / (k_min - 0.5)).sum()), len(tail)
