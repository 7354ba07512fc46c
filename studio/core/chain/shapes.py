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
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from studio.core.findings import Finding, PathPart, dotted, errors, warnings
from studio.core.json.values import (
    MAX_SAFE_INTEGER,
    is_finite_number,
    is_number,
    is_whole_number,
    json_problems,
    key_problem,
    type_name,
)

Path = tuple[PathPart, ...]
Role = Literal["user", "assistant", "system", "tool"]
PreEscape = Literal["shortCircuit", "interrupt"]
PostEscape = Literal["retry", "interrupt"]
Escape = Literal["shortCircuit", "interrupt", "retry"]

ROLES: tuple[Role, ...] = ("user", "assistant", "system", "tool")
DEFAULT_MAX_RETRIES = 1
SUFFIX_SEPARATOR = "\n\n"
MAX_DEPTH = 200
"""Deepest nesting of arrays and objects in a context or result (studio rule ``json-only``)."""

PRE_CONTEXT_KEYS = ("messages", "model", "modelProfile", "tools", "systemPrompt", "state")
PRE_RESULT_KEYS = (
    "messages",
    "model",
    "systemPromptSuffix",
    "tools",
    "shortCircuit",
    "interrupt",
)
POST_CONTEXT_KEYS = ("response", "request", "state")
REQUEST_KEYS = ("messages", "model", "tools", "state")
POST_RESULT_KEYS = ("response", "retry", "interrupt")
INTERRUPT_KEYS = ("reason", "value")
RETRY_KEYS = ("feedback", "maxRetries")
MESSAGE_KEYS = ("role", "content", "toolCalls", "toolCallId")
PROFILE_TOKEN_KEYS = ("maxInputTokens", "maxOutputTokens")
PROFILE_COST_KEYS = ("costPerMillionInputTokens", "costPerMillionOutputTokens")
PROFILE_FLAG_KEYS = ("supportsParallelToolCalls", "supportsVision", "supportsCaching")
PROFILE_KEYS = PROFILE_TOKEN_KEYS + PROFILE_COST_KEYS + PROFILE_FLAG_KEYS

# Rule ids of the findings that come straight from the seed's interfaces.
RULE_PRE_CONTEXT = "pleach.pre-context"
RULE_POST_CONTEXT = "pleach.post-context"
RULE_PRE_RESULT = "pleach.pre-result"
RULE_POST_RESULT = "pleach.post-result"
RULE_PROFILE = "pleach.model-profile"
RULE_TOOLS = "pleach.tools"
RULE_INTERRUPT = "pleach.interrupt"
RULE_RETRY = "pleach.retry"
RULE_STATE = "pleach.state"
RULE_UNCHECKABLE = "pleach.uncheckable"


# --------------------------------------------------------------------------------------------
# Studio rules


@dataclass(frozen=True, slots=True)
class StudioRule:
    """A rule the studio fixes where the seed is silent; ``source`` says where it is written."""

    id: str
    source: str
    text: str


STUDIO_SUFFIX_SEPARATOR = "pleach.studio.suffix-separator"
STUDIO_RETRY_BUDGET = "pleach.studio.retry-budget"
STUDIO_FAIL_CLOSED = "pleach.studio.fail-closed"
STUDIO_TRIM_PAIRS = "pleach.studio.trim-pairs"
STUDIO_TOKEN_ESTIMATE = "pleach.studio.token-estimate"
STUDIO_MESSAGE_SHAPE = "pleach.studio.message-shape"
STUDIO_TOOL_NAMES = "pleach.studio.tool-names"
STUDIO_PROFILE_SHAPE = "pleach.studio.profile-shape"
STUDIO_MODEL_NAME = "pleach.studio.model-name"
STUDIO_RESULT_NULL = "pleach.studio.result-null"
STUDIO_RESULT_UNKNOWN_KEY = "pleach.studio.result-unknown-key"
STUDIO_SINGLE_ESCAPE = "pleach.studio.single-escape"
STUDIO_INTERRUPT_SHAPE = "pleach.studio.interrupt-shape"
STUDIO_RETRY_SHAPE = "pleach.studio.retry-shape"
STUDIO_ESCAPE_ROLE = "pleach.studio.escape-role"
STUDIO_CONTEXT_EXTRA_KEY = "pleach.studio.context-extra-key"
STUDIO_JSON_ONLY = "pleach.studio.json-only"

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
# Finding collection


