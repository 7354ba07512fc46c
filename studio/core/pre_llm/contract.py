"""The pre-LLM hook contract (spec/adf.md): the hook returns the complete replacement request."""

from __future__ import annotations

from typing import Any, TypedDict

from studio.core.contract import (
    CallHook,
    Contract,
    HeadlessCheck,
    HookCall,
    RunJob,
    RunStopped,
    config_error,
    tool_list_names,
)
from studio.core.findings import Finding, errors
from studio.core.identity_cache import IdentityCache
from studio.core.json.deep import deep_json
from studio.core.json.outline import Entry
from studio.core.json.pieces import DEPTH, compact_json, dumps_in_pieces, json_bytes
from studio.core.pre_llm.config import (
    HOOK_KEY,
    MAIN,
    AgentConfigCheck,
    SourceHome,
    check_agent_config,
    execution_limit_errors,
)
from studio.core.pre_llm.decision_record import pre_llm_decision_record
from studio.core.pre_llm.host_calls import (
    AdfSettings,
    adf_settings_schema,
    calls_from_log,
    host_options,
    parse_adf_settings,
)
from studio.core.pre_llm.outline import pre_llm_outline
from studio.core.pre_llm.request import presented_not_enabled, validate_request
from studio.core.pre_llm.sample import PreLlmSample, parse_pre_llm_sample
from studio.core.run_outcome import RunOutcome
from studio.core.source_ref import parse_source_ref
from studio.core.turn_error import HookRef, TurnError, turn_error
from studio.core.workspace.folder import WorkspaceFileError

# By request identity: a sample run again is encoded, and its request checked, once.
_inputs: IdentityCache[tuple[bytes, memoryview]] = IdentityCache(8)
_request_findings: IdentityCache[list[Finding]] = IdentityCache(8)
_members: IdentityCache[dict[str, tuple[str, Any]] | None] = IdentityCache(4)
_checks: IdentityCache[AgentConfigCheck] = IdentityCache(4)
_INPUT_HEAD = b'{"request":'
SHARED_FROM_BYTES = 64 << 10
"""A request this large is given back, by a hook that changes part of it, sharing the parts
it did not change (below, reading it whole is as quick)."""


def _input_bytes(request: Any, loop: str, in_pieces: bool) -> tuple[bytes, memoryview]:
    """The hook's input ``{"request": ..., "loop": {"name": ...}}`` as JSON bytes, and the
    request's own text within them."""

    def encode() -> tuple[bytes, memoryview]:
        tail = b',"loop":' + json_bytes({"name": loop}) + b"}"
        encoded = _INPUT_HEAD + json_bytes(request, in_pieces) + tail
        return encoded, memoryview(encoded)[len(_INPUT_HEAD) : len(encoded) - len(tail)]

    return _inputs.get(request, encode, extra=loop)


def _request_members(request: Any, in_pieces: bool) -> dict[str, tuple[str, Any]] | None:
    """The request's members, each as the JSON text a worker writes it in and its value: a
    hook that changes the system prompt of a large request sends the messages back as they
    came, and the studio need not read them again."""

    def texts() -> dict[str, tuple[str, Any]] | None:
        try:
            with deep_json():
                return {
                    k: (dumps_in_pieces(v, depth=DEPTH - 1) if in_pieces else compact_json(v), v)
                    for k, v in request.items()
                    if type(k) is str
                }
        except (TypeError, ValueError, RecursionError):
            return None

    return _members.get(request, texts) if type(request) is dict else None


class _RunFields(TypedDict):
    """The :class:`RunOutcome` fields every pre-LLM run fills in the same way."""

    contract: str
    sample: str
    loop: str
    input: Any


