"""A layered run: the child's steps prepared on top of the child baseline (spec/crux.md §9).

Each step starts again from the child baseline (amendments never accumulate) and is judged and
recorded exactly as a step-preparation run is. The step decisions are linked as the reference
links sealed requests: each names the request sealed before it (``previousRequestId``); the
first names none, since the invocation decision seals no request and is not journaled. A step
that fails ends the child: no later step is prepared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.core.contract import CallHook
from studio.core.invocation.sample import InvocationSample, child_step
from studio.core.step.baseline import StepBaseline
from studio.core.step.contract import step_hook_call
from studio.core.step.decision import decide_step
from studio.core.step.sample import step_context
from studio.core.turn_error import HookRef, TurnError


@dataclass
class LayeredSteps:
    """What the child's steps did: one entry per step prepared, and the error that ended them."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    error: TurnError | None = None
    stdout: str = ""
    stderr: str = ""


async def run_child_steps(
    sample: InvocationSample,
    child: StepBaseline,
    source: str,
    hook: HookRef,
    call_hook: CallHook,
    worker_failure: Any,
) -> LayeredSteps:
    """Call the step hook on each of the child's steps over ``child``, in order."""
    out = LayeredSteps()
    previous: str | None = None
    for position, parsed in enumerate(sample.steps):
        step = child_step(sample, parsed, child)
        reply = await call_hook(step_hook_call(source, hook, step))
        out.stdout += reply.stdout
        out.stderr += reply.stderr
        entry: dict[str, Any] = {
            "index": step.index,
            "reason": step.reason,
            "context": step_context(step),
            "amendment": None,
            "effective": None,
            "decision_record": None,
            "previousRequestId": previous,
            "turn_error": None,
        }
        out.steps.append(entry)
        if reply.error is not None:
            out.error = _at_step(worker_failure(reply.error), position)
            entry["turn_error"] = out.error.to_json()
            return out
        verdict = decide_step(
            step,
            reply.value,
            reply.extra.get("reads") or [],
            identities=reply.extra.get("add_identities"),
        )
        entry["amendment"] = verdict.amendment
        if verdict.error is not None:
            error = verdict.error.model_copy(
                update={"hook": hook, "duration_ms": round(reply.duration_ms, 3)}
            )
            out.error = _at_step(error, position)
            entry["turn_error"] = out.error.to_json()
            return out
        assert verdict.decision_record is not None and verdict.effective is not None
        record = verdict.decision_record.to_json()
        entry["decision_record"] = record
        entry["effective"] = verdict.effective.to_json()
        out.records.append({"previousRequestId": previous, "inspection": record})
        previous = record["sealedRequestId"]
    return out


def _at_step(error: TurnError, position: int) -> TurnError:
    """The step's error, saying that the child's step (not the invocation) failed."""
    return error.model_copy(
        update={
            "message": f"child step {position}: {error.message}",
            "details": {**error.details, "layer": "step", "step": position},
        }
    )
