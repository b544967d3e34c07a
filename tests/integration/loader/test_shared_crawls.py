"""The shared real crawls load as they are; counts are checked against counts computed here,
independently of the loader, straight from the files. (The najdisi.si crawl's load is checked the
same way by the host-graph test that loads it: tests/integration/procedures/test_hosts.py.)"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urldefrag

import numpy as np
import pandas as pd
import pytest

from linksim.procedures.load import load
from linksim.loader.load import BULK_MIN_LINKS
from linksim.procedures import QueryRunner

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"shared data set missing: {path} (CI clones the project with ../shared beside it)")
    return path


def counts(runner: QueryRunner) -> tuple[int, int, int]:
    row = runner.run(
        "MATCH (p:Page) WITH count(p) AS pages "
        "OPTIONAL MATCH ()-[r:LINKS_TO]->() RETURN pages, count(r) AS links, coalesce(sum(r.count), 0) AS seen"
    )[0]
    return row["pages"], row["links"], row["seen"]


def test_webkb_cites(runner: QueryRunner) -> None:
    files = sorted(need(DATA / "webkb").glob("*.cites"))
    assert len(files) == 4
    pages, pairs, lines = set(), set(), 0
    for file in files:
        for line in file.read_text().splitlines():
            if line.strip():
                cited, citing = (urldefrag(x)[0] for x in line.split())
                pages |= {cited, citing}
                pairs.add((citing, cited))
                lines += 1
    load(files, runner, normalize=False, show_progress=False)
    assert counts(runner) == (len(pages), len(pairs), lines)
    assert lines == 1608  # the data README's figure
    some = next(iter(pairs))
    found = runner.run(
        "MATCH (:Page {url: $s})-[r:LINKS_TO]->(:Page {url: $t}) RETURN count(r) AS n",
        {"s": some[0], "t": some[1]},
    )
    assert found == [{"n": 1}]


def test_wikispeedia_in_bulk_mode_with_categories(runner: QueryRunner, neo4j_server) -> None:
    folder = need(DATA / "wikispeedia")
    articles = [
        line for line in (folder / "articles.tsv").read_text().splitlines() if line and not line.startswith("#")
    ]
    links = pd.read_csv(folder / "links.tsv", sep="\t", comment="#", header=None, names=["s", "t"])
    categories = pd.read_csv(folder / "categories.tsv", sep="\t", comment="#", header=None, names=["a", "c"])
    mode = "bulk" if neo4j_server.local is not None else "online"

    summary = load([folder], runner, mode=mode, local_server=neo4j_server.local, show_progress=False)
    assert summary.mode == mode
    assert counts(runner) == (len(set(articles)), len(links.drop_duplicates()), len(links))
    assert (len(articles), len(links)) == (4604, 119_882)  # the data README's figures

    name = "%C3%81ed%C3%A1n_mac_Gabr%C3%A1in"
    row = runner.run(
        "MATCH (p:Page {url: $url}) RETURN p.title AS title, p.categories AS categories, p.host AS host",
        {"url": "https://en.wikipedia.org/wiki/" + name},
    )
    assert row == [{
        "title": unquote(name).replace("_", " "),
        "categories": categories[categories.a == name].c.tolist(),
        "host": "en.wikipedia.org",
    }]
    constraints = {r["name"] for r in runner.run("SHOW CONSTRAINTS YIELD name")}
    assert "page_url" in constraints  # the schema is applied after a bulk import too


def test_cnr_2000_auto_mode(runner: QueryRunner, neo4j_server) -> None:
    path = need(DATA / "cnr-2000" / "cnr-2000.edges.tsv.gz")
    edges = pd.read_csv(path, sep="\t", header=None, names=["s", "t"], dtype=np.int64, comment="#")
    expected_pages = len(np.union1d(edges.s.unique(), edges.t.unique()))
    expected_links = len(edges.drop_duplicates())

    summary = load([path], runner, local_server=neo4j_server.local, show_progress=False)
    bulk = neo4j_server.local is not None and len(edges) >= BULK_MIN_LINKS
    assert summary.mode == ("bulk" if bulk else "online")
    assert counts(runner) == (expected_pages, expected_links, len(edges))
    assert (expected_pages, len(edges)) == (325_557, 3_216_152)  # the data README's figures
    loops = runner.run("MATCH (p:Page)-[r:LINKS_TO]->(p) RETURN count(r) AS n")[0]["n"]
    assert loops == int((edges.s == edges.t).sum()) == summary.self_loops
