"""The records view over a real record store: the table, filters, detail, compare, export,
clearing payloads and reloading; every read and write goes through the engine bridge."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, QPersistentModelIndex, QPoint, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QStackedWidget,
    QTableView,
    QToolButton,
)
from pytestqt.qtbot import QtBot

from studio.core.records.store import RecordStore, RecordSummary
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import Frame, HookRef, turn_error
from studio.core.workspace.folder import Workspace
from studio.ui import records_model as records_model_module
from studio.ui import records_view as records_view_module
from studio.ui.engine_bridge import EngineBridge
from studio.ui.record_detail import RecordDetail
from studio.ui.records_cells import DURATION, RUN_ID_ROLE, TIME, RunDays
from studio.ui.records_model import FETCH_STEP, RecordsModel
from studio.ui.records_rows import (
    Loaded,
    RowFilter,
    Selection,
    arrange,
    haystack,
    haystacks,
)
from studio.ui.records_view import RecordsView
from studio.ui.run_comparison import RunComparison
from studio.ui.run_view import TAB_DIFF, TAB_ERROR, TAB_OUTPUT, TAB_RESULT

T0 = 1_780_000_000.0
REQUEST = {
    "system": "You are a support agent.",
    "messages": [{"role": "user", "content": "Why was order 4821 refunded twice?"}],
    "tools": [{"name": "fs_read"}, {"name": "shell"}],
}


def make_outcome(
    run_id: str,
    started_at: float,
    *,
    status: str = "ok",
    contract: str = "pre_llm",
    function: str = "transform",
    source: str = "lib/policy.py",
    sample: str = "support-ticket",
    loop: str = "main",
    duration_ms: float = 10.0,
    stdout: str = "",
) -> RunOutcome:
    hook = HookRef(source=source, function=function, contract=contract)  # type: ignore[arg-type]
    error = None
    result: Any = {**REQUEST, "tools": [{"name": "fs_read"}]}
    if status == "turn_error":
        result = None
        error = turn_error(
            "exception",
            f"`{function}` raised KeyError: 'message' at {source}:19",
            hook=hook,
            loop=loop,
            duration_ms=duration_ms / 2,
            traceback=[
                Frame(file="lib/helpers.py", line=7, function="pick", code="return r[key]"),
                Frame(file=source, line=19, function=function, code='request["message"]'),
            ],
            stderr_tail="Traceback (most recent call last): ...",
        )
    return RunOutcome(
        run_id=run_id,
        started_at=started_at,
        contract=contract,  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        sample=sample,
        loop=loop,
        hook=hook,
        duration_ms=duration_ms,
        input=REQUEST,
        result=result,
        decision_record={"contract": contract, "loop": loop, "applied": status != "not_applied"},
        turn_error=error,
        stdout=stdout,
    )


# Added out of time order on purpose: the view shows newest first whatever the insertion order.
OUTCOMES = (
    make_outcome("run-a", T0 + 10, duration_ms=9.0, stdout="kept 2 tools\n"),
    make_outcome(
        "run-b",
        T0 + 30,
        status="turn_error",
        source="lib/failing.py",
        function="typo_key",
        duration_ms=100.0,
    ),
    make_outcome("run-c", T0 + 20, status="not_applied", loop="reviewer", duration_ms=25.5),
    make_outcome(
        "run-d",
        T0 + 5,
        contract="step",
        source="lib/prepare.py",
        function="prepare_step",
        sample="step-escalated",
        duration_ms=300.25,
    ),
)
NEWEST_FIRST = ["run-b", "run-c", "run-a", "run-d"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RecordStore]:
    with RecordStore.open(tmp_path) as opened:
        for outcome in OUTCOMES:
            opened.add(outcome)
        yield opened


@pytest.fixture
def bridge(store: RecordStore) -> Iterator[EngineBridge]:
    # Depends on the store so that the bridge's thread is stopped before the store closes.
    engine = EngineBridge()
    yield engine
    engine.shutdown()
    close_loop(engine)


def close_loop(engine: EngineBridge) -> None:
    """EngineBridge.shutdown stops its event loop but does not close it; an unclosed loop is a
    ResourceWarning (an error under -W error) when it is collected."""
    loop = engine._loop
    if not loop.is_running() and not loop.is_closed():
        loop.close()


@pytest.fixture
def view(qtbot: QtBot, bridge: EngineBridge, store: RecordStore) -> Iterator[RecordsView]:
    widget = RecordsView(bridge)
    qtbot.addWidget(widget)
    widget.resize(1300, 420)
    widget.show()
    widget.set_store(store)
    wait_rows(qtbot, widget, len(OUTCOMES))
    yield widget
    widget.set_store(None)  # before the bridge and the store go


# --- helpers ----------------------------------------------------------------------------------


def table_of(view: RecordsView) -> QTableView:
    table = view.findChild(QTableView, "recordsTable")
    assert table is not None
    return table


def detail_of(view: RecordsView) -> RecordDetail:
    detail = view.findChild(RecordDetail, "recordDetail")
    assert detail is not None
    return detail


def run_ids(view: RecordsView) -> list[str]:
    model = table_of(view).model()
    return [model.index(row, 0).data(RUN_ID_ROLE) for row in range(model.rowCount())]


def column_texts(view: RecordsView, column: int) -> list[str]:
    model = table_of(view).model()
    return [model.index(row, column).data() for row in range(model.rowCount())]


def wait_rows(qtbot: QtBot, view: RecordsView, count: int) -> None:
    qtbot.waitUntil(lambda: table_of(view).model().rowCount() == count)


def select(view: RecordsView, *ids: str) -> None:
    table = table_of(view)
    model = table.model()
    selection = table.selectionModel()
    selection.clearSelection()
    flags = QItemSelectionModel.SelectionFlag
    for run_id in ids:
        row = run_ids(view).index(run_id)
        selection.setCurrentIndex(model.index(row, 0), flags.Select | flags.Rows)


def wait_detail(qtbot: QtBot, view: RecordsView, run_id: str) -> RecordDetail:
    detail = detail_of(view)
    qtbot.waitUntil(lambda: detail.run_id == run_id)
    return detail


# --- the table ----------------------------------------------------------------------------------


def test_rows_are_newest_first_with_every_column(view: RecordsView) -> None:
    assert run_ids(view) == NEWEST_FIRST
    table = table_of(view)
    header = table.horizontalHeader()
    assert header.sortIndicatorSection() == TIME
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    model = table.model()
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers == ["Time", "Contract", "Hook", "Loop", "Sample", "Outcome", "Duration"]
    first = [model.index(0, c).data() for c in range(model.columnCount())]
    assert first[1:] == [
        "pre-LLM hook",
        "lib/failing.py:typo_key",
        "main",
        "support-ticket",
        "turn error: exception",
        "100.0 ms",
    ]
    assert view.findChild(QLabel, "recordsCount").text() == "4 runs"


def test_sorting_by_duration_and_time_is_numeric(qtbot: QtBot, view: RecordsView) -> None:
    table = table_of(view)
    header = table.horizontalHeader()
    # A click on the header sorts ascending; as text, "100.0" would come before "25.5" and "9.0".
    x = header.sectionViewportPosition(DURATION) + header.sectionSize(DURATION) // 2
    qtbot.mouseClick(
        header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2)
    )
    assert header.sortIndicatorSection() == DURATION
    assert header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
    assert column_texts(view, DURATION) == ["9.0 ms", "25.5 ms", "100.0 ms", "300.2 ms"]
    table.sortByColumn(DURATION, Qt.SortOrder.DescendingOrder)
    assert run_ids(view) == ["run-d", "run-b", "run-c", "run-a"]
    table.sortByColumn(TIME, Qt.SortOrder.AscendingOrder)
    assert run_ids(view) == list(reversed(NEWEST_FIRST))


def test_sorting_keeps_the_selection(view: RecordsView) -> None:
    select(view, "run-c")
    table_of(view).sortByColumn(DURATION, Qt.SortOrder.AscendingOrder)
    rows = table_of(view).selectionModel().selectedRows()
    assert [r.data(RUN_ID_ROLE) for r in rows] == ["run-c"]
    assert table_of(view).currentIndex().data(RUN_ID_ROLE) == "run-c"


def test_filter_by_text_contract_and_outcome(qtbot: QtBot, view: RecordsView) -> None:
    view.focus_filter()
    field = view.findChild(QLineEdit, "recordsFilter")
    qtbot.waitUntil(field.hasFocus)
    qtbot.keyClicks(field, "TYPO")
    assert run_ids(view) == ["run-b"]
    field.clear()
    qtbot.keyClicks(field, "support main")  # every word must occur
    assert run_ids(view) == ["run-b", "run-a"]
    field.clear()
    assert run_ids(view) == NEWEST_FIRST

    outcome = view.findChild(QComboBox, "recordsOutcome")
    outcome.setCurrentIndex(outcome.findData("turn_error"))
    assert run_ids(view) == ["run-b"]
    outcome.setCurrentIndex(outcome.findData("turn_error/exception"))
    assert run_ids(view) == ["run-b"]
    outcome.setCurrentIndex(outcome.findData("ok"))
    assert run_ids(view) == ["run-a", "run-d"]
    contract = view.findChild(QComboBox, "recordsContract")
    contract.setCurrentIndex(contract.findData("step"))
    assert run_ids(view) == ["run-d"]
    assert view.findChild(QLabel, "recordsCount").text() == "1 of 4 runs shown"
    outcome.setCurrentIndex(outcome.findData(None))
    contract.setCurrentIndex(contract.findData(None))
    assert run_ids(view) == NEWEST_FIRST


# --- detail -----------------------------------------------------------------------------------


def test_detail_shows_the_turn_error_and_a_frame_opens_the_source(
    qtbot: QtBot, view: RecordsView
) -> None:
    table = table_of(view)
    table.setFocus()
    select(view, "run-b")
    qtbot.keyClick(table, Qt.Key.Key_Return)  # Enter opens the detail
    detail = wait_detail(qtbot, view, "run-b")

    stored = detail.stored.model
    fields = [stored.index(i, 0).data() for i in range(stored.rowCount())]
    assert fields[:4] == ["run_id", "started_at", "contract", "status"]
    assert "turn_error" in fields and "inspection" in fields
    assert stored.value["status"] == "turn_error"
    assert detail.tabs.tabText(detail.stored_tab) == "Stored record"

    assert detail.tabs.currentIndex() == TAB_ERROR  # a failed run opens on its turn error
    assert detail.tabs.tabText(TAB_ERROR) == "Turn error ●"
    error_view = detail.run.error_view
    assert error_view.kind.text() == "exception"
    assert error_view.reason.text().startswith("callback: ")
    assert error_view.message.text() == "`typo_key` raised KeyError: 'message' at lib/failing.py:19"
    assert error_view.where.text().startswith("lib/failing.py:typo_key · loop main")
    frames = error_view.frames
    assert [frames.item(i).text().splitlines()[0] for i in range(frames.count())] == [
        "lib/helpers.py, line 7, in pick",
        "lib/failing.py, line 19, in typo_key",
    ]
    assert "Traceback" in error_view.stderr.toPlainText()

    item = frames.item(1)
    frames.scrollToItem(item)
    with qtbot.waitSignal(view.open_source) as blocker:
        qtbot.mouseClick(
            frames.viewport(), Qt.MouseButton.LeftButton, pos=frames.visualItemRect(item).center()
        )
    assert blocker.args == ["lib/failing.py", 19]

    frames.setFocus()
    frames.setCurrentItem(frames.item(0))
    with qtbot.waitSignal(view.open_source) as blocker:
        qtbot.keyClick(frames, Qt.Key.Key_Return)
    assert blocker.args == ["lib/helpers.py", 7]


def test_detail_of_a_successful_run_shows_it_as_the_results_panel_does(
    qtbot: QtBot, view: RecordsView
) -> None:
    select(view, "run-a")
    detail = wait_detail(qtbot, view, "run-a")
    run = detail.run
    assert run.error_view.error is None  # no turn error
    assert detail.tabs.tabText(TAB_ERROR) == "Turn error"
    assert detail.tabs.currentIndex() == TAB_DIFF
    assert detail.payload_state() == "kept"
    assert not detail.findChild(QLabel, "payloadCleared").isVisibleTo(detail)
    qtbot.waitUntil(lambda: run.diff_ready)
    assert run.diff_view.summary == "tools −1"
    assert run.show_value("Input")
    assert run.result_view.model.value == OUTCOMES[0].input
    assert run.show_value("Result")
    assert run.result_view.model.value == OUTCOMES[0].result
    assert run.output.stdout_text == "kept 2 tools\n"
    assert run.decision.record_keys() == list(OUTCOMES[0].decision_record)


def test_a_step_record_shows_its_amendment(qtbot: QtBot, view: RecordsView) -> None:
    select(view, "run-d")
    detail = wait_detail(qtbot, view, "run-d")
    assert detail.run.diff_stack.currentWidget() is detail.run.amendment_diff
    assert detail.run.amendment_diff.amendment.model.value == OUTCOMES[3].result
    assert "step preparation" in detail.findChild(QLabel, "recordHeader").text()


# --- compare ------------------------------------------------------------------------------------


def test_compare_two_records_highlights_the_differences(qtbot: QtBot, view: RecordsView) -> None:
    button = view.findChild(QToolButton, "recordsCompareButton")
    select(view, "run-a")
    assert not button.isEnabled()
    select(view, "run-a", "run-c")
    assert button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    compare = view.findChild(RunComparison, "recordCompare")
    pages = view.findChild(QStackedWidget, "recordPages")
    qtbot.waitUntil(lambda: pages.currentWidget() is compare)

    assert compare.run_ids == ("run-c", "run-a")  # in the table's order
    assert [c.status.text() for c in compare.columns] == ["– not applied", "✓ ok"]
    qtbot.waitUntil(lambda: compare.ready)
    assert compare.columns[1].summary.text() == "tools −1"
    differing = compare.differing_fields()
    for path in ("run_id", "started_at", "status", "loop", "duration_ms", "inspection.applied"):
        assert path in differing
    for path in ("contract", "sample", "hook.source", "inspection.contract"):
        assert path not in differing
    tree = compare.tree
    items = {
        tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
    }
    assert items["loop"].text(1) == "reviewer" and items["loop"].text(2) == "main"
    assert items["loop"].background(1).color().alpha() > 0  # highlighted
    assert items["sample"].background(1).style() == Qt.BrushStyle.NoBrush

    compare.only_differences.setChecked(True)
    assert items["sample"].isHidden() and not items["loop"].isHidden()

    compare.columns[1].button.click()  # show this run: its detail
    assert pages.currentWidget() is detail_of(view)
    wait_detail(qtbot, view, "run-a")
    assert table_of(view).currentIndex().data(RUN_ID_ROLE) == "run-a"

    select(view, "run-a", "run-c")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: pages.currentWidget() is compare)
    select(view, "run-a")  # one run selected again: back to its detail
    assert pages.currentWidget() is detail_of(view)


# --- export and clear ---------------------------------------------------------------------------


def test_export_writes_the_selection_as_jsonl(
    qtbot: QtBot, view: RecordsView, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "exported.jsonl"
    asked: list[str] = []

    def save_name(_parent: Any, _title: str, default: str, _filter: str) -> tuple[str, str]:
        asked.append(default)
        return str(target), "JSON Lines (*.jsonl)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_name))
    table = table_of(view)
    select(view, "run-d", "run-b")
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    message = view.findChild(QLabel, "recordsMessage")
    qtbot.waitUntil(lambda: message.text().startswith("Exported"))
    assert Path(asked[0]).name == "records.jsonl"
    assert message.text() == f"Exported 2 runs to {target}"
    lines = target.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["run_id"] for r in records] == ["run-b", "run-d"]  # the table's order
    assert records[0]["turn_error"]["kind"] == "exception"
    assert records[0]["payload"]["input"] == REQUEST
    assert not list(tmp_path.glob(".exported.jsonl*"))  # no temporary file left


def test_clear_payloads_keeps_the_rows_and_says_cleared(
    qtbot: QtBot, view: RecordsView, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Yes]
    questions: list[str] = []

    def question(_parent: Any, _title: str, text: str, *_args: Any) -> Any:
        questions.append(text)
        return answers.pop(0)

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    table = table_of(view)
    select(view, "run-b")
    detail = wait_detail(qtbot, view, "run-b")
    assert detail.payload_state() == "kept"
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_Delete)  # cancelled
    assert store.payload_count() == 4
    qtbot.keyClick(table, Qt.Key.Key_Delete)
    assert len(questions) == 2 and "1 selected run" in questions[1]
    qtbot.waitUntil(lambda: detail.payload_state() == "cleared")
    assert store.payload_count() == 3
    assert run_ids(view) == NEWEST_FIRST  # the decision rows stay
    assert detail.tabs.tabText(TAB_OUTPUT) == "Output (cleared)"
    assert detail.tabs.tabText(TAB_RESULT) == "Result (cleared)"
    assert "payload cleared" in detail.findChild(QLabel, "recordHeader").text()
    cleared = detail.findChild(QLabel, "payloadCleared")
    assert cleared.isVisibleTo(detail) and cleared.text().startswith("Payload cleared")
    assert detail.run.result_note.text().startswith("Payload cleared")
    # The turn error is still there, without the content that was cleared.
    error_view = detail.run.error_view
    assert error_view.frames.count() == 2
    assert "cleared with the payload" in error_view.message.text()
    assert error_view.stderr.toPlainText() == ""
    assert table.currentIndex().data(RUN_ID_ROLE) == "run-b"


def test_clear_all_payloads(
    qtbot: QtBot, view: RecordsView, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        QMessageBox, "question", staticmethod(lambda *_: QMessageBox.StandardButton.Yes)
    )
    button = view.findChild(QToolButton, "recordsClearButton")
    clear_all = next(a for a in button.menu().actions() if a.text() == "Clear All Payloads…")
    clear_all.trigger()
    qtbot.waitUntil(lambda: store.payload_count() == 0)
    message = view.findChild(QLabel, "recordsMessage")
    qtbot.waitUntil(lambda: message.text() == "Cleared 4 payloads")
    select(view, "run-a")
    detail = wait_detail(qtbot, view, "run-a")
    qtbot.waitUntil(lambda: detail.payload_state() == "cleared")
    assert run_ids(view) == NEWEST_FIRST


# --- reloading -----------------------------------------------------------------------------------


def test_refresh_shows_a_new_record_on_top_and_keeps_the_selection(
    qtbot: QtBot, view: RecordsView, store: RecordStore
) -> None:
    select(view, "run-c", "run-a")
    store.add(make_outcome("run-new", T0 + 100, sample="fresh"))
    view.refresh()
    wait_rows(qtbot, view, 5)
    assert run_ids(view)[0] == "run-new"
    selected = table_of(view).selectionModel().selectedRows()
    assert sorted(r.data(RUN_ID_ROLE) for r in selected) == ["run-a", "run-c"]
    assert table_of(view).currentIndex().data(RUN_ID_ROLE) == "run-a"


def test_refresh_keeps_the_scroll_position(
    qtbot: QtBot, view: RecordsView, store: RecordStore
) -> None:
    for i in range(120):
        store.add(make_outcome(f"bulk-{i:03d}", T0 + 200 + i))
    view.refresh()
    wait_rows(qtbot, view, 124)
    table = table_of(view)
    qtbot.waitUntil(lambda: table.verticalScrollBar().maximum() > 0)
    table.scrollTo(table.model().index(60, 0), table.ScrollHint.PositionAtTop)
    top_before = table.indexAt(table.viewport().rect().topLeft()).data(RUN_ID_ROLE)
    assert top_before != run_ids(view)[0]
    store.add(make_outcome("run-newest", T0 + 1000))
    view.refresh()
    wait_rows(qtbot, view, 125)
    assert run_ids(view)[0] == "run-newest"
    assert table.indexAt(table.viewport().rect().topLeft()).data(RUN_ID_ROLE) == top_before

    table.scrollToTop()  # at the top, the newest run shows as it arrives
    store.add(make_outcome("run-latest", T0 + 2000))
    view.refresh()
    wait_rows(qtbot, view, 126)
    assert table.indexAt(table.viewport().rect().topLeft()).data(RUN_ID_ROLE) == "run-latest"


def test_without_a_store_the_view_is_empty(qtbot: QtBot, view: RecordsView) -> None:
    view.set_store(None)
    assert table_of(view).model().rowCount() == 0
    assert not view.findChild(QToolButton, "recordsExportButton").isEnabled()
    view.refresh()  # nothing to reload, nothing happens
    assert detail_of(view).run_id is None


# --- large stores ---------------------------------------------------------------------------------


def summary(i: int, **fields: Any) -> RecordSummary:
    """Run ``i`` of a large store: newer with each ``i``, every seventh a turn error."""
    return RecordSummary(
        run_id=f"r{i:05d}",
        started_at=T0 + i,
        contract=("pre_llm", "step", "chain")[i % 3],
        status="turn_error" if i % 7 == 0 else "ok",
        error_kind="exception" if i % 7 == 0 else None,
        hook_source="lib/policy.py",
        hook_function=f"hook_{i % 40}",
        loop="main",
        sample=f"sample-{i % 50}",
        duration_ms=(i * 7919) % 10007 / 10,
        **fields,
    )


def selection_of(rows: list[RecordSummary]) -> Selection:
    return Selection(rows, None, TIME, True, RowFilter())


def test_the_model_hands_rows_to_the_table_in_pieces(qtbot: QtBot, qtmodeltester: Any) -> None:
    rows = [summary(i) for i in reversed(range(1000))]
    checked = RecordsModel()
    checked.set_selection(selection_of(rows))
    qtmodeltester.check(checked)  # Qt's model rules, fetching included
    checked.set_selection(selection_of(rows[500:]))

    model = RecordsModel()
    model.set_selection(selection_of(rows))
    assert model.rowCount() == FETCH_STEP and model.canFetchMore()
    assert model.index(0, 0).data(RUN_ID_ROLE) == "r00999"
    model.fetchMore()
    assert model.rowCount() == 2 * FETCH_STEP
    model.fetch_to(998)  # a run asked for by id (a selection to restore) is handed over
    assert model.rowCount() == 999
    model.fetchMore()
    assert model.rowCount() == 1000 and not model.canFetchMore()

    model = RecordsModel()
    model.set_selection(selection_of(rows))
    table = QTableView()
    qtbot.addWidget(table)
    table.setModel(model)
    table.resize(600, 300)
    table.show()
    assert model.rowCount() == FETCH_STEP
    table.scrollToBottom()  # the table asks for the next piece when it reaches the end
    qtbot.waitUntil(lambda: model.rowCount() == 2 * FETCH_STEP)


def test_every_run_arriving_behind_the_first_page_keeps_the_rows_shown(qtbot: QtBot) -> None:
    model = RecordsModel()
    rows = [summary(i) for i in reversed(range(1000))]
    model.set_selection(selection_of(rows[:FETCH_STEP]))
    kept = QPersistentModelIndex(model.index(3, 0))
    resets: list[int] = []
    model.modelAboutToBeReset.connect(lambda: resets.append(1))
    cleared = rows[3]._replace(has_payload=False)
    changed: list[int] = []
    model.dataChanged.connect(lambda first, last, *_: changed.extend((first.row(), last.row())))
    assert not model.set_selection(selection_of([*rows[:3], cleared, *rows[4:]]))
    assert resets == [] and kept.isValid() and kept.row() == 3
    assert changed == [3, 3]  # the cleared payload shows
    assert model.index(3, 0).data(Qt.ItemDataRole.FontRole).italic()
    assert model.rowCount() == FETCH_STEP and model.canFetchMore()
    assert model.set_selection(selection_of(rows[1:]))  # a different start: a reset
    assert resets == [1]


def test_a_filter_and_a_sort_keep_the_rows_the_rule_says(qtbot: QtBot) -> None:
    newest = [summary(i) for i in reversed(range(10_000))]
    loaded = Loaded(newest, haystacks(newest), frozenset({"exception"}))
    everything = arrange(loaded, None, RowFilter.of(), TIME, True)
    assert [r.run_id for r in everything.selection.rows] == [r.run_id for r in newest]

    wanted = RowFilter.of("SAMPLE-7", None, "turn_error")
    by_duration = arrange(loaded, None, wanted, DURATION, False)
    rows = by_duration.selection.rows
    # Words match without regard to case; the samples go up to sample-49.
    expected = [s for s in newest if s.sample == "sample-7" and s.status == "turn_error"]
    assert sorted(r.run_id for r in rows) == sorted(r.run_id for r in expected)
    durations = [r.duration_ms for r in rows]
    assert durations == sorted(durations)
    assert all(by_duration.selection.by_id[r.run_id] == i for i, r in enumerate(rows))

    # The same order is reused when only the filter changes.
    step = arrange(loaded, by_duration.ordered, RowFilter.of(None, "step", None), DURATION, False)
    assert step.ordered is by_duration.ordered
    assert all(r.contract == "step" for r in step.selection.rows)
    assert len(step.selection.rows) == sum(1 for s in newest if s.contract == "step")
    kinds = arrange(loaded, None, RowFilter.of("", None, "turn_error/exception"), TIME, False)
    assert [r.run_id for r in kinds.selection.rows][:2] == ["r00000", "r00007"]  # oldest first
    words = arrange(loaded, None, RowFilter.of("hook_3 sample-3", None, None), TIME, True)
    assert all("hook_3" in r.hook_function and "sample-3" in r.sample for r in words.selection.rows)
    assert len(words.selection.rows) == sum(
        1 for s in newest if "hook_3" in s.hook_function and "sample-3" in s.sample
    )


def test_the_haystacks_of_many_runs_find_the_words_of_each_run(qtbot: QtBot) -> None:
    today = date.today()
    noon = datetime.combine(today, datetime.min.time()).timestamp() + 12 * 3600
    starts = [noon, noon - 3 * 86400, noon - 400 * 86400, noon - 40 * 86400]
    runs = [
        summary(i)._replace(started_at=start, run_id=f"Run-{i}") for i, start in enumerate(starts)
    ]
    runs.append(runs[0]._replace(run_id="chain-run", hook_source=None, sample="Straße", loop=None))
    days = RunDays(today)
    built = haystacks(runs, days)
    for run, text in zip(runs, built, strict=True):
        reference = haystack(run, days)
        # A filter word holds no space: the same words are found when every piece of one
        # text is found in the other.
        assert all(piece in text for piece in reference.split()), run
        assert all(piece in reference for piece in text.split()), run
    assert "strasse" in built[-1] and "run-0" in built[0]


def test_a_word_typed_on_narrows_the_rows_already_kept(qtbot: QtBot) -> None:
    newest = [summary(i) for i in reversed(range(2_000))]
    loaded = Loaded(newest, haystacks(newest), frozenset({"exception"}))
    ordered = arrange(loaded, None, RowFilter.of(), DURATION, True).ordered
    typed = ["s", "sa", "sample-1", "sample-1 hook_", "sample-1 hook_2", "sample-1 hook_", "zzz"]
    previous = None
    for text in typed:
        fresh = arrange(loaded, ordered, RowFilter.of(text), DURATION, True).selection
        step = arrange(loaded, ordered, RowFilter.of(text), DURATION, True, 0, previous)
        assert step.selection.rows == fresh.rows, text
        assert step.selection.texts == fresh.texts, text
        previous = step.selection
    assert previous is not None and previous.rows == []  # "zzz" is in no run


def test_which_filters_narrow_another() -> None:
    def narrows(new: RowFilter, old: RowFilter) -> bool:
        return new.narrows(old)

    assert narrows(RowFilter.of("refund"), RowFilter.of("ref"))
    assert narrows(RowFilter.of("ref main"), RowFilter.of("main"))
    assert not narrows(RowFilter.of("ref"), RowFilter.of("refund"))  # a word taken back
    assert narrows(RowFilter.of("", "step"), RowFilter.of())
    assert not narrows(RowFilter.of(), RowFilter.of("", "step"))
    assert not narrows(RowFilter.of("", "chain"), RowFilter.of("", "step"))
    assert narrows(
        RowFilter.of("", None, "turn_error/timeout"), RowFilter.of("", None, "turn_error")
    )
    assert not narrows(RowFilter.of("", None, "turn_error"), RowFilter.of("", None, "turn_error/x"))
    assert not narrows(RowFilter.of("", None, "ok"), RowFilter.of("", None, "turn_error"))


@pytest.fixture
def jobs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every filter and sort of the view is a bridge job, as with a large store."""
    monkeypatch.setattr(RecordsView, "INLINE_ROWS", 0)


