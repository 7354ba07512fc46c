"""The pre-model and post-model hook contract (spec/pleach.md §1–§4): shapes, validators, views.

A pre-model hook receives a :class:`PreModelHookContext` and returns a partial
:class:`PreModelHookResult`; a post-model hook receives a :class:`PostModelHookContext` and returns
a partial :class:`PostModelHookResult`. The validators (:func:`validate_pre_context`,
:func:`validate_pre_result`, :func:`validate_post_context`, :func:`validate_post_result`) take any
Python value, never raise, and return every finding with its JSON path, errors first (in document
order), then warnings. The ``parse_*`` functions build the typed, frozen views from a value that
has no error, and raise :class:`ShapeError` (carrying the findings) otherwise.

The seed gives the shapes as TypeScript interfaces and leaves several things open; the studio's
own rules for those are listed in :data:`STUDIO_RULES`, and every finding that comes from one of
them carries that rule's id, so the interface can show it as a studio rule.

The views use the seed's camelCase keys (``modelProfile``, ``systemPromptSuffix``, ...) as their
field names, keep every extra key a message, tool or profile carries, and write the wire form back
with ``to_json()``.

This module holds the studio rules, the validators, the parsers and the chain semantics; the
names of the shapes are in ``shape_keys``, the checks of their parts in ``shape_checks`` and the
views in ``shape_views``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from studio.core.chain.shape_checks import (
    Checker,
    check_escape_message,
    check_interrupt,
    check_messages,
    check_model,
    check_profile,
    check_retry,
    check_state,
    check_string,
    check_tools,
    context_keys,
    named,
    require,
    result_keys,
    run_checks,
)
from studio.core.chain.shape_keys import (
    DEFAULT_MAX_RETRIES,
    MAX_DEPTH,
    POST_CONTEXT_KEYS,
    POST_RESULT_KEYS,
    PRE_CONTEXT_KEYS,
    PRE_RESULT_KEYS,
    REQUEST_KEYS,
    RULE_POST_CONTEXT,
    RULE_POST_RESULT,
    RULE_PRE_CONTEXT,
    RULE_PRE_RESULT,
    STUDIO_CONTEXT_EXTRA_KEY,
    STUDIO_ESCAPE_ROLE,
    STUDIO_FAIL_CLOSED,
    STUDIO_INTERRUPT_SHAPE,
    STUDIO_JSON_ONLY,
    STUDIO_MESSAGE_SHAPE,
    STUDIO_MODEL_NAME,
    STUDIO_PROFILE_SHAPE,
    STUDIO_RESULT_NULL,
    STUDIO_RESULT_UNKNOWN_KEY,
    STUDIO_RETRY_BUDGET,
    STUDIO_RETRY_SHAPE,
    STUDIO_SINGLE_ESCAPE,
    STUDIO_SUFFIX_SEPARATOR,
    STUDIO_TOKEN_ESTIMATE,
    STUDIO_TOOL_NAMES,
    STUDIO_TRIM_PAIRS,
    SUFFIX_SEPARATOR,
    Escape,
    Path,
)
from studio.core.chain.shape_views import (
    PostModelHookContext,
    PostModelHookResult,
    PreModelHookContext,
    PreModelHookResult,
    View,
)
from studio.core.findings import Finding, errors
from studio.core.json.values import is_whole_number, type_name

# --------------------------------------------------------------------------------------------
# Studio rules


@dataclass(frozen=True, slots=True)
class StudioRule:
    """A rule the studio fixes where the seed is silent; ``source`` says where it is written."""

    id: str
    source: str
    text: str


STUDIO_RULES: list[StudioRule] = [
    StudioRule(
        STUDIO_SUFFIX_SEPARATOR,
        "spec §3",
        "Several systemPromptSuffix values accumulate in chain order, each separated from the "
        "text before it by exactly one blank line: line breaks at the end of the text so far and "
        "at the start of the suffix collapse into one blank line. An empty or whitespace-only "
        "suffix adds nothing; an empty base prompt is replaced by the first suffix.",
    ),
    StudioRule(
        STUDIO_RETRY_BUDGET,
        "spec §3",
        "retry re-runs the model call and then the whole post chain. maxRetries defaults to 1. "
        "The budget is counted per turn: every retry made in the turn counts, whichever hook "
        "asked for it, against the maxRetries of the latest retry request.",
    ),
    StudioRule(
        STUDIO_FAIL_CLOSED,
        "spec §3",
        "A hook that raises, times out or returns a value of the wrong shape (any error finding "
        "of the result validator) fails the turn closed with a structured turn error that names "
        "the hook and its position in the chain.",
    ),
    StudioRule(
        STUDIO_TRIM_PAIRS,
        "spec §4",
        "historyTrimmerHook never leaves a tool result without its tool call or the reverse: a "
        "tool message (toolCallId) and the assistant message whose toolCalls holds that id are "
        "kept or dropped together.",
    ),
    StudioRule(
        STUDIO_TOKEN_ESTIMATE,
        "spec §4",
        "historyTrimmerHook estimates ceil(characters / 4) tokens per message plus 3 per message.",
    ),
    StudioRule(
        STUDIO_MESSAGE_SHAPE,
        "model_hooks",
        "A message is an object with role user, assistant, system or tool, and content that is "
        "a string or an array of content parts (objects with a non-empty string type; a text "
        "part has a string text, and text is a string on any part that has it). content may be "
        "null or absent only on an assistant message that carries tool calls. An assistant "
        "message may carry toolCalls: an array of objects with a non-empty string name, an "
        "optional non-empty string id and any JSON arguments. A tool message may carry "
        "toolCallId, a non-empty string. Other keys are kept as they are. toolCalls on a "
        "message that is not an assistant's, or a tool_calls key, is a warning: the studio "
        "reads tool calls only from an assistant's toolCalls.",
    ),
    StudioRule(
        STUDIO_TOOL_NAMES,
        "model_hooks",
        "A tool definition is an object with a non-empty string name; other keys are kept as "
        "they are. Two tools with the same name in one list is a warning.",
    ),
    StudioRule(
        STUDIO_PROFILE_SHAPE,
        "model_hooks",
        "A model profile is null or an object holding all of maxInputTokens and "
        "maxOutputTokens (whole numbers from 1 to 2^53-1), costPerMillionInputTokens and "
        "costPerMillionOutputTokens (finite numbers, zero or more), and the booleans "
        "supportsParallelToolCalls, supportsVision and supportsCaching. Other keys are kept.",
    ),
    StudioRule(
        STUDIO_MODEL_NAME,
        "model_hooks",
        "A model name, in a context or in a result that swaps the model, is a non-empty string.",
    ),
    StudioRule(
        STUDIO_RESULT_NULL,
        "model_hooks",
        "A hook that returns null (None) changes nothing. Inside a result, and inside its retry, "
        "a key whose value is null counts as omitted.",
    ),
    StudioRule(
        STUDIO_RESULT_UNKNOWN_KEY,
        "model_hooks",
        "A key that the contract does not define, in a result or in its interrupt or retry, is "
        "an error (a misspelt key would otherwise be ignored silently), so the turn fails closed.",
    ),
    StudioRule(
        STUDIO_SINGLE_ESCAPE,
        "model_hooks",
        "A result should escape one way at most. A pre-model result holding both shortCircuit "
        "and interrupt, or a post-model result holding both retry and interrupt, is a warning: "
        "the first escape wins, in the order the contract lists them, so the chain takes "
        "shortCircuit over interrupt and retry over interrupt, and ignores the interrupt. Other "
        "keys next to an escape are still applied to what the record shows.",
    ),
    StudioRule(
        STUDIO_INTERRUPT_SHAPE,
        "model_hooks",
        "An interrupt is an object with a string reason (an empty one is a warning) and an "
        "optional value of any JSON type (null when omitted).",
    ),
    StudioRule(
        STUDIO_RETRY_SHAPE,
        "model_hooks",
        "A retry is an object with a string feedback (an empty one is a warning) and an optional "
        "maxRetries, a whole number from 1 to 2^53-1 (true, 0 and 1.5 are not).",
    ),
    StudioRule(
        STUDIO_ESCAPE_ROLE,
        "model_hooks",
        "A shortCircuit message or a response stands in for the model's answer; a role other "
        "than assistant is a warning.",
    ),
    StudioRule(
        STUDIO_CONTEXT_EXTRA_KEY,
        "model_hooks",
        "A context (or its request) key that the contract does not define is a warning; it is "
        "passed on to the hook unchanged.",
    ),
    StudioRule(
        STUDIO_JSON_ONLY,
        "model_hooks",
        "Contexts and results are JSON: no NaN or Infinity, object keys are strings, no Python "
        f"sets, tuples or other objects, no value that contains itself, and at most {MAX_DEPTH} "
        "levels of nested arrays and objects.",
    ),
]
STUDIO_RULE_IDS: frozenset[str] = frozenset(rule.id for rule in STUDIO_RULES)


def studio_rule(rule_id: str) -> StudioRule | None:
    """The studio rule a finding's ``rule`` names, or None when the rule comes from the seed."""
    for rule in STUDIO_RULES:
        if rule.id == rule_id:
            return rule
    return None


