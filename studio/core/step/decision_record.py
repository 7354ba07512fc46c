"""The decision record of an accepted step preparation: the spec's "decision inspection record"
(spec/crux.md §5 and §6).

The record is content-free: counts and presence flags of what the hook asked for, the identities
and hashes of the resources it read, and the id of the sealed request. Nothing in it is a value.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from studio.core.sealed_request import SEALED_REQUEST_ID_PATTERN, new_sealed_request_id
from studio.core.step.amendment import UnreadableAmendment, snapshot
from studio.core.step.value_hash import value_hash

StepReason = Literal["initial", "tool-result", "validation-retry"]
STEP_REASONS: Final[tuple[str, ...]] = ("initial", "tool-result", "validation-retry")


class ResourceRead(BaseModel):
    """One pinned read; the revision is the value hash, as in the reference."""

    model_config = ConfigDict(defer_build=True, frozen=True, populate_by_name=True)

    identity: str
    revision: str
    value_hash: str = Field(alias="valueHash")

    def to_json(self) -> dict[str, str]:
        return {"identity": self.identity, "revision": self.revision, "valueHash": self.value_hash}


class AmendmentCounts(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, populate_by_name=True)

    added_contributors: int = Field(alias="addedContributors", ge=0)
    removed_contributors: int = Field(alias="removedContributors", ge=0)
    contributed_tools: int = Field(alias="contributedTools", ge=0)
    active_tools: int | None = Field(alias="activeTools", ge=0)
    model_changed: bool = Field(alias="modelChanged")
    input_budget_changed: bool = Field(alias="inputBudgetChanged")

    def to_json(self) -> dict[str, Any]:
        return {
            "addedContributors": self.added_contributors,
            "removedContributors": self.removed_contributors,
            "contributedTools": self.contributed_tools,
            "activeTools": self.active_tools,
            "modelChanged": self.model_changed,
            "inputBudgetChanged": self.input_budget_changed,
        }


class StepDecisionRecord(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, populate_by_name=True)

    operation: Literal["language"] = "language"
    step_index: int = Field(alias="stepIndex", ge=0)
    reason: StepReason
    amendment: AmendmentCounts
    resources: tuple[ResourceRead, ...]
    sealed_request_id: str = Field(alias="sealedRequestId", pattern=SEALED_REQUEST_ID_PATTERN)

    def to_json(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "stepIndex": self.step_index,
            "reason": self.reason,
            "amendment": self.amendment.to_json(),
            "resources": [read.to_json() for read in self.resources],
            "sealedRequestId": self.sealed_request_id,
        }


def resource_read(identity: str, value: Any) -> ResourceRead:
    """The record of reading ``value``; raises ``NotCanonicalizable`` where the reference's hash
    fails (a BigInt, a value that is not JSON)."""
    digest = value_hash(value)
    return ResourceRead(identity=identity, revision=digest, value_hash=digest)


def pinned_reads(reads: Iterable[ResourceRead]) -> tuple[ResourceRead, ...]:
    """Reads in completion order, each identity once: later reads return the pinned value."""
    seen: set[str] = set()
    out = []
    for read in reads:
        if read.identity not in seen:
            seen.add(read.identity)
            out.append(read)
    return tuple(out)


def amendment_counts(amendment: Any) -> AmendmentCounts:
    """What the hook asked for; ``None`` (nothing returned) counts as an empty amendment.

    Raises ``ValueError`` for a value that no accepted decision can have (not an object).
    """
    snap = snapshot(amendment)
    if snap is None:
        snap = {}
    if isinstance(snap, UnreadableAmendment) or not isinstance(snap, dict):
        raise ValueError("only an amendment object or nothing can be an accepted decision")
    use = snap.get("use") or {}
    active = snap.get("activeTools")
    return AmendmentCounts(
        added_contributors=len(use.get("add") or ()),
        removed_contributors=len(use.get("remove") or ()),
        contributed_tools=len(snap.get("tools") or {}),
        active_tools=None if active is None else len(active),
        model_changed="model" in snap,
        input_budget_changed="inputBudget" in snap,
    )


def step_decision_record(
    *,
    step_index: int,
    reason: StepReason,
    amendment: Any,
    resources: Iterable[ResourceRead] = (),
    sealed_request_id: str | None = None,
) -> StepDecisionRecord:
    """The record the reference commits once the request is sealed (also when nothing returned)."""
    return StepDecisionRecord(
        step_index=step_index,
        reason=reason,
        amendment=amendment_counts(amendment),
        resources=pinned_reads(resources),
        sealed_request_id=sealed_request_id or new_sealed_request_id(),
    )
