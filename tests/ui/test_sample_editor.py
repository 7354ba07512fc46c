"""The sample editor on a real workspace copy: opening, live checks, jumps, the structured view,
templates, duplicate / rename / delete, changes on disk and saving. (What it shows is computed in
core: the checks, the outlines and the file operations are tested headless in tests/core.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction, QKeySequence, QTextCursor
from PySide6.QtWidgets import QMainWindow, QMessageBox
from pytestqt.qtbot import QtBot

from studio.core.chain.sample import (
    ChainSample,
    parse_chain_sample,
)
from studio.core.invocation.sample import InvocationSample, parse_invocation_sample
from studio.core.pre_llm.request import validate_request
from studio.core.registry import CONTRACTS
from studio.core.step.sample import StepSample, parse_step_sample
from studio.core.workspace.folder import Workspace
from studio.core.workspace.sample_check import contract_findings, sample_outline
from studio.core.workspace.sample_files import sample_name_problem
from studio.ui.engine_bridge import EngineBridge
from studio.ui.samples.editor import SampleEditor
from studio.ui.samples.open_sample import MOST_SLICE, slice_end
from studio.ui.samples.structure_model import StructureModel
from tests.support.paths import BUNDLED_WORKSPACE

# A bound on waiting for a condition, not a speed check: the suite runs beside other work.
WAIT_MS = 20_000


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    bridge = EngineBridge()
    yield bridge
    bridge.shutdown()
    # EngineBridge.shutdown stops its event loop but does not close it; an unclosed loop is a
    # ResourceWarning (an error under -W error) when it is collected.
    loop = bridge._loop
    if not loop.is_running() and not loop.is_closed():
        loop.close()


@pytest.fixture
def editor(qtbot: QtBot, bridge: EngineBridge, sample_workspace: Path) -> SampleEditor:
    widget = SampleEditor(bridge)
    qtbot.addWidget(widget)
    widget.resize(1000, 650)
    widget.show()
    widget.set_workspace(Workspace.open(sample_workspace))
    return widget


def open_sample(qtbot: QtBot, editor: SampleEditor, name: str) -> None:
    with qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS) as opened:
        editor.select_sample(name)
    assert opened.args == [name]


def type_text(qtbot: QtBot, editor: SampleEditor, text: str) -> None:
    """Replace the whole text as a user would (undoable), then wait for the check of it."""
    cursor = editor.editor.textCursor()
    cursor.select(QTextCursor.SelectionType.Document)
    with qtbot.waitSignal(editor.checked, timeout=WAIT_MS):
        cursor.insertText(text)


def problem_rows(editor: SampleEditor) -> list[tuple[str, str, str]]:
    model = editor.view.problems.model
    return [
        (model.item(r, 0).text(), model.item(r, 1).text(), model.item(r, 2).text())
        for r in range(model.rowCount())
    ]


def structure_rows(model: StructureModel, parent: QModelIndex | None = None) -> dict[str, Any]:
    parent = parent or QModelIndex()
    return {
        model.index(r, 0, parent).data(): model.index(r, 1, parent).data()
        for r in range(model.rowCount(parent))
    }


def row_of(model: StructureModel, label: str, parent: QModelIndex | None = None) -> QModelIndex:
    parent = parent or QModelIndex()
    for r in range(model.rowCount(parent)):
        index = model.index(r, 0, parent)
        if index.data() == label:
            return index
    raise AssertionError(f"no row {label!r}")


# ---- opening ---------------------------------------------------------------------------------


def test_the_list_shows_the_workspace_samples(editor: SampleEditor):
    assert editor.sample_list.model.names == [
        "chain-refund",
        "invocation-consensus-failing",
        "invocation-parallel-billing",
        "invocation-pipeline-review",
        "invocation-swarm-refund",
        "step-escalated",
        "support-ticket",
        "support-ticket-context",
    ]
    assert editor.current_sample() is None
    assert not editor.is_modified()


def test_opening_a_sample_shows_its_text_and_structure(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    open_sample(qtbot, editor, "support-ticket")
    on_disk = (sample_workspace / "samples" / "support-ticket.json").read_text()
    assert editor.editor.toPlainText() == on_disk
    assert editor.current_sample() == "support-ticket"
    assert editor.sample_list.view.currentIndex().data() == "support-ticket"
    assert "pre-LLM hook" in editor.view.contract_label.text()
    assert editor.view.problems.model.rowCount() == 0
    assert editor.view.status.text().startswith("✓")

    editor.view.tabs.setCurrentIndex(1)
    model = editor.view.structure.model
    top = structure_rows(model)
    assert top["System"] == '"You are a support agent."'
    assert top["Messages"] == "3 messages"
    assert top["Tools"] == "3 tools"
    assert "maxTokens 1024" in top["Options"]

    messages = row_of(model, "Messages")
    editor.view.structure.tree.expand(messages)
    assert list(structure_rows(model, messages)) == ["0  user", "1  assistant", "2  user"]
    assistant = row_of(model, "1  assistant", messages)
    editor.view.structure.tree.expand(assistant)
    blocks = structure_rows(model, assistant)
    assert blocks["text"] == '"Let me read the order log."'
    assert blocks["tool_use"].startswith("fs_read {path}")
    tools = row_of(model, "Tools")
    editor.view.structure.tree.expand(tools)
    assert structure_rows(model, tools) == {
        "fs_read": '"Read a file"',
        "fs_write": '"Write a file"',
        "shell": '"Run a shell command"',
    }

    # Activating a row of the structure jumps to that value in the text.
    editor.view.structure.tree.activated.emit(row_of(model, "shell", tools))
    assert editor.view.tabs.currentIndex() == 0
    line = editor.editor.textCursor().block().text()
    assert editor.editor.textCursor().positionInBlock() == line.index('{"name": "shell"')


def test_step_and_chain_samples_have_their_own_structure(qtbot: QtBot, editor: SampleEditor):
    editor.view.tabs.setCurrentIndex(1)
    open_sample(qtbot, editor, "step-escalated")
    model = editor.view.structure.model
    top = structure_rows(model)
    assert top["Baseline"].startswith("4 contributors")
    assert top["Step"] == "index 1 · tool-result · 3 messages"
    baseline = row_of(model, "Baseline")
    editor.view.structure.tree.expand(baseline)
    contributors = row_of(model, "Contributors", baseline)
    editor.view.structure.tree.expand(contributors)
    assert structure_rows(model, contributors)["safety-policy"] == "work-policy"

    open_sample(qtbot, editor, "chain-refund")
    top = structure_rows(model)
    assert top["Context"] == "model claude-sonnet · 1 message"
    assert top["Responses"] == "2 scripted responses"
    responses = row_of(model, "Responses")
    editor.view.structure.tree.expand(responses)
    assert "calls lookupOrder" in structure_rows(model, responses)["1  assistant"]


# ---- checks as you type ---------------------------------------------------------------------


def test_broken_json_is_marked_with_its_line_and_column(qtbot: QtBot, editor: SampleEditor):
    open_sample(qtbot, editor, "support-ticket")
    text = editor.editor.toPlainText()
    broken = text.replace('"loop": "main",', '"loop": "main"', 1)
    type_text(qtbot, editor, broken)

    rows = problem_rows(editor)
    assert len(rows) == 1
    where, path, message = rows[0]
    assert where == "4:3"
    assert path == "JSON syntax"
    assert "Expecting ',' delimiter" in message
    assert "missing at the end of line 3" in message
    assert "line 4, column 3" in editor.view.status.text()
    assert editor.editor.error_lines == {3: "error"}
    marks = editor.editor.extraSelections()
    assert any(m.cursor.block().blockNumber() == 3 for m in marks)
    assert editor.is_modified()
    assert editor.sample_list.view.currentIndex().data() == "support-ticket  ●"

    # Undo is the editor's own, and puts the text (and the check) back.
    with qtbot.waitSignal(editor.checked, timeout=WAIT_MS):
        editor.editor.undo()
    assert editor.editor.toPlainText() == text
    assert problem_rows(editor) == []
    assert not editor.is_modified()


def test_a_contract_finding_lists_its_path_and_jumps_to_the_value(
    qtbot: QtBot, editor: SampleEditor
):
    open_sample(qtbot, editor, "support-ticket")
    document = json.loads(editor.editor.toPlainText())
    document["request"]["messages"][0]["role"] = "bot"
    type_text(qtbot, editor, json.dumps(document, indent=2))

    rows = problem_rows(editor)
    paths = [path for _, path, _ in rows]
    assert "/request/messages/0/role" in paths
    k = paths.index("/request/messages/0/role")
    assert 'must be "user" or "assistant", got "bot"' in rows[k][2]
    lines = editor.editor.toPlainText().split("\n")
    line = next(i for i, text in enumerate(lines) if '"role": "bot"' in text)
    column = lines[line].index('"bot"')
    assert rows[k][0] == f"{line + 1}:{column + 1}"
    assert "contract problem" in editor.view.status.text()

    editor.view.problems.view.clicked.emit(editor.view.problems.model.index(k, 2))
    cursor = editor.editor.textCursor()
    assert (cursor.blockNumber(), cursor.positionInBlock()) == (line, column)
    assert editor.editor.hasFocus() or not editor.isActiveWindow()


def test_a_missing_key_jumps_to_the_object_that_should_hold_it(qtbot: QtBot, editor: SampleEditor):
    open_sample(qtbot, editor, "support-ticket")
    document = json.loads(editor.editor.toPlainText())
    del document["request"]["system"]
    type_text(qtbot, editor, json.dumps(document, indent=2))
    rows = problem_rows(editor)
    k = [path for _, path, _ in rows].index("/request/system")
    assert rows[k][2].endswith("(missing here)")
    editor.view.problems.view.clicked.emit(editor.view.problems.model.index(k, 0))
    cursor = editor.editor.textCursor()
    assert cursor.block().text().strip() == '"request": {'
    assert cursor.block().text()[cursor.positionInBlock()] == "{"


# ---- templates, duplicate, rename, delete ----------------------------------------------------


def test_each_template_makes_a_valid_sample_of_its_contract(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    parsers = {
        "pre_llm": lambda d: validate_request(d["request"]) == [],
        "step": lambda d: isinstance(parse_step_sample(d), StepSample),
        "chain": lambda d: isinstance(parse_chain_sample(d), ChainSample),
        "invocation": lambda d: isinstance(parse_invocation_sample(d), InvocationSample),
    }
    for contract in CONTRACTS:
        with (
            qtbot.waitSignal(editor.samples_changed, timeout=WAIT_MS),
            qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS),
        ):
            name = editor.new_sample(contract)
        assert name == CONTRACTS[contract].new_sample_stem
        path = sample_workspace / "samples" / f"{name}.json"
        document = json.loads(path.read_text())
        assert parsers[contract](document)
        assert Workspace.open(sample_workspace).sample(name).contract == contract
        assert editor.current_sample() == name
        assert editor.view.problems.model.rowCount() == 0
        assert name in editor.sample_list.model.names
    # A second one of a kind gets a free name.
    with qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS):
        assert editor.new_sample("chain") == "new-chain-2"


def test_duplicate_rename_and_delete(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path, monkeypatch: pytest.MonkeyPatch
):
    samples = sample_workspace / "samples"
    open_sample(qtbot, editor, "support-ticket")

    selected: list[str] = []
    editor.sample_selected.connect(selected.append)
    with qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS):
        copy = editor.duplicate_sample()
    assert copy == "support-ticket-copy"
    assert (samples / "support-ticket-copy.json").read_bytes() == (
        samples / "support-ticket.json"
    ).read_bytes()
    assert editor.current_sample() == copy
    assert selected == [copy]

    # Bad names and names in use are refused; nothing on disk changes.
    assert sample_name_problem("../evil") is not None
    assert not editor.rename_sample(copy, "../evil")
    assert "Not renamed" in editor.view.status.text()
    assert not editor.rename_sample(copy, "chain-refund")
    assert "exists already" in editor.view.status.text()
    assert (samples / "support-ticket-copy.json").exists()

    with qtbot.waitSignal(editor.samples_changed, timeout=WAIT_MS):
        assert editor.rename_sample(copy, "refund-twice.json")
    assert not (samples / "support-ticket-copy.json").exists()
    assert (samples / "refund-twice.json").exists()
    assert editor.current_sample() == "refund-twice"
    assert editor.sample_list.view.currentIndex().data() == "refund-twice"
    assert selected[-1] == "refund-twice"

    # Renaming in the list goes through the model and lands once the editor has closed.
    index = editor.sample_list.model.index(editor.sample_list.model.row_of("refund-twice"))
    with qtbot.waitSignal(editor.samples_changed, timeout=WAIT_MS):
        assert editor.sample_list.model.setData(index, "twice", Qt.ItemDataRole.EditRole)
    assert (samples / "twice.json").exists()
    assert editor.current_sample() == "twice"

    # Delete asks first; Cancel keeps the file.
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Yes]
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: answers.pop(0))
    assert not editor.delete_sample("twice")
    assert (samples / "twice.json").exists()
    with qtbot.waitSignal(editor.samples_changed, timeout=WAIT_MS):
        assert editor.delete_sample("twice")
    assert not (samples / "twice.json").exists()
    assert "twice" not in editor.sample_list.model.names
    assert editor.current_sample() in editor.sample_list.model.names


def test_list_keys_and_echoes_from_the_window(qtbot: QtBot, editor: SampleEditor):
    open_sample(qtbot, editor, "support-ticket")
    # While the editor announces a change, the window's select_sample echo is ignored.
    editor.samples_changed.connect(lambda: editor.select_sample("chain-refund"))
    with qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS):
        name = editor.new_sample("pre_llm")
    assert editor.current_sample() == name
    # Picking a row with the keyboard opens it and tells the window.
    editor.sample_list.view.setFocus()
    with (
        qtbot.waitSignal(editor.sample_selected, timeout=WAIT_MS) as picked,
        qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS),
    ):
        qtbot.keyClick(editor.sample_list.view, Qt.Key.Key_Home)
    assert picked.args == ["chain-refund"]
    assert editor.sample_list.delete_action.shortcut().toString() == "Del"
    assert editor.sample_list.rename_action.shortcut().toString() == "F2"


# ---- disk and saving ---------------------------------------------------------------------------


def test_an_unmodified_sample_follows_its_file(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    path = sample_workspace / "samples" / "chain-refund.json"
    open_sample(qtbot, editor, "chain-refund")
    changed = path.read_text().replace("claude-sonnet", "claude-opus")
    path.write_text(changed)
    with qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS):
        editor.on_files_changed({str(path)})
    assert editor.editor.toPlainText() == changed
    assert not editor.is_modified()
    assert editor.view.notice.isHidden()


def test_unsaved_edits_survive_a_change_on_disk_with_a_notice(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    path = sample_workspace / "samples" / "chain-refund.json"
    open_sample(qtbot, editor, "chain-refund")
    mine = editor.editor.toPlainText().replace("today", "tomorrow")
    type_text(qtbot, editor, mine)
    path.write_text(path.read_text().replace("claude-sonnet", "claude-opus"))
    editor.on_files_changed({str(path.parent)})
    qtbot.waitUntil(lambda: editor.view.notice.isVisible(), timeout=WAIT_MS)
    assert "changed outside the studio" in editor.view.notice.label.text()
    assert editor.editor.toPlainText() == mine
    assert editor.is_modified()

    with qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS):
        editor.view.notice.reload_button.click()
    assert "claude-opus" in editor.editor.toPlainText()
    assert not editor.is_modified()
    assert editor.view.notice.isHidden()


def test_save_writes_the_file_and_refuses_text_that_is_not_json(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    path = sample_workspace / "samples" / "support-ticket.json"
    open_sample(qtbot, editor, "support-ticket")
    original = path.read_text()
    type_text(qtbot, editor, original.replace("0.7", "0.2"))
    assert editor.is_modified()

    editor.editor.setFocus()
    with qtbot.waitSignal(editor.sample_saved, timeout=WAIT_MS) as saved:
        qtbot.keyClick(editor.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert saved.args == ["support-ticket"]
    assert path.read_text() == original.replace("0.7", "0.2")
    assert not editor.is_modified()
    assert editor.view.status.text() == "Saved samples/support-ticket.json"
    assert editor.sample_list.view.currentIndex().data() == "support-ticket"
    assert not list(path.parent.glob(".*.tmp"))

    type_text(qtbot, editor, original.replace('"loop": "main",', '"loop": "main"'))
    assert not editor.save()
    assert "Not saved" in editor.view.status.text()
    assert path.read_text() == original.replace("0.7", "0.2")

    # A contract problem does not stop a save, but the status says it remains.
    document = json.loads(original)
    del document["request"]["options"]
    type_text(qtbot, editor, json.dumps(document, indent=2))
    with qtbot.waitSignal(editor.sample_saved, timeout=WAIT_MS):
        editor.view.save_button.click()
    assert json.loads(path.read_text()) == document
    assert "1 contract problem left" in editor.view.status.text()


def test_edits_are_kept_while_looking_at_another_sample(qtbot: QtBot, editor: SampleEditor):
    open_sample(qtbot, editor, "support-ticket")
    edited = editor.editor.toPlainText().replace("support agent", "refund agent")
    type_text(qtbot, editor, edited)
    open_sample(qtbot, editor, "chain-refund")
    assert editor.is_modified()
    assert editor.modified_samples() == ["support-ticket"]
    row = editor.sample_list.model.row_of("support-ticket")
    assert editor.sample_list.model.index(row).data() == "support-ticket  ●"
    editor.select_sample("support-ticket")  # kept in memory: no load needed
    assert editor.editor.toPlainText() == edited
    editor.editor.undo()
    assert "support agent" in editor.editor.toPlainText()


def test_ctrl_s_in_the_editor_saves_the_sample_not_the_window(
    qtbot: QtBot, bridge: EngineBridge, sample_workspace: Path
):
    window = QMainWindow()
    qtbot.addWidget(window)
    saved_by_window: list[bool] = []
    window_save = QAction("Save Hook", window)
    window_save.setShortcut(QKeySequence.StandardKey.Save)
    window_save.triggered.connect(lambda: saved_by_window.append(True))
    window.addAction(window_save)
    editor = SampleEditor(bridge)
    window.setCentralWidget(editor)
    window.show()
    window.activateWindow()
    editor.set_workspace(Workspace.open(sample_workspace))
    open_sample(qtbot, editor, "chain-refund")
    type_text(qtbot, editor, editor.editor.toPlainText().replace("today", "tomorrow"))
    editor.editor.setFocus()
    with qtbot.waitSignal(editor.sample_saved, timeout=WAIT_MS):
        qtbot.keyClick(editor.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert saved_by_window == []
    assert "tomorrow" in (sample_workspace / "samples" / "chain-refund.json").read_text()


def test_a_large_sample_is_coloured_where_seen_and_its_structure_read_when_shown(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
        for i in range(1500)
    ]
    document = {
        "request": {"system": "s", "messages": messages, "tools": [], "options": {}},
    }
    text = json.dumps(document, indent=2)
    assert text.count("\n") > 4000
    (sample_workspace / "samples" / "long.json").write_text(text)
    editor.on_files_changed({str(sample_workspace / "samples")})
    open_sample(qtbot, editor, "long")
    opened = editor.samples.current
    assert opened is not None and opened.large
    assert opened.highlighter is None and editor.editor.visible_highlighter.active
    assert opened.shown_document is None  # not kept while the structure is not on screen
    first = editor.editor.document().findBlockByNumber(2)
    assert first.layout().formats()  # the lines on screen are coloured
    assert not editor.editor.document().lastBlock().layout().formats()

    editor.view.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: editor.view.structure.model.rowCount() > 0, timeout=WAIT_MS)
    assert structure_rows(editor.view.structure.model)["Messages"] == "1500 messages"
    messages_row = row_of(editor.view.structure.model, "Messages")
    editor.view.structure.tree.expand(messages_row)
    # Rows come a batch at a time, as the view needs them.
    fetched = editor.view.structure.model.rowCount(messages_row)
    assert fetched % StructureModel.BATCH == 0 and fetched < 1500
    assert editor.view.structure.model.canFetchMore(messages_row)
    editor.view.structure.model.fetchMore(messages_row)
    assert editor.view.structure.model.rowCount(messages_row) == fetched + StructureModel.BATCH

    # Going to a value reads the large text a piece at a time, then finds the value.
    editor.view.tabs.setCurrentIndex(0)
    line = next(
        k for k, row in enumerate(text.splitlines()) if row.endswith('"content": "message 1200"')
    )
    editor.samples.jump_to("/request/messages/1200/content")
    qtbot.waitUntil(lambda: editor.editor.textCursor().blockNumber() == line, timeout=WAIT_MS)


def five_megabyte_sample() -> str:
    """A pre-LLM sample of just over 5 MB, pretty-printed, with non-ASCII text (accents, CJK and
    characters outside the Basic Multilingual Plane, which Qt counts as two units)."""
    words = ["refund", "order", "東京", "café", "policy", "🙂", "tool", "result", "résumé", "the"]
    messages = [
        {
            "role": "user" if k % 2 == 0 else "assistant",
            "content": " ".join(words[(k + j) % len(words)] for j in range(40)) + f" #{k}",
        }
        for k in range(15_600)
    ]
    document = {"request": {"system": "s", "messages": messages, "tools": [], "options": {}}}
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert len(text.encode("utf-8")) > 5_000_000
    return text


def test_a_five_megabyte_sample_is_shown_at_once_opens_edits_and_saves_back_unchanged(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    path = sample_workspace / "samples" / "captured.json"
    text = five_megabyte_sample()
    path.write_bytes(text.encode("utf-8"))
    original = path.read_bytes()
    editor.on_files_changed({str(sample_workspace / "samples")})
    opened: list[str] = []
    editor.sample_opened.connect(opened.append)

    editor.select_sample("captured")
    # The top of the text is painted while the rest is still going in: read-only, no Save.
    qtbot.waitUntil(lambda: editor.editor.painted_text, timeout=WAIT_MS)
    assert editor.editor.toPlainText().startswith(text[:200])
    assert opened == []
    assert editor.editor.isReadOnly()
    assert not editor.view.save_button.isEnabled()
    assert editor.view.status.text().startswith("Opening captured (5.0 MB)")

    qtbot.waitUntil(lambda: opened == ["captured"], timeout=WAIT_MS)
    assert editor.editor.toPlainText() == text
    assert editor.editor.textCursor().position() == 0
    assert not editor.editor.isReadOnly()
    assert editor.view.save_button.isEnabled()
    assert not editor.is_modified()
    assert editor.view.problems.model.rowCount() == 0
    assert editor.view.status.text().startswith("✓")

    # An edit makes it modified and is checked; undoing it makes it unmodified again.
    cursor = editor.editor.textCursor()
    cursor.setPosition(text.index('"s"') + 1)
    with qtbot.waitSignal(editor.checked, timeout=WAIT_MS):
        cursor.insertText("x")
    assert editor.is_modified()
    assert editor.view.status.text().startswith("✓")
    editor.editor.undo()
    assert not editor.is_modified()
    assert editor.editor.toPlainText() == text

    with qtbot.waitSignal(editor.sample_saved, timeout=WAIT_MS):
        assert editor.save()
    assert path.read_bytes() == original


def minified_sample(messages: int) -> tuple[dict[str, Any], str]:
    """A captured request as a provider's client sends it: no line breaks at all."""
    rows = [{"role": "user", "content": f"message {k} " + "x" * 200} for k in range(messages)]
    document = {"request": {"system": "s", "messages": rows, "tools": [], "options": {}}}
    return document, json.dumps(document, separators=(",", ":"))


