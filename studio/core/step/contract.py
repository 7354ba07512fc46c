"""The step-preparation contract (spec/crux.md): the hook returns an amendment to the baseline."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Final, TypedDict, TypeGuard, get_args

from studio.core.contract import (
    CallHook,
    Contract,
    HeadlessCheck,
    HookCall,
    RunJob,
    RunStopped,
    tool_list_names,
)
from studio.core.findings import Finding, errors
from studio.core.json.outline import Entry
from studio.core.run_outcome import RunOutcome
from studio.core.step.decision import (
    PreparationReason,
    decide_step,
    step_timeout_ms,
    worker_preparation_failure,
)
from studio.core.step.outline import step_outline
from studio.core.step.sample import (
    StepSample,
    parse_step_sample,
    step_context,
    step_worker_payload,
)
from studio.core.step.settings import (
    MODULE_DEFAULT_EXPORT,
    StepSettings,
    parse_step_settings,
    step_source_ref,
)
from studio.core.turn_error import HookRef, TurnError, turn_error


class RunFields(TypedDict):
    """The :class:`RunOutcome` fields every preparation run fills in the same way."""

    contract: str
    sample: str
    input: Any


class StepContract(Contract):
    name = "step"
    label = "step preparation"
    title = "Step preparation"
    result_view = "amendment"
    sample_schema = "step_sample"
    settings_key = "step"
    new_sample_stem = "new-step"

    def parse_sample(self, document: Any) -> StepSample | list[Finding]:
        return parse_step_sample(document)

    def sample_template(self) -> dict[str, Any]:
        return {
            "contract": "step",
            "description": "A new step-preparation sample: the first step of a run.",
            "baseline": {
                "contributors": ["persona"],
                "tools": ["search"],
                "activeTools": ["search"],
                "model": "standard-model",
            },
            "step": {
                "index": 0,
                "reason": "initial",
                "input": {},
                "messages": [{"role": "user", "content": "Hello!"}],
            },
            "resources": [],
        }

    def outline(self, document: dict[str, Any]) -> list[Entry]:
        return step_outline(document)

    def schemas(self) -> dict[str, dict[str, Any]]:
        from studio.core.step.schemas import schemas

        return schemas()

    def parse_settings(self, value: Any) -> StepSettings | list[Finding] | None:
        return parse_step_settings(value)

    def settings_schema(self) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        from studio.core.step.schemas import step_settings_schema

        return step_settings_schema(), {}

    def checks(self) -> list[HeadlessCheck]:
        return [
            HeadlessCheck(
                "check-amendment",
                "validate a step-preparation amendment against its baseline",
                _amendment_arguments,
                _check_amendment,
            )
        ]

    async def run(self, job: RunJob, call_hook: CallHook) -> RunOutcome:
        parsed: StepSample = job.parsed
        section: StepSettings | None = job.settings.section(self.settings_key)
        chosen = job.hook or (section.source if section else None)
        if not chosen:
            raise RunStopped(
                turn_error(
                    "config_invalid",
                    "no step-preparation hook: set step.source in hookstudio.json or pass --hook",
                    path="/step/source",
                )
            )
        ref = step_source_ref(chosen)
        hook = HookRef(source=ref.path, function=ref.function, contract="step")
        base: RunFields = {
            "contract": self.name,
            "sample": job.sample.name,
            "input": step_context(parsed),
        }
        reply = await call_hook(step_hook_call(chosen, hook, parsed))
        output = reply.output_fields(hook)
        if reply.error is not None:
            return RunOutcome(
                status="turn_error",
                turn_error=preparation_worker_failure(reply.error),
                **base,
                **output,
            )
        decision = decide_step(
            parsed,
            reply.value,
            reply.extra.get("reads") or [],
            identities=reply.extra.get("add_identities"),
        )
        if decision.error is not None:
            error = decision.error.model_copy(
                update={"hook": hook, "duration_ms": round(reply.duration_ms, 3)}
            )
            return RunOutcome(
                status="turn_error", turn_error=error, result=decision.amendment, **base, **output
            )
        assert decision.decision_record is not None and decision.effective is not None
        return RunOutcome(
            status="ok",
            result=decision.amendment,
            decision_record=decision.decision_record.to_json(),
            effective=decision.effective.to_json(),
            warnings=[f.to_json() for f in decision.findings if f.severity == "warning"],
            **base,
            **output,
        )

    def tool_names(self, outcome: RunOutcome) -> tuple[list[str], list[str]] | None:
        """The graph's tools, and those active after the amendment."""
        return effective_tool_names(outcome)

    def describe(self, outcome: RunOutcome) -> list[str]:
        lines: list[str] = []
        if not outcome.decision_record:
            return lines
        asked = outcome.decision_record.get("amendment") or {}
        lines.append(
            "  amendment: "
            + ", ".join(f"{k} {v}" for k, v in asked.items() if v not in (0, False, None))
            or "  amendment: none"
        )
        for read in outcome.decision_record.get("resources") or []:
            lines.append(f"  read {read['identity']} ({read['valueHash'][:12]})")
        effective = outcome.effective or {}
        if effective:
            lines.append(f"  effective model: {effective.get('model')!r}")
            tools = effective.get("activeTools") or effective.get("tools") or []
            lines.append(f"  effective tools: {', '.join(tools) or 'none'}")
        return lines


