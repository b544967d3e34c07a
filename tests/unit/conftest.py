"""The unit tests start once numba's kernels are cached, on a new install (``kernels`` in
tests/conftest.py): the first of them (the report's) compiled them beside the warm-up, 70 s of a
core that the integration tests beside them lacked."""

import pytest


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels(kernels) -> None:
    kernels()


@pytest.fixture
def ctrl_c(tmp_path):
    """``ctrl_c(script, *args, what)``: run ``python -c script started *args`` in a process group of
    its own, wait for it to touch ``started`` (a worker began), send the group a terminal's SIGINT;
    its exit code and stderr. ``what`` names the work in the messages of a run that never began or
    never stopped."""
    import os
    import signal
    import subprocess
    import sys
    import time

    def run(script: str, *args: str, what: str) -> tuple[int, str]:
        started = tmp_path / "started"
        child = subprocess.Popen([sys.executable, "-c", script, str(started), *args], stderr=subprocess.PIPE,
                                 text=True, cwd=tmp_path, start_new_session=True)
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        assert started.exists(), child.stderr.read() if child.poll() is not None else f"no {what} started in 60 s"
        time.sleep(0.3)
        os.killpg(child.pid, signal.SIGINT)
        try:
            _, stderr = child.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            raise AssertionError(f"the {what} went on 30 s after Ctrl-C")
        return child.returncode, stderr

    return run
