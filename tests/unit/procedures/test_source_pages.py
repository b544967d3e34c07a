"""procedures/source_pages.py: the --source-pages specs, each refused with its form when wrong."""

from __future__ import annotations

import pytest

from linksim.errors import ConfigurationError
from linksim.procedures.source_pages import parse_source_pages


def test_the_forms_and_none() -> None:
    assert parse_source_pages(None) is None
    assert parse_source_pages("crawled").describe() == "crawled"
    assert parse_source_pages(" pagerank>=0.9 ").quantile == 0.9
    chosen = parse_source_pages(["http://e.org/a", "http://e.org/b"])
    assert chosen.urls == ("http://e.org/a", "http://e.org/b") and chosen.describe() == "2 URLs"
    assert parse_source_pages(chosen) is chosen


@pytest.mark.parametrize("spec", ["pagerank>=1", "pagerank>=-0.1", "pagerank>=x", "some", []])
def test_a_bad_spec_names_itself(spec) -> None:
    with pytest.raises(ConfigurationError, match="source.pages"):
        parse_source_pages(spec)
