"""The database side of ``linksim demo``: what is already there, and the related pages it shows."""

from __future__ import annotations

from linksim import cypher


def _count(runner, name: str, parameters: dict | None = None) -> int:
    return runner.run(cypher.query("demo", name), parameters or {})[0]["n"]


def progress(runner, prefix: str) -> dict[str, int]:
    """Crawled pages under ``prefix``, pages with a PageRank, and all pages."""
    return {"crawled": _count(runner, "crawled_pages_with_prefix", {"prefix": prefix}),
            "ranked": _count(runner, "ranked_pages"), "pages": _count(runner, "pages")}


def related_lists(runner, url: str, methods, limit: int) -> dict[str, list[dict]]:
    """The current SIMILAR_TO lists of ``url`` per method, as the shipped related-pages query gives them."""
    query = cypher.query("related_pages", "related_pages")
    return {method: runner.run(query, {"url": url, "method": method, "limit": limit}) for method in methods}