def write_sample(editor: SampleEditor, workspace: Path, name: str, data: bytes) -> Path:
    path = workspace / "samples" / f"{name}.json"
    path.write_bytes(data)
    editor.on_files_changed({str(workspace / "samples")})
    return path


def test_a_minified_sample_is_shown_indented_and_its_file_left_as_it_is(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    document, text = minified_sample(6000)
    assert "\n" not in text and len(text) > 2 * MOST_SLICE
    path = write_sample(editor, sample_workspace, "minified", text.encode())
    open_sample(qtbot, editor, "minified")

    shown = editor.editor.toPlainText()
    assert shown == json.dumps(document, indent=2)
    assert editor.editor.document().blockCount() == shown.count("\n") + 1
    notice = editor.view.layout_notice
    assert notice.isVisible()
    assert notice.label.text().startswith(
        f"samples/minified.json has a line of {len(text):,} characters. It is shown indented"
    )
    assert not editor.is_modified()
    assert editor.view.status.text().startswith("✓")
    assert path.read_text() == text

    # Save writes what is shown, and the file is then as shown.
    with qtbot.waitSignal(editor.sample_saved, timeout=WAIT_MS):
        assert editor.save()
    assert path.read_text() == shown
    assert notice.isHidden()


def test_the_bar_over_a_minified_sample_closes_with_ok(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    _, text = minified_sample(1000)
    path = write_sample(editor, sample_workspace, "minified", text.encode())
    open_sample(qtbot, editor, "minified")
    notice = editor.view.layout_notice
    assert notice.isVisible()
    notice.ok_button.click()
    assert notice.isHidden()
    assert editor.editor.document().blockCount() > 1000
    assert path.read_text() == text


def test_a_minified_sample_can_be_shown_as_written(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    _, text = minified_sample(1000)
    write_sample(editor, sample_workspace, "minified", text.encode())
    open_sample(qtbot, editor, "minified")
    assert editor.editor.document().blockCount() > 1000

    opened: list[str] = []
    editor.sample_opened.connect(opened.append)
    slices: list[object] = []
    editor.samples._filler.progressed.connect(slices.append)
    editor.view.layout_notice.as_written_button.click()
    qtbot.waitUntil(lambda: opened == ["minified"], timeout=WAIT_MS)
    assert editor.editor.toPlainText() == text
    assert editor.editor.document().blockCount() == 1
    # In one piece: a line laid out again for each slice added to it took minutes at 5 MB.
    assert slices == []
    assert editor.view.layout_notice.isHidden()
    assert not editor.is_modified()


def test_a_long_line_that_is_not_json_is_shown_as_written(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    _, text = minified_sample(1000)
    broken = text[:-1]  # the last brace is missing: no layout of it is safe to change
    write_sample(editor, sample_workspace, "broken", broken.encode())
    open_sample(qtbot, editor, "broken")
    assert editor.editor.toPlainText() == broken
    assert editor.view.layout_notice.isHidden()
    assert problem_rows(editor)


def test_a_sample_with_short_lines_is_shown_as_written(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    document, _ = minified_sample(1000)
    text = json.dumps(document, indent=4) + "\n"
    write_sample(editor, sample_workspace, "wide", text.encode())
    open_sample(qtbot, editor, "wide")
    assert editor.editor.toPlainText() == text
    assert editor.view.layout_notice.isHidden()


@pytest.mark.parametrize(
    ("text", "start", "size", "end"),
    [
        ("ab\ncd\nef\n", 0, 4, 3),  # back to the end of the last whole line in the slice
        ("ab\ncd\nef\n", 3, 4, 6),
        ("ab\ncd\nef\n", 0, 100, 9),  # the rest, when it is shorter than a slice
        ("abcdefgh\nij", 0, 3, 9),  # a line longer than a slice goes in whole
        ("abcdefgh", 0, 3, 8),  # and so does a last line with no line break
    ],
)
def test_a_slice_of_text_ends_after_a_line_break(text: str, start: int, size: int, end: int):
    assert slice_end(text, start, size) == end


def test_scrolling_a_large_sample_while_it_opens_keeps_the_place(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    (sample_workspace / "samples" / "captured.json").write_text(five_megabyte_sample())
    editor.on_files_changed({str(sample_workspace / "samples")})
    editor.select_sample("captured")
    qtbot.waitUntil(lambda: editor.editor.painted_text, timeout=WAIT_MS)
    with qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS):
        editor.editor.verticalScrollBar().setValue(200)  # line 201 at the top
    assert editor.editor.verticalScrollBar().value() == 200
    assert editor.editor.textCursor().blockNumber() == 200
    assert editor.view.position.text() == "Ln 201, Col 1"


def test_a_sample_deleted_on_disk_closes_or_keeps_the_edits(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    samples = sample_workspace / "samples"
    open_sample(qtbot, editor, "chain-refund")
    (samples / "chain-refund.json").unlink()
    editor.on_files_changed({str(samples)})
    assert editor.current_sample() is None
    assert "chain-refund" not in editor.sample_list.model.names

    open_sample(qtbot, editor, "step-escalated")
    mine = editor.editor.toPlainText().replace("tier-2", "tier-3")
    type_text(qtbot, editor, mine)
    (samples / "step-escalated.json").unlink()
    editor.on_files_changed({str(samples)})
    assert editor.view.notice.isVisible()
    assert "deleted outside the studio" in editor.view.notice.label.text()
    assert "step-escalated" in editor.sample_list.model.names  # kept while it has unsaved edits
    editor.view.notice.keep_button.click()
    with qtbot.waitSignal(editor.sample_saved, timeout=WAIT_MS):
        editor.save()
    assert (samples / "step-escalated.json").read_text() == mine
    editor.on_files_changed({str(samples)})
    assert editor.view.notice.isHidden()


def test_the_sample_list_keeps_qts_model_rules(
    qtbot: QtBot, qtmodeltester: Any, editor: SampleEditor
):
    qtmodeltester.check(editor.sample_list.model)
    # Rows come and go under the tester's eye: a new sample, an unsaved one marked, a rename.
    with qtbot.waitSignal(editor.sample_opened, timeout=WAIT_MS):
        name = editor.new_sample("step")
    assert name is not None
    type_text(qtbot, editor, editor.editor.toPlainText().replace("persona", "writer"))
    assert editor.rename_sample(name, "renamed")
    names = [
        "chain-refund",
        "invocation-consensus-failing",
        "invocation-parallel-billing",
        "invocation-pipeline-review",
        "invocation-swarm-refund",
        "renamed",
        "step-escalated",
        "support-ticket",
        "support-ticket-context",
    ]
    assert editor.sample_list.model.names == names


@pytest.mark.parametrize("name", ["support-ticket", "step-escalated", "chain-refund"])
def test_the_structure_of_each_bundled_sample_keeps_qts_model_rules(qtmodeltester: Any, name: str):
    document = json.loads((BUNDLED_WORKSPACE / "samples" / f"{name}.json").read_text())
    model = StructureModel()
    model.set_entries(sample_outline(contract_findings(document)[0], document))
    qtmodeltester.check(model)  # the tester opens every branch, filling it as a view would


def test_an_edit_while_a_large_sample_is_being_saved_is_saved_too(
    qtbot: QtBot, editor: SampleEditor, sample_workspace: Path
):
    path = sample_workspace / "samples" / "captured.json"
    text = five_megabyte_sample()
    path.write_text(text)
    editor.on_files_changed({str(sample_workspace / "samples")})
    open_sample(qtbot, editor, "captured")
    cursor = editor.editor.textCursor()
    cursor.setPosition(text.index('"s"') + 1)
    cursor.insertText("a")
    with qtbot.waitSignal(editor.sample_saved, timeout=WAIT_MS):
        assert editor.save()  # its text is read a slice at a time, the first at once
        cursor.insertText("b")  # before the rest is read
    assert path.read_text() == text.replace('"s"', '"abs"', 1)
    assert not editor.is_modified()
