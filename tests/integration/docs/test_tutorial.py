"""The tutorial (docs/tutorial.md) runs as written: a Debian documentation package served on
loopback and crawled by wget, loaded, indexed, and the same related pages from the command line,
Cypher and Python. Only its folder and port are the test's own."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def sections(text: str) -> dict[str, list[tuple[str, str]]]:
    """The fenced blocks of each numbered section, as (language, code)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        title, body = part.split("\n", 1)
        found[title.split(".")[0]] = re.findall(r"```(\w*)\n(.*?)```", body, re.S)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bash(script: str, cwd: Path, env: dict, stop_on_error: bool = True) -> subprocess.CompletedProcess:
    # A step that fails stops the script and the server it started in the background, which
    # would otherwise hold the output open.
    script = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
    flags = "-euo" if stop_on_error else "-uo"
    done = subprocess.run(["bash", flags, "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, f"{script}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def test_the_tutorial_runs_as_written(runner, cli_env, tmp_path, monkeypatch, capsys) -> None:
    port = str(free_port())
    folder = tmp_path / "pydoc"
    text = (REPO / "docs" / "tutorial.md").read_text(encoding="utf-8")
    assert text.count("/tmp/pydoc") >= 3 and text.count("8000") >= 3
    blocks = sections(text.replace("/tmp/pydoc", str(folder)).replace("8000", port))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "LINKSIM_INDEX_DIR": str(tmp_path / "indexes")}
    monkeypatch.setenv("LINKSIM_INDEX_DIR", env["LINKSIM_INDEX_DIR"])

    # 2. The crawl: wget's WARC of the package's pages, the server stopped after it.
    [(language, crawl)] = blocks["2"]
    assert language == "bash" and "wget" in crawl and "--warc-file" in crawl
    # As a user types it: wget's exit code 8 (a few broken links answered 404) does not stop it.
    done = bash(crawl, tmp_path, env, stop_on_error=False)
    assert int(re.search(r"Downloaded: (\d+) files", done.stderr).group(1)) > 300
    warc = folder / "pydoc.warc.gz"
    assert warc.stat().st_size > 1_000_000

    # 3. Load, PageRank, the default's lists.
    [(language, load)] = blocks["3"]
    bash(load, tmp_path, env)
    pages = runner.run("MATCH (p:Page) WHERE p.crawled RETURN count(p) AS n")[0]["n"]
    assert pages > 300  # the package's HTML pages that links reach
    assert runner.run("MATCH (p:Page) WHERE p.pagerank IS NOT NULL RETURN count(p) AS n")[0]["n"] > pages
    assert runner.run("MATCH (:LinksimCurrent {algorithm: 'spectral'}) RETURN count(*) AS n")[0]["n"] == 1

    # 4. The same five pages from the command line, Cypher and Python.
    (_, cli), (_, cypher), (_, python) = blocks["4"]
    url = re.search(r"(http://127\.0\.0\.1:\d+/\S+)", cli).group(1)
    assert runner.run("MATCH (p:Page {url: $url}) RETURN p.title AS t", {"url": url})[0]["t"].startswith("json")
    from_cypher = [row["url"] for row in runner.run(cypher, {"url": url})]
    assert len(from_cypher) == 5 and url not in from_cypher
    printed = bash(cli, tmp_path, env).stdout
    assert [u for u in re.findall(r"http://\S+", printed) if u != url] == from_cypher
    import pandas as pd

    names: dict = {}
    with pd.option_context("display.width", None, "display.max_columns", None, "display.max_colwidth", None):
        exec(compile(python, "docs/tutorial.md", "exec"), names)  # noqa: S102 - our own docs
    shown = capsys.readouterr().out
    assert [u for u in re.findall(r"http://\S+", shown) if u != url] == from_cypher

    # 5. Neo4j Browser: what to open and load.
    (language, browser), (_, params) = blocks["5"]
    out = bash(browser, tmp_path, env).stdout
    assert "Neo4j Browser" in out and "style.grass" in out and "favorites.cypher" in out
    assert f":param url => '{url}'" in params
