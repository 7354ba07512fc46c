"""Nothing the user wrote is lost (design.md), in the real window on real files: an outside change
of the agent file merged with the hook being edited, Discard that discards, undo history that
survives Save and Remove, and the sample and loop each workspace was left on."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from studio.core.app_settings import load_settings
from studio.core.pre_llm.targets import TargetKind
from studio.core.workspace.draft_recovery import load_recovery
from studio.ui.hook_conflict_dialog import HookConflictDialog
from studio.ui.main_window import MainWindow
from tests.support.build_sample_agent import build

WAIT_MS = 20_000
HOOK_KEY = "pre_llm_hook"


class Dialogs:
    """The message boxes the window showed, answered as a test says."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.warnings: list[str] = []
        self.questions: list[str] = []
        self.answer = QMessageBox.StandardButton.Yes

        def warning(_parent: object, _title: str, text: str, *args: object) -> Any:
            self.warnings.append(text)
            return QMessageBox.StandardButton.Ok

        def question(_parent: object, _title: str, text: str, *args: object) -> Any:
            self.questions.append(text)
            return self.answer

        monkeypatch.setattr(QMessageBox, "warning", warning)
        monkeypatch.setattr(QMessageBox, "question", question)


@pytest.fixture
def dialogs(monkeypatch: pytest.MonkeyPatch) -> Dialogs:
    return Dialogs(monkeypatch)


@pytest.fixture
def windows(qtbot, tmp_path: Path, dialogs: Dialogs) -> Iterator[list[MainWindow]]:
    """Every window a test opens (with one settings file), closed without questions after it."""
    opened: list[MainWindow] = []
    yield opened
    for win in opened:
        win.undo_stack.setClean()
        win.close()
    QApplication.processEvents()


def new_window(qtbot, windows: list[MainWindow], settings_path: Path) -> MainWindow:
    win = MainWindow(load_settings(settings_path), settings_path)
    qtbot.addWidget(win)
    win.show()
    windows.append(win)
    return win


@pytest.fixture
def window(qtbot, windows, sample_workspace, tmp_path) -> MainWindow:
    win = new_window(qtbot, windows, tmp_path / "settings.json")
    assert win.open_workspace(sample_workspace)
    return win


def agent_json(workspace: Path) -> dict[str, Any]:
    return json.loads((workspace / "agent.json").read_text())


def write_outside(path: Path, text: str) -> None:
    """Another editor saving the file: a new file moved over the old one."""
    temporary = path.with_name(path.name + ".outside")
    temporary.write_text(text)
    temporary.replace(path)


def type_timeout(qtbot, window: MainWindow, text: str) -> None:
    field = window.hook_editor.timeout
    field.selectAll()
    qtbot.keyClicks(field, text)
    assert window.hook_editor.draft.timeout == text


def save_and_wait(qtbot, window: MainWindow) -> bool:
    with qtbot.waitSignal(window.save_finished, timeout=WAIT_MS) as finished:
        assert window.save() is not None
    return bool(finished.args[0])


def conflict_dialog(qtbot, window: MainWindow) -> HookConflictDialog:
    def shown() -> HookConflictDialog | None:
        for dialog in window.findChildren(HookConflictDialog):
            if dialog.isVisible():
                return dialog
        return None

    qtbot.waitUntil(lambda: shown() is not None, timeout=WAIT_MS)
    dialog = shown()
    assert dialog is not None
    return dialog


def answer(qtbot, dialog: HookConflictDialog, button_text: str) -> None:
    button = {
        "Keep mine": dialog.keep_button,
        "Take theirs": dialog.take_button,
        "Cancel": dialog.cancel_button,
    }[button_text]
    assert button.text().replace("&", "") == button_text
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def status(window: MainWindow) -> str:
    return window.statusBar().currentMessage()


# ---- an outside change of agent.json -----------------------------------------------------------


