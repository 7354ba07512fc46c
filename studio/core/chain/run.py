"""Running a pre/post model hook chain over a chain sample (spec/pleach.md §3 and §5).

:func:`run_chain` is the orchestration: the pre chain, the model call (the sample's next scripted
response) or the short-circuit message, the post chain, and its retries. It does not know how a
user's hook runs: the engine passes ``call_user_hook``, which runs the hook (in a fresh worker
process) and answers with a :class:`~studio.core.contract.HookReply`. The built-in hooks of spec §4
(:mod:`studio.core.chain.builtins`) run in-process.

Positions are 0-based indices into the chain as it runs, written ``pre[0]``, ``post[2]``: a user's
hook keeps the index of its config entry, and the default post validators follow the user's post
hooks (studio rule ``default-validators``). Model calls are numbered by ``attempt``: 0 is the first
call, ``n`` the n-th retry; a pre hook's step has attempt 0, a post hook's the attempt whose
response it saw.

The shapes read here are a chain sample ``{"contract": "chain", "context": {messages, model,
modelProfile, tools, systemPrompt, state}, "responses": [message, ...]}`` and the ``chain``
section of the studio's workspace file ``{"pre": [entry, ...], "post": [entry, ...],
"default_post_validators": true}``, where an entry is a built-in hook's name or ``{"source":
"lib/x.py:fn", "timeout_ms": 30000}``. :func:`parse_chain_sample` and :func:`parse_chain_config`
return the typed value, or every finding with its JSON path when there is an error.

The studio's rules for what the spec leaves open are in :data:`CHAIN_STUDIO_RULES`.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from studio.core.chain.builtins import BUILTIN_HOOKS
from studio.core.chain.config import (
    CHAIN_SECTION,
    STUDIO_DEFAULT_VALIDATORS,
    ChainConfig,
    ChainHookRef,
    ChainName,
)
from studio.core.chain.sample import STUDIO_SCRIPTED_RESPONSES, ChainSample
from studio.core.chain.shapes import (
    StudioRule,
    escape_of,
    merge_system_prompt_suffixes,
    should_retry,
    validate_post_result,
    validate_pre_context,
    validate_pre_result,
)
from studio.core.contract import HookReply
from studio.core.findings import (
    errors,
    first_error,
    pointer,
)
from studio.core.run_outcome import ChainStep
from studio.core.turn_error import TurnError, turn_error

ChainStatus = Literal["ok", "short_circuited", "interrupted", "turn_error"]

STDERR_TAIL_CHARS: Final = 4_000
RETURNED_TEXT_LIMIT: Final = 2_000


# Why a hook stopped its chain, as its ChainStep's ``stopped`` records it.
STOP_SHORT_CIRCUIT: Final = "shortCircuit"
STOP_INTERRUPT: Final = "interrupt"
STOP_RETRY: Final = "retry"
STOP_RETRY_EXHAUSTED: Final = "retry_exhausted"
STOP_TURN_ERROR: Final = "turn_error"


# --------------------------------------------------------------------------------------------
# Studio rules


STUDIO_PRE_CHAIN_INPUT: Final = "pleach.studio.pre-chain-input"
STUDIO_SHORT_CIRCUIT: Final = "pleach.studio.short-circuit"
STUDIO_RETRY_FEEDBACK: Final = "pleach.studio.retry-feedback"
STUDIO_RETRY_EXHAUSTED: Final = "pleach.studio.retry-exhausted"
STUDIO_HOOK_POSITION: Final = "pleach.studio.hook-position"

CHAIN_STUDIO_RULES: Final[tuple[StudioRule, ...]] = (
    StudioRule(
        STUDIO_DEFAULT_VALIDATORS,
        "spec §4",
        "When the chain config's default_post_validators is true (the default), "
        "toolCallValidatorHook and then repetitionDetectorHook run after the user's post hooks, "
        "so they check the response that will actually be dispatched, whatever a user's hook "
        "made of it. A default validator that the user lists in post runs at that place only, "
        "not a second time at the end.",
    ),
    StudioRule(
        STUDIO_PRE_CHAIN_INPUT,
        "spec §3",
        "In the pre chain, each hook's input is the previous hook's output applied to its own "
        "input: messages, model and tools are replaced when given, and the system prompt it "
        "sees already carries the earlier hooks' systemPromptSuffix values. modelProfile and "
        "state are the sample's throughout, and keys a result omits or sets to null are left "
        "as they are.",
    ),
    StudioRule(
        STUDIO_SHORT_CIRCUIT,
        "spec §3",
        "A pre hook's shortCircuit message becomes the turn's response as it is: no model call "
        "is made and the post chain does not run (there is no model response to check, and a "
        "retry could not re-run a call that never happened). The other keys of that result are "
        "still applied to the request the run shows.",
    ),
    StudioRule(
        STUDIO_RETRY_FEEDBACK,
        "spec §3",
        "A granted retry re-sends the request the rejected response answered, with the "
        "feedback appended as one user message {role: user, content: feedback}; the rejected "
        "response is not added (its tool calls would be left without results). Feedback "
        "accumulates over the retries of a turn. Model, tools, system prompt and state stay as "
        "they were, the pre chain does not run again, and the whole post chain runs on the new "
        "response, from its first hook.",
    ),
    StudioRule(
        STUDIO_RETRY_EXHAUSTED,
        "spec §3",
        "A retry asked for when the turn's budget is used up is refused: the post chain still "
        "stops at that hook, no model call is made, and the response as it stands after that "
        "hook (its own response key applied) is the turn's final response. The run marks the "
        "hook's step as stopped by retry_exhausted.",
    ),
    StudioRule(
        STUDIO_SCRIPTED_RESPONSES,
        "spec §5",
        "Each model call of a run, the first and every retry, takes the sample's next scripted "
        "response, in order. When the responses run out, the turn fails closed with a "
        "sample_invalid turn error at /responses; unused responses are not an error.",
    ),
    StudioRule(
        STUDIO_HOOK_POSITION,
        "spec §3",
        "A hook's position is its 0-based index in the chain as it runs, written pre[i] or "
        "post[i]; a turn error of a chain hook names the hook (its built-in name or its "
        "source) and that position. An invalid result fails with kind invalid_result and the "
        "JSON pointer, into the returned value, of its first error.",
    ),
)


# --------------------------------------------------------------------------------------------
# Shapes


CallUserHook = Callable[[ChainHookRef, dict[str, Any], int, ChainName], Awaitable[HookReply]]


class ModelCall(BaseModel):
    """One (scripted) model call: the messages sent, the response taken, and why it was made."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    attempt: int
    response_index: int
    messages: list[Any]
    response: dict[str, Any]
    feedback: str | None = None


