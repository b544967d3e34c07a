"""The cores this process may run on, what its thread pools and forked workers default to, and how
those workers start."""

from __future__ import annotations

import os
import signal


def usable_cores() -> int:
    """The cores of this process's affinity mask (a container's or taskset's limit, which
    ``os.cpu_count`` does not see), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def leave_interrupts() -> None:
    """A forked worker's initializer: SIGINT ignored. Ctrl-C reaches the whole process group, and
    the parent alone stops (leaving the pool terminates the workers), rather than each worker
    printing a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
