"""The invocation-preparation contract (spec/crux.md §9): once per child of a composition, the hook
returns an amendment whose accepted result is the child baseline; with the child's steps in the
sample, the step hook then prepares each of them on top of it (a layered run)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Final

from studio.core.contract import (
    CallHook,
    Contract,
    HeadlessCheck,
    HookCall,
    Layer,
    RunJob,
    RunStopped,
)
from studio.core.findings import Finding
from studio.core.invocation.decision import (
    INVOCATION_TIMEOUT_MS,
    decide_invocation,
    worker_failure,
)
from studio.core.invocation.layered import run_child_steps
from studio.core.invocation.sample import (
    InvocationSample,
    invocation_context,
    invocation_worker_payload,
    parse_invocation_sample,
)
from studio.core.run_outcome import RunOutcome
from studio.core.source_ref import SourceRef, parse_source_ref
from studio.core.step.contract import (
    RunFields,
    StepContract,
    effective_tool_names,
    preparation_worker_failure,
)
from studio.core.step.settings import (
    MODULE_EXTENSIONS,
    StepSettings,
    parse_step_settings,
    step_source_ref,
)
from studio.core.turn_error import HookRef, turn_error

# A module hook named without a function is the export the reference's users write.
MODULE_DEFAULT_EXPORT: Final = "prepareInvocation"


def invocation_source_ref(source: str) -> SourceRef:
    ref = parse_source_ref(source.strip())
    if source.strip() == ref.path and ref.path.endswith(MODULE_EXTENSIONS):
        return SourceRef(ref.path, MODULE_DEFAULT_EXPORT)
    return ref


class InvocationContract(Contract):
    name = "invocation"
    label = "invocation preparation"
    title = "Invocation preparation"
    result_view = "layers"
    sample_schema = "invocation_sample"
    settings_key = "invocation"
    new_sample_stem = "new-invocation"

    def parse_sample(self, document: Any) -> InvocationSample | list[Finding]:
        return parse_invocation_sample(document)

    def sample_template(self) -> dict[str, Any]:
        return {
            "contract": "invocation",
            "description": "A new invocation-preparation sample: the first step of a pipeline.",
            "baseline": {
                "contributors": ["persona"],
                "tools": ["search"],
                "activeTools": ["search"],
                "model": "standard-model",
            },
            "target": {"id": "responder"},
            "composition": {
                "id": "pipeline",
                "kind": "pipeline",
                "step": {"name": "draft", "index": 0},
            },
            "invocation": {"tools": []},
            "context": {},
            "resources": [],
        }

    def schemas(self) -> dict[str, dict[str, Any]]:
        from studio.core.invocation.schemas import schemas

        return schemas()

    def parse_settings(self, value: Any) -> StepSettings | list[Finding] | None:
        return parse_step_settings(value)

    def settings_schema(self) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        return StepContract().settings_schema()

    def checks(self) -> list[HeadlessCheck]:
        return [
            HeadlessCheck(
                "check-amendment",
                "validate an invocation-preparation amendment against its baseline",
                _check_arguments,
                _check,
                flag="--invocation",
            )
        ]

    async def run(self, job: RunJob, call_hook: CallHook) -> RunOutcome:
        parsed: InvocationSample = job.parsed
        section: StepSettings | None = job.settings.section(self.settings_key)
        chosen = job.hook or (section.source if section else None)
        if not chosen:
            raise RunStopped(
                turn_error(
                    "config_invalid",
                    "no invocation-preparation hook: set invocation.source in hookstudio.json "
                    "or pass --hook",
                    path="/invocation/source",
                )
            )
        step_source = self._step_source(job, parsed)
        ref = invocation_source_ref(chosen)
        hook = HookRef(source=ref.path, function=ref.function, contract=self.name)
        base: RunFields = {
            "contract": self.name,
            "sample": job.sample.name,
            "input": invocation_context(parsed),
        }
        reply = await call_hook(
            HookCall(
                source=chosen,
                hook=hook,
                argument=invocation_worker_payload(parsed),
                timeout_ms=INVOCATION_TIMEOUT_MS,
                api="step",
                # The Python hook's context names itself after this boundary in its messages.
                options={
                    "default_export": MODULE_DEFAULT_EXPORT,
                    "raw_result": True,
                    "context": "invocation",
                },
            )
        )
        output = reply.output_fields(hook)
        if reply.error is not None:
            return RunOutcome(
                status="turn_error", turn_error=worker_failure(reply.error), **base, **output
            )
        verdict = decide_invocation(
            parsed,
            reply.value,
            reply.extra.get("reads") or [],
            identities=reply.extra.get("add_identities"),
        )
        result: dict[str, Any] = {
            "amendment": verdict.amendment,
            "validation": [f.to_json() for f in verdict.findings],
            "childBaseline": None if verdict.child is None else verdict.child.to_json(),
            "reads": [read.to_json() for read in verdict.reads],
            "steps": [],
        }
        warnings = [f.to_json() for f in verdict.findings if f.severity == "warning"]
        if verdict.error is not None:
            error = verdict.error.model_copy(
                update={"hook": hook, "duration_ms": round(reply.duration_ms, 3)}
            )
            return RunOutcome(
                status="turn_error", turn_error=error, result=result, **base, **output
            )
        assert verdict.child is not None and verdict.effective is not None
        effective = verdict.effective.to_json()
        if not parsed.steps or step_source is None:
            return RunOutcome(
                status="ok",
                result=result,
                effective=effective,
                warnings=warnings,
                **base,
                **output,
            )
        step_ref = step_source_ref(step_source)
        step_hook = HookRef(source=step_ref.path, function=step_ref.function, contract="step")
        layered = await run_child_steps(
            parsed, verdict.child, step_source, step_hook, call_hook, preparation_worker_failure
        )
        result["steps"] = layered.steps
        output["stdout"] += layered.stdout
        output["stderr"] += layered.stderr
        return RunOutcome(
            status="ok" if layered.error is None else "turn_error",
            turn_error=layered.error,
            result=result,
            effective=effective,
            decision_record={"steps": layered.records} if layered.records else {},
            warnings=warnings,
            **base,
            **output,
        )

    def _step_source(self, job: RunJob, parsed: InvocationSample) -> str | None:
        """The step hook of a layered run: the sample's ``prepareStep``, else the studio's."""
        if not parsed.steps:
            return None
        if parsed.step_hook:
            return parsed.step_hook
        section: StepSettings | None = job.settings.section("step")
        if section is None:
            raise RunStopped(
                turn_error(
                    "config_invalid",
                    f"samples/{job.sample.name}.json lists the child's steps but names no step "
                    "hook: set prepareStep in the sample or step.source in hookstudio.json",
                    path="/prepareStep",
                )
            )
        return section.source

    def tool_names(self, outcome: RunOutcome) -> tuple[list[str], list[str]] | None:
        """The child baseline's tools, and those active in it."""
        return effective_tool_names(outcome)

    def subject(self, outcome: RunOutcome) -> str | None:
        steps = (outcome.result or {}).get("steps") if isinstance(outcome.result, dict) else None
        if not steps:
            return None
        return f"invocation hook, then the step hook on {len(steps)} child step(s)"

    def layers(self, outcome: RunOutcome) -> list[Layer]:
        return invocation_layers(outcome)

    def describe(self, outcome: RunOutcome) -> list[str]:
        result = outcome.result if isinstance(outcome.result, dict) else {}
        lines: list[str] = []
        child = result.get("childBaseline")
        if child:
            ids = [c["id"] if isinstance(c, dict) else c for c in child.get("contributors", [])]
            lines.append(f"  child baseline contributors: {', '.join(ids) or 'none'}")
            effective = outcome.effective or {}
            tools = effective.get("activeTools") or effective.get("tools") or []
            lines.append(f"  child baseline tools: {', '.join(map(str, tools)) or 'none'}")
            lines.append(f"  child baseline model: {child.get('model')!r}")
            lines.append("  invocation decision: not journaled (no decision record)")
        for step in result.get("steps") or []:
            record = step.get("decision_record")
            if record:
                lines.append(
                    f"  step {step['index']} ({step['reason']}): sealed "
                    f"{record['sealedRequestId']} after {step['previousRequestId'] or 'none'}"
                )
            elif step.get("turn_error"):
                lines.append(f"  step {step['index']} ({step['reason']}): failed")
        return lines


