"""The hook editor's Findings in the real window: what check-config warns about, a loop name
checked as it is typed, a TypeScript source when Node cannot run it."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QMessageBox, QTableView

from studio.core.app_settings import AppSettings
from studio.core.pre_llm.targets import FREE_NAME_LABEL
from studio.ui.main_window import MainWindow
from studio.ui.records_cells import HEADERS
from studio.ui.target_table import NAME_COLUMN, TARGET_COLUMN

WAIT_MS = 20_000


def open_window(qtbot, workspace, tmp_path, monkeypatch) -> MainWindow:
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    assert win.open_workspace(workspace)
    return win


@pytest.fixture
def window(qtbot, sample_workspace, tmp_path, monkeypatch):
    win = open_window(qtbot, sample_workspace, tmp_path, monkeypatch)
    yield win
    win.undo_stack.setClean()
    win.close()


def findings_text(editor) -> list[str]:
    return [editor.findings_list.item(i).text() for i in range(editor.findings_list.count())]


def test_an_unknown_key_in_the_hook_is_a_warning_that_does_not_block_save(
    qtbot, sample_workspace, tmp_path, monkeypatch
):
    agent = sample_workspace / "agent.json"
    config = json.loads(agent.read_text())
    config["pre_llm_hook"]["retries"] = 2
    agent.write_text(json.dumps(config, indent=2))
    win = open_window(qtbot, sample_workspace, tmp_path, monkeypatch)
    editor = win.hook_editor
    qtbot.waitUntil(lambda: editor.function.count() > 0, timeout=WAIT_MS)
    warned = [m for m in findings_text(editor) if "'retries' is not a pre_llm_hook setting" in m]
    assert len(warned) == 1 and warned[0].startswith("⚠"), findings_text(editor)
    item = editor.findings_list.findItems(warned[0], Qt.MatchFlag.MatchExactly)[0]
    assert item.toolTip() == "/pre_llm_hook/retries"
    assert editor.save_button.isEnabled()
    # An edit keeps the key, so the warning stays.
    editor.timeout.selectAll()
    qtbot.keyClicks(editor.timeout, "6000")
    assert any("'retries'" in m for m in findings_text(editor))
    win.undo_stack.setClean()
    win.close()


def test_a_loop_name_is_checked_while_it_is_typed(qtbot, window):
    editor = window.hook_editor
    model, view = editor.targets_model, editor.targets
    row = len(editor.draft.rows)
    editor.add_target.click()
    assert model.setData(model.index(row, TARGET_COLUMN), FREE_NAME_LABEL)
    index = model.index(row, NAME_COLUMN)
    view.setCurrentIndex(index)
    view.edit(index)
    cell = view.indexWidget(index) or view.focusWidget()
    assert isinstance(cell, QLineEdit)

    qtbot.keyClicks(cell, "Bad Name")
    # Before Enter: the finding of the name as typed, and Save is off.
    qtbot.waitUntil(
        lambda: any("loop name 'Bad Name'" in m for m in findings_text(editor)), timeout=WAIT_MS
    )
    assert not editor.save_button.isEnabled()
    assert editor.draft.rows[row].name == ""  # nothing committed yet
    # A recheck meanwhile (a source's functions arrived) still judges the name as typed.
    editor.recheck()
    assert any("loop name 'Bad Name'" in m for m in findings_text(editor))

    cell.clear()
    qtbot.keyClicks(cell, "triage")
    qtbot.waitUntil(
        lambda: not any("Target" in m or "loop name" in m for m in findings_text(editor)),
        timeout=WAIT_MS,
    )
    assert editor.save_button.isEnabled()

    # Escape leaves the row as it was, and its findings with it.
    qtbot.keyClick(cell, Qt.Key.Key_Escape)
    qtbot.waitUntil(
        lambda: any(f"Target {row + 1} is empty" in m for m in findings_text(editor)),
        timeout=WAIT_MS,
    )


def test_a_typescript_source_warns_when_node_cannot_run_it(
    qtbot, sample_workspace, tmp_path, monkeypatch
):
    monkeypatch.setenv("HOOK_STUDIO_NODE", str(tmp_path / "no-node"))
    win = open_window(qtbot, sample_workspace, tmp_path, monkeypatch)
    editor = win.hook_editor
    qtbot.waitUntil(
        lambda: any("with Node, and" in m for m in findings_text(editor)), timeout=WAIT_MS
    )
    (warning,) = [m for m in findings_text(editor) if "with Node, and" in m]
    assert warning.startswith("⚠") and "no-node" in warning
    # The function cannot be listed without Node: nothing is claimed about it.
    assert not any("has no function" in m for m in findings_text(editor))
    win.undo_stack.setClean()
    win.close()


def test_a_run_on_an_invalid_sample_shows_a_sample_problem_not_a_turn_error(
    qtbot, window, sample_workspace
):
    sample = json.loads((sample_workspace / "samples" / "support-ticket.json").read_text())
    sample["request"]["messages"][2]["role"] = "assistant"  # it holds a tool_result
    (sample_workspace / "samples" / "misfiled.json").write_text(json.dumps(sample))
    window._refresh_samples()
    window.sample_box.setCurrentText("misfiled")
    with qtbot.waitSignal(window.run_finished, timeout=WAIT_MS) as finished:
        window.run_selected()
    outcome = finished.args[0]
    assert outcome.turn_error.kind == "sample_invalid" and outcome.hook is None

    results = window.results
    assert "✗ sample problem" in results.header.text()
    assert "turn error" not in results.header.text()
    view = results.run
    assert view.tabs.tabText(view.tabs.currentIndex()) == "Sample problem ●"
    error_view = view.error_view
    assert error_view.message.text().startswith("samples/misfiled.json /request/messages/2/")
    assert "the hook is not to blame" in error_view.reason.text()
    assert "the hook was not run" in view.diff_message.text()

    # Its record says so too.
    table = window.records.findChild(QTableView, "recordsTable")
    outcome_column = HEADERS.index("Outcome")
    qtbot.waitUntil(lambda: table.model().rowCount() == 1, timeout=WAIT_MS)
    assert table.model().index(0, outcome_column).data() == "sample problem: sample_invalid"


FRESH_TS = "function audit(input: { request: unknown }) { return input.request; }\n"


def test_save_waits_for_the_functions_of_a_source_and_then_refuses_a_missing_one(
    qtbot, sample_workspace, tmp_path, monkeypatch
):
    refused: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text, *a: refused.append(text))
    win = open_window(qtbot, sample_workspace, tmp_path, monkeypatch)
    editor = win.hook_editor
    before = (sample_workspace / "agent.json").read_text()
    (sample_workspace / "lib" / "fresh.ts").write_text(FRESH_TS)
    editor.source.selectAll()
    qtbot.keyClicks(editor.source, "lib/fresh.ts")
    editor.function.setEditText("nope")
    # The file's functions are being listed off the GUI thread: nothing is known against Save.
    assert not any("has no function" in m for m in findings_text(editor))
    with qtbot.waitSignal(win.save_finished, timeout=WAIT_MS) as finished:
        assert win.save() is not None
        assert win.statusBar().currentMessage() == (
            "Checking fresh.ts for its functions before saving…"
        )
    assert finished.args == [False]
    assert "lib/fresh.ts has no function `nope`; it has: audit" in refused[0]
    assert (sample_workspace / "agent.json").read_text() == before

    # A source that is there saves once its listing is in (here at once: it is known now).
    editor.function.setEditText("audit")
    with qtbot.waitSignal(win.save_finished, timeout=WAIT_MS) as finished:
        win.save()
    assert finished.args == [True]
    saved = json.loads((sample_workspace / "agent.json").read_text())
    assert saved["pre_llm_hook"]["source"] == "lib/fresh.ts:audit"
    win.close()


def finding_item(editor, text: str):
    for i in range(editor.findings_list.count()):
        item = editor.findings_list.item(i)
        if text in item.text():
            return item
    raise AssertionError(f"no finding with {text!r}: {findings_text(editor)}")


def test_a_finding_names_its_place_in_the_config_and_leads_to_its_field(qtbot, window):
    editor = window.hook_editor
    qtbot.waitUntil(lambda: editor.function.count() > 0, timeout=WAIT_MS)
    editor.function.setEditText("transfrom")
    editor.timeout.selectAll()
    qtbot.keyClicks(editor.timeout, "12")
    editor.add_target.click()  # an empty third row

    function = finding_item(editor, "has no function `transfrom`")
    timeout = finding_item(editor, "Timeout")
    empty = finding_item(editor, "Target 3 is empty")
    assert function.toolTip() == "/pre_llm_hook/source"
    assert timeout.toolTip() == "/pre_llm_hook/timeout_ms"
    assert empty.toolTip() == "/pre_llm_hook/scope"
    # The researcher row is the hook's first loop.
    assert editor.draft.rows[1].name == "researcher"
    # Save says why it is off, for a screen where Findings is scrolled out of view.
    assert editor.save_button.toolTip() == (
        "Cannot save: lib/policy.ts has no function `transfrom`; it has: transform "
        "(did you mean `transform`?) (and 2 more in Findings)"
    )

    # The list is drawn again on every check, so each item is looked up when it is used.
    editor.findings_list.itemActivated.emit(finding_item(editor, "has no function"))
    assert editor.function.hasFocus() or editor.function.lineEdit().hasFocus()
    editor.findings_list.itemActivated.emit(finding_item(editor, "Timeout"))
    assert editor.timeout.hasFocus()
    editor.findings_list.itemActivated.emit(finding_item(editor, "Target 3 is empty"))
    assert editor.targets.hasFocus() and editor.targets.currentIndex().row() == 2


def test_leaving_a_new_rows_choice_unmade_keeps_every_row(qtbot, window):
    editor = window.hook_editor
    before = editor.draft.rows
    editor.add_target.click()  # its choice opens at once
    editor.timeout.setFocus()
    qtbot.waitUntil(lambda: editor.timeout.hasFocus(), timeout=WAIT_MS)
    assert editor.draft.rows[: len(before)] == before
    assert len(editor.draft.rows) == len(before) + 1
    assert any(f"Target {len(before) + 1} is empty" in m for m in findings_text(editor))