class PreLlmContract(Contract):
    name = "pre_llm"
    label = "pre-LLM hook"
    title = "Pre-LLM hook"
    result_view = "request"
    sample_schema = "pre_llm_sample"
    agent_hook_key = HOOK_KEY
    new_sample_stem = "new-request"
    settings_key = "adf"
    runs_per_loop = True

    def parse_settings(self, value: Any) -> AdfSettings | list[Finding]:
        return parse_adf_settings(value)

    def settings_schema(self) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        return adf_settings_schema(), {}

    def parse_sample(self, document: Any) -> PreLlmSample | list[Finding]:
        return parse_pre_llm_sample(document)

    def sample_template(self) -> dict[str, Any]:
        return {
            "description": "A new pre-LLM sample: the request the hook receives.",
            "loop": MAIN,
            "request": {
                "system": "You are a helpful assistant.",
                "messages": [{"role": "user", "content": "Hello!"}],
                "tools": [
                    {
                        "name": "search",
                        "description": "Search the knowledge base",
                        "input_schema": {
                            "type": "object",
                            "properties": {"query": {"type": "string"}},
                        },
                    }
                ],
                "options": {"maxTokens": 1024},
            },
        }

    def outline(self, document: dict[str, Any]) -> list[Entry]:
        return pre_llm_outline(document)

    def schemas(self) -> dict[str, dict[str, Any]]:
        from studio.core.pre_llm.schemas import schemas

        return schemas()

    def checks(self) -> list[HeadlessCheck]:
        from studio.core.pre_llm.checks import CHECKS

        return list(CHECKS)

    async def run(self, job: RunJob, call_hook: CallHook) -> RunOutcome:
        sample: PreLlmSample = job.parsed
        loop = job.loop or sample.loop or MAIN
        request = sample.request
        try:
            document = job.workspace.agent_document()
        except WorkspaceFileError as exc:
            raise RunStopped(turn_error("config_invalid", str(exc), loop=loop)) from None
        if job.hook_config is not None and isinstance(document, dict):
            # A document that is not an object is reported by check_agent_config below.
            document = {**document, HOOK_KEY: job.hook_config}
        home: SourceHome = "adf" if job.workspace.kind == "adf" else "folder"
        # The workspace gives the same document while agent.json is unchanged: checked once.
        check = _checks.get(document, lambda: check_agent_config(document, home), extra=home)
        if not check.valid:
            raise RunStopped(config_error(job.workspace.agent_label, check.findings, loop=loop))
        applies = check.applies_to(loop) if job.hook is None else True
        chosen = job.hook or (check.hook.source if check.hook else None)
        base: _RunFields = {
            "contract": self.name,
            "sample": job.sample.name,
            "loop": loop,
            "input": request,
        }
        if not applies or chosen is None:
            return RunOutcome(
                status="not_applied",
                result=request,
                decision_record=pre_llm_decision_record(
                    request, None, loop=loop, applied=False, in_pieces=job.in_pieces
                ),
                **base,
            )
        assert isinstance(document, dict)  # check_agent_config finds anything else invalid
        timeout_ms = check.effective_timeout_ms
        if timeout_ms is None:
            # As in the runtime: a bad execution limit fails the calls a hook runs on, only those.
            limit_errors = execution_limit_errors(document)
            raise RunStopped(config_error(job.workspace.agent_label, limit_errors, loop=loop))
        ref = parse_source_ref(chosen.strip())
        hook = HookRef(source=ref.path, function=ref.function, contract="pre_llm")
        code_execution = document.get("code_execution")
        sys_lambda = isinstance(code_execution, dict) and code_execution.get("sys_lambda") is True
        adf, found = host_options(
            document, sample.replies, job.settings.section(self.settings_key), ref
        )
        if found:
            raise RunStopped(config_error(job.workspace.agent_label, found, loop=loop))
        encoded, request_text = _input_bytes(request, loop, job.in_pieces)
        large = len(request_text) >= SHARED_FROM_BYTES
        reply = await call_hook(
            HookCall(
                source=chosen,
                hook=hook,
                encoded=encoded,
                echo=request_text,
                echo_members=_request_members(request, job.in_pieces) if large else None,
                timeout_ms=timeout_ms,
                loop=loop,
                api="adf",
                options={"sys_lambda": sys_lambda, "adf": adf},
            )
        )
        output = reply.output_fields(hook)
        calls = calls_from_log(reply.extra.get("calls"))
        # The very text that was sent came back: the same JSON value as the request (types,
        # numbers, key order), so the request stands for it, with its findings and its hash.
        returned = request if reply.echoed else reply.value
        known = (
            _request_findings.get(request, lambda: validate_request(request))
            if reply.echoed
            else None
        )
        error = reply.error or _invalid_request(
            returned, reply.duration_ms, hook, loop, known, shares_with=request
        )
        if error is not None:
            return RunOutcome(
                status="turn_error",
                turn_error=error,
                rejected=returned if error.kind == "invalid_result" else None,
                decision_record=pre_llm_decision_record(
                    request, None, loop=loop, applied=True, in_pieces=job.in_pieces
                ),
                warnings=list(reply.warnings),
                calls=calls,
                **base,
                **output,
            )
        return RunOutcome(
            status="ok",
            result=returned,
            decision_record=pre_llm_decision_record(
                request,
                returned,
                loop=loop,
                applied=True,
                in_pieces=job.in_pieces,
            ),
            warnings=[
                *reply.warnings,
                *(f.to_json() for f in presented_not_enabled(request.get("tools"), returned)),
            ],
            calls=calls,
            **base,
            **output,
        )

    def tool_names(self, outcome: RunOutcome) -> tuple[list[str], list[str]] | None:
        before = outcome.input.get("tools") if isinstance(outcome.input, dict) else None
        after = outcome.result.get("tools") if isinstance(outcome.result, dict) else None
        names = tool_list_names(before), tool_list_names(after)
        return None if names[0] is None or names[1] is None else (names[0], names[1])

    def describe(self, outcome: RunOutcome) -> list[str]:
        lines: list[str] = []
        decision = outcome.decision_record
        changed = decision.get("changed") or {}
        if changed:
            parts = [k for k, v in changed.items() if v]
            lines.append("  changed: " + (", ".join(parts) if parts else "nothing"))
        tools = decision.get("tools") or {}
        if tools.get("added") or tools.get("removed"):
            lines.append(
                f"  tools: {tools.get('before')} -> {tools.get('after')}"
                + (f", removed {_names(tools['removed'])}" if tools.get("removed") else "")
                + (f", added {_names(tools['added'])}" if tools.get("added") else "")
            )
        return lines


def _names(names: list[str], shown: int = 8) -> str:
    listed = ", ".join(names[:shown])
    return listed + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _invalid_request(
    returned: Any,
    duration_ms: float,
    hook: HookRef,
    loop: str,
    findings: list[Finding] | None = None,
    *,
    shares_with: Any = None,
) -> TurnError | None:
    """The turn error of a returned request that breaks a rule; ``findings``, when known, are
    those of ``returned``; ``shares_with`` is the request sent, read from JSON, whose messages
    ``returned`` may hold as they are."""
    found = errors(
        validate_request(returned, shares_with=shares_with) if findings is None else findings
    )
    if not found:
        return None
    first = found[0]
    return turn_error(
        "invalid_result",
        f"`{hook.function}` returned {first.message}",
        path=first.pointer,
        hook=hook,
        loop=loop,
        duration_ms=round(duration_ms, 3),
        details={"findings": [f.to_json() for f in found[:50]], "count": len(found)},
    )