def test_an_outside_edit_of_another_key_keeps_the_unsaved_hook_and_the_save_keeps_the_edit(
    qtbot, window, sample_workspace
):
    """The reported case: another model set outside while the hook is being edited."""
    type_timeout(qtbot, window, "8000")
    agent = sample_workspace / "agent.json"
    theirs = {**agent_json(sample_workspace), "model": "claude-opus"}
    write_outside(agent, json.dumps(theirs, indent=2) + "\n")
    qtbot.waitUntil(lambda: "not its hook" in status(window), timeout=WAIT_MS)
    assert window.hook_editor.draft.timeout == "8000"
    assert window.isWindowModified()

    assert save_and_wait(qtbot, window)
    saved = agent_json(sample_workspace)
    assert saved["model"] == "claude-opus"
    assert saved[HOOK_KEY]["timeout_ms"] == 8000
    assert {k: v for k, v in saved.items() if k != HOOK_KEY} == {
        k: v for k, v in theirs.items() if k != HOOK_KEY
    }
    assert not window.isWindowModified()


def test_a_save_racing_an_outside_edit_of_another_key_keeps_it(qtbot, window, sample_workspace):
    """The change lands after the last look at the file and before the save: the save merges."""
    type_timeout(qtbot, window, "8000")
    agent = sample_workspace / "agent.json"
    window.watcher.removePath(str(agent))  # the window does not see it before saving
    agent.write_text(json.dumps({**agent_json(sample_workspace), "model": "claude-opus"}))
    assert save_and_wait(qtbot, window)
    saved = agent_json(sample_workspace)
    assert (saved["model"], saved[HOOK_KEY]["timeout_ms"]) == ("claude-opus", 8000)
    assert "kept" in status(window)


def test_a_hook_changed_outside_while_unedited_is_shown_and_undo_goes_back(
    qtbot, window, sample_workspace
):
    theirs = agent_json(sample_workspace)
    theirs[HOOK_KEY]["timeout_ms"] = 9000
    write_outside(sample_workspace / "agent.json", json.dumps(theirs, indent=2))
    qtbot.waitUntil(lambda: window.hook_editor.draft.timeout == "9000", timeout=WAIT_MS)
    assert not window.isWindowModified()
    window.undo_action.trigger()
    assert window.hook_editor.draft.timeout == "5000"
    assert window.isWindowModified()  # the file has 9000


def test_the_same_hook_written_outside_leaves_nothing_to_save(qtbot, window, sample_workspace):
    type_timeout(qtbot, window, "8000")
    theirs = agent_json(sample_workspace)
    theirs[HOOK_KEY]["timeout_ms"] = 8000
    write_outside(sample_workspace / "agent.json", json.dumps(theirs, indent=4))
    qtbot.waitUntil(lambda: not window.isWindowModified(), timeout=WAIT_MS)
    assert window.hook_editor.draft.timeout == "8000"


