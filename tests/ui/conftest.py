"""GUI tests drive real widgets offscreen; a test may not leave a worker process behind."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine.conftest import live_descendants
from tests.support.paths import BUNDLED_WORKSPACE as BUNDLED


@pytest.fixture(autouse=True)
def no_worker_left_behind() -> Iterator[None]:
    before = live_descendants(os.getpid())
    yield
    assert live_descendants(os.getpid()) <= before, "a test left a process running"


@pytest.fixture(autouse=True)
def no_modal_dialog(monkeypatch: pytest.MonkeyPatch) -> None:
    """A message box nobody answers would hang an offscreen test: fail it instead. Tests that
    expect a dialog replace these with their own answer."""
    from PySide6.QtWidgets import QMessageBox

    def unexpected(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"unexpected dialog: {args[2] if len(args) > 2 else args}")

    for name in ("question", "warning", "information", "critical"):
        monkeypatch.setattr(QMessageBox, name, unexpected)


@pytest.fixture
def sample_workspace(tmp_path: Path) -> Path:
    """A writable copy of the bundled workspace."""
    target = tmp_path / "workspace"
    shutil.copytree(BUNDLED, target, ignore=shutil.ignore_patterns(".hookstudio", "__pycache__"))
    return target
