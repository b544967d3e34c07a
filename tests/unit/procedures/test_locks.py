"""procedures/locks.py: one writer at a time."""

from __future__ import annotations

import os

import pytest

from linksim.procedures.locks import LockHeld, acquire


def test_a_second_writer_is_refused_naming_the_first(fake, recording) -> None:
    runner = recording(fake.lock_answers(free=False))
    with pytest.raises(LockHeld, match=f"holds the lock 'similar:simrank': pid {os.getpid()}"):
        acquire(runner, "similar:simrank")
    assert not runner.queries("DELETE l")  # refused: nothing of the holder's is touched
