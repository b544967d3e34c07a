"""A self-contained HTML report of the papers' experiments (plots embedded as PNG).

:func:`build_report` runs :mod:`linksim.evaluation.experiments` on a graph with category classes and texts and
returns the figures and the numbers behind them; :func:`write_html` writes them to one file.
"""

from __future__ import annotations

import base64
import html
import io
import logging
import time
from dataclasses import dataclass, field

import numpy as np

from linksim.evaluation import experiments
from linksim.analysis.texts import text_quality_curves
from linksim.graph import LinkGraph
from linksim.methods import METHODS as METHODS_REGISTRY

log = logging.getLogger(__name__)

METHODS = tuple(m.name for m in METHODS_REGISTRY.values() if m.exact is not None)  # Monte Carlo, with references


def colour_of(name: str) -> str | None:
    """The method's colour in the plots (:class:`linksim.methods.Method`'s ``colour``); None: the plot's own."""
    entry = METHODS_REGISTRY.get(name)
    return (entry.colour or None) if entry is not None else None

PAGESIM_STYLES = {"1": ("#ff7f0e", "^-"), "2": ("#9467bd", "s-"), "3": ("#8c564b", "D-")}


@dataclass
class Section:
    title: str
    caption: str  # data set and parameters
    png: bytes
    table: list[list[str]] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(figure)
    return buffer.getvalue()


def _axes(title: str, xlabel: str, ylabel: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    axes.set_title(title, fontsize=11)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, alpha=0.3)
    return figure, axes


def gamma_section(curves: list[experiments.Curve], parameter: str, label: str, dataset: str, log_x: bool = False) -> Section:
    figure, axes = _axes(f"Sibling Γ against {label} ({dataset})", label, "sibling Γ (mean over queries)")
    table = [["method", label, "Γ Monte Carlo", "Γ exact", "queries", "comparable pairs"]]
    for curve in curves:
        colour = colour_of(curve.method)
        axes.plot(curve.values, [r.gamma for r in curve.monte_carlo], "o-", color=colour,
                  label=f"{curve.method} (Monte Carlo)")
        if curve.exact:
            axes.plot(curve.values, [r.gamma for r in curve.exact], "s--", color=colour, alpha=0.6,
                      label=f"{curve.method} (exact)")
        for i, value in enumerate(curve.values):
            exact = f"{curve.exact[i].gamma:.4f}" if curve.exact else "-"
            report = curve.monte_carlo[i]
            table.append([curve.method, str(value), f"{report.gamma:.4f}", exact, f"{report.queries:,}",
                          f"{report.pairs:,}"])
    if log_x:
        axes.set_xscale("log")
    # Beside the plot, not on it: with six curves no corner of the axes is free.
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    defaults = "; ".join(f"{m}: N={p['n_fingerprints']}, L={p['length']}, c={p['decay']}"
                         for m, p in ((m, METHODS_REGISTRY[m].defaults) for m in METHODS))
    caption = (f"{dataset}: top-100 lists of every page, classes = categories cut to 2 components, seed 0. "
               f"Other parameters at the defaults ({defaults}). Fogaras & Rácz 2005, Fig. 4.")
    return Section(f"Γ against {label}", caption, _png(figure), table)


def tree_size_section(sizes: dict, dataset: str) -> Section:
    figure, axes = _axes(f"Fingerprint tree sizes against L ({dataset})", "walk length L", "tree size (pages)")
    table = [["L"] + [f"{m} mean" for m in sizes] + [f"{m} max" for m in sizes]]
    lengths = sorted(next(iter(sizes.values())))
    for method, by_length in sizes.items():
        axes.plot(lengths, [by_length[L][0] for L in lengths], "o-", color=colour_of(method), label=f"{method} mean")
        axes.plot(lengths, [by_length[L][1] for L in lengths], "s--", color=colour_of(method), alpha=0.6,
                  label=f"{method} max")
    for L in lengths:
        table.append([str(L)] + [f"{sizes[m][L][0]:.2f}" for m in sizes] + [f"{sizes[m][L][1]:,}" for m in sizes])
    axes.set_yscale("log")
    axes.legend(fontsize=8)
    caption = f"{dataset}: N = 100 fingerprints, seed 0; a page alone counts as a tree of one. Fogaras & Rácz 2005, Fig. 5."
    return Section("Fingerprint tree sizes", caption, _png(figure), table)


def convergence_section(conv: experiments.Convergence, dataset: str) -> Section:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.0))
    left.semilogy(conv.iterations, conv.residuals, "o-", markersize=3)
    left.set_title(f"PageRank residual (L1) per iteration ({dataset})", fontsize=10)
    left.set_xlabel("iteration")
    left.set_ylabel("residual")
    left.grid(True, alpha=0.3)
    for n, values in conv.overlap.items():
        right.plot(conv.iterations, values, "o-", markersize=3, label=f"top {n}")
    right.set_title("Similarity |A∩B| / |A∪B| of the top n and the converged top n", fontsize=10)
    right.set_xlabel("iteration")
    right.set_ylabel("top-n similarity")
    right.grid(True, alpha=0.3)
    right.legend(fontsize=8)
    table = [["iteration", "residual"] + [f"top {n} similarity" for n in conv.overlap] + ["mean |Δposition| in either top 100"]]
    for i, it in enumerate(conv.iterations):
        if it in (1, 2, 3, 5, 10, 15, 20, 30, 40, 50, 60) or i == len(conv.iterations) - 1:
            table.append([str(it), f"{conv.residuals[i]:.2e}"] + [f"{v[i]:.3f}" for v in conv.overlap.values()]
                         + [f"{conv.rank_changes[i]:.2f}"])
    caption = (f"{dataset}: damping 0.85, uniform teleport, dangling pages spread uniformly, float32 iteration; "
               "the converged ranking is float64 at tol 1e-12. Haveliwala 1999, Section 5.")
    return Section("PageRank convergence", caption, _png(figure), table)


