"""New sample from history…, driven offscreen as a user would, over real agent files of both
schema versions; and its place in the window."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from studio.core.app_settings import AppSettings
from studio.core.workspace.adf_workspace import AdfWorkspace
from studio.ui.engine_bridge import EngineBridge
from studio.ui.history_sample_dialog import (
    CONTENT,
    KIND,
    ROLE,
    SEQ,
    TIME,
    HistoryRowsModel,
    HistorySampleDialog,
)
from studio.ui.main_window import MainWindow
from tests.support.adf_files import AdfSpec, build_adf, table_dump

WAIT_MS = 10_000
PROMPT = "You are a support agent. Be brief."


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()
    loop = engine._loop
    if not loop.is_running() and not loop.is_closed():
        loop.close()


def open_dialog(qtbot, bridge, path: Path) -> HistorySampleDialog:
    dialog = HistorySampleDialog(AdfWorkspace.open_file(path), bridge)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.built is not None or dialog.problem != "", timeout=WAIT_MS)
    return dialog


def wait_built(qtbot, dialog: HistorySampleDialog, seqs: list[int]) -> None:
    """Until the sample of exactly these rows is built (a selection builds after a pause)."""
    qtbot.waitUntil(
        lambda: dialog.built is not None and [r.seq for r in dialog.built.rows] == seqs,
        timeout=WAIT_MS,
    )


@pytest.fixture(params=[28, 29])
def agent(request, tmp_path) -> Path:
    return build_adf(tmp_path / "support.adf", AdfSpec(schema=request.param))


def test_every_row_of_main_is_chosen_and_previewed_at_first(qtbot, bridge, agent):
    dialog = open_dialog(qtbot, bridge, agent)
    assert dialog.loop.currentText() == "main"
    model = dialog.model
    assert model.rowCount() == 4
    assert [model.index(r, SEQ).data() for r in range(4)] == ["S1", "S2", "S3", "S4"]
    assert model.index(1, ROLE).data() == "assistant"
    assert model.index(1, KIND).data() == "text + tool_use"
    assert model.index(1, CONTENT).data() == (
        'Let me read the order log. · fs_read({"path": "orders/4821.log"})'
    )
    assert model.index(2, CONTENT).data().startswith("→ refund issued 09:14")
    assert model.index(0, TIME).data() == "2025-11-28 08:53:20.000"
    assert [r.seq for r in dialog.selected_rows()] == [1, 2, 3, 4]
    sample = json.loads(dialog.sample.toPlainText())
    assert sample["request"]["system"] == "You are a support agent. Be brief; cite the order log."
    assert [m["seq"] for m in sample["request"]["messages"]] == [1, 2, 3, 4]
    assert "tools: changed:" in dialog.report.toPlainText()
    assert dialog.create_button.isEnabled()
    assert dialog.name.text() == "history-main"


def test_a_range_chosen_with_the_keyboard_is_built_and_created(qtbot, bridge, agent):
    dialog = open_dialog(qtbot, bridge, agent)
    created: list[str] = []
    dialog.sample_created.connect(created.append)
    dialog.table.setFocus()
    qtbot.keyClick(dialog.table, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(dialog.table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(dialog.table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    assert [r.seq for r in dialog.selected_rows()] == [1, 2, 3]
    assert not dialog.create_button.isEnabled()  # until the range is built
    wait_built(qtbot, dialog, [1, 2, 3])
    dialog.system.setFocus()
    dialog.system.selectAll()
    qtbot.keyClicks(dialog.system, PROMPT)
    qtbot.waitUntil(lambda: PROMPT in dialog.sample.toPlainText(), timeout=WAIT_MS)
    dialog.name.setFocus()
    dialog.name.selectAll()
    qtbot.keyClicks(dialog.name, "refund-question")
    qtbot.keyClick(dialog.name, Qt.Key.Key_Return)
    assert created == ["refund-question"]
    written = json.loads((dialog.samples / "refund-question.json").read_text())
    assert written["request"]["system"] == PROMPT
    assert [m["seq"] for m in written["request"]["messages"]] == [1, 2, 3]
    assert not dialog.isVisible()


def test_a_range_that_cuts_a_tool_call_is_shown_and_cannot_be_created(qtbot, bridge, agent):
    before = table_dump(agent)
    dialog = open_dialog(qtbot, bridge, agent)
    dialog.select_range(0, 1)
    wait_built(qtbot, dialog, [1, 2])
    assert not dialog.create_button.isEnabled()
    assert "Not a valid request at row S2: request.messages[1].content[1]: tool_use" in (
        dialog.status.text()
    )
    assert "never answered" in dialog.report.toPlainText()
    assert dialog.create_sample() is False
    assert not dialog.samples.exists() or list(dialog.samples.iterdir()) == []
    assert table_dump(agent) == before


def test_a_mouse_range_is_the_rows_between_the_clicks(qtbot, bridge, agent):
    dialog = open_dialog(qtbot, bridge, agent)
    view = dialog.table

    def click(row: int, modifier=Qt.KeyboardModifier.NoModifier) -> None:
        rect = view.visualRect(dialog.model.index(row, CONTENT))
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, modifier, rect.center())

    click(2)
    click(3, Qt.KeyboardModifier.ShiftModifier)
    assert [r.seq for r in dialog.selected_rows()] == [3, 4]
    wait_built(qtbot, dialog, [3, 4])
    assert "Not a valid request" in dialog.status.text()  # S3 answers a call it does not hold


def test_inner_loops_of_schema_29_are_offered(qtbot, bridge, tmp_path):
    dialog = open_dialog(qtbot, bridge, build_adf(tmp_path / "a.adf", AdfSpec(schema=29)))
    assert [dialog.loop.itemText(i) for i in range(dialog.loop.count())] == ["main", "researcher"]
    dialog.loop.setFocus()
    qtbot.keyClick(dialog.loop, Qt.Key.Key_Down)
    wait_built(qtbot, dialog, [5, 6])
    assert dialog.built.sample["loop"] == "researcher"
    assert dialog.name.text() == "history-researcher"
    assert [m["seq"] for m in dialog.built.sample["request"]["messages"]] == [5, 6]


def test_an_agent_without_history_says_so(qtbot, bridge, tmp_path):
    dialog = open_dialog(qtbot, bridge, build_adf(tmp_path / "a.adf", AdfSpec(history=False)))
    assert "no history" in dialog.status.text()
    assert not dialog.create_button.isEnabled()


def test_an_agent_file_that_became_unreadable_is_said_plainly(qtbot, bridge, tmp_path):
    path = build_adf(tmp_path / "support.adf")
    workspace = AdfWorkspace.open_file(path)
    path.write_bytes(b"this is no database, " * 400)
    dialog = HistorySampleDialog(workspace, bridge)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.problem != "", timeout=WAIT_MS)
    assert dialog.status.text().startswith("support.adf: is a damaged SQLite database")
    assert dialog.model.rowCount() == 0 and not dialog.create_button.isEnabled()


def test_a_read_that_ends_after_the_dialog_closed_touches_nothing(qtbot, bridge, agent):
    dialog = HistorySampleDialog(AdfWorkspace.open_file(agent), bridge)
    job = dialog._job
    assert job is not None
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    with qtbot.waitSignal(dialog.destroyed, timeout=WAIT_MS):
        dialog.close()
    qtbot.waitUntil(lambda: job.done, timeout=WAIT_MS)  # an error in its slot fails the test


def test_replacing_a_sample_asks_first(qtbot, bridge, agent, monkeypatch):
    answers: list[str] = []

    def answer_no(_parent, _title, text, *args):
        answers.append(text)
        return QMessageBox.StandardButton.No

    dialog = open_dialog(qtbot, bridge, agent)
    dialog.samples.mkdir(parents=True, exist_ok=True)
    existing = dialog.samples / "kept.json"
    existing.write_text('{"request": "mine"}\n')
    dialog.name.setText("kept")
    monkeypatch.setattr(QMessageBox, "question", answer_no)
    assert dialog.create_sample() is False
    assert answers == ["samples/kept.json exists already. Replace it with this sample?"]
    assert existing.read_text() == '{"request": "mine"}\n'
    monkeypatch.setattr(QMessageBox, "question", lambda *a: QMessageBox.StandardButton.Yes)
    assert dialog.create_sample() is True
    assert json.loads(existing.read_text())["contract"] == "pre_llm"


def test_the_rows_model_keeps_qts_rules(qtbot, qtmodeltester, bridge, agent):
    dialog = open_dialog(qtbot, bridge, agent)
    qtmodeltester.check(dialog.model)
    empty = HistoryRowsModel()
    qtmodeltester.check(empty)


def test_the_window_offers_it_only_for_an_agent_and_selects_what_it_wrote(
    qtbot, tmp_path, sample_workspace, monkeypatch
):
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Ok)
    window = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(window)
    window.show()
    try:
        assert window.open_workspace(sample_workspace)
        assert not window.history_sample_action.isEnabled()
        assert window.new_sample_from_history() is None
        new_menu = window.sample_editor.sample_list.new_menu
        assert window.history_sample_action in new_menu.actions()

        agent = build_adf(tmp_path / "support.adf", AdfSpec(schema=29))
        assert window.open_workspace(agent)
        assert window.history_sample_action.isEnabled()
        dialog = window.new_sample_from_history()
        assert dialog is not None
        qtbot.waitUntil(lambda: dialog.built is not None, timeout=WAIT_MS)
        dialog.name.setText("from-history")
        assert dialog.create_sample()
        qtbot.waitUntil(lambda: window.sample_box.currentText() == "from-history", timeout=WAIT_MS)
        assert window.editors.currentWidget() is window.sample_editor
        saved = agent.with_name("support.adf.hookstudio") / "samples" / "from-history.json"
        assert saved.is_file()
    finally:
        window.undo_stack.setClean()
        window.close()
