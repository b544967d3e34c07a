"""Sibling Γ and Δ(A, T) on hand-made examples whose values are worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linksim.evaluation import classes_of, sibling_gamma, text_quality, top_lists_from_matrix


def test_classes_drop_subject_and_cut_to_depth() -> None:
    assert classes_of(["subject.Science.Biology.Birds", "subject.People"]) == {"Science.Biology", "People"}
    assert classes_of(["subject.Science.Biology.Birds"], depth=1) == {"Science"}
    assert classes_of(["Art/Music/Jazz"], depth=2) == {"Art.Music"}


def test_sibling_gamma_counts_concordant_and_discordant_pairs() -> None:
    classes = {
        "u": classes_of(["Science.Biology"]),
        "same1": classes_of(["Science.Biology.Birds"]),
        "same2": classes_of(["Science.Biology"]),
        "sib1": classes_of(["Science.Chemistry"]),
        "sib2": classes_of(["Science.Physics"]),
        "far": classes_of(["Art.Music"]),
        "both": classes_of(["Science.Biology", "Science.Physics"]),  # shares u's class: "same"
    }
    lists = {
        # same: same1 .9, both .5, same2 .2 ; siblings: sib1 .6, sib2 .2 (tie with same2: ignored)
        "u": [("same1", 0.9), ("far", 0.8), ("sib1", 0.6), ("both", 0.5), ("same2", 0.2), ("sib2", 0.2),
              ("u", 1.0), ("zero", 0.0)],
        "far": [("same1", 0.4)],  # "far" has no sibling class in the list: no comparable pair
        "nobody": [("u", 0.3)],  # no classes: not a query
    }
    report = sibling_gamma(lists, classes)
    # pairs (v, w): same1>sib1, same1>sib2, both<sib1, both>sib2, same2<sib1, same2=sib2 (tie)
    concordant, discordant = 3, 2
    assert report.pairs == concordant + discordant
    assert report.queries == 1
    assert report.gamma == pytest.approx((concordant - discordant) / (concordant + discordant))
    assert report.pooled == pytest.approx(report.gamma)
    # precision@10 over graded queries u (2 same of... same1, both, same2 = 3 in the first 10) and far (0).
    assert report.graded == 2
    assert report.precision_at_10 == pytest.approx((3 / 10 + 0 / 10) / 2)


def test_hits_count_every_labelled_page_and_coverage_every_linked_page() -> None:
    classes = {"u": classes_of(["A.B"]), "v": classes_of(["A.B"]), "w": classes_of(["A.C"]),
               "x": classes_of(["A.B"]), "y": frozenset()}
    lists = {"u": [("v", 0.9), ("w", 0.5), ("x", 0.1)],  # 2 same-class pages in the first 10
             "v": [("u", 0.9)],  # 1, a short list: its 9 missing places are misses
             "w": [],  # labelled, no list: 10 misses
             "y": [("u", 0.2)]}  # unlabelled, but linked and answered
    report = sibling_gamma(lists, classes, linked=["u", "v", "w", "y", "z"])
    # precision@10 over the pages with a list (u: 2/10, v: 1/10), hits@10 over the 4 labelled pages.
    assert report.precision_at_10 == pytest.approx((0.2 + 0.1) / 2)
    assert report.labelled == 4 and report.hits_at_10 == pytest.approx((2 + 1 + 0 + 0) / 40)
    assert report.coverage == pytest.approx(3 / 5)  # u, v, y of the five linked pages
    assert math.isnan(sibling_gamma(lists, classes).coverage)  # no linked pages given


def test_lists_are_cut_to_top() -> None:
    classes = {"u": classes_of(["A.B"]), "v": classes_of(["A.B"]), "w": classes_of(["A.C"])}
    lists = {"u": [("w", 0.9), ("v", 0.5)]}
    assert sibling_gamma(lists, classes, top=1).pairs == 0
    assert sibling_gamma(lists, classes, top=2).gamma == -1.0
    assert math.isnan(sibling_gamma({}, classes).gamma)


def test_top_lists_from_matrix_break_ties_by_page() -> None:
    scores = np.array([[1.0, 0.2, 0.5, 0.2], [0.2, 1.0, 0.0, 0.1], [0.5, 0.0, 1.0, 0.0], [0.2, 0.1, 0.0, 1.0]])
    lists = top_lists_from_matrix(scores, top=2)
    assert lists[0] == [(2, 0.5), (1, 0.2)]
    assert lists[2] == [(0, 0.5)]


def test_text_quality_is_the_mean_cosine_of_the_first_t() -> None:
    texts = {
        "a": "linkage similarity pagerank graph crawl", "b": "linkage similarity pagerank graph",
        "c": "cooking recipes pasta sauce", "d": "cooking recipes pasta tomato graph",
    }
    from linksim.analysis.texts import tfidf_matrix

    keys = list(texts)
    matrix = tfidf_matrix([texts[k] for k in keys])
    cos = (matrix @ matrix.T).toarray()
    lists = {"a": [("b", 0.9), ("c", 0.1)], "c": [("d", 0.5)], "missing": [("a", 1.0)]}
    quality = text_quality(lists, texts, max_t=2, matrix=matrix, keys=keys)
    assert quality.pages == 2 and quality.lists_short == 1
    assert quality.delta[1] == pytest.approx((cos[0, 1] + cos[2, 3]) / 2, rel=1e-6)
    assert quality.delta[2] == pytest.approx(((cos[0, 1] + cos[0, 2]) / 2 + cos[2, 3]) / 2, rel=1e-6)
    assert cos[0, 1] > cos[0, 2]