def step_hook_call(source: str, hook: HookRef, sample: StepSample) -> HookCall:
    """The worker call that prepares one step with the step hook ``source``."""
    return HookCall(
        source=source,
        hook=hook,
        argument=step_worker_payload(sample),
        timeout_ms=step_timeout_ms(sample.deadline_ms),
        api="step",
        options={"default_export": MODULE_DEFAULT_EXPORT},
    )


def effective_tool_names(outcome: RunOutcome) -> tuple[list[str], list[str]] | None:
    """The effective baseline's tools, and those of them active (all, when it names none)."""
    effective = outcome.effective or {}
    tools = tool_list_names(effective.get("tools"))
    if tools is None:
        return None
    active = effective.get("activeTools")
    after = tools if active is None else tool_list_names(active)
    return None if after is None else (tools, after)


_PREPARATION_REASONS: Final = get_args(PreparationReason)
_KIND_REASONS: Final[dict[str, PreparationReason]] = {"timeout": "timeout", "cancelled": "aborted"}


def _is_preparation_reason(value: object) -> TypeGuard[PreparationReason]:
    return value in _PREPARATION_REASONS


def preparation_worker_failure(error: TurnError) -> TurnError:
    """A worker failure in step-preparation terms (see :func:`worker_preparation_failure`)."""
    return worker_preparation_failure(error, _step_failure_reading)


def _step_failure_reading(
    error: TurnError, contract_error: dict[str, Any]
) -> tuple[PreparationReason, str]:
    reason = (
        contract_error.get("reason") if contract_error.get("error") == "PreparationError" else None
    )
    if not _is_preparation_reason(reason):
        reason = _KIND_REASONS.get(error.kind, "callback")
    return reason, error.kind


def _amendment_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help='{"baseline": {...}, "amendment": ...} (JSON)')


def _check_amendment(
    args: argparse.Namespace, read: Callable[[str], Any]
) -> tuple[dict[str, Any], bool]:
    from studio.core.step.check import AmendmentDocumentError, check_amendment

    try:
        result = check_amendment(read(args.file))
    except AmendmentDocumentError as exc:
        result = {
            "valid": False,
            "error": {
                "name": "InvalidCheckDocument",
                "code": None,
                "message": "the file is not a {baseline, amendment} document the studio can check",
                "diagnostics": [f.to_json() for f in exc.findings],
                "rule": errors(exc.findings)[0].rule,
            },
            "inspection": None,
            "effective": None,
        }
    return result, bool(result["valid"])
