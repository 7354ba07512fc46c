"""The chain editor in the real window: rows added, removed and reordered from the keyboard,
saved into hookstudio.json without touching the rest of it, and a run after the save uses the
new order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from studio.core.app_settings import AppSettings
from studio.core.chain.chain_draft import ChainRow
from studio.core.workspace.draft_recovery import load_recovery
from studio.ui.hook_conflict_dialog import HookConflictDialog
from studio.ui.main_window import MainWindow
from tests.support.editor_window import editor_window

RUN_TIMEOUT_MS = 30_000
WAIT_MS = 20_000

# Four-space indentation, extra spaces inside env, an empty post chain: all of it must survive.
SETTINGS = """{
    "version": 1,
    "env": {"TEAM":   "ops"},
    "chain": {
        "pre": [{"source": "lib/hooks.py:first"}, {"source": "lib/hooks.py:second"}],
        "post": []
    }
}
"""
HOOKS = """def first(context):
    return {"systemPromptSuffix": "first"}


def second(context):
    return {"systemPromptSuffix": "second"}


def third(context):
    return {"systemPromptSuffix": "third"}
"""
SAMPLE = """{"contract": "chain",
 "context": {"messages": [{"role": "user", "content": "Hi"}], "model": "m", "modelProfile": null,
             "tools": [], "systemPrompt": "Be brief.", "state": {}},
 "responses": [{"role": "assistant", "content": "Hello"}]}
