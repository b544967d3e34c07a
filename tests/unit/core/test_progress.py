"""Progress lines: what a long job says about itself in a log."""

from __future__ import annotations

import logging

from linksim.progress import Progress


def test_a_slow_rate_is_shown_with_its_digits_and_a_fast_one_whole(caplog) -> None:
    caplog.set_level(logging.INFO, logger="linksim")
    with Progress(100, "simrank fingerprints", "fingerprints", interval=0.0) as progress:
        progress._started -= 50.0  # 7 fingerprints in about 50 s
        progress.update(7)
    with Progress(10**6, "top related pages", "pages", interval=0.0) as progress:
        progress._started -= 2.0
        progress.update(5_000)
    slow, fast = (record.getMessage() for record in caplog.records)
    assert "7 of 100 fingerprints (7%), 0.14 fingerprints/s, ETA 6" in slow  # was "0 fingerprints/s"
    assert "5,000 of 1,000,000 pages (0%), 2,500 pages/s, ETA 39" in fast


def test_the_tree_layout_of_many_pages_shows_its_progress_unless_linksim_is_quiet(caplog, monkeypatch) -> None:
    import numpy as np

    from linksim.fingerprints import index as fingerprints
    from linksim.methods import fingerprint_index
    from linksim.graph import LinkGraph

    rng = np.random.default_rng(1)
    built = fingerprint_index(LinkGraph.from_edges(rng.integers(0, 50, 200), rng.integers(0, 50, 200), 50), "simrank", 8,
                        seed=1)
    monkeypatch.setattr(fingerprints, "LAYOUT_PROGRESS", 8 * 50)  # this layout counts as a large one
    monkeypatch.setattr(Progress, "__init__", _logging_every_update(Progress.__init__))
    caplog.set_level(logging.INFO, logger="linksim")
    fingerprints.TreeLayout.build(built.parent, built.label)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("tree layout")]
    assert lines[-1].startswith("tree layout: 8 of 8 fingerprints (100%)")
    caplog.clear()
    caplog.set_level(logging.WARNING, logger="linksim")  # linksim -q
    fingerprints.TreeLayout.build(built.parent, built.label)
    monkeypatch.setattr(fingerprints, "LAYOUT_PROGRESS", 8 * 50 + 1)  # one page-fingerprint short: none
    caplog.set_level(logging.INFO, logger="linksim")
    fingerprints.TreeLayout.build(built.parent, built.label)
    assert not caplog.records


def _logging_every_update(init):
    def every_update(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.interval = 0.0

    return every_update


def test_the_usable_cores_are_the_affinity_mask_not_the_machine() -> None:
    import os

    from linksim.cores import usable_cores

    mask = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(mask)})  # one core, as taskset -c 0 gives
        assert usable_cores() == 1
    finally:
        os.sched_setaffinity(0, mask)
    assert usable_cores() == len(mask)
