"""Fixtures every tier uses: no test may leave a process running, and a writable copy of the
bundled workspace. The Hypothesis profile is loaded here, before any test module is imported."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hypothesis_profiles import load_profile
from tests.support.processes import live_descendants
from tests.support.workspaces import copy_bundled_workspace

load_profile()


@pytest.fixture(autouse=True)
def no_worker_left_behind() -> Iterator[None]:
    before = live_descendants(os.getpid())
    yield
    assert live_descendants(os.getpid()) <= before, "a test left a process running"


@pytest.fixture
def sample_workspace(tmp_path: Path) -> Path:
    """A writable copy of the bundled workspace."""
    return copy_bundled_workspace(tmp_path / "workspace")
