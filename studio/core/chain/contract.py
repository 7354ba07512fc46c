"""The model hook chains contract (spec/pleach.md): pre and post chains of hooks that return
partial results, with short-circuit, interrupt and retry."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from studio.core.chain.config import (
    CHAIN_SECTION,
    MODULE_DEFAULT_EXPORT,
    ChainHookRef,
    ChainName,
    parse_chain_config,
)
from studio.core.chain.outline import chain_outline
from studio.core.chain.run import run_chain
from studio.core.chain.sample import (
    ChainSample,
    parse_chain_sample,
)
from studio.core.contract import (
    CallHook,
    Contract,
    HookCall,
    HookReply,
    RunJob,
    RunStopped,
    SourceUnavailable,
    config_error,
    tool_list_names,
)
from studio.core.findings import Finding
from studio.core.json.outline import Entry
from studio.core.run_outcome import RunOutcome, Status
from studio.core.turn_error import turn_error
from studio.core.workspace.folder import STUDIO_FILE, pydantic_findings

_SECTION: TypeAdapter[dict[str, Any] | None] = TypeAdapter(dict[str, Any] | None)


class ChainContract(Contract):
    name = "chain"
    label = "model hook chains"
    title = "Model hook chains"
    result_view = "timeline"
    sample_schema = "chain_sample"
    settings_key = CHAIN_SECTION
    new_sample_stem = "new-chain"

    def parse_sample(self, document: Any) -> ChainSample | list[Finding]:
        return parse_chain_sample(document)

    def sample_template(self) -> dict[str, Any]:
        return {
            "contract": "chain",
            "description": "A new chain sample: the pre-model context and the model's answers.",
            "context": {
                "messages": [{"role": "user", "content": "Hello!"}],
                "model": "default-model",
                "modelProfile": None,
                "tools": [],
                "systemPrompt": "You are a helpful assistant.",
                "state": {},
            },
            "responses": [{"role": "assistant", "content": "Hello! How can I help?"}],
        }

    def outline(self, document: dict[str, Any]) -> list[Entry]:
        return chain_outline(document)

    def parse_settings(self, value: Any) -> dict[str, Any] | list[Finding] | None:
        # Only its shape when the file is read: the hooks are checked when a chain runs.
        try:
            return _SECTION.validate_python(value)
        except ValidationError as exc:
            return pydantic_findings(exc)

    def settings_schema(self) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        from studio.core.chain.schemas import chain_config_schema, chain_hook_schema

        section = {
            "description": "the model hook chains; absent or null is the default (no user hooks)",
            "anyOf": [{"$ref": "#/$defs/chain_config"}, {"type": "null"}],
            "default": None,
        }
        return section, {"chain_config": chain_config_schema(), "chain_hook": chain_hook_schema()}

    def schemas(self) -> dict[str, dict[str, Any]]:
        from studio.core.chain.schemas import schemas

        return schemas()

    async def run(self, job: RunJob, call_hook: CallHook) -> RunOutcome:
        parsed: ChainSample = job.parsed
        if job.hook is not None:
            chain_value: Any = {"pre": [{"source": job.hook}], "post": []}
        else:
            section = job.settings.section(CHAIN_SECTION)
            chain_value = section if section is not None else {}
        config = parse_chain_config(chain_value, base=("chain",))
        if isinstance(config, list):
            raise RunStopped(config_error(STUDIO_FILE, config))
        outputs: list[tuple[str, str]] = []

        async def call_user_hook(
            entry: ChainHookRef, context: dict[str, Any], position: int, chain: ChainName
        ) -> HookReply:
            hook = entry.hook_ref(chain, position)
            try:
                reply = await call_hook(
                    HookCall(
                        source=entry.source or "",
                        hook=hook,
                        argument=context,
                        timeout_ms=entry.timeout_ms,
                        options={"default_export": MODULE_DEFAULT_EXPORT},
                    )
                )
            except SourceUnavailable as unavailable:
                return HookReply(error=unavailable.error.model_copy(update={"hook": hook}))
            outputs.append((reply.stdout, reply.stderr))
            return reply

        result = await run_chain(parsed, config, call_user_hook)
        if job.is_cancelled() and result.turn_error is None:
            raise RunStopped(turn_error("cancelled", "the chain run was cancelled"))
        status: Status = "turn_error" if result.turn_error is not None else "ok"
        return RunOutcome(
            contract="chain",
            status=status,
            sample=job.sample.name,
            input=job.sample.document.get("context"),
            result=None if status == "turn_error" else result.to_json(),
            decision_record=result.decision(),
            turn_error=result.turn_error,
            chain=result.timeline,
            stdout="".join(out for out, _ in outputs),
            stderr="".join(err for _, err in outputs),
        )

    def tool_names(self, outcome: RunOutcome) -> tuple[list[str], list[str]] | None:
        before = outcome.input.get("tools") if isinstance(outcome.input, dict) else None
        final = outcome.result.get("request") if isinstance(outcome.result, dict) else None
        after = final.get("tools") if isinstance(final, dict) else None
        names = tool_list_names(before), tool_list_names(after)
        return None if names[0] is None or names[1] is None else (names[0], names[1])

    def subject(self, outcome: RunOutcome) -> str | None:
        if not outcome.chain:
            return None
        return f"chain of {len({(c.chain, c.position) for c in outcome.chain})} hooks"

    def describe(self, outcome: RunOutcome) -> list[str]:
        lines = []
        for step in outcome.chain:
            change = ", ".join(step.changed) or "no change"
            stop = f"; stopped the chain ({step.stopped})" if step.stopped else ""
            attempt = f" (retry {step.attempt})" if step.attempt else ""
            lines.append(f"  {step.chain}[{step.position}] {step.hook}{attempt}: {change}{stop}")
        return lines
