"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def shared_data() -> Path:
    """The ``../shared/data`` directory; tests needing it skip when it is absent — except in CI
    (``CI=true``), which runs with ``../shared`` beside the clone: there a missing folder fails,
    so the data tests can never silently not run."""
    if not SHARED_DATA.is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("../shared/data is not present beside the project, and CI needs it")
        pytest.skip("../shared/data is not present beside the project")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    """Never write into the user's real cache or runs directory from a test."""
    monkeypatch.setenv("UPRANK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("UPRANK_RUNS_DIR", str(tmp_path_factory.mktemp("runs")))
    os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def dask_client():
    """A real ``distributed.LocalCluster``: 2 worker processes, 1 thread each, for the
    tests of the Dask paths; shut down at the end of the session."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="2GiB") as cluster, \
            distributed.Client(cluster) as client:
        yield client
