"""The decision after a step-preparation hook ran (spec/crux.md §3 to §6), and its failures.

:func:`decide_step` takes the sample, what the hook returned and the identities it read, and
applies the contract in the reference's order: snapshot the value, validate it (the first error
finding fails the call), compute the effective change, and write the decision record,
also when the hook returned nothing. A failure becomes one turn error:

* V1 to V9 (``RequestCompositionError``, code ``INVALID_COMPOSITION``) and a tool that an added
  contributor brings although another owner provides it (the reference fails resolving the graph
  with a plain ``Error``): kind ``invalid_composition``;
* V10 and V11 and an added entry that is not a contributor (``TypeError`` when sealing), and a
  value that could not be read (the reference's ``PreparationError`` with reason ``callback``):
  kind ``invalid_result``.

The turn error's ``path`` is the dotted path into the returned amendment (``None`` for the value
as a whole); ``details`` carry the rule id, the JSON Pointer and the error the reference raises.
No record is written for a failed decision: the request is never sealed.

:func:`preparation_failure` and :func:`resource_read_failure` build the turn errors of §4 for what
happens before there is a value to decide on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from studio.core.findings import Finding, first_error
from studio.core.step.amendment import (
    COMPOSITION_RULES,
    TOOL_COLLISION,
    UnreadableAmendment,
    error_for,
    plan_amendment,
)
from studio.core.step.decision_record import (
    ResourceRead,
    StepDecisionRecord,
    pinned_reads,
    resource_read,
    step_decision_record,
)
from studio.core.step.effective import EffectiveStep, effective_from_plan
from studio.core.step.sample import StepSample
from studio.core.turn_error import TurnError

PREPARATION_TIMEOUT_MS: Final = 30_000
PreparationReason = Literal["callback", "timeout", "aborted"]
RESOURCE_READ_REASONS: Final = ("undeclared", "unresolved", "storage-unavailable", "unauthorized")

# The turn error kind a preparation failure gets when the caller names none.
_DEFAULT_KINDS: Final[dict[str, str]] = {
    "callback": "exception",
    "timeout": "timeout",
    "aborted": "cancelled",
}


@dataclass(frozen=True, slots=True)
class StepVerdict:
    """The outcome of one boundary: an accepted, sealed decision, or the turn error."""

    snapshot: Any
    findings: tuple[Finding, ...]
    reads: tuple[ResourceRead, ...]
    decision_record: StepDecisionRecord | None = None
    effective: EffectiveStep | None = None
    error: TurnError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def amendment(self) -> Any:
        """What the hook asked for, as JSON (``None`` for nothing or an unreadable value)."""
        return None if isinstance(self.snapshot, UnreadableAmendment) else self.snapshot

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "amendment": self.amendment,
            "decision_record": None
            if self.decision_record is None
            else self.decision_record.to_json(),
            "effective": None if self.effective is None else self.effective.to_json(),
            "turn_error": None if self.error is None else self.error.to_json(),
            "findings": [f.to_json() for f in self.findings],
        }


def decide_step(
    sample: StepSample,
    returned: Any,
    reads: Iterable[str],
    *,
    sealed_request_id: str | None = None,
    identities: list[Any] | None = None,
) -> StepVerdict:
    """The decision for what the hook returned, with the resource reads it made.

    ``reads`` are the identities the hook read, in completion order (repeats are recorded once);
    each must be a readable resource of the sample: the hook API cannot record any other, so
    another identity raises ``ValueError`` (the engine's inputs disagree). Otherwise never raises.
    ``identities``: the object identities of ``use.add`` a JavaScript hook's value carries
    (see :func:`~studio.core.step.amendment.plan_amendment`).
    """
    records = pinned_reads(_read_records(sample, reads))
    plan = plan_amendment(sample.baseline, returned, identities)
    findings = tuple(plan.findings)
    first = first_error(plan.findings)
    if first is not None:
        return StepVerdict(
            snapshot=plan.snapshot, findings=findings, reads=records, error=amendment_failure(first)
        )
    effective = effective_from_plan(plan)
    record = step_decision_record(
        step_index=sample.index,
        reason=sample.reason,
        amendment=plan.snapshot,
        resources=records,
        sealed_request_id=sealed_request_id,
    )
    return StepVerdict(
        snapshot=plan.snapshot,
        findings=findings,
        reads=records,
        decision_record=record,
        effective=effective,
    )


def amendment_failure(finding: Finding) -> TurnError:
    """The turn error for the finding that fails the call (see the module docstring)."""
    error = error_for(finding)
    composition = finding.rule in COMPOSITION_RULES or finding.rule == TOOL_COLLISION
    kind = "invalid_composition" if composition else "invalid_result"
    details: dict[str, Any] = {
        "rule": finding.rule,
        "pointer": finding.pointer,
        "error": error,
    }
    if error["code"] is not None:
        details["code"] = error["code"]
    return TurnError(
        kind=kind,
        reason="callback",
        message=finding.message,
        path=finding.pointer or None,
        details=details,
    )


def preparation_failure(
    reason: PreparationReason, *, kind: str | None = None, **fields: Any
) -> TurnError:
    """A ``PreparationError`` as a turn error; its message is the reference's, content-free.

    ``kind`` defaults to ``exception`` (callback), ``timeout`` or ``cancelled`` (aborted); a
    worker that crashed or wrote garbage is still reason ``callback`` with its own kind. Other
    ``fields`` (hook, loop, duration, traceback, stderr tail, details) go on the turn error.
    """
    if reason not in _DEFAULT_KINDS:
        raise ValueError(f"preparation fails with callback, timeout or aborted, not {reason!r}")
    message = f"Request preparation failed: {reason}."
    details = {"error": {"name": "PreparationError", "reason": reason, "message": message}}
    details.update(fields.pop("details", None) or {})
    return TurnError(
        kind=kind or _DEFAULT_KINDS[reason],
        reason=reason,
        message=message,
        details=details,
        **fields,
    )


def resource_read_failure(reason: str, *, identity: str | None = None, **fields: Any) -> TurnError:
    """A ``ResourceReadError`` the hook did not catch: kind ``resource_read``, its own reason.

    It is not a ``PreparationError``: the turn error's contract reason is ``callback`` (the hook's
    evaluation failed) and the read's reason is kept in ``details["resource_reason"]``.
    """
    if reason not in RESOURCE_READ_REASONS:
        raise ValueError(f"a resource read fails with {', '.join(RESOURCE_READ_REASONS)}")
    message = f"Preparation resource read failed: {reason}."
    details: dict[str, Any] = {
        "resource_reason": reason,
        "identity": identity,
        "error": {"name": "ResourceReadError", "reason": reason, "message": message},
    }
    details.update(fields.pop("details", None) or {})
    return TurnError(
        kind="resource_read", reason="callback", message=message, details=details, **fields
    )


# What a worker failure means at one boundary: its preparation reason and its turn-error kind,
# from the worker's error and the error the reference raised (an empty dict when it raised none).
WorkerFailureReading = Callable[[TurnError, dict[str, Any]], tuple[PreparationReason, str]]


def worker_preparation_failure(error: TurnError, reading: WorkerFailureReading) -> TurnError:
    """A worker failure in preparation terms: the reference's error beside the user's story.

    A resource read the hook did not catch keeps its own reason; any other failure becomes the
    ``PreparationError`` whose reason and kind ``reading`` gives it.
    """
    contract_error = error.details.get("contract_error") or {}
    common = error.model_dump(exclude={"kind", "reason", "message", "details", "label"})
    details = {k: v for k, v in error.details.items() if k != "contract_error"}
    if contract_error.get("error") == "ResourceReadError" and contract_error.get("reason") in (
        RESOURCE_READ_REASONS
    ):
        failure = resource_read_failure(
            contract_error["reason"], identity=contract_error.get("identity"), **common
        )
        return failure.model_copy(
            update={
                "message": f"{failure.message} ({error.message})",
                "details": {**failure.details, **details},
            }
        )
    reason, kind = reading(error, contract_error)
    failure = preparation_failure(reason, kind=kind, details=details, **common)
    return failure.model_copy(update={"message": f"{failure.message} {error.message}"})


def step_timeout_ms(deadline_ms: float | None = None) -> float:
    """The effective preparation timeout: 30 seconds, or the caller's deadline if shorter."""
    if deadline_ms is None or math.isnan(deadline_ms):
        return PREPARATION_TIMEOUT_MS
    return max(0, min(PREPARATION_TIMEOUT_MS, deadline_ms))


def _read_records(sample: StepSample, reads: Iterable[str]) -> list[ResourceRead]:
    records = []
    for identity in reads:
        declared = sample.resource(identity)
        if declared is None or not declared.readable:
            why = "not declared" if declared is None else f"declared as {declared.failure}"
            raise ValueError(f"resource {identity!r} was recorded as read but is {why}")
        records.append(resource_read(identity, declared.value))
    return records
