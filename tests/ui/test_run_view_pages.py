"""A run's tabs other than the Diff tab's message are made when first needed: the window shows
them the same way, whether they were made before or after it was first painted."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from studio.core.app_settings import AppSettings
from studio.ui.diff_cache import DiffCache
from studio.ui.engine_bridge import EngineBridge
from studio.ui.main_window import MainWindow
from studio.ui.run_view import TAB_DECISION, TAB_ERROR, TAB_RESULT, RunView
from tests.support.workspaces import copy_bundled_workspace


def test_a_tab_first_looked_at_says_what_the_diff_tab_says(qtbot: QtBot) -> None:
    bridge = EngineBridge()
    try:
        view = RunView(DiffCache(bridge), bridge)
        qtbot.addWidget(view)
        view.clear("Nothing to show here.")
        view.tabs.setCurrentIndex(TAB_DECISION)
        assert view.decision.empty.text() == "Nothing to show here."
        view.tabs.setCurrentIndex(TAB_ERROR)
        assert view.error_view.empty.text() == "Nothing to show here."
        view.tabs.setCurrentIndex(TAB_RESULT)
        assert view.result_note.text() == "Nothing to show here."
        assert view.result_view.model.value == {}
    finally:
        bridge.shutdown()


def test_the_window_makes_the_run_tabs_once_it_is_painted(qtbot: QtBot, tmp_path: Path) -> None:
    window = MainWindow(AppSettings())
    qtbot.addWidget(window)
    window.open_workspace(copy_bundled_workspace(tmp_path / "ws"))
    run = window.results.run
    assert "decision" not in run.__dict__  # not made for the first paint
    window.show()
    qtbot.waitUntil(lambda: "decision" in run.__dict__, timeout=10_000)
    assert run.tabs.currentIndex() == 0
    assert run.decision.empty.text() == "No run yet."
    window.undo_stack.setClean()
