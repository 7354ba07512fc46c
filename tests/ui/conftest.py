"""GUI tests drive real widgets offscreen, and a dialog nobody answers fails the test."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest


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
def window(qtbot, tmp_path):
    """The studio's window, shown, its settings in the test's folder; closed without questions
    after the test. A test file may give a window of its own instead."""
    from studio.core.app_settings import AppSettings
    from studio.ui.main_window import MainWindow

    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    yield win
    win.undo_stack.setClean()
    win.close()
