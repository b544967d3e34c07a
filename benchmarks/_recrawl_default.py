"""Helper of recrawl.py (``--default``): the default's incremental update after a recrawl against a
rebuild, on the labelled generated crawl (issue 65).

The crawl (``--links``, seed 1) is built into the default's index once (seed 0, the walks' state
kept) and every page's top-10 list made: the lists a user holds. Then for each ``--shares`` (each
drawn from that crawl, seeded; recrawl.py's :func:`draw_recrawl` as pages and links: a recrawled
page loses each link with probability 0.3, one at least, and gains as many to targets of links
drawn at random) and for a ``--chain`` of recrawls of 1 % (each from the graph the last one left,
each updated, judged at its end):

- **update**: :func:`linksim.spectral_update.update_spectral_index` (walks updated, changed rows
  folded in, nearest pages in place) and the lists of the pages within reach
  (:func:`linksim.spectral_update.lists_reach`), the others kept; **rebuild**: the index built
  from nothing on the recrawled graph and every list. Both on all cores (the lists in forked
  workers, as ``linksim similar`` makes them), neither through Neo4j: the stream and the write
  are the same for both, bar the lists written (the recrawl benchmark's ``--similar`` times those);
- **judged worth** of the updated lists against the rebuild's, judged by an independent index
  (the default built on the recrawled graph with ``--judge-fingerprints`` and another seed), on a
  seeded sample of pages with a list, and the same for the **floor**: the lists of a rebuild with
  another seed (:mod:`linksim.evaluation.judged`); mean and 5th percentile;
- **P@10** against the planted labels (same topic and subtopic) of the updated lists, the
  rebuild's and the other seed's, on a seeded sample of labelled pages with a link.

Each stage's figures go to a state file as they are finished: a rerun resumes after the last
finished stage (the base index is built again). The results file is written at the end.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

STATE = Path.home() / ".cache" / "linksim" / "recrawl-default" / "state.json"


def _graph(source, target, n):
    from linksim.graph import LinkGraph

    return LinkGraph.from_edges(np.asarray(source), np.asarray(target), n)


def recrawled(graph, share: float, rng: np.random.Generator):
    """``graph`` after a recrawl of ``share`` of its crawled pages (see the module): the graph, the pages recrawled."""
    source, target = graph.edges()
    crawled = np.flatnonzero(graph.out_degree > 0)
    chosen = rng.choice(crawled, size=max(1, int(round(share * len(crawled)))), replace=False)
    on = np.flatnonzero(np.isin(source, chosen))  # the recrawled pages' links, page after page
    lost = np.zeros(len(source), dtype=bool)
    lost[on] = rng.random(len(on)) < 0.3
    starts = np.flatnonzero(np.r_[True, source[on][1:] != source[on][:-1]])
    none = ~np.logical_or.reduceat(lost[on], starts)
    lost[on[starts[none]]] = True  # one link at least from each recrawled page
    gained = target[rng.integers(0, len(target), int(lost.sum()))]
    return _graph(np.concatenate([source[~lost], source[lost]]), np.concatenate([target[~lost], gained]),
                  graph.n), len(chosen)


class Lists:
    """Top-10 lists by page: ``indptr`` (n + 1), ``targets``, ``scores``."""

    def __init__(self, n: int, source, target, score) -> None:
        source = np.asarray(source, dtype=np.int64)
        order = np.argsort(source, kind="stable")
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(source, minlength=n), out=self.indptr[1:])
        self.targets = np.asarray(target, dtype=np.int64)[order]
        self.scores = np.asarray(score, dtype=np.float64)[order]

    def get(self, u: int, default=()):
        a, b = self.indptr[u], self.indptr[u + 1]
        return list(zip(self.targets[a:b].tolist(), self.scores[a:b].tolist())) or default

    def has(self, pages: np.ndarray) -> np.ndarray:
        return np.diff(self.indptr)[pages] > 0

    def arrays(self):
        return self.indptr, self.targets, self.scores

    def merged(self, reach: np.ndarray, made: "Lists") -> "Lists":
        """These lists with those of the pages of ``reach`` taken from ``made``."""
        n = len(self.indptr) - 1
        lengths, made_lengths = np.diff(self.indptr), np.diff(made.indptr)
        chosen = np.zeros(n, dtype=bool)
        chosen[reach] = True
        own = ~chosen[np.repeat(np.arange(n), lengths)]
        theirs = chosen[np.repeat(np.arange(n), made_lengths)]
        source = np.concatenate([np.repeat(np.arange(n), lengths)[own], np.repeat(np.arange(n), made_lengths)[theirs]])
        return Lists(n, source, np.concatenate([self.targets[own], made.targets[theirs]]),
                     np.concatenate([self.scores[own], made.scores[theirs]]))


def all_lists(index, pages=None) -> Lists:
    """Every page's top-10 (or those of ``pages``), in forked workers."""
    from linksim.parameters import Query
    from linksim.ranking.topk import lists_of_all

    source, target, score, _ = lists_of_all(index, Query(10), pages=pages, show_progress=False)
    return Lists(index.n, source, target, score)


