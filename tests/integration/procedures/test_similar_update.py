"""SIMILAR_TO updates against the real server: after a recrawl load, `linksim similar` writes only
the lists that changed, and the method's current lists are then those of a full rerun,
relationship for relationship, read with the shipped related-pages queries' rule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linksim.parameters import Query
from linksim.methods import DEFAULT_METHOD
from linksim.procedures import QueryRunner
from linksim.procedures.indexes import obtain_index
from linksim.procedures.load import load
from linksim.procedures.runs import RUNS_OF_CURRENT, is_current
from linksim.procedures.similarity import similar
from linksim.ranking.topk import top_k_all

# The rule of the current lists: a relationship of the current runs no update replaced.
CURRENT = f"""
MATCH (current:LinksimCurrent {{algorithm: $method}})
WITH {RUNS_OF_CURRENT} AS runs
MATCH (p:Page)-[s:SIMILAR_TO]->(q:Page)
WHERE {is_current()}
WITH p, s, q ORDER BY s.rank
RETURN p.url AS url, collect(s.rank) AS ranks, collect(q.url) AS related, collect(s.score) AS scores
"""
EVERY = "MATCH ()-[s:SIMILAR_TO {method: $method}]->() RETURN count(s) AS n"
PARAMETERS = {"psimrank": dict(n_fingerprints=6, length=6, seed=3), DEFAULT_METHOD: {}}
TOP = 5


def current_lists(runner: QueryRunner, method: str) -> dict[str, list[tuple[str, float]]]:
    lists = {}
    for row in runner.run(CURRENT, {"method": method}):
        assert row["ranks"] == list(range(1, len(row["ranks"]) + 1)), row  # one list a page, ranked
        lists[row["url"]] = list(zip(row["related"], row["scores"]))
    return lists


def computed_lists(runner: QueryRunner, method: str, root: Path) -> dict[str, list[tuple[str, float]]]:
    """The lists a full run on the graph as it is now writes: its index's top-k, by URL."""
    handle = obtain_index(runner, method, root, show_progress=False, **PARAMETERS[method])
    assert not handle.built  # the stored index of the graph as it is now
    source, target, score, _ = top_k_all(handle.index, top_k=TOP, show_progress=False, workers=1)
    urls = np.asarray(handle.streamed.urls, dtype=object)
    lists: dict[str, list] = {}
    for s, t, value in zip(urls[source], urls[target], np.round(score, 12)):
        lists.setdefault(s, []).append((t, float(value)))
    return lists


@pytest.mark.changes_the_crawl
def test_similar_to_updated_after_recrawls_is_a_full_rerun(wikispeedia: QueryRunner, tmp_path: Path,
                                                           recrawl_file) -> None:
    """PSimRank (its index updated), a crawl recrawled twice: each run writes only the lists that
    changed, and the current lists are what a full run writes; a full rerun at the end leaves the
    same lists, and a rerun on the same graph writes none. The default method (its index updated
    within the noise of a rebuild, :mod:`linksim.spectral_update`) makes only the lists within
    reach of the change: each current list is then the updated index's or the one before, and
    fewer than half are written. (Which lists changed is found the same way for every method:
    from the lists, whatever computed them.)"""
    root = tmp_path / "indexes"
    for method, parameters in PARAMETERS.items():
        first = similar(wikispeedia, method, root, query=Query(TOP), show_progress=False, **parameters)
        assert first.lists_rewritten is None  # nothing kept yet: every list written
    rebuilt = False
    for round_, share in enumerate((0.01, 0.02)):
        load([recrawl_file(wikispeedia, tmp_path / f"week{round_}.jsonl", share, round_)], wikispeedia,
             show_progress=False, recrawl=True)
        for method, parameters in PARAMETERS.items():
            before = current_lists(wikispeedia, method)
            update = similar(wikispeedia, method, root, query=Query(TOP), show_progress=False, **parameters)
            lists = current_lists(wikispeedia, method)
            computed = computed_lists(wikispeedia, method, root)
            if method == DEFAULT_METHOD and update.lists_rewritten is None:
                # The second recrawl takes the pages folded into the embedding past FOLD_LIMIT: its
                # index is built again, and every list is a full run's.
                assert round_ == 1 and lists == computed
                rebuilt = True
            elif method == DEFAULT_METHOD:
                assert 0 < update.lists_rewritten < update.pages / 2, (method, update.lists_rewritten)
                made = {url for url in set(lists) | set(computed) if lists.get(url) == computed.get(url)}
                kept = {url for url in lists if url not in made}
                assert all(lists[url] == before[url] for url in kept), method  # the others: as they were
                assert len(made - set(before)) + sum(before.get(url) != computed.get(url) for url in made) > 0
            else:
                assert 0 < update.lists_rewritten < update.pages / 2, (method, update.lists_rewritten)
                assert lists == computed, method
            # The relationships the update replaced are gone: the method holds its current lists only.
            held = wikispeedia.run(EVERY, {"method": method})[0]["n"]
            assert held == update.written == sum(map(len, lists.values())), method
            runs = wikispeedia.run("MATCH (c:LinksimCurrent {algorithm: $m}) RETURN c.runs AS runs",
                                   {"m": method})[0]["runs"]
            assert runs[-1] == update.id and len(runs) == (1 if method == DEFAULT_METHOD and rebuilt else round_ + 2)
    for method, parameters in PARAMETERS.items():
        updated = current_lists(wikispeedia, method)
        if method == "psimrank":
            updated_psimrank = updated
        full = similar(wikispeedia, method, root, query=Query(TOP), show_progress=False, rewrite=True, **parameters)
        assert full.lists_rewritten is None
        # psimrank's updates were its full run's lists; the default's full run makes every list on its index
        assert current_lists(wikispeedia, method) == (updated if method == "psimrank" else
                                                      computed_lists(wikispeedia, method, root)), method
        assert wikispeedia.run(EVERY, {"method": method})[0]["n"] == full.written
    # A rerun on the same graph changes no list: it writes none.
    again = similar(wikispeedia, "psimrank", root, query=Query(TOP), show_progress=False, **PARAMETERS["psimrank"])
    assert again.lists_rewritten == 0 and again.written == wikispeedia.run(EVERY, {"method": "psimrank"})[0]["n"]
    assert current_lists(wikispeedia, "psimrank") == updated_psimrank


def test_lists_deleted_outside_linksim_are_written_again(wikispeedia: QueryRunner, tmp_path: Path) -> None:
    """Kept lists that no longer describe the database (relationships deleted by hand) are not
    trusted: the next run writes every list."""
    root = tmp_path / "indexes"
    parameters = PARAMETERS["psimrank"]
    similar(wikispeedia, "psimrank", root, query=Query(TOP), show_progress=False, **parameters)
    before = current_lists(wikispeedia, "psimrank")
    wikispeedia.write("MATCH ()-[s:SIMILAR_TO]->() WITH s LIMIT 7 DELETE s")
    again = similar(wikispeedia, "psimrank", root, query=Query(TOP), show_progress=False, **parameters)
    assert again.lists_rewritten is None
    assert current_lists(wikispeedia, "psimrank") == before
