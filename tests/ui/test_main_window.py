"""The real window, driven offscreen as a user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QTableView

from studio.core.app_settings import AppSettings
from studio.core.pre_llm.targets import TargetKind, TargetRow
from studio.ui.main_window import MainWindow

RUN_TIMEOUT_MS = 20_000
# A bound on waiting for a condition, not a speed check: the suite runs beside other work.
WAIT_MS = 20_000


@pytest.fixture
def window(qtbot, sample_workspace, tmp_path, monkeypatch):
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Ok)
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    assert win.open_workspace(sample_workspace)
    yield win
    win.undo_stack.setClean()
    win.close()


def config_of(workspace: Path) -> dict:
    return json.loads((workspace / "agent.json").read_text())


def choose_in_row(window: MainWindow, row: int, label: str) -> None:
    model = window.hook_editor.targets_model
    assert model.setData(model.index(row, 0), label, Qt.ItemDataRole.EditRole)


def save_and_wait(qtbot, window: MainWindow) -> bool:
    """Save the hook and wait for the save, made off the GUI thread, to end."""
    with qtbot.waitSignal(window.save_finished, timeout=WAIT_MS) as finished:
        assert window.save() is not None
    return finished.args[0]


def run_and_wait(qtbot, window: MainWindow, start=None):
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        (start or window.run_selected)()
    return finished.args[0]


def test_the_title_names_the_workspace(window, sample_workspace):
    assert sample_workspace.name in window.windowTitle()
    assert window.hook_editor.draft.source == "lib/policy.ts:transform"


def test_add_and_remove_target_rows_then_save_and_reopen(qtbot, window, sample_workspace):
    editor = window.hook_editor
    assert [r.kind for r in editor.draft.rows] == [TargetKind.MAIN, TargetKind.LOOP]
    qtbot.mouseClick(editor.add_target, Qt.MouseButton.LeftButton)
    assert editor.draft.rows[-1].kind is TargetKind.EMPTY
    assert not editor.save_button.isEnabled()
    assert any("empty" in f.message for f in editor.findings)
    choose_in_row(window, 2, "reviewer")
    assert editor.save_button.isEnabled()
    assert window.isWindowModified()
    editor._on_remove_row(0)
    assert [r.name for r in editor.draft.rows] == ["researcher", "reviewer"]
    assert save_and_wait(qtbot, window)
    saved = config_of(sample_workspace)["pre_llm_hook"]
    assert saved["scope"] == "loops" and saved["loops"] == ["researcher", "reviewer"]
    assert "include_main" not in saved
    assert not window.isWindowModified()

    window.open_workspace(sample_workspace)
    assert [r.name for r in window.hook_editor.draft.rows] == ["researcher", "reviewer"]


def test_all_streams_is_exclusive_and_undo_brings_the_rows_back(window):
    editor = window.hook_editor
    before = editor.draft.rows
    choose_in_row(window, 1, "All streams (including future loops)")
    assert editor.draft.rows == (TargetRow.all_streams(),)
    assert editor.summary.text() == "All streams"
    # Never silently: the window says how many targets it replaced and how to get them back.
    assert len(before) == 2
    said = window.statusBar().currentMessage()
    assert "the other target was removed" in said and "Undo" in said
    assert window.undo_action.text() == "&Undo Apply to all streams"
    applies = [editor.applies.item(i, 1).text() for i in range(editor.applies.rowCount())]
    assert all(text.startswith("✓") for text in applies)
    window.undo_action.trigger()
    assert editor.draft.rows == before
    window.redo_action.trigger()
    assert editor.draft.rows == (TargetRow.all_streams(),)


def test_a_broken_timeout_is_a_finding_and_save_is_refused(qtbot, window, sample_workspace):
    before = (sample_workspace / "agent.json").read_bytes()
    editor = window.hook_editor
    editor.timeout.selectAll()
    qtbot.keyClicks(editor.timeout, "999")
    assert editor.draft.timeout == "999"
    messages = [editor.findings_list.item(i).text() for i in range(editor.findings_list.count())]
    assert any("1000 to 300000" in m for m in messages)
    assert "border" in editor.timeout.styleSheet()
    assert not editor.save_button.isEnabled()
    assert window.save() is None
    assert (sample_workspace / "agent.json").read_bytes() == before


def test_run_a_hook_and_read_the_diff(qtbot, window):
    window.sample_box.setCurrentText("support-ticket")
    outcome = run_and_wait(qtbot, window)
    assert outcome.status == "ok"
    qtbot.waitUntil(lambda: window.results.diff_ready, timeout=WAIT_MS)
    assert window.results.run.diff_view.summary_label.text() == "system changed, tools −1"


def test_a_source_the_studio_cannot_run_is_a_warning_and_still_saves(
    qtbot, window, sample_workspace
):
    (sample_workspace / "lib" / "policy.rb").write_text("def transform(p) p end\n")
    editor = window.hook_editor
    editor.source.selectAll()
    qtbot.keyClicks(editor.source, "lib/policy.rb")
    messages = [editor.findings_list.item(i).text() for i in range(editor.findings_list.count())]
    assert any(m.startswith("⚠") and "'.rb' files" in m for m in messages), messages
    assert "border" not in editor.source.styleSheet()
    assert editor.save_button.isEnabled()
    assert save_and_wait(qtbot, window)
    assert config_of(sample_workspace)["pre_llm_hook"]["source"] == "lib/policy.rb:transform"

    window.sample_box.setCurrentText("support-ticket")
    outcome = run_and_wait(qtbot, window)
    assert outcome.turn_error.kind == "source_unsupported"


def test_cancel_a_hanging_hook_and_see_the_turn_error(qtbot, window, sample_workspace):
    (sample_workspace / "lib" / "hang.py").write_text(
        "import time\ndef transform(payload):\n    time.sleep(60)\n"
    )
    window.hook_editor.source.setText("lib/hang.py")
    window.hook_editor._on_source_edited("lib/hang.py")
    # Long enough that a busy machine cannot end the run by its timeout before the cancel.
    window.hook_editor.timeout.selectAll()
    qtbot.keyClicks(window.hook_editor.timeout, "60000")
    window.sample_box.setCurrentText("support-ticket")
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        job = window.run_selected()
        assert window.cancel_action.isEnabled()
        qtbot.waitSignal(job.started, timeout=WAIT_MS).wait()
        window.cancel_action.trigger()
    outcome = finished.args[0]
    assert outcome.turn_error.kind == "cancelled"
    assert window.results.run.error_view.kind.text() == "cancelled"


def test_an_engine_failure_reaches_the_window_as_a_turn_error(qtbot, window, monkeypatch):
    def broken_start(*_args, **_kwargs):
        raise RuntimeError("the fork server went away")

    window.sample_box.setCurrentText("step-escalated")
    monkeypatch.setattr(window.bridge.runner, "start", broken_start)
    outcome = run_and_wait(qtbot, window)
    assert outcome.status == "turn_error" and outcome.turn_error.kind == "engine_failed"
    assert (outcome.contract, outcome.sample) == ("step", "step-escalated")
    assert outcome.turn_error.message == "RuntimeError: the fork server went away"
    assert window.results.run.error_view.title.text() == "The studio could not run the hook"
    assert not window.cancel_action.isEnabled()
    assert window.bridge.running == []


def test_follow_a_json_path_from_an_error_to_the_value(qtbot, window, sample_workspace):
    (sample_workspace / "lib" / "bad.py").write_text(
        "def transform(payload):\n"
        "    r = payload['request']\n"
        "    r['options']['temperature'] = 7\n"
        "    return r\n"
    )
    window.hook_editor.source.setText("lib/bad.py")
    window.hook_editor._on_source_edited("lib/bad.py")
    window.sample_box.setCurrentText("support-ticket")
    outcome = run_and_wait(qtbot, window)
    assert outcome.turn_error.path == "/options/temperature"
    assert outcome.rejected["options"]["temperature"] == 7
    window.results.jump_requested.emit(outcome.turn_error.path)
    assert window.results.run.result_view.current_pointer() == "/options/temperature"


def record_rows(window: MainWindow) -> int:
    return window.records.findChild(QTableView, "recordsTable").model().rowCount()


def test_the_records_grow_with_every_run(qtbot, window):
    window.sample_box.setCurrentText("support-ticket")
    before = record_rows(window)
    run_and_wait(qtbot, window)
    run_and_wait(qtbot, window)
    qtbot.waitUntil(lambda: record_rows(window) == before + 2, timeout=WAIT_MS)


def test_run_on_every_target_shows_each_loop(qtbot, window):
    window.sample_box.setCurrentText("support-ticket")
    with qtbot.waitSignal(window.results.comparison_shown, timeout=RUN_TIMEOUT_MS) as shown:
        window.run_on_every_target()
    loops = [loop for loop, _ in shown.args[0]]
    assert loops == ["main", "researcher", "reviewer", "future-loop"]
    statuses = [outcome.status for _, outcome in shown.args[0]]
    assert statuses == ["ok", "ok", "not_applied", "not_applied"]


def replace_file(path: Path, text: str) -> None:
    """Save as many editors do: write a new file and move it over the old one."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    temporary.replace(path)