def build(graph, seed: int = 0, fingerprints: int = 100):
    from linksim.spectral import build_spectral_index

    return build_spectral_index(graph, fingerprints, 3, seed, 0.6, keep_walks=True)


def update(before, index, graph, lists: Lists):
    """The updated index and every page's lists: those within reach made again, the others kept."""
    from linksim.spectral_update import lists_reach, update_spectral_index

    updated = update_spectral_index(before, index, graph)
    updated.reached_by = {}
    reach = lists_reach(updated, lists.arrays(), 10, report=updated.reached_by)
    made = all_lists(updated, reach)
    return updated, lists.merged(reach, made), len(reach)


def judged(graph, lists: Lists, rebuilt: Lists, other: Lists, sample: np.ndarray, judge_fingerprints: int,
           categories) -> dict:
    """The judged worth of ``lists`` and ``other`` against ``rebuilt``, and each one's P@10."""
    from linksim.evaluation.judged import judged_quality

    judge_index = build(graph, seed=7, fingerprints=judge_fingerprints)

    def judge(u, pages):
        pages = np.asarray(pages, dtype=np.int64)
        return judge_index.combine(u, pages, judge_index.fingerprints.sims(u, pages))

    pages = sample[rebuilt.has(sample)].tolist()
    updated = judged_quality(lists, rebuilt, judge, pages)
    floor = judged_quality(other, rebuilt, judge, pages)
    topic, subtopic, labelled = categories
    chosen = labelled[rebuilt.has(labelled)]

    def precision(found) -> float:
        hits = [sum(1 for v, _ in found.get(u, [])[:10] if topic[v] == topic[u] and subtopic[v] == subtopic[u])
                for u in chosen.tolist() if found.get(u)]
        return float(np.mean(hits)) / 10 if hits else float("nan")

    return {"judged_mean": updated.mean, "judged_p5": updated.p5, "floor_mean": floor.mean, "floor_p5": floor.p5,
            "judged_pages": updated.pages, "p10_updated": precision(lists), "p10_rebuilt": precision(rebuilt),
            "p10_other_seed": precision(other), "p10_pages": int(len(chosen))}


def stage(graph_before, index, lists, graph, args, categories, rng) -> tuple[dict, object, dict]:
    """One recrawl's update against a rebuild: (figures, the updated index, its lists)."""
    from linksim.errors import ConfigurationError

    began = time.perf_counter()
    try:
        updated, merged, reached = update(graph_before, index, graph, lists)
        how = "update"
    except ConfigurationError as reason:  # the drift check: the update builds again, and says so
        print(f"    the update builds again: {reason}", flush=True)
        updated = build(graph)
        merged, reached, how = all_lists(updated), graph.n, "rebuild (drift)"
    update_seconds = time.perf_counter() - began
    change = getattr(updated, "change", None)
    row = {"how": how, "update_seconds": round(update_seconds, 2), "lists_reached": int(reached),
           "pages": int(graph.n), "folded": int(len(change.folded)) if change else None,
           "drift": round(float(change.drift), 5) if change else None,
           "folded_share": round(float(change.folded_share), 4) if change else None}
    row.update(against_rebuild(graph, merged, args, categories, rng))
    row["ratio"] = round(update_seconds / row["rebuild_seconds"], 4)
    return row, updated, merged


