"""Shared test set-up: hypothesis profiles and the slow-sweep switch.

``--runslow`` runs every slow sweep in full; without it, tests marked ``slow`` are
skipped and the oracle sweeps check a deterministic slice (every ``oracle_stride``-th
case, with an offset that varies per test so the slices together cover the space).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, max_examples=200, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run the slow exhaustive sweeps in full")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with --runslow (CI runs the sliced versions)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def oracle_stride(request) -> int:
    """1 with --runslow (check everything), else the stride of the CI slice."""
    return 1 if request.config.getoption("--runslow") else 5
