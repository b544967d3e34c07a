"""The README's Python API example runs as written against the real server, and does what its
comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[3]


def readme_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_runs(runner, cli_env, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    names: dict = {}
    exec(compile(readme_example(), "README.md (Python API)", "exec"), names)  # noqa: S102 - our own README
    assert names["summary"].pages_created >= 4604  # Wikispeedia's articles (and the pages they link to)
    assert names["run"].did_converge and names["run"].node_properties_written == names["summary"].pages
    ranks = names["ranks"]
    assert len(ranks) == names["summary"].pages and abs(ranks["pagerank"].sum() - 1) < 1e-4
    assert names["record"].relationships_written > 40_000 and names["record"].method == "spectral"
    pairs = names["pairs"]
    assert isinstance(pairs, pd.DataFrame) and pairs["rank"].max() == 5 and (pairs["source"] != pairs["target"]).all()
    paris = names["paris"]
    assert list(paris.columns) == ["rank", "url", "title", "score", "pagerank"] and len(paris) == 5
    # The same lists as the SIMILAR_TO the example wrote: a query of the stored index, no rebuild.
    written = runner.run(
        "MATCH (c:LinksimCurrent {algorithm: 'spectral'}) WITH c.run AS run "
        "MATCH (:Page {url: 'https://en.wikipedia.org/wiki/Paris'})-[s:SIMILAR_TO {run: run}]->(q) "
        "RETURN q.url AS url ORDER BY s.rank LIMIT 5")
    assert [r["url"] for r in written] == paris["url"].tolist()
    assert 0 < names["score"] <= 1
    both = names["both"]  # a set: Paris and Berlin left out, each page's column `lists` in 1..2
    assert list(both.columns) == ["rank", "url", "title", "score", "lists", "pagerank"] and len(both) == 10
    assert not set(both["url"]) & {"https://en.wikipedia.org/wiki/Paris", "https://en.wikipedia.org/wiki/Berlin"}
    assert both["lists"].between(1, 2).all() and (both["score"] > 0).all()
