"""The step, invocation and chain editors are not on show when the window opens: their tabs are
there from the first paint, and the editors themselves are made once it is painted, or at once
when their tab is chosen first, each with the workspace's sections read."""

from __future__ import annotations

import pytest

from studio.core.app_settings import AppSettings
from studio.ui.main_window import MainWindow

WAIT_MS = 20_000  # a bound on waiting, not a speed check
TITLES = ["Pre-LLM", "Sample", "Source", "Step", "Invocation", "Chains"]


@pytest.fixture
def window(qtbot, sample_workspace, tmp_path, monkeypatch):
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    monkeypatch.setattr(win.bridge, "warm_up", lambda: None)
    qtbot.addWidget(win)
    assert win.open_workspace(sample_workspace)
    yield win
    win.undo_stack.setClean()
    win.close()


def tab_titles(window: MainWindow) -> list[str]:
    return [window.editors.tabText(i) for i in range(window.editors.count())]


def test_the_tabs_are_there_before_the_editors_and_the_editors_follow_the_paint(qtbot, window):
    assert tab_titles(window) == TITLES
    assert window._config_editors is None  # nothing painted yet
    window.show()
    qtbot.waitUntil(lambda: window._config_editors is not None, timeout=WAIT_MS)
    editors = window.config_editors
    pages = [window.editors.widget(i) for i in range(3, 6)]
    assert pages == [editors.step_editor, editors.invocation_editor, editors.chain_editor]
    assert tab_titles(window) == TITLES
    assert window.editors.currentWidget() is window.hook_editor
    assert editors.step_editor.source.currentText() == "lib/prepare.ts"


def test_choosing_a_tab_first_makes_the_editors_and_shows_that_one(window):
    window.editors.setCurrentIndex(TITLES.index("Chains"))
    editors = window._config_editors
    assert editors is not None
    assert window.editors.currentWidget() is editors.chain_editor
    assert tab_titles(window) == TITLES
    assert window.save_action.text() == "&Save Chains"
