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


# A crawl with planted structure, labelled ----------------------------------------------------
# The copying model has the web's degrees but no topics, so no generated crawl could grade a
# method's lists. This one plants what related pages are about: topics, sites within a topic,
# sections within a site, each section on one subtopic of its site's topic; a site's home page
# linked from and linking every page of the site and a hub per section (the navigation sidebars
# of a real site, which co-cite everything and say nothing of a page's subject); and content links
# with power-law out-degrees (exponent 2.1 by default) to targets drawn by a heavy-tailed popularity
# (exponent 2.38), mostly within the section, the site or the subtopic on
# other sites. A page's label is its topic and subtopic; siblings are the other subtopics of a topic.


@dataclass(frozen=True)
class LabelledModel:
    """The parameters of the labelled crawl (the shares of a content link's target add up to 1)."""

    subtopics: int = 6  # of each topic
    pages_per_topic: int = 2_000  # topics = pages / this (at least 2)
    site_exponent: float = 2.0  # site sizes: a discrete power law from min_site_pages
    min_site_pages: int = 8
    same_section: float = 0.35
    same_site: float = 0.15  # another section of the site
    same_subtopic: float = 0.30  # a page of the subtopic, on any site of the topic
    same_topic: float = 0.10  # a page of the topic, any subtopic
    # the rest (0.10): any page of the crawl
    max_out_degree: int = 1_000
    out_exponent: float = OUT_EXPONENT  # of the content links' out-degrees
    in_exponent: float = IN_EXPONENT  # of the pages' popularity as targets

    @property
    def anywhere(self) -> float:
        return 1.0 - self.same_section - self.same_site - self.same_subtopic - self.same_topic

    def check(self) -> None:
        shares = (self.same_section, self.same_site, self.same_subtopic, self.same_topic)
        if min(shares) < 0 or self.anywhere < -1e-12:
            raise ConfigurationError(f"the target shares must be >= 0 and add up to at most 1, got {shares}")
        if self.subtopics < 1 or self.pages_per_topic < 1 or self.min_site_pages < 2:
            raise ConfigurationError("subtopics and pages_per_topic must be >= 1, min_site_pages >= 2")
        if not self.site_exponent > 1.0:
            raise ConfigurationError(f"site_exponent must be > 1, got {self.site_exponent}")
        copying_share(self.out_exponent), copying_share(self.in_exponent)

    def mean_content_links(self) -> float:
        """The mean of the content out-degree ⌊U^(−1/(γ−1))⌋ capped at max_out_degree (γ = out_exponent)."""
        k = np.arange(1, self.max_out_degree + 1, dtype=np.float64)
        tail = k ** (-(self.out_exponent - 1.0))  # P(degree >= k)
        return float(tail.sum())


@dataclass
class LabelledCrawl:
    """Links and labels of a generated labelled crawl; pages are numbered site after site."""

    source: np.ndarray  # int32, a link's page numbers
    target: np.ndarray
    site: np.ndarray  # int32 a page: its site
    topic: np.ndarray  # int32 a page: its site's topic
    subtopic: np.ndarray  # int32 a page: its section's subtopic (-1: a site's home page)

    @property
    def pages(self) -> int:
        return len(self.site)


def _site_sizes(rng: np.random.Generator, pages: int, model: LabelledModel) -> np.ndarray:
    sizes = []
    total = 0
    while total < pages:
        draw = np.floor(model.min_site_pages * rng.random(4096) ** (-1.0 / (model.site_exponent - 1.0)))
        draw = np.minimum(draw, max(model.min_site_pages, pages // 4)).astype(np.int64)
        sizes.append(draw)
        total += int(draw.sum())
    sizes = np.concatenate(sizes)
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), pages)) + 1]
    sizes[-1] -= int(sizes.sum()) - pages
    if sizes[-1] < 2:  # too small for a home and a section: its pages go to the site before
        sizes = np.r_[sizes[:-2], sizes[-2] + sizes[-1]] if len(sizes) > 1 else np.array([pages])
    return sizes


