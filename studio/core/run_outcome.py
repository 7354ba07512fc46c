"""What one run of a hook produced: the result or the turn error, the decision, the output."""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from studio.core.turn_error import ContractName, HookRef, TurnError

Status = Literal["ok", "not_applied", "turn_error"]


def new_run_id() -> str:
    return uuid.uuid4().hex


class ChainStep(BaseModel):
    """One hook's turn in a chain run: what it returned, what changed, whether it stopped."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    chain: Literal["pre", "post"]
    position: int
    hook: str
    builtin: bool
    attempt: int = 0
    returned: Any = None
    changed: list[str] = Field(default_factory=list)
    stopped: str | None = None
    duration_ms: float = 0.0
    stdout: str = ""
    stderr: str = ""


class CallError(BaseModel):
    """Why a host call failed: the code the hook's ``Error`` carries and its message."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    code: str
    message: str


class HostCall(BaseModel):
    """One call a hook made to its host API (``adf.<method>(...)``), in the order it was made.

    ``gate`` is ``"allowed"`` or the name of the rule that refused the call before any answer was
    sought (``enabled_tools``, ``authorization``, ``code_execution.<name>``, ``excluded``,
    ``circular``); ``answered_by`` says where the reply came from (``sample`` and the reply's
    position, or the nested function's source). ``depth`` is 0 for the hook's own calls and grows
    inside nested ``sys_lambda`` calls.
    """

    model_config = ConfigDict(defer_build=True, frozen=True)

    method: str
    args: Any = None
    gate: str = "allowed"
    answered_by: str | None = None
    reply: Any = None
    error: CallError | None = None
    output: str = ""
    depth: int = 0
    duration_ms: float = 0.0


class RunOutcome(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    run_id: str = Field(default_factory=new_run_id)
    started_at: float = Field(default_factory=time.time)
    contract: ContractName
    status: Status
    sample: str | None = None
    loop: str | None = None
    hook: HookRef | None = None
    duration_ms: float = 0.0
    input: Any = None
    result: Any = None
    # What a hook returned that its contract refused: kept so the interface can point into it,
    # never shown as a result (``result`` stays None on a turn error).
    rejected: Any = None
    decision_record: dict[str, Any] = Field(default_factory=dict)
    effective: dict[str, Any] | None = None
    turn_error: TurnError | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    warnings: list[dict[str, str]] = Field(default_factory=list)
    chain: list[ChainStep] = Field(default_factory=list)
    calls: list[HostCall] = Field(default_factory=list)

    def to_cli_json(self) -> dict[str, Any]:
        """The ``hook-studio run --json`` object."""
        return {
            "status": self.status,
            "request": self.result,
            "inspection": self.decision_record,
            "turn_error": self.turn_error.to_json() if self.turn_error else None,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "warnings": self.warnings,
            "calls": [call.model_dump(mode="json") for call in self.calls],
            "duration_ms": round(self.duration_ms, 3),
        }

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