def run(args, header) -> None:
    """``header()``: the results file's header (:func:`_common.results_header`), asked when it is written."""
    from linksim.errors import ConfigurationError
    from linksim.generate import generate_labelled
    from linksim.parameters import PARAMETERS
    from linksim.spectral_update import warm_up

    warm_up()
    links = PARAMETERS["links"].check(args.links)
    crawl = generate_labelled(links, seed=1)
    n = crawl.pages
    graph = _graph(crawl.source, crawl.target, n)
    labelled_pool = np.flatnonzero((crawl.subtopic >= 0) & graph.linked())
    labelled = np.sort(np.random.default_rng(0).choice(labelled_pool, min(args.label_pages, len(labelled_pool)),
                                                       replace=False))
    categories = (crawl.topic, crawl.subtopic, labelled)
    if args.fold_limit is not None:  # a calibration of the limit (issue 65): its own state and results file
        import linksim.spectral_update as spectral_update

        spectral_update.FOLD_LIMIT = args.fold_limit
    key = f"{args.links}:{args.seed}" + (f":fold-limit={args.fold_limit:g}" if args.fold_limit is not None else "")
    key += ":judge-steps" if args.judge_steps else ""
    STATE.parent.mkdir(parents=True, exist_ok=True)
    state = json.loads(STATE.read_text()) if STATE.exists() else {}
    done = state.get(key, {})
    print(f"generated {args.links}-link labelled crawl: {n:,} pages, {graph.m:,} links", flush=True)
    began = time.perf_counter()
    index = build(graph)
    lists = all_lists(index)
    print(f"  base index and lists in {time.perf_counter() - began:.1f} s", flush=True)
    stages = [f"{share:g}" for share in args.shares] + ([f"chain{args.chain}"] if args.chain else [])
    for name in stages:
        if name in done:
            print(f"  {name}: finished earlier", flush=True)
            continue
        rng = np.random.default_rng([args.seed, len(name), int(float(name) * 1e6) if not name.startswith("chain") else 0])
        if name.startswith("chain"):
            before, current, held, steps = graph, index, lists, []
            for step in range(args.chain):
                after, pages = recrawled(before, 0.01, rng)
                began = time.perf_counter()
                try:
                    current, held, reached = update(before, current, after, held)
                    what = "update"
                except ConfigurationError as reason:  # the drift check refuses: a rebuild, as linksim similar does
                    print(f"    step {step + 1}: builds again: {reason}", flush=True)
                    current, held, reached, what = build(after), None, after.n, "rebuild"
                    held = all_lists(current)
                steps.append({"step": step + 1, "how": what, "seconds": round(time.perf_counter() - began, 2),
                              "lists_reached": int(reached),
                              "folded_share": round(float(current.change.folded_share), 4) if current.change else 0.0,
                              "drift": round(float(current.change.drift), 5) if current.change else 0.0})
                if args.judge_steps and step < args.chain - 1:  # a judge's draws of its own: the same recrawls
                    steps[-1].update(against_rebuild(after, held, args, categories, np.random.default_rng([args.seed, step])))
                print(f"    step {step + 1}: {steps[-1]}", flush=True)
                if step < args.chain - 1:
                    before = after
            row = against_rebuild(after, held, args, categories, rng)
            row["steps"] = steps
        else:
            after, pages = recrawled(graph, float(name), rng)
            row, _, _ = stage(graph, index, lists, after, args, categories, rng)
            row["recrawled"] = pages
        row["commit"] = header()["commit"]  # a resumed run's stages may have run at other commits
        done[name] = row
        state[key] = done
        STATE.write_text(json.dumps(state, indent=1))
        print(f"  {name}: {row}", flush=True)
    report(args, done, stages, header)


def against_rebuild(graph, lists: Lists, args, categories, rng) -> dict:
    """A rebuild of ``graph`` (its index and every list, timed), and ``lists`` judged against its
    lists, with those of a rebuild with another seed beside them as the floor."""
    began = time.perf_counter()
    rebuilt_index = build(graph)
    rebuilt = all_lists(rebuilt_index)
    rebuild_seconds = time.perf_counter() - began
    del rebuilt_index
    sample = np.sort(rng.choice(graph.n, size=min(args.judge_pages, graph.n), replace=False))
    other_index = build(graph, seed=1)
    other = all_lists(other_index, np.union1d(sample, categories[2]))
    del other_index
    row = {"rebuild_seconds": round(rebuild_seconds, 2)}
    row.update(judged(graph, lists, rebuilt, other, sample, args.judge_fingerprints, categories))
    return row


def report(args, done: dict, stages: list[str], header) -> None:
    """The table, and the results file with ``header()`` (the commit and time at the end)."""
    print(f"\ndefault (spectral) after a recrawl of the generated {args.links}-link labelled crawl: update "
          "against rebuild (index and every list, all cores; judged worth against the rebuild's)")
    print(f"{'recrawl':>9} {'how':>8} {'update/rebuild':>18} {'ratio':>7} {'lists':>9} {'judged mean':>12} "
          f"{'p5':>6} {'floor mean':>11} {'floor p5':>9} {'P@10 upd':>9} {'rebuild':>8} {'other seed':>10}")
    for name in stages:
        row = done.get(name)
        if row is None:
            continue
        seconds = (f"{row['update_seconds']:.1f}/{row['rebuild_seconds']:.1f} s" if "update_seconds" in row
                   else f"{sum(s['seconds'] for s in row['steps']):.1f} s ({len(row['steps'])} steps)")
        ratio = f"{row['ratio']:.3f}" if "ratio" in row else "-"
        print(f"{name:>9} {row.get('how', 'chain'):>8} {seconds:>18} {ratio:>7} {row.get('lists_reached', '-'):>9} "
              f"{row['judged_mean']:>12.4f} {row['judged_p5']:>6.3f} {row['floor_mean']:>11.4f} {row['floor_p5']:>9.3f} "
              f"{row['p10_updated']:>9.4f} {row['p10_rebuilt']:>8.4f} {row['p10_other_seed']:>10.4f}")
    limit = f"-fold-limit-{args.fold_limit:g}" if args.fold_limit is not None else ""
    results = Path(__file__).resolve().parent / "results" / f"recrawl-default-{args.links}{limit}.json"
    from linksim.spectral_update import FOLD_LIMIT

    results.write_text(json.dumps(dict(header(), links=args.links, fold_limit=FOLD_LIMIT, stages=done), indent=1) + "\n")
    print(f"written to {results}")
