"""``linksim demo``'s tour (:meth:`linksim.procedures.api.Linksim.tour`): load Wikispeedia, PageRank
and the Browser's tiers, every demo method's SIMILAR_TO, graded, each step skipped when its result
is already there; and the related pages it shows."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from linksim import cypher

log = logging.getLogger("linksim")

WIKI = "https://en.wikipedia.org/wiki/"
METHODS = ("spectral", "simrank", "psimrank", "xjaccard", "pagesim")
STEPS = 5


@dataclass
class Tour:
    """What the tour did and found: ``graded`` precision@10 per method, ``lists`` of each page
    asked for (per method, best-graded first), ``order`` of the methods."""

    graded: dict[str, float] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    lists: dict[str, dict[str, list[dict]]] = field(default_factory=dict)


def step_logged(number: int, text: str) -> float:
    log.info("[%d/%d] %s", number, STEPS, text)
    return time.monotonic()


def step_done(began: float, text: str) -> None:
    log.info("      %s (%.1f s)", text, time.monotonic() - began)


def tour(ls, folder: Path, pages, top_k: int = 10, pagesim_radius: int = 2, rebuild: bool = False,
         step: Callable[[int, str], float] = step_logged, done: Callable[[float, str], None] = step_done) -> Tour:
    """Steps 2 to 5 of the demo on the database of ``ls`` (step 1, the server, is the caller's)."""
    from linksim.methods import METHODS as REGISTRY
    from linksim.procedures.runs import current_runs

    runner = ls.runner
    began = step(2, f"Wikispeedia crawl from {folder}")
    loaded = progress(runner, WIKI)["crawled"]
    if loaded >= 4604 and not rebuild:
        done(began, f"already loaded ({loaded:,} articles)")
    else:
        summary = ls.load([folder], mode="online")
        done(began, f"loaded {summary.pages_created + summary.pages_updated:,} pages and "
                    f"{summary.links_created + summary.links_updated:,} links")

    began = step(3, "PageRank")
    counts = progress(runner, WIKI)
    if counts["ranked"] == counts["pages"] and not rebuild:
        done(began, "already computed")
    else:
        run = ls.pagerank.write()
        done(began, f"{run.ran_iterations} iterations, written on {run.node_properties_written:,} pages")
    from linksim.procedures.browser import tiers_in_use

    if not tiers_in_use(runner):  # once set, PageRank keeps them in step itself
        ls.label_tiers()  # the Browser style sizes pages by these labels

    began = step(4, "related pages: " + ", ".join(METHODS))
    runs = current_runs(runner)
    for method in METHODS:
        current = dict(runs[method]["parameters"], pages=runs[method]["pages"]) if method in runs else None
        given = {"radius": pagesim_radius} if "radius" in REGISTRY[method].defaults else {}
        wanted = dict(REGISTRY[method].defaults, **given)
        fits = (current is not None and current.get("topK", 0) >= top_k and current["pages"] == counts["pages"]
                and all(current.get(k) == v for k, v in wanted.items() if k in current))
        if fits and not rebuild:
            log.info("      %s: current run is there", method)
            continue
        one = time.monotonic()
        written = ls.similar(method).write(top_k=top_k, rebuild=rebuild, **given)
        log.info("      %s: %s SIMILAR_TO written (%.1f s)", method, f"{written.relationships_written:,}",
                 time.monotonic() - one)
    done(began, "done")

    step(5, "the related pages, the best-graded method first")
    # What each column is worth, measured here: the share of each page's first 10 related pages
    # that share its category (precision@10 of the lists just written).
    result = Tour()
    result.graded = {row["method"]: row.get("precision_at_10", float("nan"))
                     for row in ls.evaluate(methods=list(METHODS), top=top_k)}
    result.order = sorted(METHODS, key=lambda m: -result.graded[m] if result.graded[m] == result.graded[m] else 1.0)
    result.lists = {page: related_lists(runner, WIKI + page, result.order, top_k) for page in pages}
    return result


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