def invocation_layers(outcome: RunOutcome) -> list[Layer]:
    """The invocation's decision, then each of the child's step decisions on top of it."""
    result = outcome.result if isinstance(outcome.result, dict) else None
    if result is None:
        return []
    error = outcome.turn_error
    child = result.get("childBaseline")
    invocation_error = error if child is None else None
    rule = invocation_error.details.get("rule") if invocation_error is not None else None
    layers = [
        Layer(
            name="invocation",
            status="accepted" if child is not None else f"failed: {rule or 'callback'}",
            asked=result.get("amendment"),
            produced=outcome.effective if child is not None else None,
            produced_title=CHILD_TITLE,
            record_note=NOT_JOURNALED,
            failed=child is None,
        )
    ]
    for step in result.get("steps") or []:
        record = step.get("decision_record")
        step_error = step.get("turn_error") or {}
        failed_rule = (step_error.get("details") or {}).get("rule") or step_error.get("reason")
        layers.append(
            Layer(
                name=f"step {step.get('index')} ({step.get('reason')})",
                status="accepted" if record else f"failed: {failed_rule}",
                asked=step.get("amendment"),
                produced=step.get("effective"),
                record=record,
                record_note=""
                if record
                else "No record: the request was not sealed, because the preparation failed.",
                links=(
                    step.get("previousRequestId"),
                    record.get("sealedRequestId") if record else None,
                ),
                failed=not record,
            )
        )
    return layers


CHILD_TITLE: Final = "Child baseline (what the invocation produced)"
NOT_JOURNALED: Final = (
    "No decision record: the reference does not journal an invocation decision; the studio "
    "shows its amendment and the child baseline here only."
)


def _check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "file", help='{"baseline": {...}, "invocation": {"tools": [...]}, "amendment": ...} (JSON)'
    )


def _check(args: argparse.Namespace, read: Callable[[str], Any]) -> tuple[dict[str, Any], bool]:
    from studio.core.invocation.check import check_document

    result = check_document(read(args.file))
    return result, bool(result["valid"])
