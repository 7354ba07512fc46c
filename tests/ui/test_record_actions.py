"""From a record back to work, over a real record store: the dates the records list shows, the
times the compare view shows, copying JSON, comparing two runs' requests, rerunning a record and
opening a record's input as a new sample."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, QLocale, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLineEdit, QMessageBox, QStackedWidget, QTableView, QToolButton
from pytestqt.qtbot import QtBot

from studio.core.app_settings import AppSettings
from studio.core.records.store import RecordStore
from studio.core.run_outcome import RunOutcome
from studio.ui.engine_bridge import EngineBridge
from studio.ui.main_window import MainWindow
from studio.ui.record_sample_dialog import RecordSampleDialog
from studio.ui.records_cells import TIME
from studio.ui.records_view import RecordsView
from studio.ui.result_json_tree import JsonTreeView
from studio.ui.run_comparison import RunComparison
from studio.ui.run_view import TAB_PROVIDER, TAB_RESULT
from tests.ui.test_records_view import (
    REQUEST,
    close_loop,
    column_texts,
    make_outcome,
    run_ids,
    select,
    wait_detail,
    wait_rows,
)

OLD_DAY = datetime(2025, 3, 4, 10, 5, 6)


@pytest.fixture
def today_at() -> datetime:
    # Today as the test runs, not as the module was imported: a suite may run past midnight.
    return datetime.combine(datetime.now().date(), datetime.min.time()).replace(hour=9, minute=7)


@pytest.fixture
def store(tmp_path: Path, today_at: datetime) -> Iterator[RecordStore]:
    with RecordStore.open(tmp_path) as opened:
        opened.add(make_outcome("today", today_at.timestamp() + 1.5))
        opened.add(make_outcome("yesterday", (today_at - timedelta(days=1)).timestamp()))
        opened.add(make_outcome("long-ago", OLD_DAY.timestamp(), loop="reviewer"))
        yield opened


@pytest.fixture
def bridge(store: RecordStore) -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()
    close_loop(engine)


@pytest.fixture
def locale() -> Iterator[None]:
    """The default locale, as the test left it, is restored after it."""
    before = QLocale()
    yield
    QLocale.setDefault(before)


def open_view(qtbot: QtBot, bridge: EngineBridge, store: RecordStore, count: int) -> RecordsView:
    view = RecordsView(bridge)
    qtbot.addWidget(view)
    view.resize(1300, 420)
    view.show()
    view.set_store(store)
    wait_rows(qtbot, view, count)
    return view


# --- dates ------------------------------------------------------------------------------------


def test_the_time_column_shows_the_day_and_the_time(
    qtbot: QtBot, bridge: EngineBridge, store: RecordStore, locale: None
) -> None:
    QLocale.setDefault(QLocale(QLocale.Language.C))
    view = open_view(qtbot, bridge, store, 3)
    try:
        assert run_ids(view) == ["today", "yesterday", "long-ago"]
        assert column_texts(view, TIME) == [
            "Today 09:07:01",
            "Yesterday 09:07:00",
            "2025-03-04 10:05:06",  # the plain C locale: ISO dates
        ]
        filter_box = view.findChild(QLineEdit, "recordsFilter")
        filter_box.setText("today")
        wait_rows(qtbot, view, 1)
        assert run_ids(view) == ["today"]
        filter_box.setText("2025-03-04")
        wait_rows(qtbot, view, 1)
        assert run_ids(view) == ["long-ago"]
    finally:
        view.set_store(None)


def test_the_date_is_the_locales_short_date(
    qtbot: QtBot, bridge: EngineBridge, store: RecordStore, locale: None
) -> None:
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    view = open_view(qtbot, bridge, store, 3)
    try:
        assert column_texts(view, TIME)[2] == "04.03.25 10:05:06"
        filter_box = view.findChild(QLineEdit, "recordsFilter")
        filter_box.setText("04.03.25")
        wait_rows(qtbot, view, 1)
        assert run_ids(view) == ["long-ago"]
    finally:
        view.set_store(None)
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    view = open_view(qtbot, bridge, store, 3)
    try:
        assert column_texts(view, TIME)[2] == "3/4/25 10:05:06"
    finally:
        view.set_store(None)


def test_compare_shows_readable_start_times(
    qtbot: QtBot, bridge: EngineBridge, store: RecordStore, today_at: datetime
) -> None:
    view = open_view(qtbot, bridge, store, 3)
    try:
        compare = compare_pair(qtbot, view, "today", "long-ago")
        tree = compare.tree
        items = {tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(3)}
        started = items["started_at"]
        assert started.text(1) == today_at.strftime("%Y-%m-%d 09:07:01.500")
        assert started.text(2) == "2025-03-04 10:05:06.000"
        epoch = str(int(OLD_DAY.timestamp()))
        texts = [
            tree.topLevelItem(i).text(c)
            for i in range(tree.topLevelItemCount())
            for c in range(1, 3)
        ]
        assert not any(epoch in text for text in texts)
        assert "2025-03-04 10:05:06" in compare.digest.text()
    finally:
        view.set_store(None)


def test_a_day_is_today_yesterday_or_its_date() -> None:
    from studio.ui.records_cells import RunDays

    days = RunDays(datetime(2026, 12, 1).date(), QLocale(QLocale.Language.C))
    assert days.day(2026, 12, 1) == "Today"
    assert days.day(2026, 11, 30) == "Yesterday"
    assert days.day(2026, 11, 29) == "2026-11-29"
    assert days.cell(time.mktime((2026, 12, 1, 14, 3, 27, 0, 0, -1))) == "Today 14:03:27"


# --- copy as JSON -----------------------------------------------------------------------------


def test_copy_as_json_takes_the_whole_record_or_the_selected_node(
    qtbot: QtBot, bridge: EngineBridge, store: RecordStore
) -> None:
    view = open_view(qtbot, bridge, store, 3)
    try:
        select(view, "today")
        detail = wait_detail(qtbot, view, "today")
        stored = detail.stored
        detail.tabs.setCurrentIndex(detail.stored_tab)
        clipboard = QGuiApplication.clipboard()
        clipboard.setText("")
        stored.tree.setFocus()
        qtbot.waitUntil(stored.tree.hasFocus)
        qtbot.keyClick(stored.tree, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
        copied = json.loads(clipboard.text())
        assert copied["run_id"] == "today"
        assert copied["sample"] == "support-ticket"
        assert clipboard.text().startswith('{\n  "run_id": "today"')  # indented by two

        assert stored.select_pointer("/hook")
        stored.copy_button.click()
        hook = json.loads(clipboard.text())
        assert hook == copied["hook"]
        assert (hook["source"], hook["function"]) == ("lib/policy.py", "transform")

        table = view.findChild(QTableView, "recordsTable")
        table.setFocus()
        qtbot.waitUntil(table.hasFocus)
        clipboard.setText("")
        qtbot.keyClick(table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: clipboard.text().startswith("{"))
        whole = json.loads(clipboard.text())  # the run as exported: its record and payload
        assert whole["run_id"] == "today"
        assert whole["payload"]["input"] == REQUEST

        run = detail.run
        run.tabs.setCurrentIndex(TAB_RESULT)
        result = run.result_view
        result.tree.setFocus()
        result.tree.clearSelection()
        qtbot.keyClick(result.tree, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
        assert json.loads(clipboard.text()) == {**REQUEST, "tools": [{"name": "fs_read"}]}
    finally:
        view.set_store(None)


def test_copied_json_keeps_every_character_and_is_never_cut(qtbot: QtBot) -> None:
    tree = JsonTreeView()
    qtbot.addWidget(tree)
    long_text = "é" * 300_000  # longer than the detail pane shows
    tree.set_value({"text": long_text, "emoji": "🔧", "n": 1.5})
    text = tree.copy_json()
    assert QGuiApplication.clipboard().text() == text
    assert "🔧" in text and "\\u" not in text
    assert json.loads(text) == {"text": long_text, "emoji": "🔧", "n": 1.5}


# --- compare two runs' requests ---------------------------------------------------------------


def compare_pair(qtbot: QtBot, view: RecordsView, *ids: str) -> RunComparison:
    select(view, *ids)
    qtbot.mouseClick(view.findChild(QToolButton, "recordsCompareButton"), Qt.MouseButton.LeftButton)
    compare = view.findChild(RunComparison, "recordCompare")
    pages = view.findChild(QStackedWidget, "recordPages")
    qtbot.waitUntil(lambda: pages.currentWidget() is compare and compare.run_ids == ids)
    qtbot.waitUntil(lambda: compare.ready)
    return compare


def test_compare_diffs_the_two_runs_inputs_and_results(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    asked = {**REQUEST, "messages": [{"role": "user", "content": "Where is parcel 77?"}]}
    edited = {**asked, "tools": []}
    (tmp_path / "pair").mkdir()
    with RecordStore.open(tmp_path / "pair") as store:
        store.add(make_outcome("first", 1_780_000_100.0))
        store.add(
            make_outcome("second", 1_780_000_000.0).model_copy(
                update={"input": asked, "result": edited}
            )
        )
        view = open_view(qtbot, bridge, store, 2)
        try:
            compare = compare_pair(qtbot, view, "first", "second")
            assert compare.tabs.isTabVisible(compare.input_tab)
            inputs, results = compare.input_diff, compare.result_diff
            assert inputs.problem is None and results.problem is None
            qtbot.waitUntil(lambda: inputs.diff.ready and results.diff.ready)
            assert inputs.diff.sides.headers == ("Input of A", "Input of B")
            rows = inputs.diff.row_texts()
            assert any(
                "Why was order 4821" in left and "parcel 77" in right for left, right in rows
            )
            assert "tools" not in inputs.diff.summary  # both were given the same tools
            assert "tools −1" in results.diff.summary  # B's hook kept none of A's one tool

            compare.tabs.setCurrentIndex(compare.input_tab)
            inputs.diff.tree.setFocus()
            qtbot.waitUntil(lambda: bool(inputs.diff.right_text.toPlainText()))
        finally:
            view.set_store(None)


def test_compare_says_plainly_when_a_payload_is_gone_or_a_run_has_no_result(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    (tmp_path / "gone").mkdir()
    with RecordStore.open(tmp_path / "gone") as store:
        store.add(make_outcome("kept", 1_780_000_300.0))
        store.add(make_outcome("cleared", 1_780_000_200.0))
        store.add(make_outcome("failed", 1_780_000_100.0, status="turn_error"))
        store.clear_payloads(["cleared"])
        view = open_view(qtbot, bridge, store, 3)
        try:
            compare = compare_pair(qtbot, view, "kept", "cleared")
            for pair in (compare.input_diff, compare.result_diff):
                assert pair.problem is not None
                assert pair.problem.startswith("The payload of run B was cleared")
            assert "inputs cannot be compared" in compare.input_diff.problem
            assert compare.differing_fields()  # the decision fields still are

            compare = compare_pair(qtbot, view, "kept", "failed")
            assert compare.input_diff.problem is None  # both inputs are kept
            assert compare.result_diff.problem == (
                "Run B ended in a turn error: it has no result to compare."
            )
        finally:
            view.set_store(None)


# --- rerun a record and open its input as a sample, in the window -------------------------------

RUN_TIMEOUT_MS = 20_000


@pytest.fixture
def window(
    qtbot: QtBot, sample_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[MainWindow]:
    # Choosing All streams asks before it replaces the other rows: yes.
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    assert win.open_workspace(sample_workspace)
    yield win
    # A test's edit of the hook is left unsaved: the window is closed without it.
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    win.undo_stack.setClean()
    assert win.close()


def run_and_wait(qtbot: QtBot, window: MainWindow, start: Any = None) -> RunOutcome:
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        (start or window.run_selected)()
    return finished.args[0]


def focus_record(qtbot: QtBot, window: MainWindow, run_id: str) -> QTableView:
    """Select ``run_id`` in the records table and give the table the focus."""
    view = window.records
    table = view.findChild(QTableView, "recordsTable")
    qtbot.waitUntil(lambda: run_id in run_ids(view), timeout=RUN_TIMEOUT_MS)
    # Not selectRow: it reads the keyboard's modifiers, which a Ctrl+R just sent may leave set.
    flags = QItemSelectionModel.SelectionFlag
    table.selectionModel().setCurrentIndex(
        table.model().index(run_ids(view).index(run_id), 0), flags.ClearAndSelect | flags.Rows
    )
    window.activateWindow()
    table.setFocus()
    qtbot.waitUntil(table.hasFocus)
    return table


def rewrite_question(workspace: Path, text: str) -> None:
    path = workspace / "samples" / "support-ticket.json"
    sample = json.loads(path.read_text(encoding="utf-8"))
    sample["request"]["messages"][0]["content"] = text
    path.write_text(json.dumps(sample, indent=2), encoding="utf-8")


def test_rerun_makes_the_run_again_on_its_input_and_loop_with_the_hook_being_edited(
    qtbot: QtBot, window: MainWindow, sample_workspace: Path
) -> None:
    window.sample_box.setCurrentText("support-ticket")
    window.loop_box.setCurrentText("reviewer")
    first = run_and_wait(qtbot, window)
    assert first.status == "not_applied"  # the saved hook does not target reviewer
    rewrite_question(sample_workspace, "A question asked after the run")
    window.loop_box.setCurrentText("main")  # the rerun keeps the record's loop, not the box's
    model = window.hook_editor.targets_model
    assert model.setData(
        model.index(0, 0), "All streams (including future loops)", Qt.ItemDataRole.EditRole
    )

    table = focus_record(qtbot, window, first.run_id)
    again = run_and_wait(
        qtbot,
        window,
        lambda: qtbot.keyClick(table, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier),
    )
    assert again.run_id != first.run_id
    assert again.status == "ok"  # the hook as edited now targets every loop
    assert (again.sample, again.loop) == ("support-ticket", "reviewer")
    assert again.input == first.input  # what the stored run was given, not the file as now
    assert window.results.run.outcome.run_id == again.run_id  # shown in the run view
    qtbot.waitUntil(lambda: again.run_id in run_ids(window.records), timeout=RUN_TIMEOUT_MS)


def test_rerun_of_a_cleared_run_says_so_and_offers_the_sample_as_it_is_now(
    qtbot: QtBot, window: MainWindow, sample_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.sample_box.setCurrentText("support-ticket")
    first = run_and_wait(qtbot, window)
    assert window.store is not None
    window.store.clear_payloads([first.run_id])
    window.records.refresh()
    rewrite_question(sample_workspace, "The sample as it is now")
    asked: list[str] = []

    def answer(_parent: Any, _title: str, text: str, *_: Any) -> QMessageBox.StandardButton:
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", answer)
    table = focus_record(qtbot, window, first.run_id)
    again = run_and_wait(qtbot, window, window.records.record_actions.rerun_action.trigger)
    assert len(asked) == 1
    assert "the payload of this run was cleared: the input it was given is gone" in asked[0]
    assert "Run the sample support-ticket as it is now instead" in asked[0]
    assert again.input["messages"][0]["content"] == "The sample as it is now"
    assert again.loop == first.loop

    (sample_workspace / "samples" / "support-ticket.json").unlink()
    # The window sees the sample go (and moves on from it) before the table gets the focus.
    qtbot.waitUntil(lambda: window.sample_box.findText("support-ticket") < 0)
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, text, *_: told.append(text))
    table = focus_record(qtbot, window, first.run_id)
    qtbot.keyClick(table, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: bool(told), timeout=RUN_TIMEOUT_MS)
    assert told[0].startswith("This run cannot be rerun: the payload of this run was cleared")
    assert "the sample support-ticket no longer exists" in told[0]
    assert not window.bridge.running


def test_open_a_records_input_as_a_new_sample(
    qtbot: QtBot, window: MainWindow, sample_workspace: Path
) -> None:
    window.sample_box.setCurrentText("support-ticket")
    window.loop_box.setCurrentText("researcher")
    first = run_and_wait(qtbot, window)
    original = json.loads(
        (sample_workspace / "samples" / "support-ticket.json").read_text(encoding="utf-8")
    )
    rewrite_question(sample_workspace, "Changed after the run")

    table = focus_record(qtbot, window, first.run_id)
    actions = window.records.record_actions
    qtbot.keyClick(
        table,
        Qt.Key.Key_N,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: actions.dialog is not None, timeout=RUN_TIMEOUT_MS)
    dialog = actions.dialog
    assert isinstance(dialog, RecordSampleDialog)
    stamp = datetime.fromtimestamp(first.started_at).strftime("%Y%m%d-%H%M%S")
    assert dialog.name.text() == f"support-ticket-{stamp}"
    dialog.name.setText("support-ticket")  # taken: refused before anything is written
    assert not dialog.create_button.isEnabled()
    assert "exists" in dialog.status.text()
    dialog.name.setText("from-the-record")
    with qtbot.waitSignal(window.records.sample_created, timeout=RUN_TIMEOUT_MS):
        qtbot.keyClick(dialog.name, Qt.Key.Key_Return)

    written = json.loads(
        (sample_workspace / "samples" / "from-the-record.json").read_text(encoding="utf-8")
    )
    assert written["request"] == original["request"]  # the run's input, not the file as now
    assert written["request"] == first.input
    assert written["loop"] == original["loop"]
    assert written["description"].startswith(f"The input of run {first.run_id}")
    assert window.sample_box.currentText() == "from-the-record"  # and it is selected
    assert window.editors.currentWidget() is window.sample_editor
    assert not list((sample_workspace / "samples").glob(".*"))  # no temporary file left


def test_the_provider_request_copies_its_whole_body(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    tool = {"name": "fs_read", "description": "Read a file", "input_schema": {"type": "object"}}
    sent = {
        "system": "You are a support agent.",
        "messages": [{"role": "user", "content": "Why was order 4821 refunded twice? " * 400}],
        "tools": [tool],
        "options": {"maxTokens": 1024},
    }
    (tmp_path / "provider").mkdir()
    with RecordStore.open(tmp_path / "provider") as store:
        store.add(
            make_outcome("sent", 1_780_000_000.0).model_copy(
                update={
                    "input": {**sent, "tools": [tool, {**tool, "name": "shell"}]},
                    "result": sent,
                }
            )
        )
        view = open_view(qtbot, bridge, store, 1)
        try:
            select(view, "sent")
            detail = wait_detail(qtbot, view, "sent")
            provider = detail.run.provider
            provider.set_provider("anthropic")
            with qtbot.waitSignal(provider.preview_shown, timeout=RUN_TIMEOUT_MS):
                detail.tabs.setCurrentIndex(TAB_PROVIDER)
            qtbot.waitUntil(provider.copy_action.isEnabled)
            clipboard = QGuiApplication.clipboard()
            clipboard.setText("")
            provider.findChild(QToolButton, "copyProviderBody").click()
            body = json.loads(clipboard.text())
            # The Anthropic Messages body of the hook's result: its system prompt, its one tool
            # and the long question whole.
            assert body["system"] == [{"type": "text", "text": "You are a support agent."}]
            assert [t["name"] for t in body["tools"]] == ["fs_read"]
            assert body["messages"][0]["content"][0]["text"] == sent["messages"][0]["content"]
        finally:
            view.set_store(None)