class TestBothChangedTheHook:
    @pytest.fixture
    def conflict(self, qtbot, window, sample_workspace) -> HookConflictDialog:
        type_timeout(qtbot, window, "8000")
        theirs = agent_json(sample_workspace)
        theirs[HOOK_KEY]["timeout_ms"] = 9000
        theirs["model"] = "claude-opus"
        write_outside(sample_workspace / "agent.json", json.dumps(theirs, indent=2) + "\n")
        return conflict_dialog(qtbot, window)

    def test_the_dialog_shows_both_hooks_as_a_diff(self, conflict):
        lines = conflict.diff.toPlainText().splitlines()
        assert lines[0] == "--- agent.json (changed outside)"
        assert lines[1] == "+++ yours (unsaved)"
        assert '-  "timeout_ms": 9000' in lines
        assert '+  "timeout_ms": 8000' in lines
        assert '   "source": "lib/policy.ts:transform",' in lines
        assert conflict.cancel_button.isDefault()

    def test_keep_mine_keeps_the_draft_and_the_save_keeps_their_other_edit(
        self, qtbot, window, sample_workspace, conflict
    ):
        on_disk = (sample_workspace / "agent.json").read_text()
        answer(qtbot, conflict, "Keep mine")
        assert window.hook_editor.draft.timeout == "8000"
        assert window.isWindowModified()
        assert (sample_workspace / "agent.json").read_text() == on_disk  # not written yet
        assert save_and_wait(qtbot, window)
        saved = agent_json(sample_workspace)
        assert (saved["model"], saved[HOOK_KEY]["timeout_ms"]) == ("claude-opus", 8000)
        assert not window.isWindowModified()

    def test_take_theirs_shows_their_hook_and_undo_brings_mine_back(
        self, qtbot, window, sample_workspace, conflict
    ):
        on_disk = (sample_workspace / "agent.json").read_text()
        answer(qtbot, conflict, "Take theirs")
        assert window.hook_editor.draft.timeout == "9000"
        assert not window.isWindowModified()
        assert (sample_workspace / "agent.json").read_text() == on_disk
        window.undo_action.trigger()
        assert window.hook_editor.draft.timeout == "8000"
        assert window.isWindowModified()

    def test_cancel_changes_nothing_and_a_save_asks_again(
        self, qtbot, window, sample_workspace, conflict
    ):
        on_disk = (sample_workspace / "agent.json").read_text()
        answer(qtbot, conflict, "Cancel")
        assert window.hook_editor.draft.timeout == "8000"
        assert window.isWindowModified()
        assert (sample_workspace / "agent.json").read_text() == on_disk
        with qtbot.waitSignal(window.save_finished, timeout=WAIT_MS) as finished:
            assert window.save() is not None
            again = conflict_dialog(qtbot, window)
            assert '+  "timeout_ms": 8000' in again.diff.toPlainText().splitlines()
            answer(qtbot, again, "Keep mine")
        assert finished.args == [True]
        saved = agent_json(sample_workspace)
        assert (saved["model"], saved[HOOK_KEY]["timeout_ms"]) == ("claude-opus", 8000)

    def test_an_answer_about_a_version_gone_meanwhile_is_asked_again(
        self, qtbot, window, sample_workspace, conflict
    ):
        theirs = agent_json(sample_workspace)
        theirs[HOOK_KEY]["timeout_ms"] = 7000
        write_outside(sample_workspace / "agent.json", json.dumps(theirs, indent=2))
        answer(qtbot, conflict, "Take theirs")
        again = conflict_dialog(qtbot, window)
        assert again is not conflict
        assert '-  "timeout_ms": 7000' in again.diff.toPlainText().splitlines()
        answer(qtbot, again, "Take theirs")
        assert window.hook_editor.draft.timeout == "7000"


def test_a_hook_removed_outside_while_edited_is_asked_about(qtbot, window, sample_workspace):
    type_timeout(qtbot, window, "8000")
    theirs = {k: v for k, v in agent_json(sample_workspace).items() if k != HOOK_KEY}
    write_outside(sample_workspace / "agent.json", json.dumps(theirs, indent=2))
    dialog = conflict_dialog(qtbot, window)
    assert "-(no pre_llm_hook)" in dialog.diff.toPlainText().splitlines()
    answer(qtbot, dialog, "Take theirs")
    assert not window.hook_editor.remove_hook_button.isEnabled()
    assert not window.isWindowModified()


def test_a_file_broken_outside_is_said_and_never_written(qtbot, window, dialogs, sample_workspace):
    type_timeout(qtbot, window, "8000")
    broken = '{\n  "name": "support-agent",\n  "model": \n}\n'
    write_outside(sample_workspace / "agent.json", broken)
    qtbot.waitUntil(lambda: "cannot be read" in status(window), timeout=WAIT_MS)
    assert window.hook_editor.draft.timeout == "8000"
    assert not save_and_wait(qtbot, window)
    assert any("does not overwrite a file it cannot read" in w for w in dialogs.warnings)
    assert (sample_workspace / "agent.json").read_text() == broken
    assert window.isWindowModified()


# ---- an outside change of an .adf agent file ---------------------------------------------------


def set_adf_config(path: Path, change: Any) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        config = json.loads(db.execute("SELECT config_json FROM adf_config").fetchone()[0])
        change(config)
        text = json.dumps(config, separators=(",", ":"), ensure_ascii=False)
        db.execute("UPDATE adf_config SET config_json = ? WHERE id = 1", (text,))
    finally:
        db.close()


