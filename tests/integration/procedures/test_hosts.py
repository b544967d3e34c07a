"""The host graph against the real server: its counts equal a pandas group-by of the page graph,
after a build, a second build, a later load and a recrawl."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from linksim.cli.main import main
from linksim.procedures.hosts import build_host_graph
from linksim.procedures.load import load

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def expected_host_graph(runner) -> tuple[set[str], int, dict[tuple[str, str], int]]:
    """Hosts, pages with a host, and page links between two hosts, by pandas from the page graph."""
    pages = pd.DataFrame(runner.run("MATCH (p:Page) RETURN p.url AS url, p.host AS host"))
    links = pd.DataFrame(runner.run("MATCH (a:Page)-[:LINKS_TO]->(b:Page) RETURN a.url AS source, b.url AS target"))
    host = pages.set_index("url")["host"]
    links["a"], links["b"] = links["source"].map(host), links["target"].map(host)
    between = links.dropna(subset=["a", "b"])
    between = between[between["a"] != between["b"]]
    counts = between.groupby(["a", "b"]).size()
    return set(pages["host"].dropna()), int(pages["host"].notna().sum()), {pair: int(n) for pair, n in counts.items()}


def host_graph(runner) -> tuple[set[str], int, dict[tuple[str, str], int]]:
    hosts = {row["name"] for row in runner.run("MATCH (h:Host) RETURN h.name AS name")}
    on_host = runner.run("MATCH (p:Page)-[:ON_HOST]->(h:Host) RETURN count(*) AS n, sum(CASE WHEN p.host = h.name "
                         "THEN 0 ELSE 1 END) AS wrong")[0]
    assert on_host["wrong"] == 0
    links = {(row["a"], row["b"]): row["links"] for row in runner.run(
        "MATCH (a:Host)-[r:HOST_LINKS_TO]->(b:Host) RETURN a.name AS a, b.name AS b, r.links AS links")}
    return hosts, on_host["n"], links


def test_the_host_graph_is_the_group_by_of_the_page_graph_through_loads(runner, cli_env, tmp_path, capsys) -> None:
    load([DATA / "webkb" / "cornell.cites", DATA / "webkb" / "texas.cites"], runner, show_progress=False)
    result = build_host_graph(runner, batch_size=7, show_progress=False)  # small batches: many transactions
    expected = expected_host_graph(runner)
    assert host_graph(runner) == expected
    hosts, pages, links = expected
    assert len(hosts) >= 5 and len(links) >= 5 and result.hosts == len(hosts) and result.pages == pages
    assert result.host_links == len(links) and result.links == sum(links.values())

    again = build_host_graph(runner, show_progress=False)  # idempotent
    assert host_graph(runner) == expected and (again.hosts, again.host_links) == (result.hosts, result.host_links)

    load([DATA / "webkb" / "washington.cites"], runner, show_progress=False)  # a later load rebuilds it
    grown = expected_host_graph(runner)
    assert host_graph(runner) == grown and len(grown[0]) > len(hosts)

    # A recrawl takes links away: host links lose counts, and a pair with none left goes.
    pair = max(grown[2], key=grown[2].get)
    rows = runner.run("MATCH (a:Page {host: $a})-[:LINKS_TO]->(b:Page {host: $b}) RETURN DISTINCT a.url AS url",
                      {"a": pair[0], "b": pair[1]})
    recrawl = tmp_path / "recrawl.jsonl"
    recrawl.write_text("".join(json.dumps({"url": row["url"], "links": []}) + "\n" for row in rows))
    load([recrawl], runner, recrawl=True, show_progress=False)
    after = expected_host_graph(runner)
    assert pair not in after[2] and host_graph(runner) == after

    assert main(["-q", "hosts", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["hosts"], printed["host_links"], printed["links"]) == (len(after[0]), len(after[2]),
                                                                           sum(after[2].values()))