def test_a_config_replaced_outside_the_studio_is_picked_up(qtbot, window, sample_workspace):
    config = config_of(sample_workspace)
    config["pre_llm_hook"]["scope"] = "all"
    del config["pre_llm_hook"]["loops"], config["pre_llm_hook"]["include_main"]
    replace_file(sample_workspace / "agent.json", json.dumps(config, indent=2))
    qtbot.waitUntil(
        lambda: window.hook_editor.draft.rows == (TargetRow.all_streams(),), timeout=WAIT_MS
    )
    # The watch survives the replacement: a second outside edit is seen too.
    config["pre_llm_hook"]["scope"] = "main"
    replace_file(sample_workspace / "agent.json", json.dumps(config, indent=2))
    qtbot.waitUntil(lambda: window.hook_editor.draft.rows == (TargetRow.main(),), timeout=WAIT_MS)


def test_a_closed_window_answers_no_change_on_disk(qtbot, window, sample_workspace, monkeypatch):
    watch = window.workspace_watch
    assert str(sample_workspace / "agent.json") in watch.watcher.files()
    monkeypatch.setattr(watch, "_wait", lambda: True)  # as while a save of its own runs
    told: list[object] = []
    watch.settled.connect(told.append)
    config = config_of(sample_workspace)
    config["pre_llm_hook"]["timeout_ms"] = 1234
    replace_file(sample_workspace / "agent.json", json.dumps(config, indent=2))
    qtbot.waitUntil(lambda: watch.pending, timeout=WAIT_MS)
    window.undo_stack.setClean()
    window.close()
    assert not watch.pending
    assert watch.watcher.files() == [] and watch.watcher.directories() == []
    assert told == []