def adf_config(path: Path) -> dict[str, Any]:
    db = sqlite3.connect(path)
    try:
        return json.loads(db.execute("SELECT config_json FROM adf_config").fetchone()[0])
    finally:
        db.close()


def test_an_adf_changed_outside_is_merged_the_same_way(qtbot, windows, tmp_path):
    agent = build(tmp_path / "agent.adf")
    window = new_window(qtbot, windows, tmp_path / "settings.json")
    assert window.open_workspace(agent)
    type_timeout(qtbot, window, "8000")

    def other_model(config: dict[str, Any]) -> None:
        config["model"] = {**config["model"], "model_id": "claude-opus"}
        config[HOOK_KEY]["timeout_ms"] = 9000

    set_adf_config(agent, other_model)
    dialog = conflict_dialog(qtbot, window)
    assert '-  "timeout_ms": 9000' in dialog.diff.toPlainText().splitlines()
    answer(qtbot, dialog, "Keep mine")
    assert save_and_wait(qtbot, window)
    saved = adf_config(agent)
    assert saved["model"]["model_id"] == "claude-opus"
    assert saved[HOOK_KEY]["timeout_ms"] == 8000


# ---- Discard, and a crash ----------------------------------------------------------------------


def recovery_of(workspace: Path) -> Any:
    return load_recovery(workspace, HOOK_KEY)


def test_discard_discards_and_the_next_open_offers_nothing(
    qtbot, windows, window, dialogs, sample_workspace, tmp_path
):
    type_timeout(qtbot, window, "8000")
    qtbot.waitUntil(lambda: recovery_of(sample_workspace) is not None, timeout=WAIT_MS)
    dialogs.answer = QMessageBox.StandardButton.Discard
    assert window.close()
    assert "unsaved changes" in dialogs.questions[-1]
    assert recovery_of(sample_workspace) is None
    windows.remove(window)

    dialogs.questions.clear()
    reopened = new_window(qtbot, windows, tmp_path / "settings.json")
    assert reopened.open_workspace(sample_workspace)
    assert dialogs.questions == []
    assert reopened.hook_editor.draft.timeout == "5000"
    assert agent_json(sample_workspace)[HOOK_KEY]["timeout_ms"] == 5000


def test_after_a_crash_the_edits_are_offered_and_restored(
    qtbot, windows, window, dialogs, sample_workspace, tmp_path
):
    type_timeout(qtbot, window, "8000")
    qtbot.waitUntil(lambda: recovery_of(sample_workspace) is not None, timeout=WAIT_MS)
    # A crash: the window never closes; a new studio opens the workspace.
    dialogs.answer = QMessageBox.StandardButton.Yes
    second = new_window(qtbot, windows, tmp_path / "settings2.json")
    assert second.open_workspace(sample_workspace)
    assert any("Restore them?" in q for q in dialogs.questions)
    assert second.hook_editor.draft.timeout == "8000"
    assert second.isWindowModified()


# ---- undo history ------------------------------------------------------------------------------


def test_undo_history_survives_a_save(qtbot, window, sample_workspace):
    editor = window.hook_editor
    type_timeout(qtbot, window, "8000")
    qtbot.mouseClick(editor.add_target, Qt.MouseButton.LeftButton)
    model = editor.targets_model
    assert model.setData(model.index(2, 0), "reviewer", Qt.ItemDataRole.EditRole)
    assert save_and_wait(qtbot, window)
    assert not window.isWindowModified()
    assert window.undo_action.isEnabled()

    window.undo_action.trigger()  # the target
    assert window.isWindowModified()
    assert [r.name for r in editor.draft.rows if r.kind is TargetKind.LOOP] == ["researcher"]
    window.redo_action.trigger()
    assert not window.isWindowModified()  # back at what was saved

    while window.undo_stack.canUndo():
        window.undo_action.trigger()
    assert editor.draft.timeout == "5000"
    assert window.isWindowModified()


