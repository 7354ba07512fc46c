"""Every item model of the window keeps Qt's model rules (pytest-qt's ``qtmodeltester``, which
runs Qt's QAbstractItemModelTester), over real runs of the bundled workspace, and keeps them
while its rows change as the window changes them. The sample editor's list and structure models
are checked with the editor, in test_sample_editor.py."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from studio.core.pre_llm.diff import diff_request
from studio.core.pre_llm.targets import (
    FREE_NAME_LABEL,
    TargetRow,
    add_row,
    choose,
    move_row,
    remove_row,
    rows_from_config,
)
from studio.core.records.store import RecordStore, RecordSummary
from studio.core.run_outcome import RunOutcome
from studio.core.workspace.folder import Workspace
from studio.core.workspace.sample_check import check_sample_text
from studio.ui.contract_views import diff_sides
from studio.ui.records_cells import HEADERS, TIME
from studio.ui.records_model import RecordsModel
from studio.ui.records_rows import Loaded, RowFilter, arrange, haystacks
from studio.ui.result_diff_model import DiffModel
from studio.ui.result_diff_rows import build_rows
from studio.ui.result_diff_sides import DiffSides
from studio.ui.result_json_tree import JsonTreeModel
from studio.ui.samples.problems import ProblemList
from studio.ui.target_table import NAME_COLUMN, TARGET_COLUMN, TargetTableModel
from tests.support.paths import BUNDLED_WORKSPACE
from tests.support.runners import LiveRunner
from tests.support.workspaces import copy_bundled_workspace

# Every contract's sample as it is, and the bundled failing hooks: a turn error of each kind the
# bundled workspace can show, and a run on a loop the hook does not target.
RUNS: list[tuple[str, dict[str, str]]] = [
    ("support-ticket", {}),
    ("step-escalated", {}),
    ("chain-refund", {}),
    ("support-ticket", {"hook": "lib/failing.py:typo_key"}),
    ("support-ticket", {"hook": "lib/failing.py:tool_result_from_assistant"}),
    ("step-escalated", {"hook": "lib/failing.py:activate_unknown_tool"}),
    ("support-ticket", {"loop": "reviewer"}),
    ("support-ticket", {"loop": "researcher"}),
]


@dataclass(frozen=True)
class BundledRuns:
    outcomes: list[RunOutcome]
    summaries: list[RecordSummary]
    summaries_cleared: list[RecordSummary]
    """The same records after one run's payload was cleared."""


@pytest.fixture(scope="module")
def bundled_runs(tmp_path_factory: pytest.TempPathFactory) -> BundledRuns:
    root = copy_bundled_workspace(tmp_path_factory.mktemp("runs") / "workspace")
    live = LiveRunner(Workspace.open(root))
    try:
        outcomes = [live.run(sample, **options) for sample, options in RUNS]
    finally:
        live.close()
    with RecordStore.open(root) as store:
        for outcome in outcomes:
            store.add(outcome)
        summaries = store.list()
        store.clear_payloads([outcomes[0].run_id])
        cleared = store.list()
    return BundledRuns(outcomes, summaries, cleared)


def test_the_runs_cover_every_status_and_contract(bundled_runs: BundledRuns):
    outcomes = bundled_runs.outcomes
    assert {o.contract for o in outcomes} == {"pre_llm", "step", "chain"}
    assert {o.status for o in outcomes} == {"ok", "turn_error", "not_applied"}
    assert len(bundled_runs.summaries) == len(RUNS)


def test_the_records_model(qtmodeltester: Any, qapp: Any, bundled_runs: BundledRuns):
    model = RecordsModel()
    qtmodeltester.check(model)
    loaded = Loaded(
        bundled_runs.summaries,
        haystacks(bundled_runs.summaries),
        frozenset(s.error_kind for s in bundled_runs.summaries if s.error_kind),
    )
    model.set_selection(arrange(loaded, None, RowFilter.of(), TIME, True).selection)
    assert model.rowCount() == len(RUNS)
    for column in range(len(HEADERS)):
        for descending in (False, True):
            arranged = arrange(loaded, None, RowFilter.of("support"), column, descending)
            model.set_selection(arranged.selection)
    cleared = Loaded(
        bundled_runs.summaries_cleared, haystacks(bundled_runs.summaries_cleared), loaded.kinds
    )
    model.set_selection(arrange(cleared, None, RowFilter.of(), TIME, True).selection)
    assert model.rowCount() == len(RUNS)
    model.set_selection(
        arrange(loaded, None, RowFilter.of("", "pre_llm", "turn_error"), TIME, True).selection
    )
    assert 0 < model.rowCount() < len(RUNS)
    model.clear()
    assert model.rowCount() == 0