# --------------------------------------------------------------------------------------------
# Validators


def _pre_context(c: Checker, value: Any) -> None:
    root = "the pre-model hook context"
    if not isinstance(value, dict):
        c.error((), f"{root} must be an object, got {type_name(value)}", RULE_PRE_CONTEXT)
        return
    context_keys(c, value, (), PRE_CONTEXT_KEYS, root)
    if require(c, value, "messages", (), "an array of messages", RULE_PRE_CONTEXT, root):
        check_messages(c, value["messages"], ("messages",), root, RULE_PRE_CONTEXT)
    if require(c, value, "model", (), "a non-empty string", RULE_PRE_CONTEXT, root):
        check_model(c, value["model"], ("model",), root)
    if require(c, value, "modelProfile", (), "an object or null", RULE_PRE_CONTEXT, root):
        check_profile(c, value["modelProfile"], ("modelProfile",), root)
    if require(c, value, "tools", (), "an array of tool definitions", RULE_PRE_CONTEXT, root):
        check_tools(c, value["tools"], ("tools",), root)
    if require(c, value, "systemPrompt", (), "a string", RULE_PRE_CONTEXT, root):
        check_string(c, value["systemPrompt"], ("systemPrompt",), RULE_PRE_CONTEXT, root)
    if require(c, value, "state", (), "an object", RULE_PRE_CONTEXT, root):
        check_state(c, value["state"], ("state",), root)


