"""The window on an ADF agent file (.adf): opening, editing and saving its hook and its sources,
the banners, and the refusals. Every agent here is a fresh copy built by the fixture builder."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox

from studio.core.app_settings import AppSettings, load_settings
from studio.ui.main_window import MainWindow
from studio.ui.workspace_panel import NAME_ROLE
from tests.support.adf_files import AdfSpec, build_adf, table_dump
from tests.support.build_sample_agent import build

RUN_TIMEOUT_MS = 30_000
WAIT_MS = 20_000


class Dialogs:
    """The message boxes the window showed, answered as a test says."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.warnings: list[str] = []
        self.questions: list[tuple[str, Any]] = []
        self.answer = QMessageBox.StandardButton.No

        def warning(_parent: object, _title: str, text: str, *args: object) -> Any:
            self.warnings.append(text)
            return QMessageBox.StandardButton.Ok

        def question(_parent: object, _title: str, text: str, *args: Any) -> Any:
            default = args[1] if len(args) > 1 else None
            self.questions.append((text, default))
            return self.answer

        monkeypatch.setattr(QMessageBox, "warning", warning)
        monkeypatch.setattr(QMessageBox, "question", question)


@pytest.fixture
def dialogs(monkeypatch: pytest.MonkeyPatch) -> Dialogs:
    return Dialogs(monkeypatch)


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    """A copy of the sample agent with its studio folder (settings and a sample) beside it."""
    return build(tmp_path / "agent.adf")


@pytest.fixture
def window(qtbot, tmp_path: Path, dialogs: Dialogs) -> Iterator[MainWindow]:
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    yield win
    win.undo_stack.setClean()
    win.source_view.text.document().setModified(False)
    win.close()
    # Work the engine ended at close reports back through queued signals: deliver them while
    # the window's widgets still exist.
    QApplication.processEvents()


def save_and_wait(qtbot, window: MainWindow) -> bool:
    """Save the hook and wait for the save, made off the GUI thread, to end."""
    with qtbot.waitSignal(window.save_finished, timeout=WAIT_MS) as finished:
        assert window.save() is not None
    return finished.args[0]


def save_source_and_wait(qtbot, window: MainWindow) -> bool:
    """Save the source shown and wait for the save to end (questions answered on the way)."""
    view = window.source_view
    with qtbot.waitSignal(view.save_finished, timeout=WAIT_MS) as finished:
        assert view.save_source() is not None
    return finished.args[0]


def stored_config(path: Path) -> dict[str, Any]:
    db = sqlite3.connect(path)
    try:
        return json.loads(db.execute("SELECT config_json FROM adf_config").fetchone()[0])
    finally:
        db.close()


def file_row(path: Path, name: str) -> tuple[Any, ...]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT * FROM adf_files WHERE path = ?", (name,)).fetchone()
    finally:
        db.close()


def add_target(qtbot, window: MainWindow, label: str) -> None:
    editor = window.hook_editor
    qtbot.mouseClick(editor.add_target, Qt.MouseButton.LeftButton)
    model = editor.targets_model
    row = len(editor.draft.rows) - 1
    assert model.setData(model.index(row, 1), label, Qt.ItemDataRole.EditRole)


def panel_rows(window: MainWindow) -> dict[str, tuple[str, str]]:
    """The workspace panel's files by path: the text shown and the tooltip."""
    tree = window.workspace_panel.tree
    rows: dict[str, tuple[str, str]] = {}
    for i in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(i)
        for j in range(group.childCount()):
            item = group.child(j)
            rows[item.data(0, NAME_ROLE)] = (item.text(0), item.toolTip(0))
    return rows


def type_at_end(qtbot, window: MainWindow, text: str) -> None:
    view = window.source_view.text
    view.moveCursor(QTextCursor.MoveOperation.End)
    view.setFocus()
    for i, line in enumerate(text.split("\n")):
        if i:
            qtbot.keyClick(view, Qt.Key.Key_Return)
        qtbot.keyClicks(view, line)


def test_open_edit_a_target_save_and_reopen(qtbot, window, agent):
    before = table_dump(agent, skip=("adf_config", "adf_meta"))
    old = stored_config(agent)
    assert window.open_workspace(agent)
    assert "agent.adf" in window.windowTitle()
    assert window.workspace is not None and window.workspace.location == agent
    assert window.hook_editor.draft.source == "lib/policy.ts:transform"
    assert not window.hook_editor.notice.isVisible()
    # The function picker lists the functions of the agent's own copy of the source.
    picker = window.hook_editor.function
    qtbot.waitUntil(lambda: picker.count() > 0, timeout=WAIT_MS)
    assert [picker.itemText(i) for i in range(picker.count())] == ["transform"]

    add_target(qtbot, window, "reviewer")
    assert window.isWindowModified()
    assert save_and_wait(qtbot, window)
    assert not window.isWindowModified()

    new = stored_config(agent)
    assert new["pre_llm_hook"]["loops"] == ["researcher", "reviewer"]
    assert list(new) == list(old)
    unchanged = [k for k in old if k not in ("pre_llm_hook", "metadata")]
    assert {k: new[k] for k in unchanged} == {k: old[k] for k in unchanged}
    assert new["metadata"]["updated_at"] != old["metadata"]["updated_at"]
    assert table_dump(agent, skip=("adf_config", "adf_meta")) == before
    assert not (agent.parent / "agent.adf.hookstudio" / "agent.json").exists()

    assert window.open_workspace(agent)
    names = [r.name for r in window.hook_editor.draft.rows]
    assert "reviewer" in names and "researcher" in names


