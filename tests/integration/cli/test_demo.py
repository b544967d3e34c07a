"""`linksim demo` against the test server: related pages of every method, then a rerun that reuses them."""

from __future__ import annotations

import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def test_demo_shows_related_pages_and_reuses_them(runner, cli_env, capsys, monkeypatch, tmp_path) -> None:
    from linksim.cli.main import main

    monkeypatch.setenv("LINKSIM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))  # honoured as by every command
    monkeypatch.setenv("LINKSIM_DATA", str(DATA))
    assert main(["demo", "--pages", "Albert_Einstein", "Paris", "--pagesim-radius", "1"]) == 0
    out, err = capsys.readouterr()
    assert "Pages related to Albert Einstein" in out and "Pages related to Paris" in out
    header = next(line for line in out.splitlines() if "simrank" in line and "pagesim" in line)
    assert all(name in header for name in ("spectral", "psimrank", "xjaccard", "pagesim r=1"))
    # Columns in the order of the precision@10 measured on the lists just written, shown by each name.
    grades = [float(value) for value in re.findall(r"P@10 ([0-9.]+)", header)]
    assert len(grades) == 5 and grades == sorted(grades, reverse=True) and all(0 < g <= 1 for g in grades)
    block = out.split("Pages related to Paris")[1].splitlines()
    first = next(line for line in block if re.match(r"\s+1 ", line))
    assert "France" in first or "London" in first  # Paris's nearest pages, by some method
    # The query to paste into the Browser is the short one, and it answers there as printed.
    printed = out.split("as a graph:")[1].strip().splitlines()
    assert printed[-1] == "CALL linksim.related($url, $method, $limit)"
    assert printed[:3] == [":param url => 'https://en.wikipedia.org/wiki/Albert_Einstein'",
                           ":param method => 'spectral'", ":param limit => 10"]
    drawn = runner.run(printed[-1], {"url": "https://en.wikipedia.org/wiki/Albert_Einstein",
                                     "method": "spectral", "limit": 10})
    assert [row["rank"] for row in drawn] == list(range(1, 11))
    assert all(row["page"]["url"].endswith("/Albert_Einstein") and row["similarity"] is not None for row in drawn)
    for method in ("spectral", "simrank", "psimrank", "xjaccard", "pagesim"):
        assert runner.run("MATCH (c:LinksimCurrent {algorithm: $m}) MATCH (r:LinksimRun {id: c.run}) "
                          "RETURN count(r) AS n", {"m": method}) == [{"n": 1}]
    assert "[5/5]" in err
    stored = {p.name for p in (tmp_path / "indexes").iterdir() if any(p.glob("*/meta.json"))}  # index folders
    assert stored == {"spectral", "simrank", "psimrank", "xjaccard", "pagesim"} and not (tmp_path / "home" / "indexes").exists()
    # and the lists each run made current, kept for the next run's update
    assert {p.stem for p in (tmp_path / "indexes" / "lists").glob("*.npz")} == stored
    # The Browser style's PageRank tiers are set: :PageRankTop1 holds exactly the top 1 % by rank.
    tier = runner.run("MATCH (p:PageRankTop1) RETURN min(p.pagerank) AS low, count(p) AS n")[0]
    ranked = runner.run("MATCH (p:Page) WHERE p.pagerank IS NOT NULL RETURN count(p) AS n")[0]["n"]
    assert tier["n"] == -(-ranked // 100)
    above = runner.run("MATCH (p:Page) WHERE p.pagerank > $low RETURN count(p) AS n", {"low": tier["low"]})[0]["n"]
    assert above == tier["n"] - 1

    assert main(["demo", "--pages", "Dog", "--pagesim-radius", "1"]) == 0
    out, err = capsys.readouterr()
    assert "already loaded" in err and "already computed" in err
    assert err.count("current run is there") == 5
    assert "Pages related to Dog" in out
