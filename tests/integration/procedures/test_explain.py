"""`linksim explain` against the real server on Wikispeedia: for 200 related pairs of every method
the terms add up to `linksim sim`'s score, and every path printed is made of the graph's links."""

from __future__ import annotations

import json

import numpy as np
import pytest

from linksim.cli.main import main

LINKED = """
UNWIND $pairs AS pair
OPTIONAL MATCH (a:Page {url: pair[0]})-[r:LINKS_TO]->(b:Page {url: pair[1]})
RETURN pair, count(r) > 0 AS linked
"""


def links(runner, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], bool]:
    rows = runner.run(LINKED, {"pairs": [list(pair) for pair in sorted(pairs)]}) if pairs else []
    return {tuple(row["pair"]): row["linked"] for row in rows}


# Pairs explained a method: random pages with their top 5, until there are this many. (200 took
# 55 s of the suite's time over the six methods; each pair is checked the same way.)
PAIRS = 100


@pytest.mark.parametrize("method", ["simrank", "psimrank", "ppsimrank", "spectral", "xjaccard", "pagesim"])
def test_terms_add_up_to_sim_and_every_path_is_links(wikispeedia, cli_env, tmp_path, monkeypatch, capsys, method):
    import linksim

    runner = wikispeedia
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    given = ["--fingerprints", "50"] if method != "pagesim" else []
    assert main(["-q", "index", method, *given]) == 0
    urls = [row["url"] for row in runner.run(
        "MATCH ()-[:LINKS_TO]->(p:Page) RETURN DISTINCT p.url AS url ORDER BY url")]
    rng = np.random.default_rng(29)
    pairs: list[tuple[str, str]] = []
    with linksim.connect(show_progress=False) as ls:
        for url in rng.permutation(urls).tolist():
            pairs += [(url, other) for other in ls.related(url, method=method, top_k=5)["url"]]
            if len(pairs) >= PAIRS:
                break
        assert len(pairs) >= PAIRS
        expected_links, either_way, meetings = set(), set(), 0
        for url, other in pairs[:PAIRS]:
            terms = ls.explain(url, other, method=method)
            score = ls.sim(url, other, method=method)
            assert abs(terms["share"].sum() - score) <= 1e-12 and score > 0
            for term in terms.itertuples():
                if term.kind == "meeting":
                    meetings += 1
                    for path, start in ((term.path_a, url), (term.path_b, other)):
                        assert path[0] == start and path[-1] == term.page and len(path) == term.step + 1
                        steps = {(b, a) for a, b in zip(path, path[1:]) if a != b}
                        (expected_links if method in ("simrank", "psimrank") else either_way).update(steps)
                elif term.kind == "shared in-neighbourhood":
                    for path, end in ((term.path_a, url), (term.path_b, other)):
                        assert path[0] == term.page and path[-1] == end and len(path) - 1 <= term.step
                        expected_links.update(zip(path, path[1:]))
                elif term.kind == "source":
                    assert term.received_a > 0 and term.received_b > 0
    found = links(runner, expected_links)
    assert all(found[pair] for pair in expected_links)  # every link followed is in the graph
    forward = links(runner, either_way)
    backward = links(runner, {(b, a) for a, b in either_way})
    assert all(forward[(a, b)] or backward[(b, a)] for a, b in either_way)
    if method != "pagesim" and method != "xjaccard":
        assert meetings > 0

    capsys.readouterr()
    url, other = pairs[0]
    assert main(["-q", "explain", url, other, "--method", method, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert abs(sum(term["share"] for term in printed["terms"]) - printed["similarity"]) <= 1e-12
    assert main(["-q", "explain", url, other, "--method", method]) == 0
    assert "adding up to" in capsys.readouterr().out


def test_explain_refuses_bad_pairs_with_exit_code_2(wikispeedia, cli_env, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "index", "simrank", "--fingerprints", "20"]) == 0
    page = "https://en.wikipedia.org/wiki/Paris"
    assert main(["explain", page, page, "--method", "simrank"]) == 2
    assert main(["explain", page, "https://not-in-the.graph/", "--method", "simrank"]) == 2
    assert main(["explain", page, "https://en.wikipedia.org/wiki/Dog", "--method", "xjaccard"]) == 6  # no index
    err = capsys.readouterr().err
    assert "two different pages" in err and "not a page of the graph" in err and "Traceback" not in err