def test_the_ts_hook_runs_and_its_record_is_kept_in_the_state_folder(qtbot, window, agent):
    assert window.open_workspace(agent)
    window.sample_box.setCurrentText("support-ticket")
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.run_selected()
    outcome = finished.args[0]
    assert outcome.status == "ok", outcome.turn_error
    assert window.store is not None
    state = agent.parent / "agent.adf.hookstudio"
    assert window.store.path.resolve().is_relative_to(state.resolve())
    qtbot.waitUntil(lambda: window.store is not None and window.store.count() == 1, timeout=WAIT_MS)


def test_the_workspace_panel_shows_each_source_state(window, agent):
    assert window.open_workspace(agent)
    rows = panel_rows(window)
    assert rows["lib/policy.ts"][0] == "lib/policy.ts ✓"
    assert "Authorized" in rows["lib/policy.ts"][1]
    assert "saving an edit removes" in rows["lib/policy.ts"][1]
    assert rows["lib/redact.ts"][0] == "lib/redact.ts (read-only)"
    assert "Not authorized" in rows["lib/redact.ts"][1]
    assert "never writes it" in rows["lib/redact.ts"][1]
    assert rows["mind.md"][0] == "mind.md (no delete)"
    assert "authorized" not in rows["mind.md"][1]
    assert rows["data/refund-policy.json"][0] == "data/refund-policy.json"
    assert rows["agent.json"][0] == "agent.adf"


def test_a_newer_schema_is_read_only_with_a_banner(window, dialogs, tmp_path):
    path = build_adf(tmp_path / "future.adf", AdfSpec(schema=31))
    before = path.read_bytes()
    assert window.open_workspace(path)
    editor = window.hook_editor
    assert editor.notice.isVisible()
    assert "31" in editor.notice.text()
    assert not editor.save_button.isEnabled()
    assert "Read-only" in editor.save_button.toolTip()
    assert "(read-only)" in window.windowTitle()
    assert not window.save_action.isEnabled()
    assert window.save() is None
    assert dialogs.warnings and "read-only" in dialogs.warnings[0]
    window.open_source("lib/policy.ts", 1)
    assert window.source_view.text.isReadOnly()
    assert path.read_bytes() == before


def test_an_agent_open_in_adf_refuses_config_saves_and_keeps_the_draft(
    qtbot, window, dialogs, agent
):
    held = sqlite3.connect(agent)  # a second program with the agent open: -wal/-shm appear
    try:
        held.execute("SELECT count(*) FROM adf_meta").fetchone()
        assert agent.with_name("agent.adf-wal").exists()
        old = stored_config(agent)
        assert window.open_workspace(agent)
        editor = window.hook_editor
        assert editor.notice.isVisible()
        assert "looks open in ADF" in editor.notice.text()

        add_target(qtbot, window, "reviewer")
        assert not save_and_wait(qtbot, window)
        assert "close the agent in ADF" in dialogs.warnings[-1]
        assert "your edits are kept" in dialogs.warnings[-1]
        assert stored_config(agent) == old
        assert window.isWindowModified()
        assert [r.name for r in editor.draft.rows][-1] == "reviewer"

        # A source save is allowed, with the warning.
        window.open_source("data/refund-policy.json", 1)
        type_at_end(qtbot, window, " ")
        with qtbot.waitSignal(window.source_view.source_saved) as saved:
            assert save_source_and_wait(qtbot, window)
        assert "ADF" in saved.args[1]
        assert file_row(agent, "data/refund-policy.json")[1] == b'{"max_eur":100} '
        assert "ADF" in window.statusBar().currentMessage()
    finally:
        held.close()


def test_the_banner_follows_adf_opening_and_closing_the_agent(qtbot, window, agent):
    assert window.open_workspace(agent)
    notice = window.hook_editor.notice
    assert not notice.isVisible()
    held = sqlite3.connect(agent)
    try:
        held.execute("SELECT count(*) FROM adf_meta").fetchone()
        qtbot.waitUntil(notice.isVisible, timeout=WAIT_MS)
        assert "looks open in ADF" in notice.text()
    finally:
        held.close()
    qtbot.waitUntil(lambda: not notice.isVisible(), timeout=WAIT_MS)


