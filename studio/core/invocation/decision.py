"""The decision after an invocation-preparation hook ran (spec/crux.md §9), and its failures.

The amendment has the step amendment's shape and is judged by the step rules
(:mod:`studio.core.step.amendment`), with §9's differences:

* no snapshot: the raw value is judged. Nothing (``None``) is no amendment; any other value
  that is not an object, an array included, fails V1 with the reference's message
  "Preparation callbacks must return an amendment object.";
* V8 compares contributed tools against the agent's tools plus the invocation's own tools;
* V9 runs only when the amendment sets ``activeTools``, against those merged tools (the
  baseline's own active tools are inherited unchecked);
* the errors are the step path's (the diagnostic still names ``prepareStep``);
* a failure is a ``PreparationError`` with reason ``callback`` or ``timeout``, never
  ``aborted``: there is no caller signal on this path, only the 30-second ceiling.

An accepted amendment becomes the child baseline. No decision record is written for it: the
reference journals step decisions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from studio.core.findings import Finding, first_error
from studio.core.invocation.sample import InvocationSample, child_baseline
from studio.core.json.js_values import JsValue
from studio.core.step.amendment import (
    V1,
    AmendmentPlan,
    UnreadableAmendment,
    error_for,
    keep_support_tool_active,
    plan_amendment,
)
from studio.core.step.baseline import StepBaseline, shown_value
from studio.core.step.decision import (
    PREPARATION_TIMEOUT_MS,
    PreparationReason,
    amendment_failure,
    worker_preparation_failure,
)
from studio.core.step.decision_record import ResourceRead, pinned_reads, resource_read
from studio.core.step.effective import EffectiveStep, effective_from_plan
from studio.core.turn_error import TurnError

INVOCATION_TIMEOUT_MS: Final = PREPARATION_TIMEOUT_MS
V1_MESSAGE: Final = "Preparation callbacks must return an amendment object."


@dataclass(frozen=True, slots=True)
class InvocationVerdict:
    """The outcome of the invocation boundary: the child baseline, or the turn error."""

    amendment: Any
    findings: tuple[Finding, ...]
    reads: tuple[ResourceRead, ...]
    child: StepBaseline | None = None
    effective: EffectiveStep | None = None
    error: TurnError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "amendment": self.amendment,
            "childBaseline": None if self.child is None else self.child.to_json(),
            "effective": None if self.effective is None else self.effective.to_json(),
            "turn_error": None if self.error is None else self.error.to_json(),
            "findings": [f.to_json() for f in self.findings],
        }


def plan_invocation(
    merged: StepBaseline, returned: Any, identities: list[Any] | None = None
) -> AmendmentPlan:
    """The raw value judged against ``merged`` (the agent's baseline with the invocation's
    tools declared too), with §9's V1 and V9."""
    unchecked = merged.model_copy(update={"active_tools": None})
    if returned is None:
        plan = plan_amendment(unchecked, None)
    elif isinstance(returned, dict):
        plan = plan_amendment(unchecked, returned, identities)
    else:
        plan = AmendmentPlan(baseline=merged, snapshot=returned)
        plan.findings.append(
            Finding(
                (),
                f"the hook returned {_shown(returned)}: an invocation callback must return an "
                "amendment object or nothing (its value is not snapshotted, so an array is "
                "refused too)",
                V1,
            )
        )
        return plan
    snap = plan.snapshot
    sets_active = isinstance(snap, dict) and "activeTools" in snap
    if not sets_active and not isinstance(snap, UnreadableAmendment):
        inherited = merged.active_tools
        plan.active_tools = None if inherited is None else list(inherited)
        keep_support_tool_active(plan)
    return plan


def decide_invocation(
    sample: InvocationSample,
    returned: Any,
    reads: list[str] | tuple[str, ...] = (),
    *,
    identities: list[Any] | None = None,
) -> InvocationVerdict:
    """The child baseline for what the hook returned, or the turn error that stops the child."""
    records = pinned_reads(resource_read(i, _declared_value(sample, i)) for i in reads)
    plan = plan_invocation(sample.merged_baseline(), returned, identities)
    findings = tuple(plan.findings)
    amendment = None if isinstance(plan.snapshot, UnreadableAmendment) else returned
    first = first_error(plan.findings)
    if first is not None:
        return InvocationVerdict(
            amendment=amendment, findings=findings, reads=records, error=invocation_failure(first)
        )
    effective = effective_from_plan(plan)
    child = child_baseline(
        [*plan.kept, *plan.added], plan.tools, plan.active_tools, plan.model, plan.input_budget
    )
    return InvocationVerdict(
        amendment=amendment, findings=findings, reads=records, child=child, effective=effective
    )


def invocation_failure(finding: Finding) -> TurnError:
    """The step path's turn error for the finding, with the invocation's V1 message."""
    failure = amendment_failure(finding)
    if finding.rule != V1:
        return failure
    error = error_for(finding)
    error["message"] = V1_MESSAGE
    error["diagnostics"] = [{**d, "message": V1_MESSAGE} for d in error["diagnostics"]]
    return failure.model_copy(update={"details": {**failure.details, "error": error}})


def worker_failure(error: TurnError) -> TurnError:
    """A worker failure in the invocation's terms: ``timeout`` when the ceiling passed,
    otherwise ``callback``; a resource read the hook did not catch keeps its own reason."""
    return worker_preparation_failure(error, _invocation_failure_reading)


def _invocation_failure_reading(
    error: TurnError, contract_error: dict[str, Any]
) -> tuple[PreparationReason, str]:
    if error.kind == "timeout" or contract_error.get("reason") == "timeout":
        return "timeout", "timeout"
    return "callback", error.kind


def _declared_value(sample: InvocationSample, identity: str) -> Any:
    declared = sample.resource(identity)
    if declared is None or not declared.readable:
        why = "not declared" if declared is None else f"declared as {declared.failure}"
        raise ValueError(f"resource {identity!r} was recorded as read but is {why}")
    return declared.value


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, JsValue):
        return f"the JavaScript {value.kind} {value}"
    return shown_value(value)
