"""Helpers of the procedures' integration tests."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from linksim.procedures import QueryRunner


def recrawl_file(runner: QueryRunner, path: Path, share: float, seed: int) -> Path:
    """A recrawl of ``share`` of the crawled pages (each link lost with probability 0.3, as many
    gained among the pages, a few to new pages), as JSON lines."""
    rng = random.Random(seed)
    rows = runner.run("MATCH (a:Page)-[:LINKS_TO]->(b:Page) RETURN a.url AS a, collect(b.url) AS links")
    pages = [r["a"] for r in rows] + [r for row in rows for r in row["links"]]
    chosen = rng.sample(rows, max(1, int(share * len(rows))))
    with open(path, "w", encoding="utf-8") as out:
        for k, row in enumerate(chosen):
            kept = [url for url in row["links"] if rng.random() > 0.3]
            gained = [rng.choice(pages) for _ in range(len(row["links"]) - len(kept))]
            if k % 5 == 0:
                gained.append(f"http://recrawl.example/{seed}/{k}")
            out.write(json.dumps({"url": row["a"], "links": kept + gained}) + "\n")
    return path


@pytest.fixture(name="recrawl_file")
def recrawl_file_fixture():
    """:func:`recrawl_file`, for the tests that recrawl."""
    return recrawl_file