def test_saving_an_authorized_source_asks_first(qtbot, window, dialogs, agent):
    assert window.open_workspace(agent)
    before = file_row(agent, "lib/policy.ts")
    window.open_source("lib/policy.ts", 1)
    view = window.source_view
    assert not view.text.isReadOnly()
    assert "✓ authorized" in view.state.text()
    type_at_end(qtbot, window, "// checked\n")
    assert view.save_button.isEnabled()

    dialogs.answer = QMessageBox.StandardButton.No
    assert not save_source_and_wait(qtbot, window)
    text, default = dialogs.questions[-1]
    assert "removes its authorization" in text
    assert default == QMessageBox.StandardButton.No
    assert file_row(agent, "lib/policy.ts") == before
    assert view.modified

    dialogs.answer = QMessageBox.StandardButton.Yes
    with qtbot.waitSignal(view.save_finished, timeout=WAIT_MS) as finished:
        qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
    assert finished.args == [True]
    row = file_row(agent, "lib/policy.ts")
    assert row[1].decode().endswith("// checked\n")
    assert row[5] == 0  # authorized
    assert not view.modified
    assert "not authorized" in view.state.text()
    assert panel_rows(window)["lib/policy.ts"][0] == "lib/policy.ts"
    assert "Not authorized" in panel_rows(window)["lib/policy.ts"][1]
    copy = window.workspace.source_root / "lib/policy.ts"
    assert copy.read_text().endswith("// checked\n")


def test_unsaved_source_edits_are_not_dropped_silently(qtbot, window, dialogs, agent, tmp_path):
    assert window.open_workspace(agent)
    window.open_source("mind.md", 1)
    type_at_end(qtbot, window, "Ask first.")
    dialogs.answer = QMessageBox.StandardButton.Cancel
    window.open_source("document.md", 1)
    assert window.source_view.source == "mind.md"
    assert window.source_view.text.toPlainText().endswith("Ask first.")
    (tmp_path / "other").mkdir()
    other = build(tmp_path / "other" / "agent.adf")
    assert not window.open_workspace(other)
    assert window.workspace.location == agent
    assert "mind.md has unsaved changes" in dialogs.questions[-1][0]

    dialogs.answer = QMessageBox.StandardButton.Save
    window.open_source("document.md", 1)
    # The save runs off the GUI thread; the file asked for is shown once it has written.
    qtbot.waitUntil(lambda: window.source_view.source == "document.md", timeout=WAIT_MS)
    assert file_row(agent, "mind.md")[1].decode().endswith("Ask first.")


def test_a_read_only_source_cannot_be_edited(window, agent):
    assert window.open_workspace(agent)
    window.open_source("lib/redact.ts", 1)
    view = window.source_view
    assert view.text.isReadOnly()
    assert "read-only" in view.state.text()
    assert not view.save_button.isEnabled()
    assert view.save_source() is None


def test_a_busy_agent_is_a_clear_message_and_the_edit_stays(qtbot, window, dialogs, agent):
    assert window.open_workspace(agent)
    window.workspace.adf.timeout = 0.2
    window.open_source("data/refund-policy.json", 1)
    type_at_end(qtbot, window, " ")
    before = file_row(agent, "data/refund-policy.json")
    holder = sqlite3.connect(agent, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        assert not save_source_and_wait(qtbot, window)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "busy" in dialogs.warnings[-1]
    assert window.source_view.modified
    assert file_row(agent, "data/refund-policy.json") == before


def test_a_corrupt_file_is_a_message_and_the_open_workspace_stays(window, dialogs, agent, tmp_path):
    assert window.open_workspace(agent)
    bad = tmp_path / "broken.adf"
    data = b"SQLite format 3\x00" + b"\x13" * 4000
    bad.write_bytes(data)
    assert not window.open_workspace(bad)
    assert "broken.adf" in dialogs.warnings[-1]
    assert window.workspace is not None and window.workspace.location == agent
    assert "agent.adf" in window.windowTitle()
    assert bad.read_bytes() == data
    assert window.settings.recent_workspaces[0] == str(agent)


def test_an_agent_whose_files_cannot_be_read_opens_and_says_why_where_they_are_listed(
    window, dialogs, agent
):
    db = sqlite3.connect(agent)
    db.execute("DROP TABLE adf_files")
    db.commit()
    db.close()
    assert window.open_workspace(agent)
    assert window.document is not None and window.document.has_hook
    tree = window.workspace_panel.tree
    (files,) = [
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0) == "Agent files"
    ]
    assert files.childCount() == 0
    assert "no such table: adf_files" in files.toolTip(0)
    assert dialogs.warnings == []


