"""Judged quality of the all-pages top-k lists (issue 27): are the fast lists as good as exact?

For a sample of pages with in-links, on a generated crawl (``linksim generate``'s copying model,
seeded) or cnr-2000, for each fingerprint-tree method at N fingerprints (seed 0):

- the **exact** lists: the index's per-page reading (every page of u's trees scored; for the
  spectral method, with u's nearest pages of the embedding found by a scan of every page);
- the lists of each **sampled reading** asked for (``--sample`` sizes, default the method's own:
  the members read from each large range of a page's trees, 16, PSimRank 8), and their speed
  (pages a second, one core); for the spectral method, its stored reading (the nearest pages
  stored with the index, from 100,000 pages found by an HNSW graph);
- the **noise floor**: the exact lists of another seed at the same N;

each judged by an independent index of the same method (``--judge-fingerprints``, another seed):
a list's worth is the sum of the judge's scores of its pages, its quality that worth over the
exact list's (:mod:`linksim.evaluation.judged`). Mean and 5th percentile over the sample, and
for the fingerprint-tree methods the same **tie-fair** (each listed page that scores the exact
list's k-th best score counted as the judge's mean over every page scoring it: the index cannot
tell those apart, and the exact list's choice among them, the smaller page numbers, is arbitrary).

    .venv/bin/python benchmarks/judged.py --links 10M --methods simrank psimrank --sample 16 8
    .venv/bin/python benchmarks/judged.py --crawl cnr-2000 --methods simrank psimrank
    .venv/bin/python benchmarks/judged.py --links 10M --methods spectral --all-pages 40000 --from-store
    .venv/bin/python benchmarks/judged.py --links 10M --pages 0 --all-pages 40000 --batch-ab
    .venv/bin/python benchmarks/judged.py --links 10M --methods psimrank --all-pages 40000 \
        --reading band-cap=128 --reading candidates=64 --reading band-candidates=0 --reading sample=4

``--reading`` judges (and times) the sampled reading with other knobs in the same run: how much each
part of it (the members read, the candidates scored, the first-step bands) buys and costs.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def parse_links(text: str) -> int:
    units = {"k": 10**3, "m": 10**6}
    text = text.strip().lower()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def crawl(args):
    from linksim.graph import LinkGraph

    if args.edges is not None:  # two page numbers a line (benchmarks/doccrawl.py writes its crawl so)
        import pandas as pd

        edges = pd.read_csv(args.edges, sep="\t", header=None, names=["s", "t"])
        n = int(max(edges.s.max(), edges.t.max())) + 1
        return f"{args.edges.name}", LinkGraph.from_edges(edges.s.to_numpy(), edges.t.to_numpy(), n)
    if args.crawl == "cnr-2000":
        from _common import cnr_edges

        _, edges, n = cnr_edges(args.data)
        return "cnr-2000", LinkGraph.from_edges(edges.s.to_numpy(), edges.t.to_numpy(), n)
    from linksim.generate import generate_links

    source, target = np.empty(args.links, np.int32), np.empty(args.links, np.int32)
    pages = 0
    for _, _, pages in generate_links(args.links, seed=args.seed, source=source, target=target):
        pass
    return f"generated {args.links:,} links (seed {args.seed})", LinkGraph.from_edges(source, target, pages)


def lists_for(index, pages, top_k: int, sample: int | None = 0) -> tuple[dict, float]:
    """Each page's top-k by one reading (``sample`` 0: the exact one; None: the index's own), and
    the pages answered a second."""
    began = time.perf_counter()
    lists = {int(u): index.related(int(u), top_k=top_k, sample=sample) for u in pages}
    return lists, len(pages) / (time.perf_counter() - began)


def stored(index, method: str, graph):
    """``index`` saved to a temporary index store and opened from it, memory-mapped (what
    ``linksim similar`` reads), prepared for all pages as the in-memory one was."""
    import atexit
    import shutil
    import tempfile

    from linksim import store

    root = Path(tempfile.mkdtemp(prefix="linksim-judged-"))
    atexit.register(shutil.rmtree, root, True)
    path = store.save(index, root, method, graph.n, graph.m, urls=[str(u) for u in range(graph.n)])
    reopened = store.open_path(path)
    if hasattr(reopened, "prepare_all_pages"):
        reopened.prepare_all_pages()
    return reopened


def copy_with(index, **attributes):
    """A copy of the fingerprint ``index`` (the same arrays) with other values of ``attributes``."""
    import dataclasses

    copy = dataclasses.replace(index)
    for name, value in attributes.items():
        setattr(copy, name, value)
    return copy


def page_major_ab(index) -> list:
    """The index without and with its page-major rows (two views of the same arrays), each twice,
    interleaved: [(label, index)]."""
    from linksim.fingerprints.treescan import NO_PAGE_MAJOR

    rows = copy_with(index, use_page_major=False, _page_major=NO_PAGE_MAJOR)
    return [("fingerprint rows", rows), ("page-major rows", index)] * 2


class OnePageACall:
    """An index as ``top_k_all`` saw it before ``related_many``: every list one ``related`` call."""

    def __init__(self, index) -> None:
        self._index = index

    def __getattr__(self, name: str):
        if name == "related_many":
            raise AttributeError(name)
        return getattr(self._index, name)


def batch_ab(index) -> list:
    """The index read one page a call and a chunk a call (the same index), each twice,
    interleaved: [(label, index)]."""
    return [("one call a page", OnePageACall(index)), ("a chunk a call", index)] * 2


#: what ``--reading`` may set, and the index attribute each is (the sampled reading's knobs)
KNOBS = {"sample": "sample", "candidates": "_sample_candidates", "band-cap": "_band_cap",
         "band-sample": "_band_sample",
         "band-candidates": "_band_candidates", "exact-members": "_exact_members"}


def parse_reading(text: str) -> dict:
    """``--reading`` text, ``knob=value,knob=value`` (knobs: :data:`KNOBS`), as {knob: int}."""
    knobs = {}
    for part in filter(None, text.split(",")):
        knob, _, value = part.partition("=")
        if knob not in KNOBS or not value.strip().isdigit():
            raise argparse.ArgumentTypeError(f"{part!r}: give knob=integer, knobs {', '.join(KNOBS)}")
        knobs[knob] = int(value)
    if not knobs:
        raise argparse.ArgumentTypeError("give at least one knob=integer")
    return knobs


def with_knobs(index, knobs: dict):
    """A copy of the fingerprint ``index`` (the same arrays) whose sampled reading has ``knobs``."""
    return copy_with(index, **{KNOBS[knob]: value for knob, value in knobs.items()})


def reading_label(knobs: dict) -> str:
    return ",".join(f"{knob}={value}" for knob, value in knobs.items())


def twins_ab(index) -> list:
    """The index read with every twin its own candidate and with a twin class one candidate
    (:func:`linksim.fingerprints.treescan._top_k_sampled`), each twice, interleaved: [(label, index)]."""
    apart = copy_with(index, _twin_candidates=False)
    return [("twins apart", apart), ("a twin class one candidate", index)] * 2


def scanning(index, pages):
    """The spectral ``index`` with the exact nearest pages of ``pages`` (a scan of every page each)
    in place of the stored ones, which come from an HNSW graph from 100,000 pages on: its exact
    lists for those pages."""
    from dataclasses import replace

    from linksim.spectral import nearest

    table = np.array(index.nearest)
    for u in pages.tolist():
        near = nearest(index.embedding, u)
        table[u] = -1
        table[u, : len(near)] = near
    return replace(index, nearest=table)


def in_link_classes(graph) -> np.ndarray:
    """A key per page, equal for pages with the same in-links (a sum of random 64-bit words over
    the in-links, with the in-degree): pages of one class have the same true score with any page,
    and differ in an index only by its Monte Carlo noise."""
    words = np.random.default_rng(7).integers(0, 2**63, graph.n, dtype=np.uint64)
    sums = np.zeros(graph.m + 1, dtype=np.uint64)
    np.cumsum(words[graph.in_indices], dtype=np.uint64, out=sums[1:])
    with np.errstate(over="ignore"):
        return (sums[graph.in_indptr[1:]] - sums[graph.in_indptr[:-1]]) ^ graph.in_degree.astype(np.uint64)


def explain_worst(graph, index, judge, lists, exact, pages, top_k: int, count: int, label: str) -> None:
    """For the ``count`` pages whose ``lists`` the judge finds worst against the exact lists: the
    in-link classes (pages with the same in-links) their listed pages come from, how many pages
    each holds, how the index scores them (mean, the best) and how the judge does (mean over the
    class, the truth up to the judge's noise)."""
    from linksim.evaluation.judged import worth

    key = in_link_classes(graph)
    valued = []
    for u in pages.tolist():
        reference = worth(judge, u, exact.get(u, ()), top_k)
        if reference > 0:
            valued.append((worth(judge, u, lists.get(u, ()), top_k) / reference, u))
    for quality, u in sorted(valued)[:count]:
        print(f"  {label}, page {u} ({graph.in_degree[u]} in-links): judged {quality:.3f}")
        mine = {v for v, _ in lists.get(u, ())[:top_k]}
        best = {v for v, _ in exact.get(u, ())[:top_k]}
        for klass in dict.fromkeys(int(key[v]) for v in [*best, *mine]):
            members = np.flatnonzero(key == np.uint64(klass))
            scores = index.sims(u, members)
            shown = members if len(members) <= 1_000 else members[np.linspace(0, len(members) - 1, 1_000).astype(int)]
            judge_scores = np.asarray(judge(u, shown))
            print(f"    class of {len(members):,} pages with {graph.in_degree[members[0]]} in-links: "
                  f"{sum(int(v) in best for v in members)} in the exact list, {sum(int(v) in mine for v in members)} "
                  f"in this one; index scores mean {scores.mean():.4f}, best {scores.max():.4f}; judge's mean "
                  f"{judge_scores.mean():.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crawl", choices=["generated", "cnr-2000"], default="generated")
    parser.add_argument("--edges", type=Path, default=None,
                        help="a crawl as a tab-separated list of page numbers instead (benchmarks/doccrawl.py's)")
    parser.add_argument("--links", type=parse_links, default=parse_links("1M"), help="generated crawl's links")
    parser.add_argument("--seed", type=int, default=1, help="generated crawl's seed")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--methods", nargs="+", default=["simrank", "psimrank"])
    parser.add_argument("--fingerprints", type=int, default=100)
    parser.add_argument("--judge-fingerprints", type=int, default=300)
    parser.add_argument("--pages", type=int, default=600,
                        help="pages with in-links judged (0: none, --all-pages alone; default 600, whose 5th "
                        "percentile is the 30th worst list: 150 pages' is their 8th, too few for a 0.99 line)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--sample", type=int, nargs="*", default=None,
                        help="sizes of the sampled reading (default: the method's own, 16; PSimRank 8)")
    parser.add_argument("--all-pages", type=int, default=0, metavar="P",
                        help="also time the lists of P random pages (all pages: the crawl's count) through "
                        "top_k_all with --workers, linksim's default reading (after an untimed pass over up to "
                        "4,000 random pages)")
    parser.add_argument("--workers", type=int, default=2, help="workers of --all-pages (default 2)")
    parser.add_argument("--page-major-ab", action="store_true",
                        help="time --all-pages also without the page-major rows (FingerprintIndex.prepare_all_pages), "
                        "each reading twice, interleaved, and check that the lists are the same")
    parser.add_argument("--batch-ab", action="store_true",
                        help="time --all-pages also one related call a page, against a chunk of pages a compiled "
                        "call (FingerprintIndex.related_many), each twice, interleaved, and check that the lists are "
                        "the same")
    parser.add_argument("--twin-ab", action="store_true",
                        help="each --sample reading (and --all-pages, twice, interleaved) also with every page of a "
                        "twin class counted as its own candidate (FingerprintIndex._twin_candidates off: the "
                        "reading before a class was one candidate), in the same run")
    parser.add_argument("--worst", type=int, default=0, metavar="K",
                        help="for the K pages whose sampled lists are judged worst: the classes of pages with "
                        "the same in-links their listed pages come from, and how the index and the judge score "
                        "each class (where the exact list's advantage comes from)")
    parser.add_argument("--reading", type=parse_reading, action="append", default=[], metavar="KNOB=N,...",
                        help="also a sampled reading with these knobs (repeatable; knobs: " + ", ".join(KNOBS) +
                        "), judged beside the default one and, with --all-pages, timed after it: "
                        "e.g. --reading band-cap=128 --reading candidates=64,band-candidates=0")
    parser.add_argument("--from-store", action="store_true",
                        help="time --all-pages also on the index saved to the index store and opened from it "
                        "memory-mapped, as `linksim similar` reads it (the arrays of a build in memory may sit "
                        "on huge pages; a memory map reads 4 KiB pages)")
    args = parser.parse_args()

    from linksim.evaluation.judged import cut_of, index_judge, judged_quality
    from linksim.ranking.topk import top_k_all
    from linksim.methods import METHODS

    from linksim.fingerprints.treescan import warm_up

    warm_up()  # the compiled queries, before any is timed
    name, graph = crawl(args)
    with_in_links = np.flatnonzero(graph.in_degree > 0)
    pages = np.random.default_rng(2026).choice(with_in_links, min(args.pages, len(with_in_links)), replace=False)
    print(f"{name}: {graph.n:,} pages, {graph.m:,} links; {len(pages)} random pages with in-links, top "
          f"{args.top_k}; judged by N = {args.judge_fingerprints}, seed 2")
    print(f"{'method':<11}{'lists':<26}{'mean':>7}{'p5':>7}{'pages/s':>10}   tie-fair: {'mean':>6}{'p5':>7}")
    for method in args.methods:
        entry = METHODS[method]
        build = lambda n, seed: entry.build_index(graph, n_fingerprints=n, seed=seed)  # noqa: E731
        index = build(args.fingerprints, 0)
        other = judge = None
        if args.pages:  # --pages 0: the all-pages rate alone
            other, judge = build(args.fingerprints, 1), build(args.judge_fingerprints, 2)
            # The spectral method's exact lists scan every page for the nearest ones (4-5 pages/s on
            # the 10M-link crawl); its index stores those an HNSW graph found, its all-pages reading.
            exact_reading = (lambda i: scanning(i, pages)) if hasattr(index, "nearest") else (lambda i: i)  # noqa: E731
            exact, rate = lists_for(exact_reading(index), pages, args.top_k)
            cuts = other_cuts = None
            if entry.fingerprint_trees:  # each page's k-th best score and the pages tied at it, in both indexes
                cuts = {int(u): cut_of(index, int(u), args.top_k) for u in pages}
                other_cuts = {int(u): cut_of(other, int(u), args.top_k) for u in pages}
                tied = [len(c.tied) for c in cuts.values() if c is not None]
                print(f"{method:<11}(ties at the cut: {len(tied)} of {len(pages)} pages, median "
                      f"{np.median(tied) if tied else 0:.0f} pages tied)", flush=True)
            rows = [(f"exact, N = {args.fingerprints}", exact, rate, cuts),
                    (f"noise floor (seed 1)", *lists_for(exact_reading(other), pages, args.top_k), other_cuts)]
            if hasattr(index, "prepare_all_pages"):  # what `similar` builds first (first-step bands, an HNSW graph)
                began = time.perf_counter()
                index.prepare_all_pages()
                print(f"{method:<11}(prepared for all pages in {time.perf_counter() - began:.1f} s)", flush=True)
            if entry.fingerprint_trees:
                for sample in args.sample or [index.sample]:  # default: the method's own
                    label = f"--sample {sample:,}" + (" (default)" if sample == index.sample else "")
                    rows.append((label, *lists_for(index, pages, args.top_k, sample), cuts))
                    if args.twin_ab:
                        apart = twins_ab(index)[0][1]
                        rows.append((f"--sample {sample:,}, twins apart", *lists_for(apart, pages, args.top_k, sample),
                                     cuts))
                for knobs in args.reading:  # the index's own sample unless the knobs set one
                    rows.append((reading_label(knobs), *lists_for(with_knobs(index, knobs), pages, args.top_k, None),
                                 cuts))
            elif entry.reads_sample:  # extended Jaccard: its own sampled reading of large buckets
                rows.append((f"--sample {index.sample} (default)", *lists_for(index, pages, args.top_k, None), None))
            else:
                rows.append(("all-pages reading", *lists_for(index, pages, args.top_k), None))
            for label, lists, speed, list_cuts in rows:
                quality = judged_quality(lists, exact, index_judge(judge), pages.tolist(), args.top_k)
                fair = ""
                if list_cuts is not None:
                    tie_fair = judged_quality(lists, exact, index_judge(judge), pages.tolist(), args.top_k,
                                              cuts=list_cuts, exact_cuts=cuts)
                    fair = f"   tie-fair: {tie_fair.mean:>6.3f}{tie_fair.p5:>7.3f}"
                print(f"{method:<11}{label:<26}{quality.mean:>7.3f}{quality.p5:>7.3f}{speed:>10.0f}{fair}", flush=True)
            if args.worst and entry.fingerprint_trees:
                for label, lists, _, _ in rows[2:]:
                    explain_worst(graph, index, index_judge(judge), lists, exact, pages, args.top_k, args.worst, label)
        if args.all_pages:
            del other, judge
            count = min(args.all_pages, graph.n)
            chosen = np.sort(np.random.default_rng(3).choice(graph.n, count, replace=False))
            if hasattr(index, "prepare_all_pages"):  # before the clock, as `similar` does before its lists
                began = time.perf_counter()
                index.prepare_all_pages()
                print(f"{method:<11}(prepared for all pages in {time.perf_counter() - began:.1f} s)", flush=True)
            readings = [("in memory", index)]
            if args.from_store:
                readings.append(("from the store", stored(index, method, graph)))
            if args.page_major_ab and entry.fingerprint_trees:
                readings = page_major_ab(index)
            if args.batch_ab and entry.fingerprint_trees:
                readings = batch_ab(index)
            if args.twin_ab and entry.fingerprint_trees:
                readings = twins_ab(index)
            if entry.fingerprint_trees:
                readings += [(reading_label(knobs), with_knobs(index, knobs)) for knobs in args.reading]
            # Untimed, first: the reading timed first ran 15 % slower than the same reading timed
            # last (1,162 against 1,368 pages/s for PSimRank on the 10M-link crawl, 2026-11-28).
            others = np.random.default_rng(4).choice(graph.n, min(count, 4000), replace=False)
            for _, reading in readings[1:]:  # a reading's own bands (another band cap or sample)
                if hasattr(reading, "prepare_all_pages"):
                    reading.prepare_all_pages()
            top_k_all(readings[0][1], top_k=args.top_k, pages=np.sort(others), workers=args.workers,
                      show_progress=False)
            answers = {}
            for where, reading in readings:
                report: dict = {}
                began = time.perf_counter()
                answers.setdefault(where, []).append(top_k_all(
                    reading, top_k=args.top_k, pages=chosen, workers=args.workers, show_progress=False, report=report))
                seconds = time.perf_counter() - began
                print(f"{method:<11}all pages ({where}): {count:,} random pages in {seconds:.1f} s, "
                      f"{count / seconds:,.0f} pages/s on {args.workers} workers "
                      f"({report.get('lists_sampled', 0):,} lists read from a sample)", flush=True)
            if (args.page_major_ab or args.batch_ab) and len(answers) == 2:
                first, second = (runs[0] for runs in answers.values())
                print(f"{method:<11}the same lists both ways ({' / '.join(answers)}): "
                      f"{all(np.array_equal(a, b) for a, b in zip(first, second))}", flush=True)


if __name__ == "__main__":
    main()