def _pre_result(c: Checker, value: Any) -> None:
    root = "the pre-model hook result"
    if value is None:
        return
    if not isinstance(value, dict):
        c.error(
            (),
            f"{root} must be an object (or null for no change), got {type_name(value)}",
            RULE_PRE_RESULT,
        )
        return
    result_keys(
        c,
        value,
        PRE_RESULT_KEYS,
        "a pre-model result holds only messages, model, systemPromptSuffix, tools, "
        "shortCircuit and interrupt",
        root,
    )
    if value.get("messages") is not None:
        check_messages(c, value["messages"], ("messages",), root, RULE_PRE_RESULT)
    if value.get("model") is not None:
        check_model(c, value["model"], ("model",), root)
    if value.get("systemPromptSuffix") is not None:
        check_string(c, value["systemPromptSuffix"], ("systemPromptSuffix",), RULE_PRE_RESULT, root)
    if value.get("tools") is not None:
        check_tools(c, value["tools"], ("tools",), root)
    if value.get("shortCircuit") is not None:
        check_escape_message(c, value["shortCircuit"], ("shortCircuit",), root)
    if value.get("interrupt") is not None:
        check_interrupt(c, value["interrupt"], ("interrupt",), root)
    if value.get("shortCircuit") is not None and value.get("interrupt") is not None:
        _two_escapes(c, root, "shortCircuit")


def _two_escapes(c: Checker, root: str, taken: Escape) -> None:
    """A result holding ``taken`` and an interrupt: the first escape wins (studio rule
    ``single-escape``), so the chain takes ``taken`` and never sees the interrupt."""
    c.warn(
        (),
        f"{root} holds both {taken} and interrupt; the first escape wins, so the chain takes "
        f"{taken} and ignores the interrupt",
        STUDIO_SINGLE_ESCAPE,
    )


