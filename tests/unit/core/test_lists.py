"""Lists by page code and which of them changed (linksim.ranking.lists), and their store
(linksim.store.lists): what a SIMILAR_TO update rewrites."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.ranking.lists import CodedLists, changed_lists
from linksim.store.lists import lists_path, open_lists, save_lists


def _as_dict(lists: CodedLists) -> dict[int, list[tuple[int, float]]]:
    return {int(code): list(zip(lists.targets[lists.indptr[i]:lists.indptr[i + 1]].tolist(),
                                lists.scores[lists.indptr[i]:lists.indptr[i + 1]].tolist()))
            for i, code in enumerate(lists.sources)}


def _reference(old: CodedLists, new: CodedLists, present) -> tuple[list[int], int]:
    """The obvious version: list by list, by dictionaries."""
    before, after, present = _as_dict(old), _as_dict(new), set(int(code) for code in present)
    changed = sorted(code for code in set(before) | set(after)
                     if code in present and before.get(code, []) != after.get(code, []))
    kept = sum(1 for code, pairs in before.items() if code in present for target, _ in pairs if target in present)
    return changed, kept


def _random_lists(rng, codes, pages, top_k=4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    source, target, score = [], [], []
    for page in pages:
        length = int(rng.integers(0, top_k + 1))
        others = rng.choice(len(codes), size=length, replace=False)
        values = np.sort(rng.choice([0.125, 0.25, 0.5, 0.75], size=length))[::-1]
        source += [page] * length
        target += others.tolist()
        score += values.tolist()
    return np.array(source, dtype=np.int64), np.array(target, dtype=np.int64), np.array(score)


def test_lists_are_kept_by_code_in_rank_order():
    codes = np.array([50, 10, 30], dtype=np.uint64)
    lists = CodedLists.of(codes, np.array([0, 0, 2]), np.array([2, 1, 0]), np.array([0.5, 0.25, 0.75]))
    assert lists.sources.tolist() == [30, 50]
    assert _as_dict(lists) == {30: [(50, 0.75)], 50: [(30, 0.5), (10, 0.25)]}


def test_the_same_lists_change_nothing_and_keep_every_relationship():
    rng = np.random.default_rng(1)
    codes = rng.permutation(1000).astype(np.uint64) * 7 + 3
    lists = CodedLists.of(codes, *_random_lists(rng, codes, range(30)))
    changed, kept = changed_lists(lists, lists, codes)
    assert changed.tolist() == [] and kept == len(lists) > 0


def test_each_kind_of_change_is_found():
    codes = np.arange(10, dtype=np.uint64) + 100
    old = CodedLists.of(codes, np.array([0, 0, 1, 2, 3, 4]), np.array([1, 2, 0, 0, 5, 6]),
                        np.array([0.5, 0.25, 0.5, 0.5, 0.5, 0.5]))
    # page 0: a score moved; 1: a target replaced; 2: same; 3: no list now; 4: its page deleted;
    # 5: a new list; page 6 deleted (page 4's list held it).
    new = CodedLists.of(codes, np.array([0, 0, 1, 2, 5]), np.array([1, 2, 3, 0, 0]),
                        np.array([0.5, 0.375, 0.5, 0.5, 0.5]))
    present = np.delete(codes, [4, 6])
    changed, kept = changed_lists(old, new, present)
    assert changed.tolist() == [100, 101, 103, 105]
    assert kept == 5  # page 4's relationship went with the page


@pytest.mark.parametrize("seed", range(20))
def test_changes_are_those_of_the_obvious_comparison(seed):
    rng = np.random.default_rng(seed)
    codes = np.unique(rng.integers(0, 2**63, size=60, dtype=np.uint64))
    old = CodedLists.of(codes, *_random_lists(rng, codes, rng.choice(60, size=40, replace=False)))
    new = CodedLists.of(codes, *_random_lists(rng, codes, rng.choice(60, size=40, replace=False)))
    # Some lists copied over unchanged, so that both answers occur.
    keep = rng.random(len(new.sources)) < 0.5
    mixed = {**_as_dict(new), **{code: pairs for code, pairs in _as_dict(old).items()
                                 if code in set(new.sources[keep].tolist())}}
    where = {int(code): page for page, code in enumerate(codes)}
    source = [where[code] for code, pairs in mixed.items() for _ in pairs]
    target = [where[t] for pairs in mixed.values() for t, _ in pairs]
    score = [s for pairs in mixed.values() for _, s in pairs]
    new = CodedLists.of(codes, np.array(source, dtype=np.int64), np.array(target, dtype=np.int64), np.array(score))
    present = codes[rng.random(60) < 0.9]
    changed, kept = changed_lists(old, new, present)
    assert (changed.tolist(), kept) == _reference(old, new, present)


def test_kept_lists_come_back_as_saved(tmp_path):
    rng = np.random.default_rng(3)
    codes = np.unique(rng.integers(0, 2**63, size=100, dtype=np.uint64))
    lists = CodedLists.of(codes, *_random_lists(rng, codes, range(50)))
    save_lists(tmp_path, "psimrank", lists, {"runs": [4, 9], "relationships": len(lists)})
    again, description = open_lists(tmp_path, "psimrank")
    assert description == {"runs": [4, 9], "relationships": len(lists)}
    assert _as_dict(again) == _as_dict(lists)
    assert open_lists(tmp_path, "simrank") is None


def test_an_unreadable_file_is_no_lists(tmp_path, caplog):
    path = lists_path(tmp_path, "psimrank")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"PK\x03\x04 not a zip file")
    assert open_lists(tmp_path, "psimrank") is None
    assert "cannot be read" in caplog.text
