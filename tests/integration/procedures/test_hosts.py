"""The host graph against the real server: its counts equal a pandas group-by of the page graph,
after a build, a second build, a later load and a recrawl."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from urllib.parse import urldefrag

import pandas as pd

from linksim.cli.main import main
from linksim.procedures.hosts import build_host_graph
from linksim.procedures.load import load

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
SITES_HOW_TO = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "sites.md"


def run_example(page: Path, names: dict) -> list:
    """A page's Python block run statement by statement; the values of its bare expressions."""
    import ast
    import re

    block = re.search(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S).group(1)
    values = []
    for statement in ast.parse(block).body:
        if isinstance(statement, ast.Expr):
            values.append(eval(compile(ast.Expression(statement.value), str(page), "eval"), names))  # noqa: S307
        else:
            exec(compile(ast.Module([statement], []), str(page), "exec"), names)  # noqa: S102
    return values


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


def pajek_counts(path: Path) -> tuple[int, int, int]:
    """(pages, links, link lines) of a Pajek file, read here independently of the loader: a vertex
    label is a URL (its fragment dropped), an *edges line links both ways."""
    labels: dict[str, str] = {}
    pairs: set[tuple[str, str]] = set()
    section = None
    seen = 0
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        for line in handle:
            line = line.strip()
            if line.startswith("*"):
                section = line.split()[0].lower()
            elif line and section == "*vertices":
                number, label = line.split(None, 1)
                labels[number] = urldefrag(label.strip().strip('"'))[0]
            elif line:
                a, b = (labels[x] for x in line.split()[:2])
                pairs.add((a, b))
                seen += 1
                if section == "*edges" and a != b:
                    pairs.add((b, a))
                    seen += 1
    assert len(labels) == 115_148  # the data README's figure
    return len(set(labels.values())), len(pairs), seen


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


HOST_LISTS = """
MATCH (current:LinksimCurrent {algorithm: $key})
MATCH (h:Host) WHERE h.name IN $hosts
MATCH (h)-[s:SIMILAR_TO {run: current.run}]->(g:Host)
RETURN h.name AS host, g.name AS other, s.score AS score, s.rank AS rank, s.method AS method
ORDER BY host, rank
"""

# The current run's SIMILAR_TO between hosts, counted on the server (the lists of 14,654 hosts
# read row by row took 4 s a method): how many, the hosts with a list and the methods written.
HOST_LIST_COUNTS = """
MATCH (current:LinksimCurrent {algorithm: $key})
MATCH (h:Host)-[s:SIMILAR_TO {run: current.run}]->(:Host)
RETURN count(s) AS n, collect(DISTINCT h.name) AS hosts, collect(DISTINCT s.method) AS methods
"""


