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