class ChainRunResult(BaseModel):
    """What a chain run produced. ``request`` is the final request (``messages``, ``model``,
    ``tools``, ``systemPrompt``: the last one sent to the model, or the one the pre chain composed
    when no call was made); ``response`` the turn's final response. Both are None on a turn error,
    so a failed turn never shows a request as if it had been sent."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    status: ChainStatus
    request: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    timeline: list[ChainStep] = Field(default_factory=list)
    model_calls: list[ModelCall] = Field(default_factory=list)
    interrupt: dict[str, Any] | None = None
    turn_error: TurnError | None = None
    retries: int = 0
    retry_exhausted: bool = False

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def decision(self) -> dict[str, Any]:
        """The content-free record of the run: one entry per hook, what changed and who stopped
        the chain, never what a hook returned or what a message says."""
        return {
            "contract": "chain",
            "status": self.status,
            "modelCalls": len(self.model_calls),
            "retries": self.retries,
            "retryExhausted": self.retry_exhausted,
            "interrupted": self.interrupt is not None,
            "hooks": [
                {
                    "chain": step.chain,
                    "position": step.position,
                    "hook": step.hook,
                    "builtin": step.builtin,
                    "attempt": step.attempt,
                    "changed": list(step.changed),
                    "stopped": step.stopped,
                    "durationMs": round(step.duration_ms, 3),
                }
                for step in self.timeline
            ],
        }


# --------------------------------------------------------------------------------------------
# Parsing


class _Failed(Exception):
    def __init__(self, error: TurnError) -> None:
        super().__init__(error.message)
        self.error = error


def _where(hook: ChainHookRef, chain: ChainName, position: int) -> str:
    return f"{hook.label} at {chain}[{position}]"


def _json_copy(value: Any) -> Any:
    return json.loads(json.dumps(value, allow_nan=False))


def _recordable(value: Any) -> Any:
    """A copy of what a hook returned that the record can hold: the value itself when it is
    JSON, else a short description of it."""
    try:
        return _json_copy(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
        if len(text) > RETURNED_TEXT_LIMIT:
            text = text[:RETURNED_TEXT_LIMIT] + "..."
        return f"<not JSON: {text}>"


def _tail(text: str) -> str:
    return text[-STDERR_TAIL_CHARS:]


@dataclass(slots=True)
class _Invocation:
    value: Any
    stdout: str
    stderr: str
    duration_ms: float


class _ChainRun:
    def __init__(self, sample: ChainSample, hooks: ChainConfig, call_user_hook: CallUserHook):
        self.sample = sample
        self.hooks = hooks
        self.call_user_hook = call_user_hook
        self.timeline: list[ChainStep] = []
        self.model_calls: list[ModelCall] = []
        context = copy.deepcopy(sample.context)
        self.extras = {
            k: v
            for k, v in context.items()
            if k not in ("messages", "model", "modelProfile", "tools", "systemPrompt", "state")
        }
        self.messages: list[Any] = context.get("messages", [])
        self.model: str = context.get("model", "")
        self.profile: Any = context.get("modelProfile")
        self.tools: list[Any] = context.get("tools", [])
        self.system_prompt: str = context.get("systemPrompt", "")
        self.state: dict[str, Any] = context.get("state", {})
        self.response: dict[str, Any] = {}

    # -- the request as it stands

    def request(self) -> dict[str, Any]:
        return copy.deepcopy(
            {
                "messages": self.messages,
                "model": self.model,
                "tools": self.tools,
                "systemPrompt": self.system_prompt,
            }
        )

    def pre_context(self) -> dict[str, Any]:
        return copy.deepcopy(
            {
                **self.extras,
                "messages": self.messages,
                "model": self.model,
                "modelProfile": self.profile,
                "tools": self.tools,
                "systemPrompt": self.system_prompt,
                "state": self.state,
            }
        )

    def post_context(self, response: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(
            {
                "response": response,
                "request": {
                    "messages": self.messages,
                    "model": self.model,
                    "tools": self.tools,
                    "state": self.state,
                },
                "state": self.state,
            }
        )

    # -- checks

    def check(self) -> None:
        problems = errors(validate_pre_context(self.sample.context))
        if problems:
            first = problems[0]
            raise _Failed(
                turn_error(
                    "sample_invalid",
                    f"the sample's context is not a valid pre-model hook context: {first.message}",
                    path=pointer(("context", *first.path)),
                )
            )
        chains: tuple[tuple[ChainName, tuple[ChainHookRef, ...]], ...] = (
            ("pre", self.hooks.pre_chain()),
            ("post", self.hooks.post_chain()),
        )
        for chain, hooks in chains:
            for position, hook in enumerate(hooks):
                problem = self._hook_problem(hook, chain)
                if problem:
                    raise _Failed(
                        turn_error(
                            "config_invalid",
                            f"{_where(hook, chain, position)}: {problem}",
                            path=pointer((CHAIN_SECTION, chain, position)),
                            hook=hook.hook_ref(chain, position),
                        )
                    )

    @staticmethod
    def _hook_problem(hook: ChainHookRef, chain: ChainName) -> str | None:
        if (hook.builtin is None) == (hook.source is None):
            return "a hook names exactly one of a built-in hook and a source"
        if hook.builtin is not None:
            known = BUILTIN_HOOKS.get(hook.builtin)
            if known is None:
                return f"there is no built-in hook named {hook.builtin!r}"
            if known[0] != chain:
                return f"{hook.builtin} is a {known[0]}-model hook, not a {chain}-model hook"
        return None

    # -- one hook

    async def invoke(
        self, hook: ChainHookRef, chain: ChainName, position: int, attempt: int
    ) -> tuple[dict[str, Any], _Invocation]:
        """Run one hook and validate what it returned: the result with its null keys dropped
        ({} for None), and the invocation to record."""
        context = self.pre_context() if chain == "pre" else self.post_context(self.response)
        ref = hook.hook_ref(chain, position)
        where = _where(hook, chain, position)
        if hook.builtin is not None:
            function = BUILTIN_HOOKS[hook.builtin][1]
            started = time.perf_counter()
            try:
                value = function(context)
            except Exception as exc:
                raise self._call_failed(
                    hook,
                    chain,
                    position,
                    attempt,
                    started,
                    "exception",
                    f"{where} raised {type(exc).__name__}: {exc}",
                ) from exc
            call = _Invocation(value, "", "", (time.perf_counter() - started) * 1000)
        else:
            started = time.perf_counter()
            try:
                reply = await self.call_user_hook(hook, context, position, chain)
            except Exception as exc:
                raise self._call_failed(
                    hook,
                    chain,
                    position,
                    attempt,
                    started,
                    "engine_failed",
                    f"{where}: the studio could not run the hook ({type(exc).__name__}: {exc})",
                ) from exc
            if reply.error is not None:
                self.step(
                    hook,
                    chain,
                    position,
                    attempt,
                    None,
                    [],
                    STOP_TURN_ERROR,
                    reply.duration_ms,
                    reply.stdout,
                    reply.stderr,
                )
                message = reply.error.message
                if not message.startswith(where):
                    message = f"{where}: {message}"
                raise _Failed(reply.error.model_copy(update={"hook": ref, "message": message}))
            call = _Invocation(reply.value, reply.stdout, reply.stderr, reply.duration_ms)

        validate = validate_pre_result if chain == "pre" else validate_post_result
        findings = validate(call.value)
        first = first_error(findings)
        if first is not None:
            self.step(
                hook,
                chain,
                position,
                attempt,
                _recordable(call.value),
                [],
                STOP_TURN_ERROR,
                call.duration_ms,
                call.stdout,
                call.stderr,
            )
            raise _Failed(
                turn_error(
                    "invalid_result",
                    f"{where} returned an invalid result: {first.message}",
                    path=first.pointer,
                    hook=ref,
                    duration_ms=call.duration_ms,
                    stderr_tail=_tail(call.stderr),
                    details={
                        "rule": first.rule,
                        "findings": [
                            {**f.to_json(), "rule": f.rule, "severity": f.severity}
                            for f in findings
                        ],
                    },
                )
            )
        if call.value is None:
            return {}, call
        return {k: v for k, v in _json_copy(call.value).items() if v is not None}, call

    def _call_failed(
        self,
        hook: ChainHookRef,
        chain: ChainName,
        position: int,
        attempt: int,
        started: float,
        kind: str,
        message: str,
    ) -> _Failed:
        """A hook call that raised (started at ``started``): record its step and give the
        failure to raise."""
        duration = (time.perf_counter() - started) * 1000
        self.step(hook, chain, position, attempt, None, [], STOP_TURN_ERROR, duration)
        return _Failed(
            turn_error(kind, message, hook=hook.hook_ref(chain, position), duration_ms=duration)
        )

    def step(
        self,
        hook: ChainHookRef,
        chain: ChainName,
        position: int,
        attempt: int,
        returned: Any,
        changed: list[str],
        stopped: str | None,
        duration_ms: float,
        stdout: str = "",
        stderr: str = "",
    ) -> None:
        self.timeline.append(
            ChainStep(
                chain=chain,
                position=position,
                hook=hook.label,
                builtin=hook.is_builtin,
                attempt=attempt,
                returned=returned,
                changed=changed,
                stopped=stopped,
                duration_ms=duration_ms,
                stdout=stdout,
                stderr=stderr,
            )
        )

    def record(
        self,
        call: _Invocation,
        hook: ChainHookRef,
        chain: ChainName,
        position: int,
        attempt: int,
        changed: list[str],
        stopped: str | None,
    ) -> None:
        self.step(
            hook,
            chain,
            position,
            attempt,
            _recordable(call.value),
            changed,
            stopped,
            call.duration_ms,
            call.stdout,
            call.stderr,
        )

    # -- the model call

    def call_model(self, attempt: int, feedback: str | None) -> dict[str, Any]:
        index = len(self.model_calls)
        responses = self.sample.responses
        if index >= len(responses):
            scripted = f"{len(responses)} response" + ("" if len(responses) == 1 else "s")
            call = "the first model call" if attempt == 0 else f"retry {attempt}"
            raise _Failed(
                turn_error(
                    "sample_invalid",
                    f"the sample ran out of scripted responses: {call} needs response "
                    f"{index + 1}, and the sample scripts {scripted}; add one to responses",
                    path=pointer(("responses",)),
                    details={"model_calls": index + 1, "responses": len(responses)},
                )
            )
        response = copy.deepcopy(responses[index])
        self.model_calls.append(
            ModelCall(
                attempt=attempt,
                response_index=index,
                messages=copy.deepcopy(self.messages),
                response=copy.deepcopy(response),
                feedback=feedback,
            )
        )
        return response

    # -- the chains

    async def run(self) -> ChainRunResult:
        try:
            self.check()
            return await self._run()
        except _Failed as failed:
            return ChainRunResult(
                status="turn_error",
                timeline=self.timeline,
                model_calls=self.model_calls,
                turn_error=failed.error,
                retries=max(0, len(self.model_calls) - 1),
            )

    async def _run(self) -> ChainRunResult:
        for position, hook in enumerate(self.hooks.pre_chain()):
            result, call = await self.invoke(hook, "pre", position, 0)
            changed: list[str] = []
            for key in ("messages", "model", "tools"):
                if key in result and result[key] != getattr(self, key):
                    changed.append(key)
                if key in result:
                    setattr(self, key, result[key])
            if "systemPromptSuffix" in result:
                merged = merge_system_prompt_suffixes(
                    self.system_prompt, [result["systemPromptSuffix"]]
                )
                if merged != self.system_prompt:
                    changed.append("systemPrompt")
                self.system_prompt = merged
            escape = escape_of(result)
            self.record(call, hook, "pre", position, 0, changed, escape)
            if escape == "interrupt":
                return ChainRunResult(
                    status="interrupted",
                    request=self.request(),
                    timeline=self.timeline,
                    interrupt=self._interrupt(result),
                )
            if escape == "shortCircuit":
                return ChainRunResult(
                    status="short_circuited",
                    request=self.request(),
                    response=result["shortCircuit"],
                    timeline=self.timeline,
                )

        attempt = 0
        self.response = self.call_model(attempt, None)
        post_results: list[dict[str, Any]] = []
        post = self.hooks.post_chain()
        while True:
            retry_feedback: str | None = None
            for position, hook in enumerate(post):
                result, call = await self.invoke(hook, "post", position, attempt)
                post_results.append(result)
                changed = []
                if "response" in result:
                    if result["response"] != self.response:
                        changed.append("response")
                    self.response = result["response"]
                escape = escape_of(result)
                if escape == "retry":
                    if should_retry(post_results):
                        self.record(call, hook, "post", position, attempt, changed, STOP_RETRY)
                        retry_feedback = result["retry"]["feedback"]
                        break
                    self.record(
                        call, hook, "post", position, attempt, changed, STOP_RETRY_EXHAUSTED
                    )
                    return self._finished("ok", attempt, exhausted=True)
                self.record(call, hook, "post", position, attempt, changed, escape)
                if escape == "interrupt":
                    return self._finished("interrupted", attempt, interrupt=self._interrupt(result))
            if retry_feedback is None:
                return self._finished("ok", attempt)
            self.messages = [*self.messages, {"role": "user", "content": retry_feedback}]
            attempt += 1
            self.response = self.call_model(attempt, retry_feedback)

    @staticmethod
    def _interrupt(result: Mapping[str, Any]) -> dict[str, Any]:
        interrupt = result["interrupt"]
        return {"reason": interrupt["reason"], "value": interrupt.get("value")}

    def _finished(
        self,
        status: ChainStatus,
        attempt: int,
        *,
        exhausted: bool = False,
        interrupt: dict[str, Any] | None = None,
    ) -> ChainRunResult:
        return ChainRunResult(
            status=status,
            request=self.request(),
            response=copy.deepcopy(self.response),
            timeline=self.timeline,
            model_calls=self.model_calls,
            interrupt=interrupt,
            retries=attempt,
            retry_exhausted=exhausted,
        )


async def run_chain(
    sample: ChainSample, hooks: ChainConfig, call_user_hook: CallUserHook
) -> ChainRunResult:
    """Run the sample through the chains (spec §3, §5; studio rules in
    :data:`CHAIN_STUDIO_RULES` and ``suffix-separator``, ``retry-budget``, ``fail-closed``).

    Never raises for anything a hook or the sample does: every failure is the result's
    ``turn_error``. Cancelling the task cancels the pending ``call_user_hook``.
    """
    return await _ChainRun(sample, hooks, call_user_hook).run()