def test_remove_hook_is_a_step_that_undo_takes_back(qtbot, window, sample_workspace):
    editor = window.hook_editor
    type_timeout(qtbot, window, "8000")
    assert save_and_wait(qtbot, window)
    window.remove_hook()
    assert HOOK_KEY not in agent_json(sample_workspace)
    assert not window.isWindowModified()
    assert window.undo_action.text().replace("&", "") == "Undo Remove hook"

    window.undo_action.trigger()
    assert editor.draft.timeout == "8000"
    assert window.isWindowModified()  # the file has no hook now
    window.undo_action.trigger()  # the edit before the save is still there
    assert editor.draft.timeout == "5000"
    window.redo_action.trigger()
    assert editor.draft.timeout == "8000"
    assert save_and_wait(qtbot, window)
    assert agent_json(sample_workspace)[HOOK_KEY]["timeout_ms"] == 8000


# ---- the sample and loop of each workspace -------------------------------------------------


def test_each_workspace_comes_back_on_its_sample_and_loop(
    qtbot, windows, window, sample_workspace, tmp_path
):
    other = tmp_path / "other"
    shutil.copytree(sample_workspace, other, ignore=shutil.ignore_patterns(".hookstudio"))
    window.sample_box.setCurrentText("support-ticket-context")
    window.loop_box.setCurrentText("reviewer")
    assert window.open_workspace(other)
    assert window.loop_box.currentText() == "main"
    window.sample_box.setCurrentText("chain-refund")
    window.loop_box.setCurrentText("researcher")

    assert window.open_workspace(sample_workspace)
    assert window.sample_box.currentText() == "support-ticket-context"
    assert window.sample_editor.current_sample() == "support-ticket-context"
    assert window.loop_box.currentText() == "reviewer"
    assert window.open_workspace(other)
    assert (window.sample_box.currentText(), window.loop_box.currentText()) == (
        "chain-refund",
        "researcher",
    )

    # Kept across starts of the studio.
    window.close()
    windows.remove(window)
    saved = load_settings(tmp_path / "settings.json").workspace_choices
    assert saved[str(sample_workspace)].sample == "support-ticket-context"
    started = new_window(qtbot, windows, tmp_path / "settings.json")
    assert started.open_workspace(sample_workspace)
    assert started.sample_box.currentText() == "support-ticket-context"
    assert started.loop_box.currentText() == "reviewer"


def test_a_remembered_sample_that_is_gone_falls_back_quietly(
    qtbot, windows, window, dialogs, sample_workspace, tmp_path
):
    window.sample_box.setCurrentText("support-ticket-context")
    window.close()
    windows.remove(window)
    (sample_workspace / "samples" / "support-ticket-context.json").unlink()
    started = new_window(qtbot, windows, tmp_path / "settings.json")
    assert started.open_workspace(sample_workspace)
    assert started.sample_box.currentText() in {"chain-refund", "step-escalated", "support-ticket"}
    assert dialogs.warnings == [] and dialogs.questions == []


def test_an_outside_change_of_the_studio_settings_keeps_the_hook_being_edited(
    qtbot, window, sample_workspace
):
    type_timeout(qtbot, window, "8000")
    settings = sample_workspace / "hookstudio.json"
    data = json.loads(settings.read_text())
    data["loops"] = [*data["loops"], "planner"]
    write_outside(settings, json.dumps(data, indent=2))
    loops = window.loop_box
    qtbot.waitUntil(lambda: loops.findText("planner") >= 0, timeout=WAIT_MS)
    assert window.hook_editor.draft.timeout == "8000"
    assert window.isWindowModified()
    window.undo_action.trigger()
    assert window.hook_editor.draft.timeout == "5000"


def test_remove_does_not_drop_a_hook_changed_outside_unseen(
    qtbot, window, dialogs, sample_workspace
):
    agent = sample_workspace / "agent.json"
    window.watcher.removePath(str(agent))  # the change lands just before Remove is pressed
    theirs = agent_json(sample_workspace)
    theirs[HOOK_KEY]["timeout_ms"] = 9000
    agent.write_text(json.dumps(theirs, indent=2))
    window.remove_hook()
    assert "changed in agent.json outside the studio" in dialogs.warnings[-1]
    assert agent_json(sample_workspace)[HOOK_KEY]["timeout_ms"] == 9000
    assert window.hook_editor.draft.timeout == "9000"  # the editor was unedited: theirs shown
    assert not window.isWindowModified()
