"""The results panel shows a lone surrogate as its escape (Qt would drop it silently) and a
result nested 1,500 deep without an error, from real runs of Python and JavaScript hooks."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.run_outcome import RunOutcome
from studio.core.workspace.folder import Workspace
from studio.engine.runner import Runner
from studio.ui.engine_bridge import EngineBridge
from studio.ui.results_panel import ResultsPanel
from studio.ui.run_view import TAB_ERROR, TAB_OUTPUT, TAB_RESULT

PY_HOOKS = """
import sys

def surrogate_message(payload):
    print("out \\ud800", flush=True)
    raise ValueError("bad \\ud800 here")

def surrogate_result(payload):
    return {**payload["request"], "system": "a \\ud800 b"}

def deep_schema(payload):
    value = {}
    for _ in range(1500):
        value = {"a": value}
    request = payload["request"]
    schema = {"type": "object", "properties": {"p": value}}
    return {**request, "tools": [{**request["tools"][0], "input_schema": schema}]}
"""

JS_HOOKS = """
export function surrogate_message(p) {
  console.log("out \\ud800");
  throw new Error("bad \\ud800 here");
}
export function surrogate_result(p) { return {...p.request, system: "a \\ud800 b"}; }
export function deep_schema(p) {
  let v = {}; for (let i = 0; i < 1500; i++) v = {a: v};
  const schema = {type: "object", properties: {p: v}};
  return {...p.request, tools: [{...p.request.tools[0], input_schema: schema}]};
}
"""


def run(workspace: Path, hook: str) -> RunOutcome:
    async def go() -> RunOutcome:
        runner = Runner(Workspace.open(workspace))
        try:
            return await runner.run("support-ticket", hook=hook)
        finally:
            await runner.close()

    return asyncio.run(go())


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


@pytest.fixture
def hooks(sample_workspace: Path) -> Path:
    (sample_workspace / "bad.py").write_text(PY_HOOKS)
    (sample_workspace / "bad.js").write_text(JS_HOOKS)
    return sample_workspace


def shown(qtbot, panel: ResultsPanel, outcome: RunOutcome) -> None:
    panel.show_outcome(outcome)
    qtbot.waitUntil(lambda: panel.diff_ready)


@pytest.mark.parametrize("ext", ["py", "js"])
def test_surrogate_in_message_and_output_shown_as_escape(qtbot, panel, hooks, ext):
    outcome = run(hooks, f"bad.{ext}:surrogate_message")
    assert outcome.status == "turn_error"
    shown(qtbot, panel, outcome)
    panel.run.tabs.setCurrentIndex(TAB_ERROR)
    assert "bad \\ud800 here" in panel.run.error_view.message.text()
    panel.run.tabs.setCurrentIndex(TAB_OUTPUT)
    assert "out \\ud800" in panel.run.output.stdout.text.toPlainText()


@pytest.mark.parametrize("ext", ["py", "js"])
def test_surrogate_in_result_shown_as_escape(qtbot, panel, hooks, ext):
    outcome = run(hooks, f"bad.{ext}:surrogate_result")
    assert outcome.status == "ok", outcome.turn_error
    shown(qtbot, panel, outcome)
    panel.run.tabs.setCurrentIndex(TAB_RESULT)
    view = panel.run.result_view
    assert view.select_pointer("/system")
    assert view.detail.toPlainText() == "a \\ud800 b"


@pytest.mark.parametrize("ext", ["py", "js"])
def test_result_nested_1500_deep_is_shown(qtbot, panel, hooks, ext):
    outcome = run(hooks, f"bad.{ext}:deep_schema")
    assert outcome.status == "ok", outcome.turn_error
    shown(qtbot, panel, outcome)
    panel.run.tabs.setCurrentIndex(TAB_RESULT)
    view = panel.run.result_view
    assert view.select_pointer("/tools/0/input_schema")
    detail = view.detail.toPlainText()
    # Indented, 1,500 levels are millions of characters: shown from the top, the cut marked.
    assert detail.startswith('{\n  "type": "object",\n  "properties": {\n    "p": {\n      "a": {')
    assert "(cut: " in detail
