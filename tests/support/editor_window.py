"""The real window opened on a workspace with one of its hookstudio.json editors in front, for
the tests of those editors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget

from studio.core.app_settings import AppSettings
from studio.ui.main_window import MainWindow


@contextmanager
def editor_window(
    workspace: Path,
    settings_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    size: tuple[int, int],
    editor: Callable[[MainWindow], QWidget],
) -> Iterator[MainWindow]:
    # Closed here rather than by qtbot, which closes its widgets before this fixture's teardown
    # marks the edits left unsaved as saved.
    win = MainWindow(AppSettings(), settings_path)
    # Runtimes start when a run needs them; a warm-up still starting when a short test closes
    # the window is not what these tests are about.
    monkeypatch.setattr(win.bridge, "warm_up", lambda: None)
    win.resize(*size)
    win.show()
    assert win.open_workspace(workspace)
    win.editors.setCurrentWidget(editor(win))
    yield win
    for stack in (win.undo_stack, *win.config_editors.stacks):
        stack.setClean()
    assert win.close()
