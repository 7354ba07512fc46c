"""A run shown in the window has its record written once its result is on screen, not while the
window is busy showing it (the write would share Python's interpreter with the views); a run
whose result is not shown (one of a comparison) is written at once."""

from __future__ import annotations

import sqlite3

import pytest

from studio.core.app_settings import AppSettings
from studio.core.records import pending_writes
from studio.core.records.store import store_path
from studio.ui import run_control
from studio.ui.main_window import MainWindow
from tests.ui.test_records_view import run_ids

WAIT_MS = 20_000  # a bound on waiting, not a speed check


@pytest.fixture
def window(qtbot, sample_workspace, tmp_path, monkeypatch):
    # Long enough that only the window's release can let a held write go during the test.
    monkeypatch.setattr(pending_writes, "MAX_HOLD_S", 120.0)
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    assert win.open_workspace(sample_workspace)
    yield win
    win.undo_stack.setClean()
    win.close()


def stored_runs(workspace) -> list[str]:
    """The run ids in the database file, read beside the studio's own connection."""
    with sqlite3.connect(store_path(workspace)) as db:
        return [row[0] for row in db.execute("SELECT run_id FROM decisions")]


def test_the_record_of_a_shown_run_is_written_once_its_diff_is_shown(
    qtbot, window, sample_workspace
):
    window.sample_box.setCurrentText("support-ticket")
    seen: list[tuple[bool, list[str]]] = []

    def on_finished(outcome) -> None:
        seen.append((window.results.diff_ready, stored_runs(sample_workspace)))

    window.run_finished.connect(on_finished)
    with qtbot.waitSignal(window.run_finished, timeout=WAIT_MS) as finished:
        window.run_selected()
    outcome = finished.args[0]
    assert outcome.status == "ok", outcome.turn_error
    assert seen == [(False, [])]  # on show, its diff still to come: not written yet
    qtbot.waitUntil(lambda: window.results.diff_ready, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: stored_runs(sample_workspace) == [outcome.run_id], timeout=WAIT_MS)
    qtbot.waitUntil(lambda: run_ids(window.records) == [outcome.run_id], timeout=WAIT_MS)


def test_a_run_started_as_another_is_shown_keeps_its_record_until_its_own_diff_is_shown(
    qtbot, window, sample_workspace, monkeypatch
):
    # The first run's records go on the next turn of the event loop once its diff is shown:
    # surely before the second run, started right then, ends.
    monkeypatch.setattr(run_control, "RECORDS_AFTER_SHOWN_MS", 0)
    window.sample_box.setCurrentText("support-ticket")
    shown: list[tuple[str, list[str]]] = []

    def on_diff_shown() -> None:
        outcome = window.results.run.outcome
        assert outcome is not None
        shown.append((outcome.run_id, stored_runs(sample_workspace)))
        if len(shown) == 1:
            window.run_selected()

    window.results.run.diff_shown.connect(on_diff_shown)
    window.run_selected()
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=WAIT_MS)
    (first, stored_at_first), (second, stored_at_second) = shown
    assert first != second
    assert stored_at_first == []
    assert second not in stored_at_second
    qtbot.waitUntil(
        lambda: sorted(stored_runs(sample_workspace)) == sorted([first, second]),
        timeout=WAIT_MS,
    )
