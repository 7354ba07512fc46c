"""One run judged against the expectations that name its target.

Every assertion is checked, in the order of the file (outcome, turn error kind, result, tools,
decision record, block by block), so a report can show them all and name the first that failed.
A run that tells nothing about the hook (the studio could not run it, or the sample is invalid
and no expectation asks for that) is an error, not a failure: the hook is not blamed for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from studio.core.contract import Contract
from studio.core.expectations.json_match import (
    MISSING,
    json_contains,
    json_equal,
    resolve,
    shown,
)
from studio.core.expectations.model import Expectation
from studio.core.findings import pointer
from studio.core.run_outcome import RunOutcome

Verdict = Literal["pass", "fail", "error"]

NOT_ABOUT_THE_HOOK = ("engine_failed", "sample_invalid", "config_invalid", "cancelled")
"""Turn error kinds that say nothing about the hook's behaviour, unless a test expects them."""


@dataclass(frozen=True)
class Check:
    """One assertion and how it went. ``at`` is its JSON pointer in the sample file."""

    at: str
    what: str
    passed: bool
    expected: str
    actual: str

    def message(self) -> str:
        return f"{self.what}: expected {self.expected}, got {self.actual}"

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "what": self.what,
            "passed": self.passed,
            "expected": self.expected,
            "actual": self.actual,
        }


@dataclass(frozen=True)
class CaseResult:
    """A sample on one target: pass, fail (an assertion failed) or error (the case could not be
    judged: a problem of the sample, or a run the studio could not carry out)."""

    sample: str
    target: str
    verdict: Verdict
    checks: tuple[Check, ...] = ()
    problem: str | None = None
    status: str | None = None
    run_id: str | None = None
    duration_ms: float = 0.0
    outcome: RunOutcome | None = field(default=None, compare=False, repr=False)

    @property
    def first_failure(self) -> Check | None:
        return next((c for c in self.checks if not c.passed), None)

    def headline(self) -> str:
        """The one line that says why the case did not pass (empty when it passed)."""
        if self.verdict == "error":
            return self.problem or "error"
        failure = self.first_failure
        return f"{failure.at}: {failure.message()}" if failure else ""

    def to_json(self) -> dict[str, Any]:
        failure = self.first_failure
        return {
            "target": self.target,
            "verdict": self.verdict,
            "status": self.status,
            "run_id": self.run_id,
            "duration_ms": round(self.duration_ms, 3),
            "problem": self.problem,
            "first_failure": failure.to_json() if failure else None,
            "checks": [c.to_json() for c in self.checks],
        }


def _status_text(outcome: RunOutcome) -> str:
    error = outcome.turn_error
    if error is None:
        return outcome.status
    message = error.message if len(error.message) <= 160 else error.message[:159] + "…"
    return f"turn_error ({error.kind}: {message})"


def judge(
    outcome: RunOutcome,
    expectations: Sequence[Expectation],
    target: str,
    contract: Contract | None,
) -> CaseResult:
    """``outcome`` (the run of ``target``) against every expectation that names the target."""
    applying = [e for e in expectations if e.names(target)]
    checks: list[Check] = []
    for expectation in applying:
        checks += _checks(expectation, outcome, contract)
    kind = outcome.turn_error.kind if outcome.turn_error else None
    expected_kinds = {e.turn_error for e in applying}
    problem = None
    if kind in NOT_ABOUT_THE_HOOK and kind not in expected_kinds:
        assert outcome.turn_error is not None
        problem = f"{kind}: {outcome.turn_error.message}"
    verdict: Verdict = "error" if problem else "pass" if all(c.passed for c in checks) else "fail"
    return CaseResult(
        sample=outcome.sample or "",
        target=target,
        verdict=verdict,
        checks=tuple(checks),
        problem=problem,
        status=outcome.status,
        run_id=outcome.run_id,
        duration_ms=outcome.duration_ms,
        outcome=outcome,
    )


def _checks(e: Expectation, outcome: RunOutcome, contract: Contract | None) -> list[Check]:
    checks: list[Check] = []
    if e.outcome is not None:
        checks.append(
            Check(
                pointer((*e.at, "outcome")),
                "outcome",
                outcome.status == e.outcome,
                e.outcome,
                _status_text(outcome),
            )
        )
    if e.turn_error is not None:
        kind = outcome.turn_error.kind if outcome.turn_error else None
        checks.append(
            Check(
                pointer((*e.at, "turn_error")),
                "turn error kind",
                kind == e.turn_error,
                e.turn_error,
                kind or f"no turn error ({outcome.status})",
            )
        )
    no_result = outcome.status == "turn_error" and outcome.result is None
    for assertion in e.result:
        where = pointer(assertion.at)
        what = f"result {assertion.path or '(whole)'} {assertion.match}"
        expected = "absent" if assertion.match == "absent" else shown(assertion.value)
        if no_result:
            checks.append(
                Check(where, what, False, expected, f"no result ({_status_text(outcome)})")
            )
            continue
        actual = resolve(outcome.result, assertion.path)
        if assertion.match == "equals":
            ok = actual is not MISSING and json_equal(actual, assertion.value)
        elif assertion.match == "contains":
            ok = actual is not MISSING and json_contains(actual, assertion.value)
        else:
            ok = actual is MISSING
        checks.append(Check(where, what, ok, expected, shown(actual)))
    if e.removed or e.kept:
        checks += _tool_checks(e, outcome, contract)
    record = outcome.decision_record
    for decision in e.decision:
        actual = resolve(record, decision.pointer)
        checks.append(
            Check(
                pointer(decision.at),
                f"decision record {decision.key}",
                actual is not MISSING and json_equal(actual, decision.value),
                shown(decision.value),
                shown(actual),
            )
        )
    return checks


def _tool_checks(e: Expectation, outcome: RunOutcome, contract: Contract | None) -> list[Check]:
    names = contract.tool_names(outcome) if contract is not None else None
    checks: list[Check] = []
    wanted = [("removed", n, i) for i, n in enumerate(e.removed)] + [
        ("kept", n, i) for i, n in enumerate(e.kept)
    ]
    for how, name, i in wanted:
        where = pointer((*e.at, "tools", how, i))
        what = f"tool {name}"
        if names is None:
            why = (
                f"no tool list ({_status_text(outcome)})"
                if outcome.status == "turn_error"
                else "this contract's result has no tool list"
            )
            checks.append(Check(where, what, False, how, why))
            continue
        before, after = names
        if name not in before:
            actual = "not in the input's tools"
        else:
            actual = "kept" if name in after else "removed"
        checks.append(Check(where, what, actual == how, how, actual))
    return checks
