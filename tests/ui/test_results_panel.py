"""The results panel shows real outcomes of the engine: the diff, the records, the turn error with
its links, the output and the runs on every target side by side."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import QFileDialog, QMessageBox

from studio.core.run_outcome import RunOutcome
from studio.core.shown_text import LINE_CHARS_SHOWN
from studio.core.workspace.folder import Workspace
from studio.engine.runner import Runner
from studio.ui.engine_bridge import EngineBridge, engine_failure
from studio.ui.result_decision_view import EFFECTIVE_TITLE
from studio.ui.result_error_view import STUDIO_TRACEBACK_TITLE
from studio.ui.result_json_tree import DETAIL_CHARS, EXPANDED_MOST, JsonTreeView, pretty
from studio.ui.result_output_view import CUT_MARK, OUTPUT_CHARS_SHOWN
from studio.ui.results_panel import ResultsPanel
from studio.ui.run_view import (
    TAB_DECISION,
    TAB_DIFF,
    TAB_ERROR,
    TAB_OUTPUT,
    TAB_RESULT,
    TAB_TITLES,
    WARNING_CHARS,
    WARNINGS_SHOWN,
)

Run = tuple[str, str | None, str | None]  # sample, loop, hook


def run(workspace: Path, *runs: Run) -> list[RunOutcome]:
    """Real outcomes from the engine; the runner (and its fork server) is closed afterwards."""

    async def go() -> list[RunOutcome]:
        runner = Runner(Workspace.open(workspace))
        try:
            return [await runner.run(s, loop=loop, hook=hook) for s, loop, hook in runs]
        finally:
            await runner.close()

    return asyncio.run(go())


def write_hook(workspace: Path, name: str, text: str) -> None:
    (workspace / "lib" / name).write_text(text, encoding="utf-8")


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()


@pytest.fixture
def panel(qtbot, bridge) -> ResultsPanel:
    widget = ResultsPanel(bridge)
    qtbot.addWidget(widget)
    widget.resize(900, 640)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def shown(qtbot, panel: ResultsPanel, outcome: RunOutcome | BaseException) -> None:
    panel.show_outcome(outcome)
    qtbot.waitUntil(lambda: panel.diff_ready)


RETOOL = """
def retool(payload):
    request = payload["request"]
    tools = []
    for tool in request["tools"]:
        if tool["name"] == "shell":
            continue
        if tool["name"] == "fs_read":
            tool = {**tool, "description": "Read one file of the ticket"}
        tools.append(tool)
    print("kept", len(tools), "tools")
    return {**request, "tools": tools, "options": {**request["options"], "temperature": 0.2}}
