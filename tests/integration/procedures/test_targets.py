"""Target filters against the real server, on a crawl of several hosts (WebKB's four departments):
`--targets other-hosts` lists only other hosts' pages, a full list wherever the filtered ranking
has that many, as a run of its own that `linksim.related`, `related --targets` and `evaluate
--targets` read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from linksim import cypher
from linksim.cli.main import main
from linksim.parameters import Query
from linksim.procedures.load import load
from linksim.procedures.runs import RUNS_OF_CURRENT, is_current

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
TOP_K = 5


def current_lists(runner, key: str) -> dict[str, list[str]]:
    query = (f"MATCH (current:LinksimCurrent {{algorithm: $key}}) WITH {RUNS_OF_CURRENT} AS runs "
             f"MATCH (p:Page)-[s:SIMILAR_TO]->(q:Page) WHERE {is_current()} "
             "WITH p, s, q ORDER BY s.rank RETURN p.url AS url, collect(q.url) AS list")
    return {row["url"]: row["list"] for row in runner.run(query, {"key": key})}


def test_other_hosts_lists_are_full_lists_of_other_hosts_pages(runner, cli_env, tmp_path, capsys, monkeypatch):
    from linksim.procedures.api import connect
    from linksim.ranking.targets import Targets, host_numbers, ranked_within

    load(sorted((DATA / "webkb").glob("*.cites")), runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    assert main(["-q", "similar", "--top-k", str(TOP_K)]) == 0  # the default method, unfiltered
    capsys.readouterr()
    assert main(["-q", "similar", "--top-k", str(TOP_K), "--targets", "other-hosts", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["key"] == "spectral@other-hosts" and record["parameters"]["targets"] == "other-hosts"

    host = {row["url"]: row["host"] for row in runner.run("MATCH (p:Page) RETURN p.url AS url, p.host AS host")}
    plain, other = current_lists(runner, "spectral"), current_lists(runner, "spectral@other-hosts")
    assert other and all(host[v] is not None and host[v] != host[u] for u, found in other.items() for v in found)
    # The index's own ranking with the filter: the lists written are its lists, and full wherever
    # at least TOP_K of the page's filtered candidates score above 0.
    with connect(show_progress=False) as ls:
        handle = ls._handle("spectral", None, False)
        urls = handle.pages.urls(range(len(handle.pages)))
        targets = Targets.of_hosts("other-hosts", host_numbers([host.get(url) for url in urls]), same=False)
        index = handle.index
        expected = ranked_within(index, np.arange(index.n), Query(TOP_K), targets)
    enough = full_beyond_plain = 0
    for u, found in enumerate(expected):
        assert other.get(urls[u], []) == [urls[v] for v, _ in found]
        candidates = index.candidates(u, targets=targets)
        candidates = candidates[candidates != u]
        scores = index.combine(u, candidates, index.fingerprints.sims(u, candidates))
        if np.count_nonzero(scores > 0) >= TOP_K:
            enough += 1
            assert len(found) == TOP_K, urls[u]
            crossing = [v for v in plain.get(urls[u], []) if host[v] != host[urls[u]]]
            full_beyond_plain += len(crossing) < TOP_K
    assert enough > 100 and full_beyond_plain > 50  # filtered while ranked, not cut from the plain lists

    # Its own run beside the unfiltered one: the plain pattern by method never mixes them.
    counts = runner.run("MATCH ()-[s:SIMILAR_TO]->() RETURN s.method AS m, count(*) AS n ORDER BY m")
    assert counts == [{"m": "spectral", "n": sum(map(len, plain.values()))},
                      {"m": "spectral@other-hosts", "n": sum(map(len, other.values()))}]
    url = max(other, key=lambda page: (len(other[page]), page))
    rows = runner.run(cypher.query("related_pages", "related_pages"),
                      {"url": url, "method": "spectral@other-hosts", "limit": TOP_K})
    assert [row["url"] for row in rows] == other[url]
    short = cypher.query("related_pages", "related_pages_procedure")  # CALL linksim.related
    assert runner.run(short, {"url": url, "method": "spectral@other-hosts", "limit": TOP_K}) == rows
    assert main(["-q", "related", url, "--targets", "other-hosts", "--top-k", str(TOP_K), "--json"]) == 0
    assert [row["url"] for row in json.loads(capsys.readouterr().out)] == other[url]
    assert main(["-q", "related", url, "--targets", "same-host", "--top-k", str(TOP_K), "--json"]) == 0
    assert {host[row["url"]] for row in json.loads(capsys.readouterr().out)} == {host[url]}

    # Graded by `linksim evaluate --targets`, beside an anchor filtered the same way.
    assert main(["-q", "evaluate", "--categories", str(DATA / "webkb"), "--targets", "other-hosts", "--anchors",
                 "jaccard-both", "--top", str(TOP_K), "--json"]) == 0
    rows = {row["method"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(rows) == {"spectral@other-hosts", "jaccard-both@other-hosts"}
    assert rows["spectral@other-hosts"]["coverage"] > 0 and rows["jaccard-both@other-hosts"]["coverage"] > 0

    for spec in ("elsewhere", "label:bad-name", f"@{tmp_path / 'missing.txt'}"):
        assert main(["-q", "similar", "--targets", spec]) == 2, spec
        assert "--targets" in capsys.readouterr().err
    assert main(["-q", "similar", "psimrank", "--targets", "label:Nowhere"]) == 1
    assert "no page of the graph passes" in capsys.readouterr().err
    assert current_lists(runner, "spectral@other-hosts") == other  # a refused run changed nothing