def _request(c: Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, dict):
        c.error(
            at,
            f"{named(at, root)} must be an object {{messages, model, tools, state}}, "
            f"got {type_name(value)}",
            RULE_POST_CONTEXT,
        )
        return
    context_keys(c, value, at, REQUEST_KEYS, root)
    if require(c, value, "messages", at, "an array of messages", RULE_POST_CONTEXT, root):
        check_messages(c, value["messages"], (*at, "messages"), root, RULE_POST_CONTEXT)
    if require(c, value, "model", at, "a non-empty string", RULE_POST_CONTEXT, root):
        check_model(c, value["model"], (*at, "model"), root)
    if require(c, value, "tools", at, "an array of tool definitions", RULE_POST_CONTEXT, root):
        check_tools(c, value["tools"], (*at, "tools"), root)
    if require(c, value, "state", at, "an object", RULE_POST_CONTEXT, root):
        check_state(c, value["state"], (*at, "state"), root)


def _post_context(c: Checker, value: Any) -> None:
    root = "the post-model hook context"
    if not isinstance(value, dict):
        c.error((), f"{root} must be an object, got {type_name(value)}", RULE_POST_CONTEXT)
        return
    context_keys(c, value, (), POST_CONTEXT_KEYS, root)
    if require(c, value, "response", (), "a message", RULE_POST_CONTEXT, root):
        check_escape_message(c, value["response"], ("response",), root)
    if require(c, value, "request", (), "an object", RULE_POST_CONTEXT, root):
        _request(c, value["request"], ("request",), root)
    if require(c, value, "state", (), "an object", RULE_POST_CONTEXT, root):
        check_state(c, value["state"], ("state",), root)


def _post_result(c: Checker, value: Any) -> None:
    root = "the post-model hook result"
    if value is None:
        return
    if not isinstance(value, dict):
        c.error(
            (),
            f"{root} must be an object (or null for no change), got {type_name(value)}",
            RULE_POST_RESULT,
        )
        return
    result_keys(
        c,
        value,
        POST_RESULT_KEYS,
        "a post-model result holds only response, retry and interrupt",
        root,
    )
    if value.get("response") is not None:
        check_escape_message(c, value["response"], ("response",), root)
    if value.get("retry") is not None:
        check_retry(c, value["retry"], ("retry",), root)
    if value.get("interrupt") is not None:
        check_interrupt(c, value["interrupt"], ("interrupt",), root)
    if value.get("retry") is not None and value.get("interrupt") is not None:
        _two_escapes(c, root, "retry")


def validate_pre_context(value: Any) -> list[Finding]:
    """Every finding on a pre-model hook context ``{messages, model, modelProfile, tools,
    systemPrompt, state}``; errors first, then warnings. Never raises."""
    return run_checks(_pre_context, value)


def validate_pre_result(value: Any) -> list[Finding]:
    """Every finding on what a pre-model hook returned; None (no change) has none. Never raises."""
    return run_checks(_pre_result, value)


def validate_post_context(value: Any) -> list[Finding]:
    """Every finding on a post-model hook context ``{response, request: {messages, model, tools,
    state}, state}``; errors first, then warnings. Never raises."""
    return run_checks(_post_context, value)


def validate_post_result(value: Any) -> list[Finding]:
    """Every finding on what a post-model hook returned; None (no change) has none. Never raises."""
    return run_checks(_post_result, value)


# --------------------------------------------------------------------------------------------
# Typed views


class ShapeError(ValueError):
    """A value that does not fit the contract; ``findings`` holds every finding on it."""

    def __init__(self, what: str, findings: list[Finding]) -> None:
        self.findings = findings
        first = errors(findings)[0]
        more = len(errors(findings)) - 1
        tail = f" (and {more} more)" if more else ""
        super().__init__(f"{what}: {first.message}{tail}")


_V = TypeVar("_V", bound=View)


def _parse(model: type[_V], validate: Callable[[Any], list[Finding]], value: Any, what: str) -> _V:
    findings = validate(value)
    if errors(findings):
        raise ShapeError(what, findings)
    return model.model_validate(value)


def _without_nulls(value: dict[str, Any], nested: str | None = None) -> dict[str, Any]:
    out = {k: v for k, v in value.items() if v is not None}
    if nested is not None and isinstance(out.get(nested), dict):
        out[nested] = {k: v for k, v in out[nested].items() if v is not None}
    return out


def parse_pre_context(value: Any) -> PreModelHookContext:
    """The typed view of a pre-model hook context; :class:`ShapeError` when it has errors."""
    return _parse(PreModelHookContext, validate_pre_context, value, "pre-model hook context")


