"""The unit tests start once numba's kernels are cached, on a new install (``kernels`` in
tests/conftest.py): the first of them (the report's) compiled them beside the warm-up, 70 s of a
core that the integration tests beside them lacked."""

import pytest


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels(kernels) -> None:
    kernels()
