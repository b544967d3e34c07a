"""The PageRank tiers the Browser style sizes pages by: nested shares of the ranked pages."""

import math

import pytest

from linksim.procedures.browser import TIERS, tier_sizes


@pytest.mark.parametrize("ranked", [1, 2, 9, 10, 99, 100, 101, 4604, 325_557])
def test_tiers_are_consecutive_and_cover_the_shares(ranked: int) -> None:
    sizes = tier_sizes(ranked)
    assert [label for label, _, _ in sizes] == [label for label, _ in TIERS]
    start = 0
    for (label, skip, limit), (_, share) in zip(sizes, TIERS):
        assert skip == start and limit >= 0
        start += limit
        assert start == min(ranked, math.ceil(share * ranked))  # the top share, rounded up
    assert sizes[0][2] >= 1  # the top tier is never empty
