"""The Calls tab: a run's adf calls in order, nested sys_lambda calls under their caller, the gate
in the results' colours, the selected call in full, the tab's title, the keyboard and Copy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QLabel

from studio.core.records.store import RecordStore
from studio.core.run_outcome import CallError, HostCall, RunOutcome
from studio.core.run_report import describe_outcome
from studio.ui.engine_bridge import EngineBridge
from studio.ui.json_highlighter import KEY, json_theme
from studio.ui.record_detail import RecordDetail, RecordDetailData, load_detail
from studio.ui.result_calls_view import (
    ANSWERED_BY,
    CLEARED_RESULT,
    DURATION,
    EMPTY_TEXT,
    EXPANDED_CALLS,
    GATE,
    METHOD,
    NUMBER,
    RESULT,
    RESULT_LEAST,
    CallsModel,
    CallsView,
    nest,
)
from studio.ui.result_diff_view import DiffCache
from studio.ui.result_style import accent
from studio.ui.run_view import TAB_CALLS, TAB_DIFF, RunView
from tests.support.runners import LiveRunner
from tests.support.workspaces import make_workspace, write_json

DISPLAY = Qt.ItemDataRole.DisplayRole

CALLS = [
    HostCall(
        method="fs_read",
        args={"path": "tickets/4711.md"},
        answered_by="sample",
        reply={"text": "The export button does nothing."},
        duration_ms=0.4,
    ),
    HostCall(
        method="sys_lambda",
        args={"source": "lib/rag.ts:enrich", "args": {"q": "export"}},
        answered_by="lib/rag.ts:enrich",
        reply={"snippets": ["a", "b"]},
        output="looked up 2 snippets\n",
        duration_ms=31.7,
    ),
    HostCall(
        method="model_invoke",
        args={"messages": [{"role": "user", "content": "summarise"}]},
        answered_by="sample",
        reply="A short summary.",
        depth=1,
        duration_ms=0.3,
    ),
    HostCall(
        method="shell",
        args={"cmd": "ls"},
        gate="enabled_tools",
        error=CallError(code="NOT_FOUND", message='Tool "shell" is not available'),
        depth=1,
    ),
    HostCall(
        method="web_search",
        args={"q": "x"},
        error=CallError(code="NO_REPLY", message="the sample has no reply for web_search"),
        duration_ms=12_345,
    ),
]


def texts(model: CallsModel, parent: QModelIndex = QModelIndex()) -> list[list[str]]:  # noqa: B008
    return [
        [model.index(row, column, parent).data(DISPLAY) for column in range(6)]
        for row in range(model.rowCount(parent))
    ]


@pytest.fixture
def view(qtbot) -> CallsView:
    widget = CallsView()
    qtbot.addWidget(widget)
    widget.resize(1024, 640)
    return widget


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()


@pytest.fixture
def run_view(qtbot, bridge) -> RunView:
    widget = RunView(DiffCache(bridge), bridge)
    qtbot.addWidget(widget)
    widget.resize(1024, 640)
    return widget


def outcome(calls: list[HostCall], contract: str = "pre_llm") -> RunOutcome:
    return RunOutcome(contract=contract, status="not_applied", calls=calls)


# ---- rows ---------------------------------------------------------------------------------
def test_calls_in_order_with_nested_calls_under_their_sys_lambda(view):
    view.show_calls(CALLS)
    model = view.model
    top = texts(model)
    assert [row[NUMBER] for row in top] == ["1", "2", "5"]
    assert [row[METHOD] for row in top] == ["fs_read", "sys_lambda", "web_search"]
    nested = texts(model, model.index(1, 0))
    assert [row[METHOD] for row in nested] == ["model_invoke", "shell"]
    assert [row[NUMBER] for row in nested] == ["3", "4"]
    assert top[0][ANSWERED_BY] == "sample"
    assert top[0][RESULT] == '{"text": "The export button does nothing."}'
    assert top[2][ANSWERED_BY] == "—"
    assert top[2][RESULT] == "NO_REPLY: the sample has no reply for web_search"
    assert top[0][DURATION] == "0.40 ms"
    assert top[1][DURATION] == "32 ms"
    assert top[2][DURATION] == "12.3 s"
    assert view.table.isExpanded(model.index(1, 0))


def test_a_nested_call_follows_the_nearest_open_sys_lambda():
    calls = [
        HostCall(method="sys_lambda"),
        HostCall(method="sys_lambda", depth=1),
        HostCall(method="fs_read", depth=2),
        HostCall(method="fs_read", depth=1),
        HostCall(method="fs_read"),
        HostCall(method="fs_read", depth=1),  # no sys_lambda open: it stays at the top
    ]
    assert nest(calls) == [-1, 0, 1, 0, -1, -1]


def test_the_model_keeps_qts_rules(qtmodeltester: Any, qapp: Any):
    model = CallsModel()
    model.set_calls(CALLS)
    qtmodeltester.check(model)
    model.set_calls([])
    qtmodeltester.check(model)
    model.set_calls(CALLS[:2])
    qtmodeltester.check(model)


# ---- the gate -----------------------------------------------------------------------------
def test_the_gate_says_allowed_or_which_rule_refused_in_the_palettes_colours(view):
    view.show_calls(CALLS)
    model = view.model
    allowed = model.index(0, GATE)
    refused = model.index(1, GATE, model.index(1, 0))
    assert allowed.data(DISPLAY) == "✓ allowed"
    assert refused.data(DISPLAY) == "✗ refused by enabled_tools"
    assert allowed.data(Qt.ItemDataRole.ForegroundRole) == accent("ok")
    assert refused.data(Qt.ItemDataRole.ForegroundRole) == accent("error")
    assert "not among the agent's enabled tools" in refused.data(Qt.ItemDataRole.ToolTipRole)
    failed = model.index(2, RESULT)
    assert failed.data(Qt.ItemDataRole.ForegroundRole) == accent("error")
    assert model.index(0, RESULT).data(Qt.ItemDataRole.ForegroundRole) is None


def _contrast(a: QColor, b: QColor) -> float:
    def luminance(color: QColor) -> float:
        def channel(value: float) -> float:
            return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

        return (
            0.2126 * channel(color.redF())
            + 0.7152 * channel(color.greenF())
            + 0.0722 * channel(color.blueF())
        )

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("base", [QColor(255, 255, 255), QColor(30, 30, 30)], ids=["light", "dark"])
def test_the_gate_colours_read_on_light_and_dark_bases(view, qapp, base):
    before = QApplication.palette()
    palette = QPalette(before)
    palette.setColor(QPalette.ColorRole.Base, base)
    QApplication.setPalette(palette)
    try:
        view.show_calls(CALLS)
        model = view.model
        for index in (model.index(0, GATE), model.index(1, GATE, model.index(1, 0))):
            color = index.data(Qt.ItemDataRole.ForegroundRole)
            assert _contrast(color, base) >= 3.0, (color.name(), base.name())
    finally:
        QApplication.setPalette(before)


# ---- the selected call --------------------------------------------------------------------
def test_selecting_a_call_shows_its_arguments_and_reply(view):
    view.show_calls(CALLS[:3])
    view.table.setCurrentIndex(view.model.index(0, RESULT))
    assert json.loads(view.arguments.text.toPlainText()) == CALLS[0].args
    assert view.reply.title.text() == "Reply"
    assert json.loads(view.reply.text.toPlainText()) == CALLS[0].reply
    assert view.output.isHidden()
    assert view.gate_note.isHidden()
    assert view.summary.text().startswith("#1 adf.fs_read · called by the hook · allowed")


def test_a_sys_lambda_shows_what_the_nested_function_printed(view):
    view.show_calls(CALLS[:3])
    view.table.setCurrentIndex(view.model.index(1, METHOD))
    assert not view.output.isHidden()
    assert view.output.text.toPlainText() == "looked up 2 snippets\n"
    assert "answered by lib/rag.ts:enrich" in view.summary.text()


def test_a_refused_call_shows_its_error_and_the_rule(view):
    view.show_calls(CALLS)
    view.table.setCurrentIndex(view.model.index(1, 0, view.model.index(1, 0)))
    assert view.reply.title.text() == "Error"
    assert json.loads(view.reply.text.toPlainText()) == {
        "code": "NOT_FOUND",
        "message": 'Tool "shell" is not available',
    }
    assert not view.gate_note.isHidden()
    assert "enabled_tools" in view.gate_note.text()
    assert "nested sys_lambda (depth 1)" in view.summary.text()


def test_the_first_refused_or_failed_call_is_selected_on_show(view):
    view.show_calls(CALLS)
    assert view.current_call() == CALLS[3]
    view.show_calls(CALLS[:3])
    assert view.current_call() == CALLS[0]


def test_no_calls_shows_how_samples_declare_replies(view):
    view.show_calls(CALLS)
    view.show_calls([])
    assert view.pages.currentWidget() is view.empty
    assert view.empty.text() == EMPTY_TEXT
    assert "This run made no adf calls" in EMPTY_TEXT
    assert "adf.replies" in EMPTY_TEXT
    assert view.current_call() is None


# ---- the tab ------------------------------------------------------------------------------
def test_the_tab_title_counts_the_calls_and_the_refused_and_failed_ones(run_view):
    tabs = run_view.tabs
    run_view.show_outcome(outcome(CALLS[:3]))
    assert tabs.tabText(TAB_CALLS) == "Calls (3)"
    assert not tabs.tabBar().tabTextColor(TAB_CALLS).isValid()
    run_view.show_outcome(outcome(CALLS))
    assert tabs.tabText(TAB_CALLS) == "Calls (5, 1 refused, 1 failed)"
    assert tabs.tabBar().tabTextColor(TAB_CALLS) == accent("error")
    assert run_view.calls.calls == CALLS
    run_view.show_outcome(outcome([CALLS[3]]))
    assert tabs.tabText(TAB_CALLS) == "Calls (1, 1 refused)"
    run_view.show_outcome(outcome([]))
    assert tabs.tabText(TAB_CALLS) == "Calls"
    assert not tabs.tabBar().tabTextColor(TAB_CALLS).isValid()


def test_the_tab_shows_for_pre_llm_runs_and_any_run_with_calls(run_view):
    tabs = run_view.tabs
    assert not tabs.isTabVisible(TAB_CALLS)  # no run yet
    run_view.show_outcome(outcome([]))
    assert tabs.isTabVisible(TAB_CALLS)
    run_view.show_outcome(outcome([], contract="step"))
    assert not tabs.isTabVisible(TAB_CALLS)
    run_view.show_outcome(outcome(CALLS[:1], contract="chain"))
    assert tabs.isTabVisible(TAB_CALLS)
    run_view.clear("gone")
    assert not tabs.isTabVisible(TAB_CALLS)
    assert run_view.calls.calls == []


# ---- keyboard and Copy --------------------------------------------------------------------
def _shown(qtbot, widget) -> None:
    widget.show()
    qtbot.waitExposed(widget)
    widget.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is widget.window())


def test_the_table_is_navigable_and_tab_leaves_it(qtbot, run_view):
    _shown(qtbot, run_view)
    run_view.show_outcome(outcome(CALLS[:3]))
    run_view.tabs.setCurrentIndex(TAB_CALLS)
    table = run_view.calls.table
    assert not table.tabKeyNavigation()
    table.setFocus()
    qtbot.waitUntil(table.hasFocus)
    assert run_view.calls.current_call() == CALLS[0]
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert run_view.calls.current_call() == CALLS[1]
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert run_view.calls.current_call() == CALLS[2]  # into the sys_lambda's calls
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: not table.hasFocus())
    focused = QApplication.focusWidget()
    assert focused is not None and run_view.isAncestorOf(focused)
    qtbot.keyClick(focused, Qt.Key.Key_Backtab)
    qtbot.waitUntil(table.hasFocus)


def test_the_tab_is_reachable_from_the_tab_bar(qtbot, run_view):
    _shown(qtbot, run_view)
    run_view.show_outcome(outcome(CALLS))
    assert run_view.tabs.currentIndex() == TAB_DIFF
    run_view.tabs.tabBar().setFocus()
    qtbot.waitUntil(run_view.tabs.tabBar().hasFocus)
    for _ in range(TAB_CALLS):
        qtbot.keyClick(run_view.tabs.tabBar(), Qt.Key.Key_Right)
    assert run_view.tabs.currentIndex() == TAB_CALLS


def test_copy_takes_the_selected_call_as_json(qtbot, view):
    _shown(qtbot, view)
    view.show_calls(CALLS)
    view.table.setFocus()
    qtbot.waitUntil(view.table.hasFocus)
    view.table.setCurrentIndex(view.model.index(0, RESULT))
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(view.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    copied = json.loads(QGuiApplication.clipboard().text())
    assert copied == CALLS[0].model_dump(mode="json")
    assert copied["args"] == {"path": "tickets/4711.md"}
    view.table.setCurrentIndex(view.model.index(2, 0))
    view.copy_action.trigger()
    assert json.loads(QGuiApplication.clipboard().text())["error"]["code"] == "NO_REPLY"


def test_a_run_whose_calls_were_not_kept_does_not_claim_it_made_none(run_view):
    run_view.show_outcome(outcome([]), calls_kept=False)
    assert not run_view.tabs.isTabVisible(TAB_CALLS)
    run_view.show_outcome(outcome(CALLS[:1]), calls_kept=False)
    assert run_view.tabs.isTabVisible(TAB_CALLS)


def _detail(qtbot, bridge, data) -> RecordDetail:
    detail = RecordDetail(bridge)
    qtbot.addWidget(detail)
    detail.show_record(data)
    return detail


def test_a_stored_run_shows_its_calls_and_counts_them_in_the_header(qtbot, bridge, tmp_path):
    made = RunOutcome(contract="pre_llm", status="not_applied", sample="s", calls=CALLS)
    with RecordStore.open(tmp_path) as store:
        store.add(made)
        kept = load_detail(store, made.run_id)
        store.clear_payloads([made.run_id])
        cleared = load_detail(store, made.run_id)
    assert kept is not None and cleared is not None
    detail = _detail(qtbot, bridge, kept)
    header = detail.findChild(QLabel, "recordHeader")
    assert "5 adf calls (" in header.text() and "1 refused, 1 failed" in header.text()
    assert detail.tabs.isTabVisible(TAB_CALLS)
    assert detail.tabs.tabText(TAB_CALLS) == "Calls (5, 1 refused, 1 failed)"
    assert detail.run.calls.calls == CALLS

    detail.show_record(cleared)
    assert "5 adf calls (" in header.text()
    assert detail.tabs.tabText(TAB_CALLS) == "Calls (5, 1 refused, 1 failed)"
    model = detail.run.calls.model
    assert [row[RESULT] for row in texts(model)] == [CLEARED_RESULT, CLEARED_RESULT, "NO_REPLY"]
    detail.run.calls.select(0)
    assert detail.run.calls.arguments.text.toPlainText() == CLEARED_RESULT
    detail.run.calls.select(4)
    assert detail.run.calls.reply.text.toPlainText().startswith("NO_REPLY\n")


def test_a_stored_run_without_calls_says_nothing_of_them_in_the_header(qtbot, bridge, tmp_path):
    made = RunOutcome(contract="pre_llm", status="not_applied", sample="s")
    with RecordStore.open(tmp_path) as store:
        store.add(made)
        data = load_detail(store, made.run_id)
    assert data is not None
    detail = _detail(qtbot, bridge, data)
    assert "adf call" not in detail.findChild(QLabel, "recordHeader").text()
    assert detail.tabs.isTabVisible(TAB_CALLS)
    assert detail.run.calls.pages.currentWidget() is detail.run.calls.empty


def test_a_record_that_keeps_no_calls_hides_the_tab(qtbot, bridge, tmp_path):
    made = RunOutcome(contract="pre_llm", status="not_applied", sample="s", calls=CALLS)
    with RecordStore.open(tmp_path) as store:
        store.add(made)
        data = load_detail(store, made.run_id)
    assert data is not None and data.outcome is not None
    record = {k: v for k, v in data.record.record.items() if k != "calls"}
    older = RecordDetailData(
        data.record.model_copy(update={"record": record}),
        data.outcome.model_copy(update={"calls": []}),
    )
    detail = _detail(qtbot, bridge, older)
    assert not detail.tabs.isTabVisible(TAB_CALLS)


@pytest.mark.parametrize("width", [520, 1024, 1366])
def test_the_columns_fit_the_width_with_the_result_in_view(qtbot, view, width):
    view.resize(width, 640)
    view.show()
    qtbot.waitExposed(view)
    view.show_calls(CALLS)
    table = view.table
    header = table.header()
    qtbot.waitUntil(lambda: header.sectionSize(RESULT) >= RESULT_LEAST)
    total = sum(header.sectionSize(column) for column in range(header.count()))
    assert total <= table.viewport().width()
    assert not table.horizontalScrollBar().isVisible()
    if width >= 1024:  # room for every column's text: none is elided
        for column in (METHOD, GATE, ANSWERED_BY):
            assert header.sectionSize(column) >= table.sizeHintForColumn(column)


# ---- a real run ---------------------------------------------------------------------------
HOOK = """
export async function main(input) {
  await adf.fs_read({ path: "tickets/1.md" });
  try { await adf.shell({ cmd: "ls" }); } catch (e) {}
  await adf.sys_lambda({ source: "lib/helper.ts:enrich", args: { n: 2 } });
  return input.request;
}
"""
HELPER = """
export async function enrich(args) {
  console.log("enriching");
  try { await adf.web_search({ q: "x" }); } catch (e) {}
  return { n: args.n * 2 };
}
"""


def test_a_real_runs_calls_in_the_tab_and_the_report(qtbot, run_view, tmp_path):
    ws = make_workspace(tmp_path / "ws", sys_lambda=True)
    agent = json.loads((ws.root / "agent.json").read_text())
    agent["tools"] = [{"name": "fs_read", "enabled": True}, {"name": "web_search", "enabled": True}]
    write_json(ws.root / "agent.json", agent)
    sample = json.loads((ws.root / "samples" / "basic.json").read_text())
    sample["adf"] = {"replies": {"fs_read": {"result": {"text": "printer on fire"}}}}
    write_json(ws.root / "samples" / "basic.json", sample)
    (ws.root / "lib" / "hook.ts").write_text(HOOK)
    (ws.root / "lib" / "helper.ts").write_text(HELPER)
    live = LiveRunner(ws)
    try:
        made = live.run(hook="lib/hook.ts:main")
    finally:
        live.close()
    assert made.status == "ok", made.turn_error
    run_view.show_outcome(made)
    assert run_view.tabs.tabText(TAB_CALLS) == "Calls (4, 1 refused, 1 failed)"
    model = run_view.calls.model
    assert [row[METHOD] for row in texts(model)] == ["fs_read", "shell", "sys_lambda"]
    assert [row[GATE] for row in texts(model)] == [
        "✓ allowed",
        "✗ refused by enabled_tools",
        "✓ allowed",
    ]
    (nested,) = texts(model, model.index(2, 0))
    assert nested[METHOD] == "web_search"
    assert nested[RESULT].startswith("NO_REPLY: ")
    run_view.calls.select(2)
    assert run_view.calls.output.text.toPlainText() == "enriching\n"
    report = describe_outcome(made).splitlines()
    start = report.index("calls:")
    assert [line.split(" · ")[:2] for line in report[start + 1 : start + 5]] == [
        ["  1. fs_read", "allowed"],
        ["  2. shell", "refused by enabled_tools"],
        ["  3. sys_lambda", "allowed"],
        ["    4. web_search", "allowed"],
    ]


def test_a_palette_switch_recolours_the_json(view, qapp):
    view.show_calls(CALLS[:1])  # the arguments: {"path": ...}, a key on the second line

    def key_colour() -> QColor:
        block = view.arguments.text.document().findBlockByNumber(1)
        ranges = block.layout().formats()
        return QColor(ranges[0].format.foreground().color())

    light = key_colour()
    before = QApplication.palette()
    dark = QPalette(before)
    dark.setColor(QPalette.ColorRole.Base, QColor(30, 30, 30))
    dark.setColor(QPalette.ColorRole.Text, QColor(220, 220, 220))
    QApplication.setPalette(dark)
    try:
        QApplication.processEvents()
        expected = json_theme(view.arguments.text.palette()).formats[KEY].foreground().color()
        assert key_colour() == expected
        assert key_colour() != light
    finally:
        QApplication.setPalette(before)


def test_a_hook_calling_in_a_loop_gets_every_call_with_the_nested_ones_closed(view):
    calls = [
        HostCall(method="sys_lambda") if n % 10 == 0 else HostCall(method="fs_read", depth=1)
        for n in range(EXPANDED_CALLS + 10)
    ]
    view.show_calls(calls)
    model = view.model
    assert model.rowCount() == len(calls) // 10
    assert model.rowCount(model.index(0, 0)) == 9
    assert not view.table.isExpanded(model.index(0, 0))
    view.select(13)
    assert view.current_call() is calls[13]
    assert view.table.isExpanded(model.index(1, 0))


def test_the_tab_colour_follows_a_palette_switch(run_view, qapp):
    run_view.show_outcome(outcome(CALLS))
    light = run_view.tabs.tabBar().tabTextColor(TAB_CALLS)
    before = QApplication.palette()
    dark = QPalette(before)
    dark.setColor(QPalette.ColorRole.Base, QColor(30, 30, 30))
    QApplication.setPalette(dark)
    try:
        QApplication.processEvents()
        assert run_view.tabs.tabBar().tabTextColor(TAB_CALLS) == accent("error")
        assert run_view.tabs.tabBar().tabTextColor(TAB_CALLS) != light
    finally:
        QApplication.setPalette(before)
