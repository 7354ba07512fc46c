"""The window finds contracts in the registry: one added later shows with the result view it
names, and a run whose contract (or view) the window does not know shows with generic tabs,
in the results panel and in the records alike, without a change to the interface."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QComboBox, QTableView
from pytestqt.qtbot import QtBot

from studio.core.contract import CallHook, Contract, RunJob
from studio.core.findings import Finding
from studio.core.records.store import RecordStore
from studio.core.registry import CONTRACTS
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import HookRef
from studio.ui.engine_bridge import EngineBridge
from studio.ui.record_detail import RecordDetail
from studio.ui.records_cells import CONTRACT
from studio.ui.records_view import RecordsView
from studio.ui.results_panel import ResultsPanel
from studio.ui.run_view import TAB_DECISION, TAB_DIFF, TAB_RESULT

REQUEST = {
    "system": "Relay the ticket.",
    "messages": [{"role": "user", "content": "Refund order 4821?"}],
    "tools": [{"name": "fs_read"}, {"name": "shell"}],
}


class _LaterContract(Contract):
    """A contract the window was written without."""

    sample_schema = "later_sample"

    def __init__(self, name: str, label: str, result_view: str) -> None:
        self.name = name
        self.label = label
        self.title = label.capitalize()
        self.result_view = result_view  # type: ignore[assignment]

    def parse_sample(self, document: Any) -> Any | list[Finding]:
        return document

    def sample_template(self) -> dict[str, Any]:
        return {"contract": self.name}

    def schemas(self) -> dict[str, dict[str, Any]]:
        return {}

    async def run(self, job: RunJob, call_hook: CallHook) -> RunOutcome:
        raise NotImplementedError


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(CONTRACTS, "relay", _LaterContract("relay", "relay hook", "request"))
    monkeypatch.setitem(CONTRACTS, "ledger", _LaterContract("ledger", "ledger hook", "ledger"))


def outcome_of(contract: str, **fields: Any) -> RunOutcome:
    hook = HookRef(source="lib/relay.py", function="main", contract=contract)
    values: dict[str, Any] = {
        "contract": contract,
        "status": "ok",
        "sample": "ticket",
        "hook": hook,
        "input": REQUEST,
        "result": {**REQUEST, "tools": [{"name": "fs_read"}]},
        "decision_record": {"relayed": True, "tools": {"before": 2, "after": 1}},
    }
    values.update(fields)
    return RunOutcome(**values)


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()


@pytest.fixture
def panel(qtbot: QtBot, bridge: EngineBridge) -> ResultsPanel:
    widget = ResultsPanel(bridge)
    qtbot.addWidget(widget)
    widget.resize(900, 640)
    widget.show()
    return widget


def test_a_contract_added_later_shows_with_the_view_it_names(
    qtbot: QtBot, later: None, panel: ResultsPanel
) -> None:
    outcome = outcome_of("relay")
    panel.show_outcome(outcome)
    run = panel.run
    assert run.tabs.currentIndex() == TAB_DIFF
    qtbot.waitUntil(lambda: panel.diff_ready)
    assert run.diff_view.summary == "tools −1"
    assert run.result_title.text() == "The transformed request"
    assert run.decision.record_keys() == ["relayed", "tools"]
    assert panel.header.text().startswith("✓ ok · lib/relay.py:main · sample ticket")


@pytest.mark.parametrize("contract", ["ledger", "retired"])
def test_a_run_the_window_has_no_view_for_shows_with_generic_tabs(
    later: None, panel: ResultsPanel, contract: str
) -> None:
    panel.show_outcome(outcome_of(contract, effective={"moved": 1}))
    run = panel.run
    assert run.diff_stack.currentWidget() is run.diff_message
    assert run.diff_message.text() == "This run has no request to compare."
    run.tabs.setCurrentIndex(TAB_DECISION)
    assert run.decision.record_keys() == ["relayed", "tools"]
    run.tabs.setCurrentIndex(TAB_RESULT)
    assert run.result_title.text() == "What the hook returned"
    assert run.show_value("Input")
    assert run.result_title.text() == "What the hook was given"
    assert run.result_view.model.value == REQUEST


def test_the_records_list_and_show_a_contract_added_later(
    qtbot: QtBot, later: None, bridge: EngineBridge, tmp_path: Path
) -> None:
    with RecordStore.open(tmp_path) as store:
        store.add(outcome_of("relay", run_id="relayed"))
        view = RecordsView(bridge)
        qtbot.addWidget(view)
        view.resize(1300, 420)
        view.show()
        try:
            view.set_store(store)
            table = view.findChild(QTableView, "recordsTable")
            box = view.findChild(QComboBox, "recordsContract")
            detail = view.findChild(RecordDetail, "recordDetail")
            assert table is not None and box is not None and detail is not None
            qtbot.waitUntil(lambda: table.model().rowCount() == 1)
            assert table.model().index(0, CONTRACT).data() == "relay hook"
            titles = [box.itemText(i) for i in range(box.count())]
            assert titles == ["All contracts", *(c.title for c in CONTRACTS.values())]
            assert "Relay hook" in titles and "Ledger hook" in titles
            table.selectRow(0)
            qtbot.waitUntil(lambda: detail.run_id == "relayed")
            qtbot.waitUntil(lambda: detail.run.diff_ready)
            assert detail.run.diff_view.summary == "tools −1"
        finally:
            view.set_store(None)