"""


def chain_workspace(root: Path) -> Path:
    (root / "lib").mkdir(parents=True)
    (root / "samples").mkdir()
    (root / "agent.json").write_text('{"limits": {"execution_timeout_ms": 60000}}\n')
    (root / "hookstudio.json").write_text(SETTINGS)
    (root / "lib" / "hooks.py").write_text(HOOKS)
    (root / "samples" / "order.json").write_text(SAMPLE)
    return root


@pytest.fixture
def workspace(tmp_path):
    return chain_workspace(tmp_path / "ws")


@pytest.fixture
def window(qtbot, workspace, tmp_path, monkeypatch):
    with editor_window(
        workspace,
        tmp_path / "settings.json",
        monkeypatch,
        (1366, 768),
        lambda win: win.config_editors.chain_editor,
    ) as win:
        yield win


def focus_row(qtbot, table, row: int) -> None:
    table.setFocus()
    table.setCurrentIndex(table.model().index(row, 0))
    qtbot.waitUntil(table.hasFocus, timeout=WAIT_MS)


def names(editor, chain: str) -> list[str]:
    return [row.name for row in editor.draft.rows(chain)]


def test_keyboard_reorder_add_and_remove_then_save_and_run_in_the_new_order(
    qtbot, window, workspace
):
    editor = window.config_editors.chain_editor
    table = editor.tables["pre"]
    focus_row(qtbot, table, 1)

    qtbot.keyClick(table, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert names(editor, "pre") == ["lib/hooks.py:second", "lib/hooks.py:first"]
    assert table.currentIndex().row() == 0

    qtbot.keyClick(table, Qt.Key.Key_Insert)
    assert editor.draft.pre[2] == ChainRow.user()
    assert editor.source.hasFocus()
    qtbot.keyClicks(editor.source.lineEdit(), "lib/hooks.py")
    qtbot.keyClicks(editor.function.lineEdit(), "third")
    assert names(editor, "pre")[2] == "lib/hooks.py:third"

    editor.add_hook("pre", ChainRow.builtin("historyTrimmerHook"))
    focus_row(qtbot, table, 3)
    qtbot.keyClick(table, Qt.Key.Key_Delete)
    assert names(editor, "pre") == [
        "lib/hooks.py:second",
        "lib/hooks.py:first",
        "lib/hooks.py:third",
    ]
    assert window.isWindowModified()

    window.save_action.trigger()

    assert (workspace / "hookstudio.json").read_text() == SETTINGS.replace(
        '        "pre": [{"source": "lib/hooks.py:first"}, {"source": "lib/hooks.py:second"}],\n',
        '        "pre": [\n'
        "            {\n"
        '                "source": "lib/hooks.py:second"\n'
        "            },\n"
        "            {\n"
        '                "source": "lib/hooks.py:first"\n'
        "            },\n"
        "            {\n"
        '                "source": "lib/hooks.py:third"\n'
        "            }\n"
        "        ],\n",
    )
    assert not window.isWindowModified()
    assert editor.undo_stack.canUndo(), "the undo history survives the save"

    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.runs.start_run("order")
    outcome = finished.args[0]
    assert outcome.status == "ok", outcome.turn_error
    assert [step.hook for step in outcome.chain if step.chain == "pre"] == [
        "lib/hooks.py:second",
        "lib/hooks.py:first",
        "lib/hooks.py:third",
    ]
    assert outcome.result["request"]["systemPrompt"] == "Be brief.\n\nsecond\n\nfirst\n\nthird"


def test_alt_down_and_the_buttons_move_rows_and_each_move_is_announced_as_a_move(qtbot, window):
    editor = window.config_editors.chain_editor
    table, model = editor.tables["pre"], editor.models["pre"]
    focus_row(qtbot, table, 0)
    with qtbot.waitSignal(model.rowsMoved, timeout=WAIT_MS) as moved:
        qtbot.keyClick(table, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert moved.args[1:] == [0, 0, QModelIndex(), 2]
    assert names(editor, "pre") == ["lib/hooks.py:second", "lib/hooks.py:first"]
    assert table.currentIndex().row() == 1

    editor.up_buttons["pre"].click()
    assert names(editor, "pre") == ["lib/hooks.py:first", "lib/hooks.py:second"]
    with qtbot.waitSignal(model.rowsRemoved, timeout=WAIT_MS):
        editor.remove_buttons["pre"].click()
    assert names(editor, "pre") == ["lib/hooks.py:second"]


def test_a_row_dropped_lower_in_its_chain_moves_there(qtbot, window):
    editor = window.config_editors.chain_editor
    model = editor.models["pre"]
    editor.add_hook("pre", ChainRow.builtin("lazyModelDefaultsHook"))
    dragged = model.mimeData([model.index(0, 0)])
    # Dropped into the gap after the last row.
    assert model.dropMimeData(dragged, Qt.DropAction.MoveAction, 3, 0, QModelIndex())
    assert names(editor, "pre") == [
        "lib/hooks.py:second",
        "lazyModelDefaultsHook",
        "lib/hooks.py:first",
    ]
    # A row of the pre chain is not dropped into the post chain.
    post = editor.models["post"]
    assert not post.dropMimeData(
        model.mimeData([model.index(0, 0)]), Qt.DropAction.MoveAction, 0, 0, QModelIndex()
    )


def test_edit_undo_follows_the_editor_on_show(qtbot, window):
    editor = window.config_editors.chain_editor
    focus_row(qtbot, editor.tables["pre"], 0)
    qtbot.keyClick(editor.tables["pre"], Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    window.editors.setCurrentWidget(window.hook_editor)
    window.hook_editor.apply(window.hook_editor.draft.with_rows(()), "Clear targets")

    window.undo_action.trigger()  # the hook editor's edit, the one on show
    assert window.hook_editor.draft.rows != ()
    assert names(editor, "pre") == ["lib/hooks.py:second", "lib/hooks.py:first"]

    assert window.save_action.text() == "&Save Hook"
    window.editors.setCurrentWidget(editor)
    assert window.save_action.text() == "&Save Chains"
    window.undo_action.trigger()
    assert names(editor, "pre") == ["lib/hooks.py:first", "lib/hooks.py:second"]
    window.redo_action.trigger()
    assert names(editor, "pre") == ["lib/hooks.py:second", "lib/hooks.py:first"]


def test_a_draft_with_an_error_shows_where_and_is_never_written(
    qtbot, window, workspace, monkeypatch
):
    editor = window.config_editors.chain_editor
    focus_row(qtbot, editor.tables["pre"], 1)
    qtbot.keyClicks(editor.timeout, "2s")

    pointers = [
        editor.findings_list.item(i).data(Qt.ItemDataRole.UserRole)
        for i in range(editor.findings_list.count())
    ]
    assert "/chain/pre/1/timeout_ms" in pointers
    assert not editor.save_button.isEnabled()
    # A finding leads to its row and field.
    focus_row(qtbot, editor.tables["pre"], 0)
    editor.findings_list.itemActivated.emit(
        editor.findings_list.item(pointers.index("/chain/pre/1/timeout_ms"))
    )
    assert editor.tables["pre"].currentIndex().row() == 1
    qtbot.waitUntil(editor.timeout.hasFocus, timeout=WAIT_MS)
    assert editor.models["pre"].data(editor.models["pre"].index(1, 0), Qt.ItemDataRole.ToolTipRole)
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: warned.append(a[2]))

    window.save_action.trigger()

    assert warned and "timeout_ms" in warned[0]
    assert (workspace / "hookstudio.json").read_text() == SETTINGS


def test_a_missing_file_or_function_is_an_error_that_blocks_save(qtbot, window):
    editor = window.config_editors.chain_editor
    focus_row(qtbot, editor.tables["pre"], 0)
    editor.source.lineEdit().clear()
    qtbot.keyClicks(editor.source.lineEdit(), "lib/nothing.py")
    assert any("lib/nothing.py does not exist" in f.message for f in editor.findings)
    assert not editor.save_button.isEnabled()

    editor.source.lineEdit().clear()
    qtbot.keyClicks(editor.source.lineEdit(), "lib/hooks.py")
    editor.function.lineEdit().clear()
    qtbot.keyClicks(editor.function.lineEdit(), "fourth")
    # The functions are listed off the GUI thread; the finding comes once they are known.
    qtbot.waitUntil(
        lambda: any(
            "lib/hooks.py has no function `fourth`; it has: first, second, third" in f.message
            for f in editor.findings
        ),
        timeout=WAIT_MS,
    )
    assert [editor.function.itemText(i) for i in range(editor.function.count())] == [
        "first",
        "second",
        "third",
    ]
    assert not editor.save_button.isEnabled()


def test_tab_leaves_the_table_and_reaches_every_control(qtbot, window):
    editor = window.config_editors.chain_editor
    table = editor.tables["pre"]
    focus_row(qtbot, table, 0)
    assert not table.tabKeyNavigation()

    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is editor.add_buttons["pre"]
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is table

    seen = set()
    for _ in range(40):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.add(QApplication.focusWidget())
    wanted = {
        editor.add_buttons["pre"],
        editor.remove_buttons["pre"],
        editor.up_buttons["pre"],
        editor.down_buttons["pre"],
        editor.tables["post"],
        editor.add_buttons["post"],
        editor.defaults,
        editor.kind,
        editor.timeout,
        editor.findings_list,
        editor.save_button,
    }
    assert wanted <= seen
    assert editor.source.lineEdit() in seen or editor.source in seen


def test_the_default_validators_switch_is_saved(qtbot, window, workspace):
    editor = window.config_editors.chain_editor
    assert "toolCallValidatorHook → repetitionDetectorHook" in editor.post_order.text()
    editor.defaults.click()
    assert editor.post_order.text() == "Post chain as it runs: no hooks"

    editor.save_button.click()

    assert (workspace / "hookstudio.json").read_text() == SETTINGS.replace(
        '        "post": []\n', '        "post": [],\n        "default_post_validators": false\n'
    )


def test_leaving_with_unsaved_chains_asks_and_discard_brings_back_the_file(
    qtbot, window, workspace, monkeypatch
):
    editor = window.config_editors.chain_editor
    editor.remove_hook("pre", 0)
    asked: list[str] = []

    def discard(*args, **kwargs):
        asked.append(args[2])
        return QMessageBox.StandardButton.Discard

    monkeypatch.setattr(QMessageBox, "question", discard)
    assert window._confirm_discard()
    assert asked and "chains" in asked[0]
    assert names(editor, "pre") == ["lib/hooks.py:first", "lib/hooks.py:second"]
    assert (workspace / "hookstudio.json").read_text() == SETTINGS


def test_an_outside_edit_is_shown_when_nothing_is_unsaved(qtbot, window, workspace):
    editor = window.config_editors.chain_editor
    swapped = SETTINGS.replace('"lib/hooks.py:first"}, {"source": "lib/hooks.py:second"', "X")
    swapped = swapped.replace("X", '"lib/hooks.py:second"}, {"source": "lib/hooks.py:first"')
    (workspace / "hookstudio.json").write_text(swapped)
    qtbot.waitUntil(
        lambda: names(editor, "pre") == ["lib/hooks.py:second", "lib/hooks.py:first"],
        timeout=WAIT_MS,
    )
    assert not editor.undo_stack.canUndo()


# Changed outside while the first pre hook is removed here: the post chain gets a built-in, and
# env (not the chains) changes too.
OUTSIDE = SETTINGS.replace('"post": []', '"post": ["repetitionDetectorHook"]').replace(
    '"ops"', '"sre"'
)


def conflict_dialog(qtbot, window: MainWindow) -> HookConflictDialog:
    def shown() -> list[HookConflictDialog]:
        return [d for d in window.findChildren(HookConflictDialog) if d.isVisible()]

    qtbot.waitUntil(lambda: len(shown()) == 1, timeout=WAIT_MS)
    return shown()[0]


def no_conflict_dialog(window: MainWindow) -> bool:
    return not [d for d in window.findChildren(HookConflictDialog) if d.isVisible()]


def diff_lines(dialog: HookConflictDialog) -> list[str]:
    return dialog.diff.toPlainText().splitlines()


class TestChainsChangedHereAndOutside:
    @pytest.fixture
    def conflict(self, qtbot, window, workspace) -> HookConflictDialog:
        window.config_editors.chain_editor.remove_hook("pre", 0)
        (workspace / "hookstudio.json").write_text(OUTSIDE)
        window.config_editors.chain_editor.save_button.click()
        return conflict_dialog(qtbot, window)

    def test_save_shows_the_two_chain_sections_as_a_diff(self, conflict, workspace):
        assert conflict.windowTitle() == "The chain section changed in two places"
        lines = diff_lines(conflict)
        assert lines[:2] == [
            "--- hookstudio.json (changed outside)",
            "+++ yours (unsaved)",
        ]
        # Theirs: both pre hooks and the built-in; yours: the second pre hook, no post hook.
        assert '-      "source": "lib/hooks.py:first"' in lines
        assert '-    "repetitionDetectorHook"' in lines
        assert '+  "post": []' in lines
        assert '       "source": "lib/hooks.py:second"' in lines  # in both
        assert not any("TEAM" in line for line in lines), "only the chain section is compared"
        assert conflict.cancel_button.isDefault()
        assert (workspace / "hookstudio.json").read_text() == OUTSIDE  # nothing written yet

    def test_keep_mine_writes_my_chains_and_keeps_the_outside_edit_of_the_rest(
        self, qtbot, window, workspace, conflict
    ):
        qtbot.mouseClick(conflict.keep_button, Qt.MouseButton.LeftButton)

        written = json.loads((workspace / "hookstudio.json").read_text())
        assert written["chain"] == {"pre": [{"source": "lib/hooks.py:second"}], "post": []}
        assert written["env"] == {"TEAM": "sre"}
        assert not window.isWindowModified()
        assert no_conflict_dialog(window)

    def test_take_theirs_shows_the_outside_chains_and_undo_brings_mine_back(
        self, qtbot, window, workspace, conflict
    ):
        editor = window.config_editors.chain_editor
        qtbot.mouseClick(conflict.take_button, Qt.MouseButton.LeftButton)

        assert (workspace / "hookstudio.json").read_text() == OUTSIDE
        assert names(editor, "pre") == ["lib/hooks.py:first", "lib/hooks.py:second"]
        assert names(editor, "post") == ["repetitionDetectorHook"]
        assert not window.isWindowModified()
        editor.undo_stack.undo()
        assert names(editor, "pre") == ["lib/hooks.py:second"]
        assert window.isWindowModified()

    def test_cancel_writes_nothing_and_keeps_my_edits(self, qtbot, window, workspace, conflict):
        editor = window.config_editors.chain_editor
        qtbot.mouseClick(conflict.cancel_button, Qt.MouseButton.LeftButton)

        assert (workspace / "hookstudio.json").read_text() == OUTSIDE
        assert names(editor, "pre") == ["lib/hooks.py:second"]
        assert window.isWindowModified()
        assert "Nothing chosen" in window.statusBar().currentMessage()


def test_chains_changed_outside_while_edited_ask_at_once_and_keep_mine_is_saved_later(
    qtbot, window, workspace
):
    editor = window.config_editors.chain_editor
    editor.remove_hook("pre", 0)
    (workspace / "hookstudio.json").write_text(OUTSIDE)

    dialog = conflict_dialog(qtbot, window)  # from the file watcher, before any Save
    assert "Keep editing" in dialog.keep_button.toolTip()
    qtbot.mouseClick(dialog.keep_button, Qt.MouseButton.LeftButton)
    assert (workspace / "hookstudio.json").read_text() == OUTSIDE
    assert window.isWindowModified()

    editor.save_button.click()

    assert no_conflict_dialog(window), "the outside version was already answered for"
    written = json.loads((workspace / "hookstudio.json").read_text())
    assert written["chain"]["pre"] == [{"source": "lib/hooks.py:second"}]
    assert written["chain"]["post"] == []
    assert written["env"] == {"TEAM": "sre"}
    assert not window.isWindowModified()


def test_chains_changed_only_outside_are_taken_though_the_editor_has_undo_steps(
    qtbot, window, workspace
):
    editor = window.config_editors.chain_editor
    # Edited and edited back: unsaved steps, but nothing of the chains differs from the file.
    editor.defaults.setChecked(False)
    editor.defaults.setChecked(True)
    assert window.isWindowModified()

    (workspace / "hookstudio.json").write_text(OUTSIDE)

    qtbot.waitUntil(lambda: names(editor, "post") == ["repetitionDetectorHook"], timeout=WAIT_MS)
    assert no_conflict_dialog(window)
    assert not window.isWindowModified()
    assert (workspace / "hookstudio.json").read_text() == OUTSIDE


def test_chains_changed_only_here_are_saved_over_an_outside_edit_of_other_keys(
    qtbot, window, workspace
):
    editor = window.config_editors.chain_editor
    editor.remove_hook("pre", 0)
    outside = SETTINGS.replace('"ops"', '"sre"')
    (workspace / "hookstudio.json").write_text(outside)

    editor.save_button.click()

    assert no_conflict_dialog(window)
    text = (workspace / "hookstudio.json").read_text()
    assert json.loads(text)["chain"]["pre"] == [{"source": "lib/hooks.py:second"}]
    assert '"env": {"TEAM":   "sre"}' in text  # the outside edit, byte for byte
    assert not window.isWindowModified()


def test_unsaved_chains_survive_a_crash_and_are_offered_back(
    qtbot, workspace, tmp_path, monkeypatch
):
    first = MainWindow(AppSettings(), tmp_path / "settings.json")
    monkeypatch.setattr(first.bridge, "warm_up", lambda: None)
    first.show()
    assert first.open_workspace(workspace)
    first.config_editors.chain_editor.remove_hook("pre", 0)
    qtbot.waitUntil(
        lambda: load_recovery(workspace, "hookstudio.json#chain") is not None, timeout=WAIT_MS
    )
    # As after a crash: the window goes without being asked about its edits.
    for stack in first.config_editors.stacks:
        stack.setClean()
    assert first.close()

    offered: list[str] = []

    def restore(*args, **kwargs):
        offered.append(args[2])
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", restore)
    second = MainWindow(AppSettings(), tmp_path / "settings.json")
    monkeypatch.setattr(second.bridge, "warm_up", lambda: None)
    second.show()
    assert second.open_workspace(workspace)
    editor = second.config_editors.chain_editor
    assert offered and "chains" in offered[0]
    assert names(editor, "pre") == ["lib/hooks.py:second"]
    assert second.isWindowModified()

    editor.save_button.click()
    assert load_recovery(workspace, "hookstudio.json#chain") is None
    assert second.close()


def test_on_a_small_screen_tab_reaches_the_findings_scrolled_into_view_and_save(qtbot, window):
    window.resize(1024, 640)
    editor = window.config_editors.chain_editor
    qtbot.waitUntil(lambda: window.size().height() == 640, timeout=WAIT_MS)
    for _ in range(6):  # a long chain: the findings sit below the window's bottom edge
        editor.add_hook("pre", ChainRow.builtin("lazyModelDefaultsHook"))
    focus_row(qtbot, editor.tables["pre"], 0)
    assert editor.findings_list.visibleRegion().isEmpty(), "below the fold at first"
    for _ in range(20):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        if QApplication.focusWidget() is editor.findings_list:
            break
    assert QApplication.focusWidget() is editor.findings_list
    assert not editor.findings_list.visibleRegion().isEmpty()
    qtbot.keyClick(editor.findings_list, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is editor.save_button
    assert not editor.save_button.visibleRegion().isEmpty()


def test_a_section_changed_outside_exactly_as_edited_here_is_saved_without_a_question(
    qtbot, window, workspace
):
    editor = window.config_editors.chain_editor
    editor.remove_hook("pre", 0)
    outside = SETTINGS.replace('{"source": "lib/hooks.py:first"}, ', "")
    (workspace / "hookstudio.json").write_text(outside)

    editor.save_button.click()  # no dialog: the conftest fails any

    assert (workspace / "hookstudio.json").read_text() == outside
    assert not window.isWindowModified()
