"""The step-hook editor in the real window: the source picked from the workspace's files and the
function from the file's listing, saved into hookstudio.json without touching the rest, and a
run after the save calls the new hook."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from studio.ui.hook_conflict_dialog import HookConflictDialog
from studio.ui.main_window import MainWindow
from tests.support.editor_window import editor_window

RUN_TIMEOUT_MS = 30_000
WAIT_MS = 20_000


@pytest.fixture
def window(qtbot, sample_workspace, tmp_path, monkeypatch):
    with editor_window(
        sample_workspace,
        tmp_path / "settings.json",
        monkeypatch,
        (1024, 640),
        lambda win: win.config_editors.step_editor,
    ) as win:
        yield win


def type_into(qtbot, combo, text: str) -> None:
    combo.lineEdit().clear()
    qtbot.keyClicks(combo.lineEdit(), text)


def items(combo) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def test_the_configured_hook_is_shown_with_the_deadline_it_runs_under(window):
    editor = window.config_editors.step_editor
    assert editor.source.currentText() == "lib/prepare.ts"
    assert editor.function.currentText() == "prepareStep"
    assert "lib/prepare.py" in items(editor.source)
    assert "lib/chain_hooks.ts" in items(editor.source)
    assert editor.deadline.text().startswith("30 s")
    assert editor.save_button.isEnabled()


def test_pick_a_python_function_save_and_run_it(qtbot, window, sample_workspace):
    editor = window.config_editors.step_editor
    before = (sample_workspace / "hookstudio.json").read_text()
    type_into(qtbot, editor.source, "lib/prepare.py")
    # Listed off the GUI thread: the picker fills once the listing is in.
    qtbot.waitUntil(lambda: items(editor.function) == ["prepare_step"], timeout=WAIT_MS)
    type_into(qtbot, editor.function, "prepare_step")
    assert editor.draft.source == "lib/prepare.py:prepare_step"
    assert editor.valid

    window.save_action.trigger()

    assert (sample_workspace / "hookstudio.json").read_text() == before.replace(
        '"lib/prepare.ts:prepareStep"', '"lib/prepare.py:prepare_step"'
    )
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.runs.start_run("step-escalated")
    outcome = finished.args[0]
    assert outcome.hook.source == "lib/prepare.py"
    assert outcome.hook.function == "prepare_step"
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.decision_record["amendment"]["modelChanged"] is True


def test_a_function_the_file_lacks_blocks_save(qtbot, window, sample_workspace, monkeypatch):
    editor = window.config_editors.step_editor
    before = (sample_workspace / "hookstudio.json").read_bytes()
    type_into(qtbot, editor.source, "lib/prepare.py")
    type_into(qtbot, editor.function, "prepare")
    qtbot.waitUntil(
        lambda: any(
            "lib/prepare.py has no function `prepare`" in f.message for f in editor.findings
        ),
        timeout=WAIT_MS,
    )
    assert editor.findings_list.item(0).data(Qt.ItemDataRole.UserRole) == "/step/source"
    assert not editor.save_button.isEnabled()
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: warned.append(a[2]))

    window.save_action.trigger()

    assert warned and "prepare" in warned[0]
    assert (sample_workspace / "hookstudio.json").read_bytes() == before


def test_a_source_outside_the_workspace_is_an_error(qtbot, window):
    editor = window.config_editors.step_editor
    type_into(qtbot, editor.source, "../elsewhere.py")
    assert [f.pointer for f in editor.findings if f.severity == "error"] == ["/step/source"]
    assert not editor.save_button.isEnabled()


def test_no_step_hook_removes_the_key_and_undo_brings_it_back(qtbot, window, sample_workspace):
    editor = window.config_editors.step_editor
    before = (sample_workspace / "hookstudio.json").read_text()
    editor.clear_button.click()
    assert editor.source.currentText() == ""

    editor.save_button.click()

    saved = json.loads((sample_workspace / "hookstudio.json").read_text())
    assert "step" not in saved
    assert saved["chain"] == json.loads(before)["chain"]
    window.undo_action.trigger()
    assert editor.source.currentText() == "lib/prepare.ts"
    assert window.isWindowModified()
    editor.save_button.click()
    # Back, as the last key: the file no longer says where it was.
    again = json.loads((sample_workspace / "hookstudio.json").read_text())
    original = json.loads(before)
    assert list(again) == [k for k in original if k != "step"] + ["step"]
    assert again == original


def test_every_control_is_reached_by_tab(qtbot, window):
    editor = window.config_editors.step_editor
    editor.source.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=WAIT_MS)
    seen = set()
    for _ in range(30):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.add(QApplication.focusWidget())
    assert {editor.clear_button, editor.findings_list, editor.save_button} <= seen
    assert editor.function in seen or editor.function.lineEdit() in seen


def test_a_settings_file_that_is_not_json_is_said_and_never_written(
    qtbot, window, sample_workspace, monkeypatch
):
    path = sample_workspace / "hookstudio.json"
    path.write_text('{"version": 1,\n  "step": ')
    editor = window.config_editors.step_editor
    qtbot.waitUntil(lambda: not editor.notice.isHidden(), timeout=WAIT_MS)
    assert "hookstudio.json" in editor.notice.text()
    assert "line 2" in editor.notice.text()
    type_into(qtbot, editor.source, "lib/prepare.py")
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: warned.append(a[2]))

    window.save_action.trigger()

    assert warned and "Fix the file" in warned[0]
    assert path.read_text() == '{"version": 1,\n  "step": '


# ---- the step hook changed here and outside the studio --------------------------------------


def conflict_dialog(qtbot, window: MainWindow) -> HookConflictDialog:
    def shown() -> list[HookConflictDialog]:
        return [d for d in window.findChildren(HookConflictDialog) if d.isVisible()]

    qtbot.waitUntil(lambda: len(shown()) == 1, timeout=WAIT_MS)
    return shown()[0]


def edit_to_the_python_hook(qtbot, editor) -> None:
    type_into(qtbot, editor.source, "lib/prepare.py")
    qtbot.waitUntil(lambda: items(editor.function) == ["prepare_step"], timeout=WAIT_MS)
    type_into(qtbot, editor.function, "prepare_step")
    qtbot.waitUntil(lambda: editor.valid, timeout=WAIT_MS)


def write_outside(workspace, change) -> dict:
    """Change hookstudio.json as another program would; returns what it now holds."""
    path = workspace / "hookstudio.json"
    settings = json.loads(path.read_text())
    change(settings)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return settings


def drop_step_and_change_env(settings: dict) -> None:
    del settings["step"]
    settings["env"]["SUPPORT_REGION"] = "us"


def test_a_step_hook_removed_outside_while_edited_here_asks_with_a_diff(
    qtbot, window, sample_workspace
):
    editor = window.config_editors.step_editor
    edit_to_the_python_hook(qtbot, editor)
    outside = write_outside(sample_workspace, drop_step_and_change_env)

    dialog = conflict_dialog(qtbot, window)  # from the file watcher, before any Save

    assert dialog.windowTitle() == "The step hook changed in two places"
    lines = dialog.diff.toPlainText().splitlines()
    assert lines == [
        "--- hookstudio.json (changed outside)",
        "+++ yours (unsaved)",
        "-(no step section)",
        "+{",
        '+  "source": "lib/prepare.py:prepare_step"',
        "+}",
    ]
    qtbot.mouseClick(dialog.take_button, Qt.MouseButton.LeftButton)

    assert editor.source.currentText() == ""
    assert not window.isWindowModified()
    assert json.loads((sample_workspace / "hookstudio.json").read_text()) == outside
    window.undo_action.trigger()
    assert editor.draft.source == "lib/prepare.py:prepare_step"
    assert window.isWindowModified()


def test_keep_mine_on_save_writes_my_step_hook_and_keeps_the_outside_edit_of_the_rest(
    qtbot, window, sample_workspace
):
    editor = window.config_editors.step_editor
    edit_to_the_python_hook(qtbot, editor)
    outside = write_outside(sample_workspace, drop_step_and_change_env)
    editor.save_button.click()
    dialog = conflict_dialog(qtbot, window)
    assert "over the one changed outside" in dialog.keep_button.toolTip()

    qtbot.mouseClick(dialog.keep_button, Qt.MouseButton.LeftButton)

    written = json.loads((sample_workspace / "hookstudio.json").read_text())
    assert written == {**outside, "step": {"source": "lib/prepare.py:prepare_step"}}
    assert not window.isWindowModified()


def test_a_cancelled_question_is_not_asked_again_for_the_same_outside_version(
    qtbot, window, sample_workspace
):
    editor = window.config_editors.step_editor
    edit_to_the_python_hook(qtbot, editor)
    write_outside(sample_workspace, drop_step_and_change_env)
    qtbot.mouseClick(conflict_dialog(qtbot, window).cancel_button, Qt.MouseButton.LeftButton)

    # Another outside edit, of the chains only (shown at once: nothing is unsaved there), and
    # nothing new about the step hook to ask.
    later = write_outside(sample_workspace, lambda s: s["chain"]["pre"].pop())
    chain_editor = window.config_editors.chain_editor
    qtbot.waitUntil(lambda: len(chain_editor.draft.pre) == 3, timeout=WAIT_MS)
    assert not [d for d in window.findChildren(HookConflictDialog) if d.isVisible()]
    assert editor.draft.source == "lib/prepare.py:prepare_step"
    assert window.isWindowModified()

    editor.save_button.click()  # a Save asks again: writing now would replace their version
    qtbot.mouseClick(conflict_dialog(qtbot, window).cancel_button, Qt.MouseButton.LeftButton)
    assert json.loads((sample_workspace / "hookstudio.json").read_text()) == later