def _weighted_picks(rng: np.random.Generator, group: np.ndarray, weight: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each entry of ``wanted`` (a group number), a page of that group drawn in proportion to
    ``weight`` (``group``: each page's group)."""
    order = np.argsort(group, kind="stable")
    cumulative = np.cumsum(weight[order])
    groups = int(group.max()) + 1
    ends = np.searchsorted(group[order], np.arange(groups), side="right")
    starts = np.r_[0, ends[:-1]]
    low = np.where(starts > 0, cumulative[np.maximum(starts - 1, 0)], 0.0)
    high = cumulative[np.maximum(ends - 1, 0)]
    at = low[wanted] + rng.random(len(wanted)) * (high[wanted] - low[wanted])
    picked = np.searchsorted(cumulative, at, side="right")
    return order[np.clip(picked, starts[wanted], ends[wanted] - 1)]


def generate_labelled(links: int, seed: int = 0, model: LabelledModel = LabelledModel()) -> LabelledCrawl:
    """About ``links`` links (exactly, before the loader drops duplicates and self-loops) of a
    labelled crawl; the same seed and sizes give the same crawl."""
    if links < 100:
        raise ConfigurationError(f"a labelled crawl needs at least 100 links, got {links}")
    model.check()
    rng = np.random.default_rng(seed)
    structural = 4.0  # a page's links to and from its home and its section's hub
    pages = max(model.min_site_pages * 2, int(links / (structural + model.mean_content_links())))
    sizes = _site_sizes(rng, pages, model)
    sites = len(sizes)
    topics = max(2, pages // model.pages_per_topic)
    site_topic = rng.integers(0, topics, size=sites)
    site = np.repeat(np.arange(sites), sizes)
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    rank = np.arange(pages) - first[site]  # a page's place in its site; 0: the home page
    sections = np.minimum(model.subtopics, np.maximum(1, (sizes - 1) // model.min_site_pages))
    # the subtopics of a site's sections: distinct, drawn from its topic's
    keys = rng.random((sites, model.subtopics)).argsort(axis=1)
    section = np.where(rank > 0, ((rank - 1) * sections[site]) // np.maximum(sizes[site] - 1, 1), -1)
    subtopic = np.where(rank > 0, keys[site, np.maximum(section, 0)], -1)
    topic = site_topic[site]
    section_id = np.where(rank > 0, site * model.subtopics + np.maximum(section, 0), -1)
    section_start = np.ones(pages, dtype=bool)
    section_start[1:] = section_id[1:] != section_id[:-1]
    hub = np.maximum.accumulate(np.where(section_start, np.arange(pages), 0))  # the section's first page

    members = np.flatnonzero(rank > 0)
    home = first[site[members]]
    own_hub = hub[members]
    not_hub = members[own_hub != members]
    nav_source = [members, home, not_hub, hub[not_hub]]
    nav_target = [home, members, hub[not_hub], not_hub]
    nav = sum(len(part) for part in nav_source)

    # Content links: power-law out-degrees, scaled to the links left.
    budget = max(0, links - nav)
    degree = np.minimum(np.floor(rng.random(len(members)) ** (-1.0 / (model.out_exponent - 1.0))),
                        model.max_out_degree).astype(np.int64)
    cut = int(np.searchsorted(np.cumsum(degree), budget))
    degree[cut + 1:] = 0
    if cut < len(degree):
        degree[cut] -= int(degree.sum()) - budget
    short = budget - int(degree.sum())  # the draws fell short: one more link to pages at random
    if short > 0:
        degree += np.bincount(rng.integers(0, len(members), short), minlength=len(members))
    content_source = np.repeat(members, degree)
    popularity = rng.random(pages) ** (-1.0 / (model.in_exponent - 1.0))
    kind = np.searchsorted(np.cumsum([model.same_section, model.same_site, model.same_subtopic, model.same_topic]),
                           rng.random(len(content_source)), side="right")
    content_target = np.empty(len(content_source), dtype=np.int64)
    scopes = (
        (section_id, section_id),  # the source's section
        (np.where(rank > 0, site, -1), site),  # its site
        (np.where(rank > 0, topic * model.subtopics + subtopic, -1), topic * model.subtopics + subtopic),
        (topic, topic),  # its topic
        (np.zeros(pages, dtype=np.int64), np.zeros(pages, dtype=np.int64)),  # anywhere
    )
    for number, (group, of_source) in enumerate(scopes):
        chosen = np.flatnonzero(kind == number)
        if not len(chosen):
            continue
        # home pages are targets of the anywhere and topic scopes only (group -1 holds them otherwise)
        valid = group >= 0
        shifted = np.where(valid, group, group.max() + 1)
        content_target[chosen] = _weighted_picks(rng, shifted, popularity, of_source[content_source[chosen]])
    source = np.concatenate([*nav_source, content_source]).astype(np.int32)
    target = np.concatenate([*nav_target, content_target]).astype(np.int32)
    return LabelledCrawl(source, target, site.astype(np.int32), topic.astype(np.int32), subtopic.astype(np.int32))
