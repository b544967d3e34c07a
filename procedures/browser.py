"""What Neo4j Browser needs to draw linksim's graph: PageRank tiers as labels.

A Browser style sheet (GraSS) picks a node's size by its labels only; it cannot read a property.
To draw pages sized by PageRank, the pages with the highest rank get a tier label, which
``cypher/browser/style.grass`` sizes: ``:PageRankTop1`` for the top 1 % of the ranked pages,
``:PageRankTop10`` for the rest of the top 10 %. Each page has at most one tier label; the labels
are set again (old ones removed) in one transaction, so a reader sees either the old tiers or
the new ones. Once set, ``linksim pagerank`` (writing ``pagerank``) keeps them in step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from linksim.errors import LinksimError

# (label, share of the ranked pages, from the top). The labels are constants of this module,
# written into the queries below; the counts and the property name are parameters.
TIERS = (("PageRankTop1", 0.01), ("PageRankTop10", 0.10))

COUNT_RANKED = "MATCH (p:Page) WHERE p[$property] IS NOT NULL RETURN count(p) AS n"

# The label is one of TIERS' constants, substituted here once; never a value from outside.
_CLEAR = {label: f"MATCH (p:{label}) REMOVE p:{label}" for label, _ in TIERS}
_SET = {
    label: f"""
MATCH (p:Page) WHERE p[$property] IS NOT NULL
WITH p ORDER BY p[$property] DESC, p.url SKIP $skip LIMIT $limit
SET p:{label}
"""
    for label, _ in TIERS
}

IN_USE = f"MATCH (p:{TIERS[0][0]}) RETURN p LIMIT 1"


def tiers_in_use(runner) -> bool:
    """Whether the tier labels were set (by ``linksim browser`` or the demo): ``linksim pagerank``
    then sets them again after writing the ranks."""
    return bool(runner.run(IN_USE))


@dataclass
class TierCounts:
    ranked: int
    labelled: dict[str, int]


def tier_sizes(ranked: int) -> list[tuple[str, int, int]]:
    """(label, skip, limit) per tier for ``ranked`` pages: tiers nest, so each starts where the
    one above ends; a tier of a non-empty graph has at least one page."""
    out, start = [], 0
    for label, share in TIERS:
        end = min(ranked, max(start, math.ceil(share * ranked)))
        out.append((label, start, end - start))
        start = end
    return out


def label_pagerank_tiers(runner, property: str = "pagerank") -> TierCounts:
    """Label the top pages by ``property`` with the tier labels of :data:`TIERS`.

    Raises :class:`LinksimError` when no page has the property (run ``linksim pagerank`` first).
    """
    ranked = runner.run(COUNT_RANKED, {"property": property})[0]["n"]
    if ranked == 0:
        raise LinksimError(
            f"no page has a {property!r} property: run `linksim pagerank` first, then `linksim browser`"
        )
    sizes = tier_sizes(ranked)

    # One transaction: a reader never sees the tiers cleared and not yet set again.
    statements = [(_CLEAR[label], None) for label, _ in TIERS]
    statements += [(_SET[label], {"property": property, "skip": skip, "limit": limit}) for label, skip, limit in sizes]
    counters = runner.write_many(statements)[len(TIERS):]
    labelled = {label: counts.get("labels_added", 0) for (label, _, _), counts in zip(sizes, counters)}
    return TierCounts(ranked, labelled)