class Gate:
    """Holds a function called off the GUI thread until opened; notes the threads it ran on."""

    def __init__(self, function: Any) -> None:
        self.function = function
        self.opened = threading.Event()
        self.entered = threading.Event()
        self.threads: list[threading.Thread] = []

    def __call__(self, *args: Any) -> Any:
        self.threads.append(threading.current_thread())
        self.entered.set()
        self.opened.wait(30)
        return self.function(*args)


def test_a_filter_typed_fast_ends_with_the_rows_of_the_last_text(
    qtbot: QtBot, jobs_only: None, view: RecordsView
) -> None:
    field = view.findChild(QLineEdit, "recordsFilter")
    field.setFocus()
    qtbot.keyClicks(field, "lib/fail")
    qtbot.keyClick(field, Qt.Key.Key_Backspace)
    qtbot.keyClicks(field, "l typo")
    qtbot.waitUntil(lambda: not view.filter_pending)
    assert run_ids(view) == ["run-b"]
    assert view.findChild(QLabel, "recordsCount").text() == "1 of 4 runs shown"
    field.clear()
    qtbot.keyClicks(field, "reviewer")
    qtbot.waitUntil(lambda: not view.filter_pending)
    assert run_ids(view) == ["run-c"]


def test_the_gui_thread_never_waits_for_a_filter(
    qtbot: QtBot, jobs_only: None, view: RecordsView, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(records_view_module.arrange)
    monkeypatch.setattr(records_view_module, "arrange", gate)
    field = view.findChild(QLineEdit, "recordsFilter")
    qtbot.keyClicks(field, "typo")  # returns while the filter is held in a worker thread
    qtbot.waitUntil(gate.entered.is_set)
    assert view.filter_pending
    assert run_ids(view) == NEWEST_FIRST  # the rows stay as they were until the answer
    table_of(view).sortByColumn(DURATION, Qt.SortOrder.AscendingOrder)
    gate.opened.set()
    qtbot.waitUntil(lambda: not view.filter_pending)
    assert run_ids(view) == ["run-b"]
    assert gate.threads and threading.main_thread() not in gate.threads
    field.clear()
    qtbot.waitUntil(lambda: not view.filter_pending)
    assert run_ids(view) == ["run-a", "run-c", "run-b", "run-d"]  # by duration, ascending


def test_sorting_a_large_store_keeps_the_selection(
    qtbot: QtBot, jobs_only: None, view: RecordsView
) -> None:
    select(view, "run-c")
    table_of(view).sortByColumn(DURATION, Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(lambda: not view.filter_pending)
    assert run_ids(view) == ["run-d", "run-b", "run-c", "run-a"]
    rows = table_of(view).selectionModel().selectedRows()
    assert [r.data(RUN_ID_ROLE) for r in rows] == ["run-c"]
    assert table_of(view).currentIndex().data(RUN_ID_ROLE) == "run-c"


def test_select_all_takes_the_runs_not_yet_handed_to_the_table(
    qtbot: QtBot,
    bridge: EngineBridge,
    store: RecordStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(records_model_module, "FETCH_STEP", 2)
    target = tmp_path / "all.jsonl"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *_: (str(target), "")))
    for i in range(60):
        store.add(make_outcome(f"more-{i:02d}", T0 + 100 + i))
    widget = RecordsView(bridge)
    qtbot.addWidget(widget)
    widget.resize(1300, 300)
    widget.show()
    try:
        widget.set_store(store)
        count = widget.findChild(QLabel, "recordsCount")
        qtbot.waitUntil(lambda: count.text() == "64 runs")
        table = table_of(widget)
        # The table takes pieces until its window is full, not every run.
        assert table.model().rowCount() < 64 and table.model().canFetchMore()
        table.setFocus()
        qtbot.keyClick(table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        assert len(table.selectionModel().selectedRows()) == 64
        assert count.text() == "64 runs · 64 selected"
        qtbot.keyClick(table, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
        message = widget.findChild(QLabel, "recordsMessage")
        qtbot.waitUntil(lambda: message.text().startswith("Exported"))
        exported = [json.loads(line)["run_id"] for line in target.read_text().splitlines()]
        assert exported == [f"more-{i:02d}" for i in reversed(range(60))] + NEWEST_FIRST
    finally:
        widget.set_store(None)


def test_the_newest_runs_show_while_the_rest_are_read(
    qtbot: QtBot, bridge: EngineBridge, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(6):
        store.add(make_outcome(f"later-{i}", T0 + 100 + i))
    monkeypatch.setattr(records_view_module, "FIRST_PAGE", 3)
    gate = Gate(records_view_module.load_rows)
    monkeypatch.setattr(records_view_module, "load_rows", gate)
    widget = RecordsView(bridge)
    qtbot.addWidget(widget)
    widget.show()
    try:
        widget.set_store(store)
        qtbot.waitUntil(gate.entered.is_set)
        qtbot.waitUntil(lambda: table_of(widget).model().rowCount() == 3)
        assert run_ids(widget) == ["later-5", "later-4", "later-3"]
        assert widget.findChild(QLabel, "recordsCount").text() == "Loading 10 runs…"
        assert widget.filter_pending
        select(widget, "later-4")
        gate.opened.set()
        qtbot.waitUntil(lambda: widget.findChild(QLabel, "recordsCount").text() == "10 runs")
        model = table_of(widget).model()
        while model.canFetchMore():
            model.fetchMore()
        assert run_ids(widget) == [f"later-{i}" for i in reversed(range(6))] + NEWEST_FIRST
        selected = table_of(widget).selectionModel().selectedRows()
        assert [r.data(RUN_ID_ROLE) for r in selected] == ["later-4"]
    finally:
        widget.set_store(None)


# --- a real run -----------------------------------------------------------------------------------


def test_a_real_failing_run_shows_on_top_with_its_frame(
    qtbot: QtBot, sample_workspace: Path
) -> None:
    workspace = Workspace.open(sample_workspace)
    with RecordStore.open(sample_workspace) as store:
        engine = EngineBridge()
        try:
            widget = RecordsView(engine)
            qtbot.addWidget(widget)
            widget.show()
            widget.set_store(store, workspace)
            qtbot.waitUntil(
                lambda: (
                    detail_of(widget)
                    .findChild(QLabel, "detailPlaceholder")
                    .text()
                    .startswith("No runs yet")
                )
            )
            engine.open_workspace(workspace, store)
            job = engine.start_run("support-ticket", None, "lib/failing.py:typo_key")
            with qtbot.waitSignal(job.finished, timeout=30_000) as finished:
                pass
            outcome = finished.args[0]
            assert isinstance(outcome, RunOutcome) and outcome.status == "turn_error"
            widget.refresh()
            wait_rows(qtbot, widget, 1)
            assert run_ids(widget) == [outcome.run_id]
            select(widget, outcome.run_id)
            detail = wait_detail(qtbot, widget, outcome.run_id)
            frames = detail.run.error_view.frames
            assert frames.count() >= 1
            last = frames.item(frames.count() - 1)
            with qtbot.waitSignal(widget.open_source) as opened:
                qtbot.mouseClick(
                    frames.viewport(),
                    Qt.MouseButton.LeftButton,
                    pos=frames.visualItemRect(last).center(),
                )
            file, line = opened.args
            assert file == "lib/failing.py"
            assert (
                'request["message"]' in (sample_workspace / file).read_text().splitlines()[line - 1]
            )
            widget.set_store(None)
        finally:
            engine.shutdown()
            close_loop(engine)