def test_the_recent_list_keeps_the_agent_file(window, agent, sample_workspace):
    assert window.open_workspace(agent)
    assert window.open_workspace(sample_workspace)
    recent = window.settings.recent_workspaces
    assert recent[:2] == [str(sample_workspace.resolve()), str(agent)]
    texts = [a.text() for a in window.recent.actions()]
    assert str(agent) in texts
    next(a for a in window.recent.actions() if a.text() == str(agent)).trigger()
    assert window.workspace.location == agent
    assert window.settings_path is not None
    assert load_settings(window.settings_path).last_workspace == str(agent)


def test_open_an_agent_file_from_the_keyboard(qtbot, window, agent):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    qtbot.keyClick(
        window,
        Qt.Key.Key_O,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    dialog = window.findChild(QFileDialog, "openDialog")
    assert dialog is not None and dialog.isVisible()
    name = dialog.findChild(QLineEdit, "fileNameEdit")
    qtbot.waitUntil(name.hasFocus, timeout=WAIT_MS)
    qtbot.keyClicks(name, str(agent))
    with qtbot.waitSignal(window.workspace_opened, timeout=WAIT_MS):
        qtbot.keyClick(name, Qt.Key.Key_Return)
    assert window.workspace.location == agent
    assert window.hook_editor.draft.source == "lib/policy.ts:transform"


def test_the_studio_starts_on_the_agent_file_it_last_opened(agent, tmp_path):
    from studio.ui.app import bundled_workspace, choose_workspace

    assert choose_workspace(None, str(agent)) == agent
    assert choose_workspace(str(agent), None) == agent
    assert choose_workspace(None, str(tmp_path / "gone.adf")) == bundled_workspace()


def test_a_source_save_waits_for_a_held_agent_off_the_gui_thread(qtbot, window, agent):
    assert window.open_workspace(agent)
    # Longer than the test can take on a loaded machine: only the release ends the wait.
    window.workspace.adf.timeout = 60
    window.open_source("data/refund-policy.json", 1)
    type_at_end(qtbot, window, " ")
    view = window.source_view
    holder = sqlite3.connect(agent, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        job = view.save_source()
        assert job is not None
        assert view.state.text() == "Saving…"
        assert not view.save_button.isEnabled() and view.text.isReadOnly()
        assert window.statusBar().currentMessage() == "Saving data/refund-policy.json…"
        # The window's event loop turns while the save waits on the lock.
        ticks = QTimer(window)
        ticks.setInterval(10)
        count = []
        ticks.timeout.connect(lambda: count.append(1))
        ticks.start()
        qtbot.waitUntil(lambda: len(count) >= 5, timeout=WAIT_MS)
        ticks.stop()
        assert not job.done
        assert view.modified
    finally:
        with qtbot.waitSignal(view.save_finished, timeout=WAIT_MS) as finished:
            holder.execute("ROLLBACK")
        holder.close()
    assert finished.args == [True]
    assert file_row(agent, "data/refund-policy.json")[1] == b'{"max_eur":100} '
    assert not view.modified and not view.text.isReadOnly()
    assert view.state.text() != "Saving…"
    assert window.statusBar().currentMessage().startswith("Saved data/refund-policy.json")


def test_a_busy_agent_is_said_after_the_wait_and_the_edit_stays(qtbot, window, dialogs, agent):
    assert window.open_workspace(agent)
    window.workspace.adf.timeout = 0.5
    window.open_source("data/refund-policy.json", 1)
    type_at_end(qtbot, window, " ")
    view = window.source_view
    holder = sqlite3.connect(agent, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        ticked = []
        with qtbot.waitSignal(view.save_finished, timeout=WAIT_MS) as finished:
            assert view.save_source() is not None
            QTimer.singleShot(0, lambda: ticked.append(view.saving))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert ticked == [True]  # a timer fired while the save still waited
    assert finished.args == [False]
    assert "busy" in dialogs.warnings[-1]
    assert view.modified and not view.text.isReadOnly() and view.save_button.isEnabled()


def test_the_window_does_not_close_while_a_source_save_waits(qtbot, window, agent):
    assert window.open_workspace(agent)
    window.workspace.adf.timeout = 60
    window.open_source("mind.md", 1)
    type_at_end(qtbot, window, "Ask first.")
    view = window.source_view
    holder = sqlite3.connect(agent, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        assert view.save_source() is not None
        window.close()
        assert window.isVisible()
        assert window.statusBar().currentMessage() == "Wait for the save to end"
    finally:
        with qtbot.waitSignal(view.save_finished, timeout=WAIT_MS) as finished:
            holder.execute("ROLLBACK")
        holder.close()
    assert finished.args == [True]
    assert file_row(agent, "mind.md")[1].decode().endswith("Ask first.")