def parse_post_context(value: Any) -> PostModelHookContext:
    """The typed view of a post-model hook context; :class:`ShapeError` when it has errors."""
    return _parse(PostModelHookContext, validate_post_context, value, "post-model hook context")


def parse_pre_result(value: Any) -> PreModelHookResult:
    """The typed view of a pre-model hook result, null keys dropped; None gives an empty result."""
    findings = validate_pre_result(value)
    if errors(findings):
        raise ShapeError("pre-model hook result", findings)
    if value is None:
        return PreModelHookResult()
    return PreModelHookResult.model_validate(_without_nulls(value))


def parse_post_result(value: Any) -> PostModelHookResult:
    """The typed view of a post-model hook result, null keys dropped; None gives an empty result."""
    findings = validate_post_result(value)
    if errors(findings):
        raise ShapeError("post-model hook result", findings)
    if value is None:
        return PostModelHookResult()
    return PostModelHookResult.model_validate(_without_nulls(value, "retry"))


# --------------------------------------------------------------------------------------------
# Chain semantics


AnyResult = PreModelHookResult | PostModelHookResult | Mapping[str, Any] | None


def escape_of(result: AnyResult) -> Escape | None:
    """How a result stops its chain: "shortCircuit" or "interrupt" for a pre-model result,
    "retry" or "interrupt" for a post-model one, None when the chain goes on.

    Takes a typed result or a raw (validated) mapping; a null key counts as omitted. A result
    holding two escapes (a warning, studio rule ``single-escape``) reports the one the chain
    takes: the first escape wins, so shortCircuit or retry comes before interrupt.
    """
    if result is None:
        return None
    if isinstance(result, PreModelHookResult | PostModelHookResult):
        return result.escape
    if not isinstance(result, Mapping):
        return None
    if result.get("shortCircuit") is not None:
        return "shortCircuit"
    if result.get("retry") is not None:
        return "retry"
    if result.get("interrupt") is not None:
        return "interrupt"
    return None


def merge_system_prompt_suffixes(base: str, suffixes: Iterable[str | None]) -> str:
    """The system prompt after a pre chain's ``systemPromptSuffix`` values, in chain order
    (studio rule ``suffix-separator``): each suffix is set off from the text before it by exactly
    one blank line, line breaks at that join collapsing; None, empty and whitespace-only
    suffixes add nothing; an empty base prompt is replaced by the first suffix."""
    text = base
    for suffix in suffixes:
        if suffix is None or suffix.strip() == "":
            continue
        if text.strip() == "":
            text = suffix
        else:
            text = text.rstrip("\r\n") + SUFFIX_SEPARATOR + suffix.lstrip("\r\n")
    return text


def _retry_limit(result: AnyResult) -> int | None:
    """The maxRetries of a result that asks for a retry, or None when it does not ask."""
    if isinstance(result, PostModelHookResult):
        return result.retry.maxRetries if result.retry is not None else None
    if isinstance(result, PreModelHookResult) or not isinstance(result, Mapping):
        return None
    retry = result.get("retry")
    if retry is None:
        return None
    limit = retry.get("maxRetries") if isinstance(retry, Mapping) else None
    if is_whole_number(limit) and limit >= 1:
        return int(limit)
    return DEFAULT_MAX_RETRIES


def retry_budget(results: Iterable[AnyResult]) -> int:
    """How many retries the turn allows (studio rule ``retry-budget``), given the post-model
    results of one turn in order: the maxRetries of the latest result that asks for a retry
    (1 when it names none), or 0 when none asks."""
    budget = 0
    for result in results:
        limit = _retry_limit(result)
        if limit is not None:
            budget = limit
    return budget


def retries_used(results: Iterable[AnyResult]) -> int:
    """How many retries the turn has made before its latest result: every earlier result that
    asked for a retry was granted one, or the turn would have ended there."""
    asked = [_retry_limit(result) is not None for result in results]
    return sum(asked[:-1])


def should_retry(results: Iterable[AnyResult]) -> bool:
    """Whether the latest of a turn's post-model results gets its retry: it asks for one and the
    retries already made this turn are fewer than its maxRetries."""
    seen = list(results)
    if not seen:
        return False
    limit = _retry_limit(seen[-1])
    return limit is not None and retries_used(seen) < limit
