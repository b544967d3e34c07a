"""Index updates against the real server: after a recrawl load, `linksim index` updates the stored
index of each method that has updates (the walking ones, extended Jaccard) instead of building it
again, and the updated index is the rebuilt one, array for array, bit for bit."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from linksim import store
from linksim.methods import METHODS
from linksim.procedures import QueryRunner
from linksim.procedures.indexes import obtain_index
from linksim.procedures.load import load


def arrays_of(path: Path) -> dict[str, np.ndarray]:
    meta = json.loads((path / "meta.json").read_text())
    return {name: np.load(path / f"{name}.npy") for name in meta["arrays"]}


UPDATED = [name for name, entry in METHODS.items() if entry.update is not None and entry.exact_update]


def test_the_methods_with_exact_updates_are_the_walking_ones_and_extended_jaccard() -> None:
    assert sorted(UPDATED) == ["ppsimrank", "psimrank", "simrank", "xjaccard"]
    assert [name for name, entry in METHODS.items() if entry.update is not None and not entry.exact_update] == \
        ["spectral"]


@pytest.mark.changes_the_crawl
def test_indexes_updated_after_recrawls_are_the_rebuilt_indexes(wikispeedia: QueryRunner, tmp_path: Path,
                                                                 caplog, monkeypatch, recrawl_file) -> None:
    """Each method with updates, one crawl (loaded once) recrawled twice; then a change too large
    for an update to pay: the index is built again."""
    from linksim.procedures import indexes

    root = tmp_path / "indexes"
    parameters = dict(n_fingerprints=6, length=6, seed=3)
    for method in UPDATED:
        built = obtain_index(wikispeedia, method, root, show_progress=False, **parameters)
        assert built.built and built.index.updatable
    for round_, share in enumerate((0.01, 0.02)):
        load([recrawl_file(wikispeedia, tmp_path / f"week{round_}.jsonl", share, round_)], wikispeedia,
             show_progress=False, recrawl=True)
        for method in UPDATED:
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="linksim.procedures.indexes"):
                updated = obtain_index(wikispeedia, method, root, show_progress=False, **parameters)
            assert updated.built and "updated the stored" in caplog.text, method
            meta = json.loads((updated.path / "meta.json").read_text())
            assert meta["updatedFrom"]["changedPages"] > 0 and "updateSeconds" in meta
            kept = arrays_of(updated.path)
            rebuilt = obtain_index(wikispeedia, method, tmp_path / f"rebuilt{round_}", show_progress=False,
                                   **parameters)
            fresh = arrays_of(rebuilt.path)
            assert sorted(kept) == sorted(fresh), method
            for name in fresh:
                np.testing.assert_array_equal(kept[name], fresh[name], err_msg=f"{method} {name}")
            # The updated index is the stored one a query of the graph as it is now finds.
            assert store.open_built(root, method, updated.index.parameters, rebuilt.index.graph_fingerprint)
    # A change more than an update pays for (here: any change at all) builds the index again.
    load([recrawl_file(wikispeedia, tmp_path / "week.jsonl", 0.01, 9)], wikispeedia, show_progress=False,
         recrawl=True)
    monkeypatch.setattr(indexes, "UPDATE_SHARE", 0.0001)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="linksim.procedures.indexes"):
        again = obtain_index(wikispeedia, "psimrank", root, show_progress=False, **parameters)
    assert again.built and "building the psimrank index again rather than updating it" in caplog.text
    assert "more than an update pays for" in caplog.text
    assert "updatedFrom" not in json.loads((again.path / "meta.json").read_text())
