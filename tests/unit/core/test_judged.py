"""Judged quality (issue 27): a list's worth to an independent judge over the exact list's."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.evaluation import top_lists_from_matrix
from linksim.evaluation.experiments import lists_of
from linksim.evaluation.judged import index_judge, judged_quality, matrix_judge, worth
from linksim.fingerprints.exact import simrank_exact
from linksim.methods import fingerprint_index
from linksim.graph import LinkGraph


def random_graph(seed: int, n: int = 50, m: int = 220) -> LinkGraph:
    rng = np.random.default_rng(seed)
    return LinkGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)


@pytest.fixture(scope="module")
def graph_and_exact():
    graph = random_graph(3)
    return graph, simrank_exact(graph, 0.6, 6)


def test_the_exact_lists_judged_by_their_own_scores_are_worth_one_and_nothing_beats_them(graph_and_exact) -> None:
    graph, exact = graph_and_exact
    judge = matrix_judge(exact)
    best = top_lists_from_matrix(exact, 10)
    same = judged_quality(best, best, judge)
    assert same.pages > 0 and np.all(same.values == 1.0)
    # Any other lists (here Monte Carlo ones) are worth at most the best lists under that judge.
    sampled = lists_of(fingerprint_index(graph, "simrank", 50, 6, seed=1), 10, workers=1)
    judged = judged_quality(sampled, best, judge)
    assert judged.pages == same.pages
    assert np.all(judged.values <= 1.0 + 1e-12) and judged.p5 <= judged.mean < 1.0
    assert judged.mean > 0.8  # 50 fingerprints already find most of the worth


def test_a_shorter_or_missing_list_loses_exactly_what_its_pages_were_worth(graph_and_exact) -> None:
    _, exact = graph_and_exact
    judge = matrix_judge(exact)
    best = top_lists_from_matrix(exact, 10)
    u = max(best, key=lambda page: len(best[page]))
    cut = {u: best[u][:5]}
    expected = sum(exact[u, v] for v, _ in best[u][:5]) / sum(exact[u, v] for v, _ in best[u])
    assert judged_quality(cut, best, judge, pages=[u]).mean == pytest.approx(expected, rel=1e-12)
    assert judged_quality({}, best, judge, pages=[u]).mean == 0.0
    assert worth(judge, u, [(u, 1.0)] + best[u], 10) == pytest.approx(sum(exact[u, v] for v, _ in best[u]))


def test_an_independent_judge_puts_the_noise_floor_near_one_and_random_lists_far_below(graph_and_exact) -> None:
    graph, _ = graph_and_exact
    judge = index_judge(fingerprint_index(graph, "simrank", 2_000, 6, seed=9))
    exact_lists = lists_of(fingerprint_index(graph, "simrank", 100, 6, seed=0), 10, workers=1)
    floor = judged_quality(lists_of(fingerprint_index(graph, "simrank", 100, 6, seed=1), 10, workers=1), exact_lists, judge)
    rng = np.random.default_rng(0)
    random_lists = {u: [(int(v), 1.0) for v in rng.choice(graph.n, 10, replace=False)] for u in exact_lists}
    noise = judged_quality(random_lists, exact_lists, judge)
    assert 0.9 < floor.mean < 1.1 and floor.p5 > 0.6
    assert noise.mean < 0.5 * floor.mean
    # The judge's own scores, in one call or pair by pair.
    index = fingerprint_index(graph, "simrank", 30, 6, seed=2)
    pages = np.arange(graph.n)
    assert index_judge(index)(4, pages).tolist() == [index.sim(4, v) for v in pages]


def test_the_exact_cut_is_the_kth_best_score_and_every_page_that_scores_it() -> None:
    graph = random_graph(5, n=120, m=600)
    index = fingerprint_index(graph, "simrank", 12, 6, seed=3)  # few fingerprints: many equal scores
    pages = np.arange(graph.n)
    checked_ties = 0
    for u in range(graph.n):
        scores = np.round(index.sims(u, pages), 12)
        scores[u] = 0.0
        score, tied = index.exact_cut(u, 5)
        if np.sum(scores > 0) <= 5:
            assert score is None and len(tied) == 0
            continue
        kth = np.sort(scores)[::-1][4]
        expected = np.flatnonzero(np.abs(scores - kth) <= 1e-12)
        if score is None:  # no page outside the top five scores the fifth's score: nothing to choose
            assert np.sum(scores >= kth - 1e-12) == 5
            continue
        assert score == pytest.approx(kth, abs=1e-12) and tied.tolist() == expected.tolist()
        checked_ties += 1
    assert checked_ties > 20  # the graph has ties at the cut to check


def test_the_tie_fair_worth_gives_other_tied_pages_the_same_worth_and_still_punishes_a_worse_page() -> None:
    from linksim.evaluation.judged import cut_of, fair_worth

    graph = random_graph(5, n=120, m=600)
    index = fingerprint_index(graph, "simrank", 12, 6, seed=3)
    judge = index_judge(fingerprint_index(graph, "simrank", 400, 6, seed=8))
    exact = lists_of(index, 5, workers=1)
    u, cut = next((u, c) for u in sorted(exact) if (c := cut_of(index, u, 5)) is not None
                  and sum(abs(s - c.score) <= 1e-12 for _, s in exact[u]) < len(c.tied))
    cuts = {u: cut}
    chosen = [v for v, s in exact[u] if abs(s - cut.score) <= 1e-12]
    others = [v for v in cut.tied.tolist() if v not in chosen][: len(chosen)]
    swapped = [(v, s) for v, s in exact[u] if abs(s - cut.score) > 1e-12] + [(v, cut.score) for v in others]
    plain = judged_quality({u: swapped}, exact, judge, [u], 5)
    fair = judged_quality({u: swapped}, exact, judge, [u], 5, cuts=cuts)
    assert fair.mean == pytest.approx(1.0, abs=1e-12)
    assert plain.mean != pytest.approx(1.0, abs=1e-9)  # the plain worth rewards one arbitrary choice
    # Every tied page counted at the judge's mean over the group.
    above = [v for v, s in exact[u] if abs(s - cut.score) > 1e-12]
    expected = judge(u, np.array(above, dtype=np.int64)).sum() + len(chosen) * judge(u, cut.tied).mean()
    assert fair_worth(judge, u, exact[u], 5, cut) == pytest.approx(expected, rel=1e-12)
    # A page below the cut in place of the best page is worth what the judge says, not the mean.
    below = next(v for v in range(graph.n) if v != u and v not in cut.tied
                 and index.sim(u, v) < cut.score - 1e-12)
    worse = [(below, index.sim(u, below))] + exact[u][1:]
    loss = judge(u, np.array([exact[u][0][0]]))[0] - judge(u, np.array([below]))[0]
    if abs(exact[u][0][1] - cut.score) <= 1e-12:  # the best page was itself tied: it counted as the mean
        loss = judge(u, cut.tied).mean() - judge(u, np.array([below]))[0]
    assert fair_worth(judge, u, worse, 5, cut) == pytest.approx(expected - loss, rel=1e-9)
    # Without a cut the tie-fair worth is the worth.
    assert fair_worth(judge, u, exact[u], 5, None) == worth(judge, u, exact[u], 5)