def _name(path: Path, root: str) -> str:
    return dotted(path) or root


def _show(value: Any) -> str:
    """A short, safe description of a value for a message."""
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:40] + "..."
        return json.dumps(text)
    if type(value) is int and -(10**15) < value < 10**15:
        return repr(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    return type_name(value)


def _finite_number(value: Any) -> bool:
    """A JSON number that a JavaScript runtime holds as a finite double."""
    if isinstance(value, float):
        return is_finite_number(value)
    if not is_number(value):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


class _Checker:
    def __init__(self) -> None:
        self.found: list[Finding] = []

    def error(self, path: Path, message: str, rule: str) -> None:
        self.found.append(Finding(path, message, rule))

    def warn(self, path: Path, message: str, rule: str) -> None:
        self.found.append(Finding(path, message, rule, "warning"))

    def sorted(self) -> list[Finding]:
        return errors(self.found) + warnings(self.found)


def _run(check: Callable[[_Checker, Any], None], value: Any) -> list[Finding]:
    checker = _Checker()
    try:
        check(checker, value)
    except Exception as exc:
        # A validator never raises: a value that defeats the checks is itself a finding.
        checker.error(
            (), f"the value could not be checked ({type(exc).__name__})", RULE_UNCHECKABLE
        )
    return checker.sorted()


def _check_json(c: _Checker, value: Any, path: Path) -> None:
    """Flag whatever JSON cannot hold. Iterative, so any nesting depth is safe."""
    for where, what in json_problems(
        value, exact_types=False, large_ints="allowed", max_depth=MAX_DEPTH, depth=len(path)
    ):
        at = (*path, *where)
        c.error(at, f"{_name(at, 'the value')} {what}", STUDIO_JSON_ONLY)


def _string_keys(c: _Checker, obj: dict[Any, Any], at: Path, root: str) -> list[str]:
    """The object's string keys; a key of another type is a finding."""
    keys: list[str] = []
    for key in list(obj):
        if isinstance(key, str):
            keys.append(key)
        else:
            c.error(at, f"{_name(at, root)} {key_problem(key)}", STUDIO_JSON_ONLY)
    return keys


def _suggest(key: str, known: Iterable[str]) -> str:
    if len(key) > 64:
        return ""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _require(
    c: _Checker, obj: dict[Any, Any], key: str, at: Path, what: str, rule: str, root: str
) -> bool:
    if key in obj:
        return True
    c.error((*at, key), f"{_name((*at, key), root)} is required ({what})", rule)
    return False


def _check_string(
    c: _Checker, value: Any, at: Path, rule: str, root: str, *, non_empty: bool = False
) -> None:
    if not isinstance(value, str):
        kind = "a non-empty string" if non_empty else "a string"
        c.error(at, f"{_name(at, root)} must be {kind}, got {type_name(value)}", rule)
    elif non_empty and value == "":
        c.error(at, f"{_name(at, root)} must be a non-empty string, got an empty string", rule)


# --------------------------------------------------------------------------------------------
# Shapes


def _check_content_part(c: _Checker, part: Any, at: Path, root: str) -> None:
    rule = STUDIO_MESSAGE_SHAPE
    if not isinstance(part, dict):
        c.error(at, f"{_name(at, root)} must be a content part object, got {type_name(part)}", rule)
        return
    keys = _string_keys(c, part, at, root)
    if _require(c, part, "type", at, "a non-empty string naming the part's kind", rule, root):
        _check_string(c, part["type"], (*at, "type"), rule, root, non_empty=True)
    if part.get("type") == "text":
        if _require(c, part, "text", at, "a string, in a text part", rule, root):
            _check_string(c, part["text"], (*at, "text"), rule, root)
    elif part.get("text") is not None:
        _check_string(c, part["text"], (*at, "text"), rule, root)
    for key in keys:
        if key not in ("type", "text"):
            _check_json(c, part[key], (*at, key))


def _check_tool_call(c: _Checker, call: Any, at: Path, root: str) -> None:
    rule = STUDIO_MESSAGE_SHAPE
    if not isinstance(call, dict):
        c.error(at, f"{_name(at, root)} must be a tool call object, got {type_name(call)}", rule)
        return
    keys = _string_keys(c, call, at, root)
    if _require(c, call, "name", at, "a non-empty string naming the tool", rule, root):
        _check_string(c, call["name"], (*at, "name"), rule, root, non_empty=True)
    if "id" in call and call["id"] is not None:
        _check_string(c, call["id"], (*at, "id"), rule, root, non_empty=True)
    for key in keys:
        if key not in ("name", "id"):
            _check_json(c, call[key], (*at, key))


def _has_tool_calls(message: dict[Any, Any]) -> bool:
    calls = message.get("toolCalls")
    return isinstance(calls, list) and len(calls) > 0


def _check_message(c: _Checker, message: Any, at: Path, root: str) -> None:
    rule = STUDIO_MESSAGE_SHAPE
    if not isinstance(message, dict):
        c.error(at, f"{_name(at, root)} must be a message object, got {type_name(message)}", rule)
        return
    keys = _string_keys(c, message, at, root)
    roles = ", ".join(ROLES)
    role = message.get("role")
    if _require(c, message, "role", at, f"one of {roles}", rule, root) and (
        not isinstance(role, str) or role not in ROLES
    ):
        c.error(
            (*at, "role"),
            f"{_name((*at, 'role'), root)} must be one of {roles}, got {_show(role)}",
            rule,
        )

    content = message.get("content")
    may_omit = role == "assistant" and _has_tool_calls(message)
    if content is None and not may_omit:
        got = "null" if "content" in message else "nothing"
        c.error(
            (*at, "content"),
            f"{_name((*at, 'content'), root)} must be a string or an array of content parts, "
            f"got {got} (only an assistant message with tool calls may leave it out)",
            rule,
        )
    elif isinstance(content, list):
        for i, part in enumerate(list(content)):
            _check_content_part(c, part, (*at, "content", i), root)
    elif content is not None and not isinstance(content, str):
        c.error(
            (*at, "content"),
            f"{_name((*at, 'content'), root)} must be a string or an array of content parts, "
            f"got {type_name(content)}",
            rule,
        )

    calls = message.get("toolCalls")
    if calls is not None:
        if not isinstance(calls, list):
            c.error(
                (*at, "toolCalls"),
                f"{_name((*at, 'toolCalls'), root)} must be an array of tool calls, "
                f"got {type_name(calls)}",
                rule,
            )
        else:
            for i, call in enumerate(list(calls)):
                _check_tool_call(c, call, (*at, "toolCalls", i), root)
            if calls and isinstance(role, str) and role in ROLES and role != "assistant":
                c.warn(
                    (*at, "toolCalls"),
                    f"{_name((*at, 'toolCalls'), root)} is on a {role} message; only an "
                    "assistant message carries tool calls, so the studio ignores them",
                    rule,
                )

    call_id = message.get("toolCallId")
    if call_id is not None:
        _check_string(c, call_id, (*at, "toolCallId"), rule, root, non_empty=True)

    if "tool_calls" in message:
        c.warn(
            (*at, "tool_calls"),
            f"{_name((*at, 'tool_calls'), root)} is not read: the studio reads tool calls from "
            "toolCalls",
            rule,
        )
    for key in keys:
        if key not in MESSAGE_KEYS:
            _check_json(c, message[key], (*at, key))


def _check_messages(c: _Checker, value: Any, at: Path, root: str, rule: str) -> None:
    if not isinstance(value, list):
        c.error(at, f"{_name(at, root)} must be an array of messages, got {type_name(value)}", rule)
        return
    for i, message in enumerate(list(value)):
        _check_message(c, message, (*at, i), root)


def _check_escape_message(c: _Checker, value: Any, at: Path, root: str) -> None:
    _check_message(c, value, at, root)
    role = value.get("role") if isinstance(value, dict) else None
    if isinstance(role, str) and role in ROLES and role != "assistant":
        c.warn(
            (*at, "role"),
            f"{_name(at, root)} stands in for the model's answer but has role {role}, "
            "not assistant",
            STUDIO_ESCAPE_ROLE,
        )


def _check_tools(c: _Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, list):
        c.error(
            at,
            f"{_name(at, root)} must be an array of tool definitions, got {type_name(value)}",
            RULE_TOOLS,
        )
        return
    seen: set[str] = set()
    for i, tool in enumerate(list(value)):
        here = (*at, i)
        if not isinstance(tool, dict):
            c.error(
                here,
                f"{_name(here, root)} must be a tool definition object, got {type_name(tool)}",
                STUDIO_TOOL_NAMES,
            )
            continue
        keys = _string_keys(c, tool, here, root)
        if _require(c, tool, "name", here, "a non-empty string", STUDIO_TOOL_NAMES, root):
            name = tool["name"]
            _check_string(c, name, (*here, "name"), STUDIO_TOOL_NAMES, root, non_empty=True)
            if isinstance(name, str) and name:
                if name in seen:
                    c.warn(
                        (*here, "name"),
                        f"{_name((*here, 'name'), root)}: another tool in this list is already "
                        f"named {_show(name)}",
                        STUDIO_TOOL_NAMES,
                    )
                seen.add(name)
        for key in keys:
            if key != "name":
                _check_json(c, tool[key], (*here, key))


def _check_profile(c: _Checker, value: Any, at: Path, root: str) -> None:
    if value is None:
        return
    rule = STUDIO_PROFILE_SHAPE
    if not isinstance(value, dict):
        c.error(
            at, f"{_name(at, root)} must be an object or null, got {type_name(value)}", RULE_PROFILE
        )
        return
    keys = _string_keys(c, value, at, root)
    for key in PROFILE_TOKEN_KEYS:
        if _require(c, value, key, at, "a positive whole number", rule, root):
            item = value[key]
            if not (is_whole_number(item) and 1 <= item <= MAX_SAFE_INTEGER):
                c.error(
                    (*at, key),
                    f"{_name((*at, key), root)} must be a positive whole number, got {_show(item)}",
                    rule,
                )
    for key in PROFILE_COST_KEYS:
        if _require(c, value, key, at, "a finite number, zero or more", rule, root):
            item = value[key]
            if not (_finite_number(item) and item >= 0):
                c.error(
                    (*at, key),
                    f"{_name((*at, key), root)} must be a finite number, zero or more, "
                    f"got {_show(item)}",
                    rule,
                )
    for key in PROFILE_FLAG_KEYS:
        if _require(c, value, key, at, "a boolean", rule, root) and not isinstance(
            value[key], bool
        ):
            c.error(
                (*at, key),
                f"{_name((*at, key), root)} must be a boolean, got {type_name(value[key])}",
                rule,
            )
    for key in keys:
        if key not in PROFILE_KEYS:
            _check_json(c, value[key], (*at, key))


def _check_state(c: _Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, dict):
        c.error(at, f"{_name(at, root)} must be an object, got {type_name(value)}", RULE_STATE)
        return
    _check_json(c, value, at)


def _check_model(c: _Checker, value: Any, at: Path, root: str) -> None:
    _check_string(c, value, at, STUDIO_MODEL_NAME, root, non_empty=True)


def _check_interrupt(c: _Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, dict):
        c.error(
            at,
            f"{_name(at, root)} must be an object {{reason, value}}, got {type_name(value)}",
            RULE_INTERRUPT,
        )
        return
    for key in _string_keys(c, value, at, root):
        if key not in INTERRUPT_KEYS:
            c.error(
                (*at, key),
                f"{_name(at, root)} has unknown key {_show(key)}{_suggest(key, INTERRUPT_KEYS)}; "
                "an interrupt holds only reason and value",
                STUDIO_RESULT_UNKNOWN_KEY,
            )
    if _require(
        c, value, "reason", at, "a string saying why the turn pauses", RULE_INTERRUPT, root
    ):
        reason = value["reason"]
        _check_string(c, reason, (*at, "reason"), RULE_INTERRUPT, root)
        if reason == "":
            c.warn(
                (*at, "reason"),
                f"{_name((*at, 'reason'), root)} is empty; the user is not told why the turn "
                "paused",
                STUDIO_INTERRUPT_SHAPE,
            )
    if "value" in value:
        _check_json(c, value["value"], (*at, "value"))


def _check_retry(c: _Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, dict):
        c.error(
            at,
            f"{_name(at, root)} must be an object {{feedback, maxRetries?}}, "
            f"got {type_name(value)}",
            RULE_RETRY,
        )
        return
    for key in _string_keys(c, value, at, root):
        if key not in RETRY_KEYS:
            c.error(
                (*at, key),
                f"{_name(at, root)} has unknown key {_show(key)}{_suggest(key, RETRY_KEYS)}; "
                "a retry holds only feedback and maxRetries",
                STUDIO_RESULT_UNKNOWN_KEY,
            )
    if _require(c, value, "feedback", at, "a string for the model", RULE_RETRY, root):
        feedback = value["feedback"]
        _check_string(c, feedback, (*at, "feedback"), RULE_RETRY, root)
        if feedback == "":
            c.warn(
                (*at, "feedback"),
                f"{_name((*at, 'feedback'), root)} is empty; the retried call learns nothing",
                STUDIO_RETRY_SHAPE,
            )
    limit = value.get("maxRetries")
    if limit is not None and not (is_whole_number(limit) and 1 <= limit <= MAX_SAFE_INTEGER):
        c.error(
            (*at, "maxRetries"),
            f"{_name((*at, 'maxRetries'), root)} must be a positive whole number, "
            f"got {_show(limit)}",
            STUDIO_RETRY_SHAPE,
        )


def _context_keys(
    c: _Checker, value: dict[Any, Any], at: Path, known: tuple[str, ...], root: str
) -> None:
    for key in _string_keys(c, value, at, root):
        if key not in known:
            c.warn(
                (*at, key),
                f"{_name(at, root)} has key {_show(key)}{_suggest(key, known)} that the contract "
                "does not define; it is passed on unchanged",
                STUDIO_CONTEXT_EXTRA_KEY,
            )
            _check_json(c, value[key], (*at, key))


def _result_keys(
    c: _Checker, value: dict[Any, Any], known: tuple[str, ...], rule_text: str, root: str
) -> None:
    for key in _string_keys(c, value, (), root):
        if key not in known:
            c.error(
                (key,),
                f"{root} has unknown key {_show(key)}{_suggest(key, known)}; {rule_text}",
                STUDIO_RESULT_UNKNOWN_KEY,
            )


# --------------------------------------------------------------------------------------------
# Validators


def _pre_context(c: _Checker, value: Any) -> None:
    root = "the pre-model hook context"
    if not isinstance(value, dict):
        c.error((), f"{root} must be an object, got {type_name(value)}", RULE_PRE_CONTEXT)
        return
    _context_keys(c, value, (), PRE_CONTEXT_KEYS, root)
    if _require(c, value, "messages", (), "an array of messages", RULE_PRE_CONTEXT, root):
        _check_messages(c, value["messages"], ("messages",), root, RULE_PRE_CONTEXT)
    if _require(c, value, "model", (), "a non-empty string", RULE_PRE_CONTEXT, root):
        _check_model(c, value["model"], ("model",), root)
    if _require(c, value, "modelProfile", (), "an object or null", RULE_PRE_CONTEXT, root):
        _check_profile(c, value["modelProfile"], ("modelProfile",), root)
    if _require(c, value, "tools", (), "an array of tool definitions", RULE_PRE_CONTEXT, root):
        _check_tools(c, value["tools"], ("tools",), root)
    if _require(c, value, "systemPrompt", (), "a string", RULE_PRE_CONTEXT, root):
        _check_string(c, value["systemPrompt"], ("systemPrompt",), RULE_PRE_CONTEXT, root)
    if _require(c, value, "state", (), "an object", RULE_PRE_CONTEXT, root):
        _check_state(c, value["state"], ("state",), root)


def _pre_result(c: _Checker, value: Any) -> None:
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
    _result_keys(
        c,
        value,
        PRE_RESULT_KEYS,
        "a pre-model result holds only messages, model, systemPromptSuffix, tools, "
        "shortCircuit and interrupt",
        root,
    )
    if value.get("messages") is not None:
        _check_messages(c, value["messages"], ("messages",), root, RULE_PRE_RESULT)
    if value.get("model") is not None:
        _check_model(c, value["model"], ("model",), root)
    if value.get("systemPromptSuffix") is not None:
        _check_string(
            c, value["systemPromptSuffix"], ("systemPromptSuffix",), RULE_PRE_RESULT, root
        )
    if value.get("tools") is not None:
        _check_tools(c, value["tools"], ("tools",), root)
    if value.get("shortCircuit") is not None:
        _check_escape_message(c, value["shortCircuit"], ("shortCircuit",), root)
    if value.get("interrupt") is not None:
        _check_interrupt(c, value["interrupt"], ("interrupt",), root)
    if value.get("shortCircuit") is not None and value.get("interrupt") is not None:
        _two_escapes(c, root, "shortCircuit")


def _two_escapes(c: _Checker, root: str, taken: Escape) -> None:
    """A result holding ``taken`` and an interrupt: the first escape wins (studio rule
    ``single-escape``), so the chain takes ``taken`` and never sees the interrupt."""
    c.warn(
        (),
        f"{root} holds both {taken} and interrupt; the first escape wins, so the chain takes "
        f"{taken} and ignores the interrupt",
        STUDIO_SINGLE_ESCAPE,
    )


def _request(c: _Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, dict):
        c.error(
            at,
            f"{_name(at, root)} must be an object {{messages, model, tools, state}}, "
            f"got {type_name(value)}",
            RULE_POST_CONTEXT,
        )
        return
    _context_keys(c, value, at, REQUEST_KEYS, root)
    if _require(c, value, "messages", at, "an array of messages", RULE_POST_CONTEXT, root):
        _check_messages(c, value["messages"], (*at, "messages"), root, RULE_POST_CONTEXT)
    if _require(c, value, "model", at, "a non-empty string", RULE_POST_CONTEXT, root):
        _check_model(c, value["model"], (*at, "model"), root)
    if _require(c, value, "tools", at, "an array of tool definitions", RULE_POST_CONTEXT, root):
        _check_tools(c, value["tools"], (*at, "tools"), root)
    if _require(c, value, "state", at, "an object", RULE_POST_CONTEXT, root):
        _check_state(c, value["state"], (*at, "state"), root)


def _post_context(c: _Checker, value: Any) -> None:
    root = "the post-model hook context"
    if not isinstance(value, dict):
        c.error((), f"{root} must be an object, got {type_name(value)}", RULE_POST_CONTEXT)
        return
    _context_keys(c, value, (), POST_CONTEXT_KEYS, root)
    if _require(c, value, "response", (), "a message", RULE_POST_CONTEXT, root):
        _check_escape_message(c, value["response"], ("response",), root)
    if _require(c, value, "request", (), "an object", RULE_POST_CONTEXT, root):
        _request(c, value["request"], ("request",), root)
    if _require(c, value, "state", (), "an object", RULE_POST_CONTEXT, root):
        _check_state(c, value["state"], ("state",), root)


def _post_result(c: _Checker, value: Any) -> None:
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
    _result_keys(
        c,
        value,
        POST_RESULT_KEYS,
        "a post-model result holds only response, retry and interrupt",
        root,
    )
    if value.get("response") is not None:
        _check_escape_message(c, value["response"], ("response",), root)
    if value.get("retry") is not None:
        _check_retry(c, value["retry"], ("retry",), root)
    if value.get("interrupt") is not None:
        _check_interrupt(c, value["interrupt"], ("interrupt",), root)
    if value.get("retry") is not None and value.get("interrupt") is not None:
        _two_escapes(c, root, "retry")


def validate_pre_context(value: Any) -> list[Finding]:
    """Every finding on a pre-model hook context ``{messages, model, modelProfile, tools,
    systemPrompt, state}``; errors first, then warnings. Never raises."""
    return _run(_pre_context, value)


def validate_pre_result(value: Any) -> list[Finding]:
    """Every finding on what a pre-model hook returned; None (no change) has none. Never raises."""
    return _run(_pre_result, value)


def validate_post_context(value: Any) -> list[Finding]:
    """Every finding on a post-model hook context ``{response, request: {messages, model, tools,
    state}, state}``; errors first, then warnings. Never raises."""
    return _run(_post_context, value)


def validate_post_result(value: Any) -> list[Finding]:
    """Every finding on what a post-model hook returned; None (no change) has none. Never raises."""
    return _run(_post_result, value)


# --------------------------------------------------------------------------------------------
# Typed views


class _View(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="allow",
        protected_namespaces=(),
    )

    def to_json(self) -> dict[str, Any]:
        """The wire form: the keys that were given, extra keys included."""
        return self.model_dump(mode="python", exclude_unset=True)


class _ClosedView(_View):
    model_config = ConfigDict(extra="forbid")


class ContentPart(_View):
    """One part of a message's content: ``{"type": "text", "text": ...}`` or another kind."""

    type: str
    text: str | None = None


class ToolCall(_View):
    """A tool call on an assistant message: a name, an optional id and any JSON arguments."""

    name: str
    id: str | None = None
    arguments: Any = None


class Message(_View):
    """A pleach message (studio rule ``message-shape``).

    ``role`` is user, assistant, system or tool; ``content`` is a string or a list of content
    parts, and may be None only on an assistant message with tool calls. An assistant message
    carries its tool calls in ``toolCalls``; a tool message names the call it answers in
    ``toolCallId``, which pairs it with the tool call of that ``id``. Other keys are kept.
    """

    role: Role
    content: str | list[ContentPart] | None = None
    toolCalls: list[ToolCall] | None = None
    toolCallId: str | None = None

    def text(self) -> str:
        """The message's text: the content string, or its text parts joined in order."""
        if isinstance(self.content, str):
            return self.content
        if self.content is None:
            return ""
        return "".join(part.text or "" for part in self.content if part.type == "text")

    def tool_call_names(self) -> list[str]:
        """The names of the tools an assistant message calls, in order (none for other roles)."""
        if self.role != "assistant" or not self.toolCalls:
            return []
        return [call.name for call in self.toolCalls]


class ToolDefinition(_View):
    """A tool the model may call: a non-empty name; its other keys (schema, text) are kept."""

    name: str


class ModelProfile(_View):
    """The resolved model's limits, per-million-token costs and capability flags."""

    maxInputTokens: int
    maxOutputTokens: int
    costPerMillionInputTokens: float
    costPerMillionOutputTokens: float
    supportsParallelToolCalls: bool
    supportsVision: bool
    supportsCaching: bool


class Interrupt(_ClosedView):
    """Pause the turn: why, and any JSON value for whoever resumes it."""

    reason: str
    value: Any = None


class Retry(_ClosedView):
    """Re-run the model call with feedback; ``maxRetries`` caps the turn's retries."""

    feedback: str
    maxRetries: int = DEFAULT_MAX_RETRIES


class PreModelHookContext(_View):
    """What a pre-model hook receives."""

    messages: list[Message]
    model: str
    modelProfile: ModelProfile | None
    tools: list[ToolDefinition]
    systemPrompt: str
    state: dict[str, Any]


class PreModelHookResult(_ClosedView):
    """What a pre-model hook returns; every field None means "left as it is"."""

    messages: list[Message] | None = None
    model: str | None = None
    systemPromptSuffix: str | None = None
    tools: list[ToolDefinition] | None = None
    shortCircuit: Message | None = None
    interrupt: Interrupt | None = None

    @property
    def escape(self) -> PreEscape | None:
        """The escape the chain takes: shortCircuit over interrupt (the first escape wins)."""
        if self.shortCircuit is not None:
            return "shortCircuit"
        if self.interrupt is not None:
            return "interrupt"
        return None


class ModelRequest(_View):
    """The request that produced a response, as a post-model hook sees it."""

    messages: list[Message]
    model: str
    tools: list[ToolDefinition]
    state: dict[str, Any]


class PostModelHookContext(_View):
    """What a post-model hook receives."""

    response: Message
    request: ModelRequest
    state: dict[str, Any]


class PostModelHookResult(_ClosedView):
    """What a post-model hook returns; every field None means "left as it is"."""

    response: Message | None = None
    retry: Retry | None = None
    interrupt: Interrupt | None = None

    @property
    def escape(self) -> PostEscape | None:
        """The escape the chain takes: retry over interrupt (the first escape wins)."""
        if self.retry is not None:
            return "retry"
        if self.interrupt is not None:
            return "interrupt"
        return None


class ShapeError(ValueError):
    """A value that does not fit the contract; ``findings`` holds every finding on it."""

    def __init__(self, what: str, findings: list[Finding]) -> None:
        self.findings = findings
        first = errors(findings)[0]
        more = len(errors(findings)) - 1
        tail = f" (and {more} more)" if more else ""
        super().__init__(f"{what}: {first.message}{tail}")


_V = TypeVar("_V", bound=_View)


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
