"""The report: every plot the issue asks for, with its numbers, in one self-contained HTML file."""

from __future__ import annotations

import numpy as np

from linksim.evaluation import classes_of
from linksim.evaluation.experiments import pagerank_convergence
from linksim.graph import LinkGraph
from linksim.analysis.report import build_report, write_html


def small_world():
    rng = np.random.default_rng(5)
    n = 80
    graph = LinkGraph.from_edges(rng.integers(0, n, 400), rng.integers(0, n, 400), n)
    names = ["Science.Biology", "Science.Physics", "Art.Music", "Art.Film"]
    classes = {u: classes_of([names[u % 4]]) for u in range(n)}
    words = ["cell", "gene", "atom", "quark", "jazz", "opera", "movie", "actor"]
    texts = {u: " ".join(rng.choice(words[2 * (u % 4): 2 * (u % 4) + 2], 20)) + " common words here" for u in range(n)}
    return graph, classes, texts


def test_report_has_every_section_and_its_numbers(tmp_path) -> None:
    graph, classes, texts = small_world()
    lists = {"pagesim r=1": {u: [((u + 4) % graph.n, 0.5)] for u in range(graph.n)}}
    sections = build_report(graph, classes, lists, texts, "test graph", lengths=(1, 2, 3),
                            fingerprints=(10, 50), decays=(0.4, 0.8))
    titles = [s.title for s in sections]
    assert titles == ["Γ against path length L", "Γ against number of fingerprints N", "Γ against decay c",
                      "Fingerprint tree sizes", "PageRank convergence", "Δ(A, T) for PageSim and the Monte Carlo methods"]
    assert all(s.png.startswith(b"\x89PNG") and s.caption for s in sections)
    # Γ against L: a row per method and length, exact values beside the Monte Carlo ones.
    rows = sections[0].table[1:]
    assert len(rows) == 5 * 3 and all(row[3] != "-" for row in rows)  # simrank, psimrank, xjaccard, ppsimrank, spectral
    assert all(-1 <= float(row[2]) <= 1 for row in rows)
    path = tmp_path / "report.html"
    write_html(sections, path, "t", "p")
    text = path.read_text()
    assert text.count("data:image/png;base64,") == 6 and "Fig. 4" in text and "Fig. 5" in text


def test_pagerank_convergence_ends_at_the_converged_ranking() -> None:
    graph, _, _ = small_world()
    conv = pagerank_convergence(graph, max_iter=60, top_n=(10,))
    assert conv.residuals[-1] < conv.residuals[0]
    assert conv.overlap[10][-1] == 1.0 and conv.rank_changes[-1] < 0.5