def long_request(request: dict[str, Any], count: int) -> dict[str, Any]:
    """The bundled request with its conversation repeated to ``count`` messages: long enough
    for the views' ranges."""
    messages = request["messages"]
    repeated = [copy.deepcopy(messages[k % len(messages)]) for k in range(count)]
    return {**request, "messages": repeated}


def bundled_request() -> dict[str, Any]:
    sample = json.loads((BUNDLED_WORKSPACE / "samples" / "support-ticket.json").read_text())
    return sample["request"]


def json_values(bundled_runs: BundledRuns) -> list[Any]:
    """What the JSON trees show: each run's input, result, decision record and effective
    change; a scalar; a request long enough to be shown in ranges."""
    values: list[Any] = []
    for outcome in bundled_runs.outcomes:
        values += [outcome.input, outcome.result, outcome.decision_record, outcome.effective]
    return [*values, "a scalar is a row of its own", long_request(bundled_request(), 1100)]


def test_the_json_tree(qtmodeltester: Any, qapp: Any, bundled_runs: BundledRuns):
    # Each value gets its own model, checked once it holds the value: the tester fetches a
    # model's rows from inside its own modelReset handler, before it marks the reset as done,
    # so a reset that leaves rows to fetch is reported even for a textbook fetchMore model.
    values = json_values(bundled_runs)
    models = []
    for value in values:
        model = JsonTreeModel()
        model.set_value(value)
        models.append(model)
    for model in models:
        qtmodeltester.check(model)  # opens every branch, fetching as a view would
    assert models[-2].rowCount() == 1
    models[-1].set_value({})  # a reset, under the tester's eye
    assert models[-1].rowCount() == 0


def test_the_request_diff(qtmodeltester: Any, qapp: Any, bundled_runs: BundledRuns):
    model = DiffModel()
    qtmodeltester.check(model)
    shown = 0
    for outcome in bundled_runs.outcomes:
        sides = diff_sides(outcome)
        if sides is None:
            continue
        diff = diff_request(sides.original, sides.transformed)
        for changes_only in (False, True):
            model.set_root(build_rows(diff, sides, changes_only), sides.headers)
            shown += 1
    assert shown >= 4  # the pre-LLM runs that succeeded and the chain run
    original = long_request(bundled_request(), 1200)
    transformed = copy.deepcopy(original)
    del transformed["messages"][600:640]
    transformed["messages"][900]["content"] = "changed"
    transformed["tools"] = transformed["tools"][1:]
    sides = DiffSides(original, transformed)
    model.set_root(build_rows(diff_request(original, transformed), sides, False))


def test_the_target_table(qtmodeltester: Any, qapp: Any):
    workspace = Workspace.open(BUNDLED_WORKSPACE)
    config = json.loads(workspace.agent_path.read_text())["pre_llm_hook"]

    def edit(rows: tuple[TargetRow, ...], _focus: int | None) -> None:
        model.set_rows(rows)

    model = TargetTableModel(edit)
    qtmodeltester.check(model)
    model.set_declared_loops(workspace.settings().loops)
    model.set_rows(rows_from_config(config))
    assert model.rowCount() == 2
    model.set_rows(add_row(model.rows))
    assert model.setData(model.index(2, TARGET_COLUMN), "reviewer")
    model.set_problems({1: "a problem"})
    model.set_rows(move_row(model.rows, 2, 0))
    assert model.setData(model.index(0, TARGET_COLUMN), FREE_NAME_LABEL)
    assert model.setData(model.index(0, NAME_COLUMN), "summariser")
    model.set_rows(remove_row(model.rows, 1))
    model.set_problems({})
    model.set_rows(choose(model.rows, 0, TargetRow.all_streams()))
    assert model.rowCount() == 1
    model.set_rows(())


def test_the_problem_list(qtmodeltester: Any, qtbot: QtBot):
    problems = ProblemList()
    qtbot.addWidget(problems)
    qtmodeltester.check(problems.model)
    text = (BUNDLED_WORKSPACE / "samples" / "support-ticket.json").read_text()
    problems.show_check(check_sample_text(text))
    assert problems.model.rowCount() == 0
    problems.show_check(check_sample_text(text.replace('"user"', '"robot"', 1)))
    assert problems.model.rowCount() >= 1
    problems.show_check(check_sample_text(text[: len(text) // 2]))
    assert problems.model.rowCount() == 1
    sample = json.loads(text)
    sample["request"]["messages"] = [{"role": "robot", "content": 1}] * 500
    check = check_sample_text(json.dumps(sample, indent=2))
    problems.show_check(check)
    assert check.total > len(check.problems)  # the last row says how many more there are
    problems.clear()
    assert problems.model.rowCount() == 0