def test_rerun_on_save_reruns_when_the_hook_source_changes(qtbot, window, sample_workspace):
    window.sample_box.setCurrentText("support-ticket")
    window.rerun_action.setChecked(True)
    first = run_and_wait(qtbot, window)
    assert first.status == "ok"
    source = sample_workspace / "lib" / "policy.ts"
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as rerun:
        replace_file(source, source.read_text().replace("fs_write", "fs_delete"))
    assert [t["name"] for t in rerun.args[0].result["tools"]] == ["fs_read"]


def test_each_row_has_its_own_remove_button(qtbot, window):
    editor = window.hook_editor
    qtbot.mouseClick(editor.add_target, Qt.MouseButton.LeftButton)
    choose_in_row(window, 2, "reviewer")
    buttons = [editor.targets.remove_button(row) for row in range(3)]
    assert all(b is not None and b.isVisible() for b in buttons)
    qtbot.mouseClick(editor.targets.remove_button(1), Qt.MouseButton.LeftButton)
    assert [r.name for r in editor.draft.rows] == ["", "reviewer"]
    assert editor.draft.rows[0].kind is TargetKind.MAIN


def test_closing_with_unsaved_edits_asks_first(qtbot, window, monkeypatch):
    asked = []

    def cancel(*args, **kwargs):
        asked.append(args[2] if len(args) > 2 else "")
        return QMessageBox.StandardButton.Cancel

    monkeypatch.setattr(QMessageBox, "question", cancel)
    window.hook_editor._on_add_target()
    assert window.isWindowModified()
    window.close()
    assert asked and "unsaved" in asked[0]
    assert window.isVisible()


