"""The docs site builds with MkDocs in strict mode (a broken link, a missing reference or any other
warning fails it), and headless Chromium shows its home page and its generated CLI reference."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "test-output" / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    built = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    # The console script, as `make docs` runs it: `python -m` would put the repository's root first
    # on sys.path, where the API reference would read the bare source folders, not the package.
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(built)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr[-4000:]
    return built


def test_the_site_has_every_generated_reference(site: Path) -> None:
    for page in ("reference/cli", "reference/python", "reference/cypher", "reference/configuration",
                 "reference/exit-codes", "benchmarks/quality", "benchmarks/scale", "tutorial"):
        assert (site / page / "index.html").stat().st_size > 5_000, page
    api = (site / "reference" / "python" / "index.html").read_text(encoding="utf-8")
    assert 'id="linksim.procedures.api.Linksim.related"' in api  # the facade's methods, from their docstrings


def test_chromium_shows_the_home_page_and_the_cli_reference(site: Path, chrome) -> None:
    from selenium.webdriver.common.by import By

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    OUTPUT.mkdir(parents=True, exist_ok=True)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        chrome.get(f"{base}/")
        assert chrome.title.startswith("linksim")
        assert "related pages" in chrome.find_element(By.CSS_SELECTOR, "article").text
        chrome.save_screenshot(str(OUTPUT / "index.png"))
        chrome.get(f"{base}/reference/cli/")
        headings = [h.text for h in chrome.find_elements(By.CSS_SELECTOR, "article h2")]
        assert "linksim similar" in headings and "linksim neo4j start" in headings
        nav = chrome.find_element(By.CSS_SELECTOR, "nav.md-nav--primary").text
        assert "Tutorial" in nav and "Command line" in nav  # the site's navigation is drawn
        chrome.save_screenshot(str(OUTPUT / "cli-reference.png"))
        assert (OUTPUT / "cli-reference.png").stat().st_size > 20_000  # a page was painted, not a blank
    finally:
        server.shutdown()
        server.server_close()