def test_every_method_runs_on_the_host_graph_of_najdisi(runner, cli_env, tmp_path, monkeypatch, capsys) -> None:
    """The najdisi.si crawl loads as it is; PageRank and every method on its host graph (14,654
    hosts), through the API and the command line: every host with a link gets a list from the
    default method, the SIMILAR_TO between hosts are the index's lists, the pages' runs stay as
    they were, and a query for a host answers from its index like one for a page."""
    import numpy as np

    import linksim
    from linksim.methods import DEFAULT_METHOD, METHODS
    from linksim.store import IndexMismatch

    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    path = DATA / "najdisi-si-2003" / "core2.net.gz"
    summary = load([path], runner, normalize=False, show_progress=False)
    # The crawl loads as it is (pages, links, link lines counted from the file; the one test that loads it).
    pages, links, lines = pajek_counts(path)
    row = runner.run("MATCH (p:Page) WITH count(p) AS pages OPTIONAL MATCH ()-[r:LINKS_TO]->() "
                     "RETURN pages, count(r) AS links, sum(r.count) AS seen")[0]
    assert (row["pages"], row["links"], row["seen"]) == (pages, links, lines) and summary.crawled_pages == pages
    with linksim.connect(show_progress=False) as ls:
        built = ls.hosts()
        assert built.hosts == 14_654 and built.changed  # the data README's count

        ranks = ls.pagerank.write(graph="hosts", tol=1e-9)
        row = runner.run("MATCH (h:Host) RETURN count(h.pagerank) AS n, sum(h.pagerank) AS total")[0]
        assert ranks.did_converge and row["n"] == 14_654 and abs(row["total"] - 1.0) < 1e-6
        assert runner.run("MATCH (p:Page) WHERE p.pagerank IS NOT NULL RETURN count(p) AS n")[0]["n"] == 0
        assert list(ranks.top.columns) == ["rank", "host", "pagerank"]

        some = [row["url"] for row in runner.run("MATCH (p:Page) WHERE p.crawled RETURN p.url AS url LIMIT 50")]
        pages_run = ls.similar("simrank").write(n_fingerprints=10, source_pages=some).record  # the pages' run
        linked = runner.run("MATCH (h:Host) WHERE (h)--(:Host) RETURN count(h) AS n")[0]["n"]
        # Small parameters keep the test short: on this host graph, whose neighbourhoods reach most
        # hosts within a few links, extended Jaccard's L = 10 and PageSim's radius 3 take minutes
        # (benchmarks/hosts.py runs the defaults). The default method runs with its defaults.
        small = {"xjaccard": {"n_fingerprints": 10, "length": 2}, "pagesim": {"radius": 1}, DEFAULT_METHOD: {}}
        for method in METHODS:
            given = small.get(method, {"n_fingerprints": 10} if METHODS[method].samples else {})
            record = ls.similar(method, graph="hosts").write(top_k=5, **given).record
            assert record.pages == 14_654 and record.linked == linked
            if method == DEFAULT_METHOD:  # links both ways: every host with a link has a list
                assert record.answered == linked
            written = runner.run(HOST_LIST_COUNTS, {"key": f"{method}@hosts"})[0]
            assert written["n"] == record.written > 0 and written["methods"] == [method]
            chosen = np.random.default_rng(3).choice(sorted(written["hosts"]), 5, replace=False).tolist()
            stored = pd.DataFrame(runner.run(HOST_LISTS, {"key": f"{method}@hosts", "hosts": chosen}))
            for host in chosen:
                answer = ls.related(host, method=method, top_k=5, graph="hosts")
                mine = stored[stored["host"] == host]
                assert answer["host"].tolist() == mine["other"].tolist()
                assert np.allclose(answer["score"], mine["score"], rtol=0, atol=1e-12)
                assert (answer["pages"] > 0).all() and answer["pagerank"].notna().all()
        # The how-to's Python example (docs/how-to/sites.md) as written, each expression's value kept.
        values = run_example(SITES_HOW_TO, {"ls": ls})
        alone, together = values[-2], values[-1]
        assert list(alone.columns) == ["rank", "host", "pages", "score", "pagerank"] and len(alone) == 10
        assert not {"www.delo.si", "www.dnevnik.si"} & set(together["host"]) and len(together) == 10

        # The pages' run of simrank is still current and whole.
        current = runner.run("MATCH (c:LinksimCurrent {algorithm: 'simrank'}) RETURN c.run AS run")[0]["run"]
        assert current == pages_run.id
        assert runner.run("MATCH (:Page)-[s:SIMILAR_TO {run: $run}]->(:Page) RETURN count(s) AS n",
                          {"run": current})[0]["n"] == pages_run.written

        # A host from the command line: `related HOST` takes the host graph by itself.
        host = stored["host"].iloc[0]
        assert main(["-q", "related", host, "--method", "simrank", "--top-k", "5", "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert [row["host"] for row in printed] == ls.related(host, method="simrank", top_k=5, graph="hosts")["host"].tolist()
        other = printed[0]["host"]
        assert main(["-q", "sim", host, other, "--method", "simrank"]) == 0
        assert float(capsys.readouterr().out) == ls.sim(host, other, method="simrank", graph="hosts") > 0
        assert main(["-q", "index", "simrank", "--graph", "hosts", "--fingerprints", "10"]) == 0
        assert "already up to date" in capsys.readouterr().out
        cypher = runner.run(linksim.cypher.query("related_pages", "related_hosts"),
                            {"method": "simrank", "host": host, "limit": 5})
        assert [row["host"] for row in cypher] == [row["host"] for row in printed]
        short = runner.run("CALL linksim.relatedHosts($host, $method, $limit) YIELD rank, related, score "
                           "RETURN rank, related.name AS host, score", {"method": "simrank", "host": host, "limit": 5})
        assert [(row["rank"], row["host"], row["score"]) for row in short] == \
            [(row["rank"], row["host"], row["score"]) for row in cypher]
        together = ls.related([host, other], method="simrank", top_k=5, graph="hosts")
        assert not {host, other} & set(together["host"]) and len(together) == 5
        assert main(["-q", "related", "www.no-such-host.si", "--method", "simrank"]) == 2

        # A build that changes nothing keeps the host graph's version: its indexes still answer.
        assert not ls.hosts().changed
        assert ls.related(host, method="simrank", top_k=5, graph="hosts")["host"].tolist() == \
            [row["host"] for row in printed]

        # A load that changes the host graph makes its indexes stale, and the remedy says so.
        extra = tmp_path / "extra.jsonl"
        extra.write_text(json.dumps({"url": "http://www.new-host.si/", "links": [f"http://{host}/"]}) + "\n")
        load([extra], runner, show_progress=False)
        try:
            ls.related(host, method="simrank", graph="hosts")
            raise AssertionError("a stale host index answered")
        except IndexMismatch as error:
            assert "graph='hosts'" in str(error)
        assert main(["-q", "related", host, "--method", "simrank"]) == 6
        assert "--graph hosts" in capsys.readouterr().err


def test_a_host_graph_build_cut_short_is_refused_until_it_is_run_again(runner, tmp_path) -> None:
    """A build that dies after its first write leaves the host graph marked half-built: nothing
    is computed from it (exit 5) until `linksim hosts` runs again, which finishes it."""
    import pytest

    from linksim import cypher
    from linksim.procedures import QueryRunner
    from linksim.procedures.stream import GraphHalfWritten, stream_link_graph

    class Crash(Exception):
        pass

    class CrashAt(QueryRunner):
        def write(self, query, parameters=None):
            if query == cypher.query("hosts", "create_host_links"):
                raise Crash("the process dies here")
            return super().write(query, parameters)

    load([DATA / "webkb" / "cornell.cites", DATA / "webkb" / "texas.cites"], runner, show_progress=False)
    with pytest.raises(Crash):
        build_host_graph(CrashAt(runner.driver, runner.database), batch_size=7, show_progress=False)
    runner.reset_bookmarks()
    with pytest.raises(GraphHalfWritten, match="the host graph is half-built"):
        stream_link_graph(runner, graph="hosts", show_progress=False)
    build_host_graph(runner, show_progress=False)
    assert host_graph(runner) == expected_host_graph(runner)
    assert stream_link_graph(runner, graph="hosts", show_progress=False).graph.n == len(host_graph(runner)[0])
