"""The invocation hook edited in the window as the step hook is (the same editor over the
``invocation`` section): its source and export picked from the workspace, findings at
``/invocation/source``, undo, recovery, Save of that section alone, and a run after the save
calls the new hook."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from studio.core.workspace.draft_recovery import load_recovery
from tests.ui.test_step_hook_editor import (
    RUN_TIMEOUT_MS,
    WAIT_MS,
    conflict_dialog,
    items,
    type_into,
    window,
)

__all__ = ["window"]


def show_invocation(window):
    editor = window.config_editors.invocation_editor
    window.editors.setCurrentWidget(editor)
    return editor


def test_the_configured_invocation_hook_is_shown_in_its_own_tab(window):
    editor = show_invocation(window)
    index = window.editors.indexOf(editor)
    assert window.editors.tabText(index) == "Invocation"
    assert editor.source.currentText() == "lib/invocation.ts"
    assert editor.function.currentText() == "prepareInvocation"
    assert "lib/invocation.py" in items(editor.source)
    assert editor.deadline.text().startswith("30 s")
    assert "invocation contract" in editor.deadline.text()
    assert window.save_action.text() == "&Save Invocation Hook"
    assert editor.save_button.isEnabled()


def test_pick_a_python_invocation_function_save_and_run_it(qtbot, window, sample_workspace):
    editor = show_invocation(window)
    before = (sample_workspace / "hookstudio.json").read_text()
    type_into(qtbot, editor.source, "lib/invocation.py")
    qtbot.waitUntil(
        lambda: set(items(editor.function)) == {"prepare_invocation", "refund_step"},
        timeout=WAIT_MS,
    )
    type_into(qtbot, editor.function, "prepare_invocation")
    assert editor.draft.source == "lib/invocation.py:prepare_invocation"
    assert editor.valid
    assert window.isWindowModified()

    window.save_action.trigger()

    # Only the invocation section changed, in place.
    assert (sample_workspace / "hookstudio.json").read_text() == before.replace(
        '"lib/invocation.ts:prepareInvocation"', '"lib/invocation.py:prepare_invocation"'
    )
    assert not window.isWindowModified()
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.runs.start_run("invocation-parallel-billing")
    outcome = finished.args[0]
    assert outcome.contract == "invocation"
    assert outcome.hook.source == "lib/invocation.py"
    assert outcome.hook.function == "prepare_invocation"
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["amendment"] == {"activeTools": ["lookupOrder"]}


def test_an_export_the_module_lacks_blocks_saving_the_invocation_hook(
    qtbot, window, sample_workspace, monkeypatch
):
    editor = show_invocation(window)
    before = (sample_workspace / "hookstudio.json").read_bytes()
    type_into(qtbot, editor.function, "prepareInvocatoin")
    qtbot.waitUntil(
        lambda: any(
            "lib/invocation.ts has no export `prepareInvocatoin`" in f.message
            and "did you mean `prepareInvocation`" in f.message
            for f in editor.findings
        ),
        timeout=WAIT_MS,
    )
    assert editor.findings_list.item(0).data(Qt.ItemDataRole.UserRole) == "/invocation/source"
    assert not editor.save_button.isEnabled()
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: warned.append(a[2]))

    window.save_action.trigger()

    assert warned and "invocation hook" in warned[0]
    assert (sample_workspace / "hookstudio.json").read_bytes() == before
    # The step hook is another section, with its own findings.
    assert window.config_editors.step_editor.valid


def test_undo_follows_the_invocation_tab_and_survives_its_save(qtbot, window, sample_workspace):
    editor = show_invocation(window)
    step = window.config_editors.step_editor
    editor.clear_button.click()
    editor.save_button.click()
    saved = json.loads((sample_workspace / "hookstudio.json").read_text())
    assert "invocation" not in saved
    assert saved["step"] == {"source": "lib/prepare.ts:prepareStep"}

    window.undo_action.trigger()

    assert editor.source.currentText() == "lib/invocation.ts"
    assert step.undo_stack.isClean()
    assert window.isWindowModified()


def test_unsaved_invocation_edits_are_offered_back_when_the_workspace_opens_again(
    qtbot, window, sample_workspace, monkeypatch
):
    editor = show_invocation(window)
    type_into(qtbot, editor.source, "lib/invocation.py")
    # Kept for recovery a moment after the last edit.
    qtbot.waitUntil(
        lambda: (
            (kept := load_recovery(sample_workspace, "hookstudio.json#invocation")) is not None
            and "lib/invocation.py" in kept.text
        ),
        timeout=WAIT_MS,
    )
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    window.config_editors.set_workspace(window.workspace)
    assert editor.draft.source == "lib/invocation.py"
    assert not editor.undo_stack.isClean()


def test_every_invocation_control_is_reached_by_tab(qtbot, window):
    editor = show_invocation(window)
    editor.source.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=WAIT_MS)
    seen = set()
    for _ in range(30):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.add(QApplication.focusWidget())
    assert {editor.clear_button, editor.findings_list, editor.save_button} <= seen
    assert editor.function in seen or editor.function.lineEdit() in seen


def test_an_invocation_hook_changed_outside_while_edited_here_asks_with_a_diff(
    qtbot, window, sample_workspace
):
    editor = show_invocation(window)
    type_into(qtbot, editor.source, "lib/invocation.py")
    qtbot.waitUntil(lambda: "prepare_invocation" in items(editor.function), timeout=WAIT_MS)
    type_into(qtbot, editor.function, "prepare_invocation")
    qtbot.waitUntil(lambda: editor.valid, timeout=WAIT_MS)
    path = sample_workspace / "hookstudio.json"
    outside = json.loads(path.read_text())
    outside["invocation"]["source"] = "lib/invocation.ts"
    outside["env"]["SUPPORT_REGION"] = "us"
    path.write_text(json.dumps(outside, indent=2) + "\n")

    dialog = conflict_dialog(qtbot, window)

    assert dialog.windowTitle() == "The invocation hook changed in two places"
    assert dialog.diff.toPlainText().splitlines()[:2] == [
        "--- hookstudio.json (changed outside)",
        "+++ yours (unsaved)",
    ]
    qtbot.mouseClick(dialog.keep_button, Qt.MouseButton.LeftButton)
    editor.save_button.click()

    # Mine for the invocation section; theirs for every other key.
    assert json.loads(path.read_text()) == {
        **outside,
        "invocation": {"source": "lib/invocation.py:prepare_invocation"},
    }
    assert not window.isWindowModified()
