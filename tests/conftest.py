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

# pytest-qt waits 5 s for a signal or a condition unless told otherwise. Most waits here are on
# work that is milliseconds on an idle machine (a run, a diff made off the GUI thread, a
# deferred page) but can take longer than that on a shared, busy CI machine. A wait is never a
# speed check, only a bound on how long a failing test hangs: a test that checks a speed
# measures it, and a wait that must not be reached says its own timeout.
QT_WAIT_MS = 30_000


def _patient_qtbot() -> None:
    from pytestqt.qtbot import QtBot

    for name in (
        "waitActive",
        "waitExposed",
        "waitSignal",
        "waitSignals",
        "waitUntil",
        "waitCallback",
    ):
        defaults = getattr(QtBot, name).__kwdefaults__
        assert defaults is not None and "timeout" in defaults, name
        defaults["timeout"] = QT_WAIT_MS


_patient_qtbot()


@pytest.fixture(autouse=True)
def no_worker_left_behind() -> Iterator[None]:
    before = live_descendants(os.getpid())
    yield
    assert live_descendants(os.getpid()) <= before, "a test left a process running"


@pytest.fixture
def sample_workspace(tmp_path: Path) -> Path:
    """A writable copy of the bundled workspace."""
    return copy_bundled_workspace(tmp_path / "workspace")