def text_section(deltas: dict[str, dict[int, float]], dataset: str) -> Section:
    figure, axes = _axes(f"Δ(A, T): text similarity of the top T ({dataset})", "T", "mean cosine TF-IDF")
    ts = sorted(next(iter(deltas.values())))
    table = [["method"] + [f"T={t}" for t in ts]]
    for name, delta in deltas.items():
        base = name.split(" ")[0]
        colour, marker = colour_of(base), "o-"
        if " r=" in name:  # a radius (PageSim): one colour and marker per radius, so that the curves tell apart
            radius = name.split("r=")[-1][:1]
            colour, marker = PAGESIM_STYLES.get(radius, (colour, "o-"))
        axes.plot(ts, [delta[t] for t in ts], marker, color=colour, label=name)
        table.append([name] + [f"{delta[t]:.4f}" for t in ts])
    axes.legend(fontsize=8)
    caption = (f"{dataset}: article texts, TF-IDF by scikit-learn (English stop words, sublinear tf); "
               "Monte Carlo methods at N=100. Lin, King & Lyu 2006, Fig. 4.")
    return Section("Δ(A, T) for PageSim and the Monte Carlo methods", caption, _png(figure), table)


def findings_for_gamma(curves_l, curves_n) -> list[str]:
    """What the data says about the papers' claims (said plainly, whichever way it goes)."""
    notes = []
    for curve in curves_l:
        values = [r.gamma for r in curve.monte_carlo]
        best = curve.values[int(np.nanargmax(values))]
        notes.append(f"{curve.method}: Γ (Monte Carlo) is highest at L = {best}; from L = {curve.values[0]} to "
                     f"{curve.values[-1]} it goes {values[0]:.3f} → {values[-1]:.3f}.")
    for curve in curves_n:
        values = [r.gamma for r in curve.monte_carlo]
        trend = "rises" if values[-1] > values[0] else "falls"
        notes.append(f"{curve.method}: with more fingerprints Γ {trend} ({curve.values[0]}: {values[0]:.3f}, "
                     f"{curve.values[-1]}: {values[-1]:.3f}).")
    return notes


def write_html(sections: list[Section], path, title: str, preamble: str) -> None:
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
        "table{border-collapse:collapse;font-size:12px;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;"
        "text-align:right}th{background:#f3f3f3}.caption{color:#555;font-size:13px}</style></head><body>",
        f"<h1>{html.escape(title)}</h1><p>{html.escape(preamble)}</p>",
    ]
    for section in sections:
        image = base64.b64encode(section.png).decode("ascii")
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        parts.append(f"<p class='caption'>{html.escape(section.caption)}</p>")
        parts.append(f"<img alt='{html.escape(section.title)}' src='data:image/png;base64,{image}'>")
        for finding in section.findings:
            parts.append(f"<p>{html.escape(finding)}</p>")
        if section.table:
            head, *rows = section.table
            parts.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>")
            for row in rows:
                parts.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
            parts.append("</table>")
    parts.append("</body></html>")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(parts))


def _within(method: str, parameter: str, values) -> list:
    """The grid's values of ``parameter`` up to the method's report limit (a costly build)."""
    limit = METHODS_REGISTRY[method].report_limits.get(parameter)
    return [v for v in values if limit is None or v <= limit]


def build_report(
    graph: LinkGraph,
    classes: dict[int, frozenset[str]],
    text_lists: dict[str, dict],
    texts: dict[int, str] | None,
    dataset: str,
    lengths=tuple(range(1, 11)),
    fingerprints=(10, 30, 100, 300, 1000),
    decays=(0.2, 0.4, 0.6, 0.8),
    methods=METHODS,
) -> list[Section]:
    """Run every experiment; ``text_lists`` holds extra lists for Δ(A, T) (e.g. PageSim at r=1..3)."""
    sections = []

    def timed(name, function, *args, **kwargs):
        began = time.monotonic()
        log.info("report: %s ...", name)
        result = function(*args, **kwargs)
        log.info("report: %s done in %.0f s", name, time.monotonic() - began)
        return result

    curves_l = [timed(f"Γ against L, {m}", experiments.gamma_curve, graph, classes, m, "length",
                      _within(m, "length", lengths)) for m in methods]
    curves_n = [timed(f"Γ against N, {m}", experiments.gamma_curve, graph, classes, m, "n_fingerprints",
                      _within(m, "n_fingerprints", fingerprints)) for m in methods]
    curves_c = [timed(f"Γ against c, {m}", experiments.gamma_curve, graph, classes, m, "decay", list(decays))
                for m in methods]
    section = gamma_section(curves_l, "length", "path length L", dataset)
    section.findings = findings_for_gamma(curves_l, [])
    sections.append(section)
    section = gamma_section(curves_n, "n_fingerprints", "number of fingerprints N", dataset, log_x=True)
    section.findings = findings_for_gamma([], curves_n)
    sections.append(section)
    sections.append(gamma_section(curves_c, "decay", "decay c", dataset))
    sizes = timed("tree sizes", experiments.tree_size_curves, graph)
    sections.append(tree_size_section(sizes, dataset))
    sections.append(convergence_section(timed("PageRank convergence", experiments.pagerank_convergence, graph), dataset))
    if texts:
        deltas = timed("Δ(A, T)", text_quality_curves, text_lists, texts)
        sections.append(text_section(deltas, dataset))
    return sections
