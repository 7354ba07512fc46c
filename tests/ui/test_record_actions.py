"""From a record back to work, over a real record store: the dates the records list shows, the
times the compare view shows, copying JSON, comparing two runs' requests, rerunning a record and
opening a record's input as a new sample."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLineEdit, QStackedWidget, QToolButton
from pytestqt.qtbot import QtBot

from studio.core.records.store import RecordStore
from studio.ui.engine_bridge import EngineBridge
from studio.ui.records_cells import TIME
from studio.ui.records_view import RecordsView
from studio.ui.result_json_tree import JsonTreeView
from studio.ui.run_comparison import RunComparison
from studio.ui.run_view import TAB_RESULT
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

TODAY_AT = datetime.combine(datetime.now().date(), datetime.min.time()).replace(hour=9, minute=7)
OLD_DAY = datetime(2025, 3, 4, 10, 5, 6)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RecordStore]:
    with RecordStore.open(tmp_path) as opened:
        opened.add(make_outcome("today", TODAY_AT.timestamp() + 1.5))
        opened.add(make_outcome("yesterday", (TODAY_AT - timedelta(days=1)).timestamp()))
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
    qtbot: QtBot, bridge: EngineBridge, store: RecordStore
) -> None:
    view = open_view(qtbot, bridge, store, 3)
    try:
        compare = compare_pair(qtbot, view, "today", "long-ago")
        tree = compare.tree
        items = {tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(3)}
        started = items["started_at"]
        assert started.text(1) == TODAY_AT.strftime("%Y-%m-%d 09:07:01.500")
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


def test_a_day_label_is_made_once_per_day() -> None:
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
