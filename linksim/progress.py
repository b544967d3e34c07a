"""Progress of long jobs: a bar with rate and ETA on a terminal or in a notebook (tqdm.auto picks
the widget there), log lines otherwise."""

from __future__ import annotations

import logging
import sys
import time

from tqdm.auto import tqdm

log = logging.getLogger("linksim")


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (whose stderr is no terminal, but shows a widget bar)."""
    shell = sys.modules.get("IPython")
    try:
        return shell is not None and type(shell.get_ipython()).__name__ == "ZMQInteractiveShell"
    except Exception:  # noqa: BLE001 - an IPython without a shell: not a notebook
        return False


class Progress:
    """Count work done towards ``total``; show it as a bar (terminal) or a log line every
    ``interval`` seconds (pipes, CI logs). Use as a context manager.
    """

    def __init__(self, total: int, description: str, unit: str = "it", interval: float = 10.0,
                 enabled: bool = True) -> None:
        self.total = total
        self.description = description
        self.unit = unit
        self.interval = interval
        self.done = 0
        self._started = time.monotonic()
        self._last_log = self._started
        self._bar = None
        self._enabled = enabled
        if enabled and (sys.stderr.isatty() or _in_notebook()):
            self._bar = tqdm(total=total, desc=description, unit=unit, unit_scale=True,
                             dynamic_ncols=True, file=sys.stderr)

    def update(self, amount: int) -> None:
        self.done += amount
        if self._bar is not None:
            self._bar.update(amount)
            return
        now = time.monotonic()
        if self._enabled and now - self._last_log >= self.interval:
            self._last_log = now
            elapsed = now - self._started
            rate = self.done / elapsed if elapsed > 0 else 0.0
            eta = (self.total - self.done) / rate if rate > 0 else float("nan")
            log.info("%s: %s of %s %s (%.0f%%), %s %s/s, ETA %.0f s", self.description,
                     f"{self.done:,}", f"{self.total:,}", self.unit,
                     100.0 * self.done / max(self.total, 1), _rate(rate), self.unit, eta)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _rate(rate: float) -> str:
    """A rate with the digits that say something: 0.14 fingerprints/s, not 0."""
    return f"{rate:,.0f}" if rate >= 10 else f"{rate:.2g}"
