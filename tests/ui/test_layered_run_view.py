"""A layered run in the run view: the invocation's amendment beside the child baseline it
produced, then each of the child's steps with its record, linked; nothing recorded for the
invocation itself."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QTableView

from studio.core.contract import CallHook, Contract, Layer, RunJob
from studio.core.findings import Finding
from studio.core.records.store import RecordStore
from studio.core.registry import CONTRACTS
from studio.core.run_outcome import RunOutcome
from studio.core.workspace.folder import Workspace
from studio.engine.runner import Runner
from studio.ui.engine_bridge import EngineBridge
from studio.ui.record_detail import RecordDetail
from studio.ui.records_cells import CONTRACT
from studio.ui.records_view import RecordsView
from studio.ui.results_panel import ResultsPanel
from studio.ui.run_view import TAB_DECISION, TAB_DIFF, TAB_ERROR


def run(workspace: Path, sample: str) -> RunOutcome:
    async def go() -> RunOutcome:
        runner = Runner(Workspace.open(workspace))
        try:
            return await runner.run(sample)
        finally:
            await runner.close()

    return asyncio.run(go())


@pytest.fixture
def panel(qtbot) -> Iterator[ResultsPanel]:
    bridge = EngineBridge()
    widget = ResultsPanel(bridge)
    qtbot.addWidget(widget)
    widget.resize(1024, 640)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    bridge.shutdown()


def shown(qtbot, panel: ResultsPanel, outcome: RunOutcome) -> None:
    panel.show_outcome(outcome)
    qtbot.waitUntil(lambda: panel.diff_ready)


def rows(panel: ResultsPanel) -> list[list[str]]:
    table = panel.run.layers_view.table
    return [
        [table.topLevelItem(r).text(c) for c in range(table.columnCount())]
        for r in range(table.topLevelItemCount())
    ]


def test_the_child_baseline_beside_the_amendment_then_the_linked_steps(
    qtbot, panel, sample_workspace
):
    outcome = run(sample_workspace, "invocation-pipeline-review")
    assert outcome.status == "ok", outcome.turn_error
    shown(qtbot, panel, outcome)
    view = panel.run.layers_view
    assert panel.run.tabs.currentIndex() == TAB_DIFF
    assert panel.run.tabs.tabText(TAB_DIFF) == "Layers"
    assert panel.run.diff_stack.currentWidget() is view
    listed = rows(panel)
    assert [row[:2] for row in listed] == [
        ["invocation", "accepted"],
        ["step 0 (initial)", "accepted"],
        ["step 1 (tool-result)", "accepted"],
    ]
    # the invocation is selected first: its amendment beside the child baseline, no record
    assert view.asked.model.value == outcome.result["amendment"]
    assert view.produced.model.value == outcome.effective
    assert view.produced.model.value["model"] == "review-model"
    assert view.produced.model.value["addedContributors"] == ["review-rubric"]
    assert view.produced_box.title().startswith("Child baseline")
    assert "does not journal" in view.record_note.text()
    assert not view.record.isVisible()
    # the second step names the request the first one sealed
    first = outcome.result["steps"][0]["decision_record"]["sealedRequestId"]
    second = outcome.result["steps"][1]["decision_record"]["sealedRequestId"]
    assert view.table.topLevelItem(2).toolTip(2) == first
    assert view.table.topLevelItem(2).toolTip(3) == second
    view.select(2)
    assert view.record.isVisible()
    assert view.record.model.value == outcome.result["steps"][1]["decision_record"]
    assert view.produced.model.value == outcome.result["steps"][1]["effective"]

    panel.run.tabs.setCurrentIndex(TAB_DECISION)
    assert panel.run.decision.record.model.value == outcome.decision_record


def test_the_failing_step_of_a_layered_run_is_selected(qtbot, panel, sample_workspace):
    outcome = run(sample_workspace, "invocation-swarm-refund")
    shown(qtbot, panel, outcome)
    assert panel.run.tabs.currentIndex() == TAB_ERROR
    assert panel.run.tabs.tabText(TAB_DIFF) == "Layers"
    assert [row[:2] for row in rows(panel)] == [
        ["invocation", "accepted"],
        ["step 0 (initial)", "accepted"],
        ["step 1 (tool-result)", "failed: V9"],
    ]
    view = panel.run.layers_view
    assert view.table.currentItem() is view.table.topLevelItem(2)
    assert view.asked.model.value == {"activeTools": ["lookupOrder", "issueRefund"]}
    assert "not sealed" in view.record_note.text()


def test_an_invocation_that_fails_before_any_decision_says_nothing_was_recorded(
    qtbot, panel, sample_workspace
):
    outcome = run(sample_workspace, "invocation-consensus-failing")
    shown(qtbot, panel, outcome)
    assert panel.run.tabs.tabText(TAB_DIFF) == "Diff"
    assert "hook failed" in panel.run.diff_message.text()
    panel.run.tabs.setCurrentIndex(TAB_DECISION)
    assert "only the decisions of sealed requests" in panel.run.decision.empty.text()


def test_a_layered_run_without_steps_shows_no_record(qtbot, panel, sample_workspace):
    outcome = run(sample_workspace, "invocation-parallel-billing")
    shown(qtbot, panel, outcome)
    assert [row[:2] for row in rows(panel)] == [["invocation", "accepted"]]
    assert panel.run.layers_view.produced.model.value["activeTools"] == ["lookupOrder"]


class _LaterLayers(Contract):
    """A contract the window was written without, naming the layers view."""

    name = "relay-layers"
    label = "relay layers"
    title = "Relay layers"
    result_view = "layers"
    sample_schema = "later_sample"

    def parse_sample(self, document: Any) -> Any | list[Finding]:
        return document

    def sample_template(self) -> dict[str, Any]:
        return {"contract": self.name}

    def schemas(self) -> dict[str, dict[str, Any]]:
        return {}

    async def run(self, job: RunJob, call_hook: CallHook) -> RunOutcome:
        raise NotImplementedError

    def layers(self, outcome: RunOutcome) -> list[Layer]:
        return [
            Layer("outer", "accepted", {"ask": 1}, {"got": 1}),
            Layer("inner", "failed: V9", {"ask": 2}, None, failed=True),
        ]


def test_any_contract_naming_the_layers_view_is_shown_by_it(qtbot, panel, monkeypatch):
    monkeypatch.setitem(CONTRACTS, "relay-layers", _LaterLayers())
    outcome = RunOutcome(contract="relay-layers", status="ok", result={"any": "thing"})
    shown(qtbot, panel, outcome)
    assert [row[:2] for row in rows(panel)] == [["outer", "accepted"], ["inner", "failed: V9"]]
    view = panel.run.layers_view
    assert view.asked.model.value == {"ask": 2}  # the failed layer is selected
    assert not view.produced_box.isEnabled()


def test_a_stored_layered_run_shows_its_layers_in_the_records(qtbot, sample_workspace):
    outcome = run(sample_workspace, "invocation-pipeline-review")
    bridge = EngineBridge()
    with RecordStore.open(sample_workspace) as store:
        store.add(outcome)
        view = RecordsView(bridge)
        qtbot.addWidget(view)
        view.resize(1300, 480)
        view.show()
        try:
            view.set_store(store)
            table = view.findChild(QTableView, "recordsTable")
            detail = view.findChild(RecordDetail, "recordDetail")
            assert table is not None and detail is not None
            qtbot.waitUntil(lambda: table.model().rowCount() == 1)
            assert table.model().index(0, CONTRACT).data() == "invocation preparation"
            table.selectRow(0)
            qtbot.waitUntil(lambda: detail.run_id == outcome.run_id)
            qtbot.waitUntil(lambda: detail.run.diff_ready)
            assert detail.run.tabs.tabText(TAB_DIFF) == "Layers"
            layers = detail.run.layers_view
            assert layers.table.topLevelItemCount() == 3
            assert layers.produced.model.value["model"] == "review-model"
        finally:
            view.set_store(None)
            bridge.shutdown()
