"""The test matrix: every sample on every target, each cell judged against the sample's
expectations, or, where nothing is expected, compared with the run before it.

A cell is ``pass`` or ``fail`` (the expectations that name its target), ``changed`` or ``same``
(no expectation names it: the run's result against the previous run of that sample on that
target, as the records hold it), ``new`` (no previous run to compare with), ``error`` (the sample
cannot be tested, or the studio could not run it) or ``none`` (a sample that runs once has no
cell on the other loops).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from studio.core.contract import Contract
from studio.core.expectations.evaluate import CaseResult, judge
from studio.core.expectations.from_outcome import VOLATILE_KEYS
from studio.core.expectations.targets import SampleTests, plan_sample, workspace_targets
from studio.core.json.deep import deep_json
from studio.core.pre_llm.config import MAIN
from studio.core.run_outcome import RunOutcome
from studio.core.workspace.folder import Workspace

CellState = Literal["idle", "running", "pass", "fail", "changed", "same", "new", "error", "none"]

WORDS: Final[dict[str, str]] = {
    "idle": "not run",
    "running": "running…",
    "pass": "✓ pass",
    "fail": "✗ fail",
    "changed": "Δ changed",
    "same": "= same",
    "new": "• new",
    "error": "! error",
    "none": "—",
}


@dataclass(frozen=True)
class MatrixCell:
    state: CellState = "idle"
    detail: str = ""
    """Why: the first failing assertion, the problem, or what changed."""
    outcome: RunOutcome | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return WORDS[self.state]


@dataclass(frozen=True)
class MatrixRow:
    """One sample: its tests (expectations, problems) and whether it runs on every loop."""

    tests: SampleTests
    per_loop: bool

    @property
    def name(self) -> str:
        return self.tests.name

    def runs_on(self, target: str) -> bool:
        return not self.tests.problem_text() and (self.per_loop or target == MAIN)

    def expects_on(self, target: str) -> bool:
        return any(e.names(target) for e in self.tests.expectations)

    def first_cell(self, target: str) -> MatrixCell:
        """The cell before anything ran."""
        problem = self.tests.problem_text()
        if problem:
            return MatrixCell("error", problem)
        if not self.runs_on(target):
            return MatrixCell("none", "runs once, not per loop: see the main column")
        return MatrixCell("idle")


def matrix_plan(workspace: Workspace) -> tuple[list[str], list[MatrixRow]]:
    """The targets (columns) and every sample (rows). Raises ``WorkspaceFileError`` when
    ``hookstudio.json`` cannot be read."""
    from studio.core.registry import CONTRACTS

    declared = list(workspace.settings().loops)
    rows = []
    for sample_file in workspace.samples():
        tests = plan_sample(workspace, sample_file.name, declared)
        contract = CONTRACTS.get(tests.contract or "")
        rows.append(MatrixRow(tests, contract is not None and contract.runs_per_loop))
    return workspace_targets(declared), rows


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def fingerprint(outcome: RunOutcome, with_result: bool = True) -> str:
    """What makes two runs the same: the outcome, the turn error kind, the result (unless left
    out: a stored run whose payload was cleared has none) and the decision record, without
    what differs on every run."""
    kind = outcome.turn_error.kind if outcome.turn_error else None
    parts = [outcome.status, kind, _stable(outcome.decision_record)]
    if with_result:
        parts.append(_stable(outcome.result))
    with deep_json():
        text = json.dumps(parts, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def judged_cell(
    row: MatrixRow,
    target: str,
    outcome: RunOutcome,
    contract: Contract | None,
    previous: RunOutcome | None,
    previous_has_result: bool = True,
) -> MatrixCell:
    """The cell of a finished run. ``previous`` is the run of the same sample on the same target
    before this one (None when there is none)."""
    if row.expects_on(target):
        case: CaseResult = judge(outcome, row.tests.expectations, target, contract)
        return MatrixCell(case.verdict, case.headline(), outcome)
    if outcome.turn_error is not None and outcome.turn_error.kind == "engine_failed":
        return MatrixCell("error", outcome.turn_error.message, outcome)
    if previous is None:
        return MatrixCell("new", "no earlier run of this sample on this target to compare", outcome)
    same = fingerprint(outcome, previous_has_result) == fingerprint(previous, previous_has_result)
    if same:
        return MatrixCell("same", "the same as the run before it", outcome)
    return MatrixCell("changed", _change(previous, outcome), outcome)


def _change(before: RunOutcome, after: RunOutcome) -> str:
    if before.status != after.status:
        return f"was {before.status}, now {after.status}"
    kinds = (
        before.turn_error.kind if before.turn_error else None,
        after.turn_error.kind if after.turn_error else None,
    )
    if kinds[0] != kinds[1]:
        return f"turn error was {kinds[0]}, now {kinds[1]}"
    if _stable(before.decision_record) != _stable(after.decision_record):
        return "the decision record differs from the run before it"
    return "the result differs from the run before it"


def previous_run(store: Any, outcome: RunOutcome) -> tuple[RunOutcome | None, bool]:
    """The stored run of ``outcome``'s sample on its loop just before it, and whether that run
    still has its payload (its result); (None, False) when there is none."""
    from studio.core.records.store import RecordStoreError

    if store is None or outcome.sample is None:
        return None, False
    try:
        for summary in store.list(50, sample=outcome.sample, loop=outcome.loop):
            if summary.run_id == outcome.run_id or summary.started_at > outcome.started_at:
                continue
            if summary.contract != outcome.contract:
                continue
            record = store.get(summary.run_id)
            if record is None:
                continue
            return record.outcome(), record.payload is not None
    except RecordStoreError:
        return None, False
    return None, False