def test_rows_move_with_the_keyboard(qtbot, window):
    editor = window.hook_editor
    editor.targets.setFocus()
    editor.targets.setCurrentIndex(editor.targets_model.index(1, 0))
    qtbot.keyClick(editor.targets, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert [r.kind for r in editor.draft.rows] == [TargetKind.LOOP, TargetKind.MAIN]
    qtbot.keyClick(editor.targets, Qt.Key.Key_Insert)
    assert editor.draft.rows[-1].kind is TargetKind.EMPTY


def test_an_unsaved_pre_llm_source_does_not_replace_the_step_hook(qtbot, window):
    window.hook_editor.source.setText("lib/failing.py")
    window.hook_editor._on_source_edited("lib/failing.py")
    window.sample_box.setCurrentText("step-escalated")
    outcome = run_and_wait(qtbot, window)
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.hook.source == "lib/prepare.ts"


def test_a_run_uses_the_hook_being_edited(qtbot, window, sample_workspace):
    saved = (sample_workspace / "agent.json").read_bytes()
    window.sample_box.setCurrentText("support-ticket")
    window.loop_box.setCurrentText("reviewer")
    assert run_and_wait(qtbot, window).status == "not_applied"
    choose_in_row(window, 0, "All streams (including future loops)")
    assert run_and_wait(qtbot, window).status == "ok"
    assert (sample_workspace / "agent.json").read_bytes() == saved


def test_a_draft_with_problems_is_not_run(window):
    window.sample_box.setCurrentText("support-ticket")
    window.hook_editor._on_add_target()
    assert window.run_selected() is None
    assert "problems" in window.statusBar().currentMessage()


def test_run_and_cancel_from_the_keyboard(qtbot, window, sample_workspace):
    (sample_workspace / "lib" / "hang.py").write_text(
        "import time\ndef transform(payload):\n    time.sleep(60)\n"
    )
    window.sample_box.setCurrentText("support-ticket")
    window.activateWindow()
    window.sample_box.setFocus()
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.keyClick(window.sample_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert finished.args[0].status == "ok"

    editor = window.hook_editor
    editor.source.selectAll()
    qtbot.keyClicks(editor.source, "lib/hang.py")
    # Long enough that a busy machine cannot end the run by its timeout before the cancel.
    editor.timeout.selectAll()
    qtbot.keyClicks(editor.timeout, "60000")
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.keyClick(window.sample_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: bool(window.bridge.running) and window.cancel_action.isEnabled())
        qtbot.keyClick(window.sample_box, Qt.Key.Key_Escape)
    assert finished.args[0].turn_error.kind == "cancelled"


POLICY_TS = """\
interface Request { system?: string }

export function transform(input: { request: Request }): Request {
  return { ...input.request, system: 'policy' };
}

export const audit = async (input: { request: Request }) => input.request;
"""


def findings_text(editor) -> list[str]:
    return [editor.findings_list.item(i).text() for i in range(editor.findings_list.count())]


def type_source(qtbot, editor, path: str) -> None:
    editor.source.selectAll()
    qtbot.keyClicks(editor.source, path)


def test_a_python_source_is_a_warning_that_adf_will_not_load_it(qtbot, window):
    type_source(qtbot, window.hook_editor, "lib/policy.py")
    messages = findings_text(window.hook_editor)
    assert any(
        m.startswith("⚠") and "lib/policy.py runs in the studio only; ADF will not load it" in m
        for m in messages
    ), messages
    assert window.hook_editor.save_button.isEnabled()


def picker_names(editor) -> list[str]:
    return [editor.function.itemText(i) for i in range(editor.function.count())]


def test_a_missing_source_file_is_an_error_until_it_exists(qtbot, window, sample_workspace):
    editor = window.hook_editor
    type_source(qtbot, editor, "lib/audit.ts")
    messages = findings_text(editor)
    assert any(m.startswith("✗") and "lib/audit.ts does not exist" in m for m in messages)
    assert "border" in editor.source.styleSheet()
    assert not editor.save_button.isEnabled()

    (sample_workspace / "lib" / "audit.ts").write_text(POLICY_TS)
    qtbot.waitUntil(lambda: picker_names(editor) == ["transform", "audit"], timeout=WAIT_MS)
    assert editor.save_button.isEnabled()
    assert not any(m.startswith("✗") for m in findings_text(editor))


def test_a_function_the_ts_file_lacks_is_an_error_and_one_that_parses_badly_a_warning(
    qtbot, window, sample_workspace
):
    editor = window.hook_editor
    policy = sample_workspace / "lib" / "policy.ts"
    policy.write_text(POLICY_TS)
    type_source(qtbot, editor, "lib/policy.ts")
    # The file is listed off the GUI thread; the picker fills when the listing is ready.
    qtbot.waitUntil(lambda: picker_names(editor) == ["transform", "audit"], timeout=WAIT_MS)
    assert editor.save_button.isEnabled()

    editor.function.setEditText("redact")
    messages = findings_text(editor)
    assert any(
        m.startswith("✗") and "lib/policy.ts has no function `redact`; it has: transform" in m
        for m in messages
    ), messages
    assert not editor.save_button.isEnabled()
    assert "border" in editor.function.styleSheet() and "border" not in editor.source.styleSheet()
    assert window.save() is None

    # While the file does not parse, the function may be in the part that cannot be read.
    policy.write_text(POLICY_TS + "\nexport function redact(input: ) {}\n")
    qtbot.waitUntil(
        lambda: any("does not parse" in m for m in findings_text(editor)), timeout=WAIT_MS
    )
    messages = findings_text(editor)
    assert all(m.startswith("⚠") for m in messages), messages
    assert any("(line 9, column" in m for m in messages), messages
    assert editor.save_button.isEnabled()

    policy.write_text(POLICY_TS + "\nexport function redact(input: any) { return input; }\n")
    qtbot.waitUntil(lambda: findings_text(editor)[0].startswith("✓"), timeout=WAIT_MS)
    assert save_and_wait(qtbot, window)
    assert config_of(sample_workspace)["pre_llm_hook"]["source"] == "lib/policy.ts:redact"


def test_a_hook_save_runs_off_the_gui_thread_and_marks_saved_only_what_it_wrote(
    qtbot, window, sample_workspace
):
    editor = window.hook_editor
    # The source's functions are known first: until then Save waits for them (checked apart).
    qtbot.waitUntil(lambda: editor.function.count() > 0, timeout=WAIT_MS)
    choose_in_row(window, 1, "reviewer")
    saving = editor.draft
    with qtbot.waitSignal(window.save_finished, timeout=WAIT_MS) as finished:
        assert window.save() is not None
        assert not window.save_action.isEnabled()
        assert window.statusBar().currentMessage().startswith("Saving ")
        assert window.save() is None  # one save at a time
        # An edit made while the save runs is not part of it.
        qtbot.mouseClick(editor.add_target, Qt.MouseButton.LeftButton)
        choose_in_row(window, 2, "researcher")
    assert finished.args == [True]
    assert window.save_action.isEnabled()
    saved = config_of(sample_workspace)["pre_llm_hook"]["loops"]
    assert saved == [r.name for r in saving.rows if r.kind is TargetKind.LOOP]
    assert "researcher" not in saved
    assert window.isWindowModified()
    assert editor.draft.rows[-1].name == "researcher"
    assert save_and_wait(qtbot, window)
    assert not window.isWindowModified()


def test_an_agent_without_an_execution_limit_is_a_finding_beside_a_valid_hook(
    qtbot, sample_workspace, tmp_path, monkeypatch
):
    agent_path = sample_workspace / "agent.json"
    agent = json.loads(agent_path.read_text())
    agent.pop("limits", None)
    agent_path.write_text(json.dumps(agent))
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    assert win.open_workspace(sample_workspace)
    editor = win.hook_editor
    shown = findings_text(editor)
    assert shown == [
        "⚠ every call this hook applies to will fail: "
        "limits.execution_timeout_ms must be a positive integer"
    ]
    assert editor.effective.text() == "no effective time: the agent has no valid limit"
    win.close()


def test_the_runtimes_warm_up_once_the_window_is_on_screen(
    qtbot, sample_workspace, tmp_path, monkeypatch
):
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    warmed: list[object] = []
    monkeypatch.setattr(win.bridge, "warm_up", lambda: warmed.append(win.bridge.runner))
    assert win.open_workspace(sample_workspace)
    assert warmed == []  # not while the window is still to be drawn
    win.show()
    qtbot.waitUntil(lambda: bool(warmed), timeout=WAIT_MS)
    assert warmed == [win.bridge.runner]
    assert win.open_workspace(sample_workspace)  # on screen: a new workspace warms up at once
    assert len(warmed) == 2 and warmed[1] is win.bridge.runner
    win.close()


def test_work_asked_for_while_the_window_is_first_drawn_starts_after_its_paint(
    qtbot, sample_workspace, tmp_path, monkeypatch
):
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    monkeypatch.setattr(win.bridge, "warm_up", lambda: None)
    on_screen: list[bool] = []
    win.show()
    assert win.open_workspace(sample_workspace)  # its listings and reads are held too
    job = win.bridge.submit(lambda: on_screen.append(win._on_screen))
    with qtbot.waitSignal(job.finished, timeout=WAIT_MS):
        pass
    assert on_screen == [True]
    later = win.bridge.submit(lambda: on_screen.append(win._on_screen))
    with qtbot.waitSignal(later.finished, timeout=WAIT_MS):
        pass
    assert on_screen == [True, True]
    win.close()