"""


class TestSuccessfulPreLlm:
    def test_the_summary_line_and_a_changed_tool(self, qtbot, panel, sample_workspace):
        write_hook(sample_workspace, "retool.py", RETOOL)
        (outcome,) = run(sample_workspace, ("support-ticket", None, "lib/retool.py:retool"))
        assert outcome.status == "ok"
        shown(qtbot, panel, outcome)

        assert panel.run.tabs.currentIndex() == TAB_DIFF
        summary = panel.run.diff_view.summary_label.text()
        assert summary == "tools −1, 1 tool changed, temperature 0.7 → 0.2"
        rows = panel.run.diff_view.row_texts()
        changed = [r for r in rows if r[0].startswith("fs_read")]
        assert changed == [
            (
                "fs_read — Read a file  · changed: description",
                "fs_read — Read one file of the ticket  · changed: description",
            )
        ]
        assert ("shell — Run a shell command", "") in rows
        assert any(r[0] == "temperature: 0.7" and r[1] == "temperature: 0.2" for r in rows)
        header = panel.header.text()
        assert header.startswith("✓ ok · lib/retool.py:retool · loop main · sample support-ticket")

    def test_only_changes_hides_what_is_the_same(self, qtbot, panel, sample_workspace):
        write_hook(sample_workspace, "retool.py", RETOOL)
        (outcome,) = run(sample_workspace, ("support-ticket", None, "lib/retool.py:retool"))
        shown(qtbot, panel, outcome)
        assert any(r[0].startswith("fs_write") for r in panel.run.diff_view.row_texts())
        panel.run.diff_view.only_changes.click()
        rows = panel.run.diff_view.row_texts()
        assert not any(r[0].startswith("fs_write") for r in rows)
        assert any(r[0].startswith("fs_read") for r in rows)
        assert not any(r[0].startswith("#0 user") for r in rows)

    def test_the_output_tab_shows_stdout_of_a_successful_run(self, qtbot, panel, sample_workspace):
        write_hook(sample_workspace, "retool.py", RETOOL)
        (outcome,) = run(sample_workspace, ("support-ticket", None, "lib/retool.py:retool"))
        assert outcome.status == "ok"
        shown(qtbot, panel, outcome)
        panel.run.tabs.setCurrentIndex(TAB_OUTPUT)
        assert panel.run.output.stdout_text == "kept 2 tools\n"
        assert panel.run.output.stdout.title.text().startswith("stdout")
        assert panel.run.output.stderr_text == ""

    def test_the_decision_record_field_by_field(self, qtbot, panel, sample_workspace):
        (outcome,) = run(sample_workspace, ("support-ticket", None, None))
        shown(qtbot, panel, outcome)
        tabs = panel.run.tabs
        assert [tabs.tabText(i) for i in range(tabs.count())] == list(TAB_TITLES)
        assert TAB_TITLES[TAB_DECISION] == "Decision record"
        tabs.setCurrentIndex(TAB_DECISION)
        assert panel.run.decision.record_keys() == list(outcome.decision_record)
        model = panel.run.decision.record.model
        index, _, found = model.locate("/tools/removed/0")
        assert found and model.value_at(index) == "shell"


class TestTurnError:
    def test_kind_reason_message_and_a_frame_that_opens_the_source(
        self, qtbot, panel, sample_workspace
    ):
        (outcome,) = run(sample_workspace, ("support-ticket", None, "lib/failing.py:typo_key"))
        shown(qtbot, panel, outcome)
        view = panel.run.error_view
        assert panel.run.tabs.currentIndex() == TAB_ERROR
        assert view.title.text() == "The hook raised an exception"
        assert view.kind.text() == "exception"
        assert view.reason.text().startswith("callback: the hook failed")
        assert "KeyError" in view.message.text()

        source = (sample_workspace / "lib" / "failing.py").read_text().splitlines()
        line = next(i for i, text in enumerate(source, 1) if 'request["message"]' in text)
        assert view.frames.isVisible() and view.frames.count() == 1
        rect = view.frames.visualItemRect(view.frames.item(0))
        with qtbot.waitSignal(panel.open_source) as opened:
            qtbot.mouseClick(view.frames.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        assert opened.args == ["lib/failing.py", line]

    def test_a_typescript_frame_names_the_line_and_column_in_the_users_file(
        self, qtbot, panel, sample_workspace
    ):
        (outcome,) = run(sample_workspace, ("support-ticket", None, "lib/failing.ts:typoKey"))
        shown(qtbot, panel, outcome)
        source = (sample_workspace / "lib" / "failing.ts").read_text().splitlines()
        line = next(i for i, text in enumerate(source, 1) if "request.message.at" in text)
        column = source[line - 1].index("at(-1)") + 1
        view = panel.run.error_view
        assert view.frames.count() == 1
        assert (
            view.frames.item(0)
            .text()
            .startswith(f"lib/failing.ts, line {line}, column {column}, in typoKey")
        )
        assert f"at lib/failing.ts:{line}:{column}" in view.message.text()

    def test_the_path_link_jumps_to_the_value_in_the_result(self, qtbot, panel, sample_workspace):
        (outcome,) = run(
            sample_workspace, ("step-escalated", None, "lib/failing.py:activate_unknown_tool")
        )
        assert outcome.turn_error is not None
        assert outcome.turn_error.path == "/activeTools/1"
        shown(qtbot, panel, outcome)
        link = panel.run.error_view.path
        assert "/activeTools/1" in link.text()
        with qtbot.waitSignal(panel.jump_requested) as jumped:
            qtbot.mouseClick(link, Qt.MouseButton.LeftButton, pos=QPoint(4, link.height() // 2))
        assert jumped.args == ["/activeTools/1"]
        assert panel.run.tabs.currentIndex() == TAB_RESULT
        assert panel.run.last_jump == ("/activeTools/1", True)
        tree = panel.run.result_view
        assert tree.current_pointer() == "/activeTools/1"
        assert tree.model.value_at(tree.tree.currentIndex()) == "escalateTicket"

    def test_findings_of_an_invalid_result_are_listed(self, qtbot, panel, sample_workspace):
        (outcome,) = run(
            sample_workspace,
            ("support-ticket", None, "lib/failing.py:tool_result_from_assistant"),
        )
        shown(qtbot, panel, outcome)
        view = panel.run.error_view
        assert view.kind.text() == "invalid_result"
        assert view.findings_title.text() == "Findings (2)"
        assert all("/messages/3/content/0" in label.text() for label in view.finding_labels)
        assert "No diff" in panel.run.diff_message.text()

    def test_a_failed_chain_hook_shows_what_it_returned(self, qtbot, panel, sample_workspace):
        (outcome,) = run(sample_workspace, ("chain-refund", None, "lib/failing.py:misspelt_suffix"))
        shown(qtbot, panel, outcome)
        panel.jump_to("/systemPromptSufix")
        assert panel.run.last_jump == ("/systemPromptSufix", True)
        assert "returned (rejected)" in panel.run.result_title.text()

    def test_an_engine_failure_is_shown_plainly(self, qtbot, panel):
        try:
            raise RuntimeError("the fork server went away")
        except RuntimeError as exc:
            error = engine_failure(exc)
        outcome = RunOutcome(
            contract="pre_llm", status="turn_error", sample="support-ticket", turn_error=error
        )
        shown(qtbot, panel, outcome)
        view = panel.run.error_view
        assert panel.run.tabs.currentIndex() == TAB_ERROR
        assert panel.header.text().startswith("✗ turn error (engine_failed)")
        assert view.title.text() == "The studio could not run the hook"
        assert view.message.text() == "RuntimeError: the fork server went away"
        assert view.stderr_title.text() == STUDIO_TRACEBACK_TITLE
        assert "test_an_engine_failure_is_shown_plainly" in view.stderr.toPlainText()
        assert not view.details.isVisibleTo(view)  # the traceback is not repeated as a detail


class TestStepAndChain:
    def test_a_step_run_shows_the_exact_record_and_the_effective_change_apart(
        self, qtbot, panel, sample_workspace
    ):
        (outcome,) = run(sample_workspace, ("step-escalated", None, None))
        assert outcome.status == "ok"
        shown(qtbot, panel, outcome)
        assert panel.run.tabs.currentIndex() == TAB_DIFF
        assert panel.run.diff_stack.currentWidget() is panel.run.amendment_diff
        assert "model → review-model" in panel.run.amendment_diff.summary.text()
        assert panel.run.amendment_diff.amendment.model.value == outcome.result
        assert panel.run.amendment_diff.effective.model.value == outcome.effective

        panel.run.tabs.setCurrentIndex(TAB_DECISION)
        decision = panel.run.decision
        assert panel.run.tabs.tabText(TAB_DECISION) == "Decision record"
        assert decision.record_keys() == [
            "operation",
            "stepIndex",
            "reason",
            "amendment",
            "resources",
            "sealedRequestId",
        ]
        assert decision.step_record.model.value == outcome.decision_record
        assert decision.effective_box.title() == EFFECTIVE_TITLE
        assert decision.effective_box.isVisible()
        assert decision.effective.model.value == outcome.effective
        assert "review-checklist" in outcome.effective["addedContributors"]

    def test_a_chain_run_shows_the_timeline_and_the_hook_that_stopped_it(
        self, qtbot, panel, sample_workspace
    ):
        (outcome,) = run(sample_workspace, ("chain-refund", None, None))
        assert outcome.status == "ok"
        shown(qtbot, panel, outcome)
        assert panel.run.diff_view.summary == "system prompt changed, 1 message added"
        panel.run.tabs.setCurrentIndex(TAB_DECISION)
        timeline = panel.run.decision.timeline
        table = timeline.table
        assert table.topLevelItemCount() == len(outcome.chain)
        rows = [
            [table.topLevelItem(r).text(c) for c in range(table.columnCount())]
            for r in range(table.topLevelItemCount())
        ]
        assert rows[0][:3] == ["pre[0]", "historyTrimmerHook", "built-in"]
        assert rows[2][1:5] == [
            "lib/chain_hooks.ts:policySuffix",
            "your hook",
            "0",
            "systemPrompt",
        ]
        stopped = [r for r in rows if r[5]]
        assert [r[:6] for r in stopped] == [
            ["post[0]", "lib/chain_hooks.ts:noRefundPromises", "your hook", "0", "—", "retry"]
        ]
        assert timeline.stops.text().startswith(
            "Stopped by lib/chain_hooks.ts:noRefundPromises at post[0] (attempt 0)"
        )
        assert "retry" in timeline.stops.text()


@dataclass
class Pending:
    sample: str
    loop: str | None
    hook: str | None


class TestRunningAndComparison:
    def test_a_running_hook_says_so_and_for_how_long(self, panel):
        pending = Pending(sample="support-ticket", loop="main", hook="lib/policy.py:transform")
        panel.show_running(pending)
        assert panel.header.text() == "Running lib/policy.py:transform on support-ticket… 0.0 s"
        panel.update_running(1.24)
        assert panel.header.text() == "Running lib/policy.py:transform on support-ticket… 1.2 s"
        assert panel.busy.isVisible()

    def test_every_target_side_by_side(self, qtbot, panel, sample_workspace):
        results = run(
            sample_workspace,
            ("support-ticket", "main", None),
            ("support-ticket", "reviewer", None),
            ("support-ticket", "researcher", "lib/failing.py:typo_key"),
        )
        loops = ["main", "reviewer", "researcher"]
        panel.show_comparison(list(zip(loops, results, strict=True)))
        qtbot.waitUntil(lambda: panel.comparison.ready)
        columns = panel.comparison.columns
        assert [c.label for c in columns] == loops
        assert all(c.isVisible() for c in columns)
        xs = [c.geometry().x() for c in columns]
        assert xs == sorted(xs) and len(set(xs)) == 3
        assert [c.status.text() for c in columns] == ["✓ ok", "– not applied", "✗ turn error"]
        assert columns[0].summary.text() == "system changed, tools −1"
        assert columns[2].error.text().startswith("exception\n")

        columns[2].button.click()
        assert panel.run.tabs.currentIndex() == TAB_ERROR
        assert panel.back.isVisible()
        panel.back.click()
        assert panel.pages.currentWidget() is panel.comparison


def big_outcome(messages: int = 3000) -> RunOutcome:
    """A synthetic run over a request of several megabytes."""
    text = "refund issued twice on the ticket log; " * 40
    original = {
        "system": "You are a support agent.\n" * 200,
        "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i} {text}"}
            for i in range(messages)
        ],
        "tools": [
            {"name": f"tool_{i}", "description": text, "input_schema": {}} for i in range(60)
        ],
        "options": {"temperature": 0.7},
    }
    transformed = {
        **original,
        "messages": original["messages"][: messages - 2],
        "tools": original["tools"][:50],
    }
    return RunOutcome(
        contract="pre_llm",
        status="ok",
        sample="big",
        loop="main",
        input=original,
        result=transformed,
        decision_record={"contract": "pre_llm"},
    )


def test_a_large_request_is_shown_without_building_it_all(qtbot, panel):
    outcome = big_outcome()
    # The GUI thread's own processor time: what building it all would cost, which a busy
    # machine's share of a core does not change (the diff is made on another thread).
    started = time.thread_time()
    panel.show_outcome(outcome)
    shown_in = time.thread_time() - started
    qtbot.waitUntil(lambda: panel.diff_ready, timeout=10_000)
    assert panel.run.diff_view.summary_label.text() == "2 messages removed, tools −10"
    assert shown_in < 1.0
    model = panel.run.result_view.model
    messages, _, found = model.locate("/messages")
    assert found
    # 3000 messages show as three ranges of CHUNK, each laid out only when opened
    assert model.rowCount(messages) == 3
    assert model.data(model.index(2, 0, messages)) == "[2000 … 2997]"
    panel.jump_to("/messages/2500/content")
    assert panel.run.last_jump == ("/messages/2500/content", True)
    assert panel.run.result_view.current_pointer() == "/messages/2500/content"
    assert model.rowCount(model.index(0, 0, messages)) == 0  # the first range was never opened
    panel.jump_to("/messages/99999")
    assert panel.run.last_jump == ("/messages/99999", False)
    assert "There is no value at /messages/99999" in panel.run.result_note.text()


def printed(**output: Any) -> RunOutcome:
    """A run of no consequence that printed ``output`` (stdout, stderr and their marks)."""
    return RunOutcome(
        contract="pre_llm",
        status="ok",
        sample="s",
        loop="main",
        input={"messages": []},
        result={"messages": []},
        **output,
    )


def test_output_cut_at_the_limit_is_marked(panel):
    panel.show_outcome(printed(stdout="x" * 100, stdout_truncated=True, stderr="careful\n"))
    title = panel.run.output.stdout.title.text()
    assert title == "stdout · 100 characters · cut at the output limit"
    assert panel.run.output.stdout_text.endswith(CUT_MARK)
    assert panel.run.output.stderr_text == "careful\n"


def test_an_output_too_long_to_lay_out_is_shown_in_part_and_exported_whole(
    panel, tmp_path, monkeypatch
):
    one_line = "{" + "x" * 900_000 + "}\n"
    many_lines = "".join(f"line {n:07}\n" for n in range(300_000))  # 3.9 MB
    panel.show_outcome(printed(stdout=one_line, stderr=many_lines))
    output = panel.run.output
    assert output.stdout.title.text() == "stdout · 900,003 characters · lines cut at 10,000"
    assert output.stdout_text.startswith("{" + "x" * (LINE_CHARS_SHOWN - 1) + " … (cut: ")
    assert output.stdout.title.toolTip() == (
        "A line is cut at 10,000 characters; Export… writes all of it."
    )
    assert output.stderr.title.text() == (
        "stderr · 3,900,000 characters · first and last 500,000 shown"
    )
    shown = output.stderr_text
    assert len(shown) < OUTPUT_CHARS_SHOWN + 100
    assert shown.startswith("line 0000000\n")
    assert shown.endswith("line 0299999\n")
    assert "characters not shown" in shown
    assert "Export… writes all of it" in output.stderr.title.toolTip()

    target = tmp_path / "stderr.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    output.stderr.export_button.click()
    assert target.read_text(encoding="utf-8") == many_lines


def test_an_output_that_cannot_be_exported_says_why(panel, tmp_path, monkeypatch):
    panel.show_outcome(printed(stdout="kept 2 tools\n"))
    output = panel.run.output
    assert output.stdout.title.text() == "stdout · 13 characters"
    assert output.stdout.title.toolTip() == ""
    assert not output.stderr.export_button.isEnabled()  # nothing on stderr
    target = tmp_path / "missing" / "stdout.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    said: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _parent, _title, text: said.append(text))
    output.stdout.export_button.click()
    assert said == [f"{target} was not written: No such file or directory"]
    assert not target.parent.exists()


def test_a_loop_the_hook_does_not_target_is_not_applied(qtbot, panel, sample_workspace):
    (outcome,) = run(sample_workspace, ("support-ticket", "reviewer", None))
    assert outcome.status == "not_applied"
    shown(qtbot, panel, outcome)
    assert panel.header.text().startswith("– not applied · loop reviewer · sample support-ticket")
    assert "does not target loop 'reviewer'" in panel.run.diff_message.text()
    assert panel.run.result_title.text() == "The request, unchanged (the hook did not run)"


def hostile_outcome(**fields) -> RunOutcome:
    """A run whose hook returned what a hostile or careless hook may: the request with
    ``fields`` in place of its own."""
    request = {
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [],
    }
    return RunOutcome(
        contract="pre_llm",
        status="ok",
        sample="s",
        loop="main",
        input=request,
        result={**request, **fields},
        decision_record={"contract": "pre_llm"},
    )


def test_a_hundred_thousand_warnings_show_as_a_few_and_a_count(qtbot, panel):
    warnings = [
        {
            "path": f"/tools/{i}",
            "message": f"tool 't{i}' is presented but not enabled",
            "rule": "adf.request.presented_not_enabled",
        }
        for i in range(100_000)
    ]
    warnings.append({"path": "", "message": "n" * 100_000, "rule": "other.rule"})
    outcome = hostile_outcome().model_copy(update={"warnings": warnings})
    shown(qtbot, panel, outcome)
    lines = panel.run.warnings.text().split("\n")
    assert lines[:2] == [
        "⚠ /tools/0: tool 't0' is presented but not enabled",
        "⚠ /tools/1: tool 't1' is presented but not enabled",
    ]
    assert len(lines) == WARNINGS_SHOWN
    assert lines[-1] == (
        f"⚠ and {100_001 - WARNINGS_SHOWN + 1:,} more warnings: "
        f"adf.request.presented_not_enabled ×{100_000 - WARNINGS_SHOWN + 1:,}, other.rule ×1"
    )
    long_message = hostile_outcome().model_copy(update={"warnings": warnings[-1:]})
    shown(qtbot, panel, long_message)
    (line,) = panel.run.warnings.text().split("\n")
    assert len(line) == WARNING_CHARS and line.endswith("n…")


def test_a_string_without_a_break_is_wrapped_anywhere_and_prose_at_words(qtbot, panel):
    # Qt looks for a place to break an unbroken 200,000-character word at length (seconds on
    # the GUI thread); it can only break it anywhere.
    shown(qtbot, panel, hostile_outcome(system="x" * 200_000))
    side = panel.run.diff_view.right_text
    assert side.toPlainText().startswith("xxx")
    assert side.wordWrapMode() == QTextOption.WrapMode.WrapAnywhere
    shown(qtbot, panel, hostile_outcome(system="You are terse and kind. " * 50))
    assert side.toPlainText().startswith("You are terse and kind.")
    assert side.wordWrapMode() == QTextOption.WrapMode.WordWrap


def test_a_large_value_opens_its_first_level_only():
    tree = JsonTreeView()
    tools = [{"name": f"t{i}", "input_schema": {"type": "object"}} for i in range(EXPANDED_MOST)]
    tree.set_value({"tools": tools, "model": "m"})
    tree.expand_all()
    model = tree.model
    found, _, ok = model.locate("/tools")
    assert ok and tree.tree.isExpanded(found)
    first_range = model.index(0, 0, found)
    assert not tree.tree.isExpanded(first_range)
    tree.set_value({"tools": tools[:10], "model": "m"})
    tree.expand_all()
    found, _, _ = model.locate("/tools/3/input_schema")
    assert tree.tree.isExpanded(found)


def test_a_long_string_is_cut_before_it_is_escaped():
    text = "x" * (DETAIL_CHARS + 10) + "\ud800"
    shown = pretty(text)
    assert shown == "x" * DETAIL_CHARS + f"\n… (cut: {DETAIL_CHARS + 11:,} characters in all)"
    assert pretty("a\ud800") == "a\\ud800"
