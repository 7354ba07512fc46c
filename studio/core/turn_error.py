"""One shape for every hook failure: the structured turn error.

It names what went wrong in the user's terms (the hook, the loop, the JSON path of the offending
value, the frames of the user's own files) and never a stack of studio internals.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

TURN_ERROR_LABEL: Final = "Turn error"
SAMPLE_PROBLEM_LABEL: Final = "Sample problem"
SAMPLE_PROBLEM_KIND: Final = "sample_invalid"
"""The kind of a run the sample ended, not the hook: it carries the sample problem label."""

Reason = Literal["callback", "timeout", "aborted"]
Label = Literal["Turn error", "Sample problem"]
ContractName = str
"""A contract's name, as :mod:`studio.core.registry` lists it."""

# Every kind a run can fail with, and the contract reason it maps to.
KIND_REASONS: dict[str, Reason] = {
    "config_invalid": "callback",
    "sample_invalid": "callback",
    "source_outside_workspace": "callback",
    "source_missing": "callback",
    "source_unsupported": "callback",
    "function_missing": "callback",
    "load_failed": "callback",
    "exception": "callback",
    "nested_lambda_failed": "callback",
    "memory_limit": "callback",
    "timeout": "timeout",
    "cancelled": "aborted",
    "worker_crashed": "callback",
    "channel_corrupted": "callback",
    "output_limit": "callback",
    "invalid_result": "callback",
    "invalid_composition": "callback",
    "resource_read": "callback",
    "engine_failed": "callback",
}

KIND_TITLES: dict[str, str] = {
    "config_invalid": "The hook config is invalid",
    "sample_invalid": "The sample is invalid",
    "source_outside_workspace": "The hook source is outside the workspace",
    "source_missing": "The hook source file is missing",
    "source_unsupported": "No runtime runs this hook source",
    "function_missing": "The hook function is missing",
    "load_failed": "The hook source could not be loaded",
    "exception": "The hook raised an exception",
    "nested_lambda_failed": "A nested lambda failed",
    "memory_limit": "The hook ran out of memory",
    "timeout": "The hook timed out",
    "cancelled": "The run was cancelled",
    "worker_crashed": "The worker process ended before returning a result",
    "channel_corrupted": "The result channel was corrupted",
    "output_limit": "The hook produced too much output",
    "invalid_result": "The hook returned an invalid result",
    "invalid_composition": "The amendment is not a valid composition",
    "resource_read": "A resource read failed",
    "engine_failed": "The studio could not run the hook",
}


class HookRef(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    source: str
    function: str
    contract: ContractName
    position: int | None = None
    chain: Literal["pre", "post"] | None = None


class Frame(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    file: str
    line: int
    function: str
    code: str | None = None
    column: int | None = None


class ExitStatus(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    code: int | None = None
    signal: str | None = None


class TurnError(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    label: Label = TURN_ERROR_LABEL
    kind: str
    reason: Reason
    message: str
    path: str | None = None
    hook: HookRef | None = None
    loop: str | None = None
    duration_ms: float = 0.0
    exit: ExitStatus | None = None
    traceback: list[Frame] = Field(default_factory=list)
    stderr_tail: str = ""
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def title(self) -> str:
        return KIND_TITLES.get(self.kind, self.kind)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def turn_error(kind: str, message: str, **fields: Any) -> TurnError:
    """A turn error of ``kind``, with the contract reason that kind maps to."""
    label: Label = SAMPLE_PROBLEM_LABEL if kind == SAMPLE_PROBLEM_KIND else TURN_ERROR_LABEL
    return TurnError(
        label=label,
        kind=kind,
        reason=KIND_REASONS.get(kind, "callback"),
        message=message,
        **fields,
    )
