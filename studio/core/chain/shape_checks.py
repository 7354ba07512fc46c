"""The checks of the parts of the model hook shapes: messages, tools, model profiles, state,
interrupts, retries and the keys of a context or result. Each adds its findings to a
:class:`Checker`; the validators in ``shapes`` put them together."""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Iterable
from typing import Any

from studio.core.chain.shape_keys import (
    INTERRUPT_KEYS,
    MAX_DEPTH,
    MESSAGE_KEYS,
    PROFILE_COST_KEYS,
    PROFILE_FLAG_KEYS,
    PROFILE_KEYS,
    PROFILE_TOKEN_KEYS,
    RETRY_KEYS,
    ROLES,
    RULE_INTERRUPT,
    RULE_PROFILE,
    RULE_RETRY,
    RULE_STATE,
    RULE_TOOLS,
    RULE_UNCHECKABLE,
    STUDIO_CONTEXT_EXTRA_KEY,
    STUDIO_ESCAPE_ROLE,
    STUDIO_INTERRUPT_SHAPE,
    STUDIO_JSON_ONLY,
    STUDIO_MESSAGE_SHAPE,
    STUDIO_MODEL_NAME,
    STUDIO_PROFILE_SHAPE,
    STUDIO_RESULT_UNKNOWN_KEY,
    STUDIO_RETRY_SHAPE,
    STUDIO_TOOL_NAMES,
    Path,
)
from studio.core.findings import Finding, dotted, errors, warnings
from studio.core.json.values import (
    MAX_SAFE_INTEGER,
    is_finite_number,
    is_number,
    is_whole_number,
    json_problems,
    key_problem,
    type_name,
)

# --------------------------------------------------------------------------------------------
# Finding collection


def named(path: Path, root: str) -> str:
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


class Checker:
    def __init__(self) -> None:
        self.found: list[Finding] = []

    def error(self, path: Path, message: str, rule: str) -> None:
        self.found.append(Finding(path, message, rule))

    def warn(self, path: Path, message: str, rule: str) -> None:
        self.found.append(Finding(path, message, rule, "warning"))

    def sorted(self) -> list[Finding]:
        return errors(self.found) + warnings(self.found)


def run_checks(check: Callable[[Checker, Any], None], value: Any) -> list[Finding]:
    checker = Checker()
    try:
        check(checker, value)
    except Exception as exc:
        # A validator never raises: a value that defeats the checks is itself a finding.
        checker.error(
            (), f"the value could not be checked ({type(exc).__name__})", RULE_UNCHECKABLE
        )
    return checker.sorted()


def _check_json(c: Checker, value: Any, path: Path) -> None:
    """Flag whatever JSON cannot hold. Iterative, so any nesting depth is safe."""
    for where, what in json_problems(
        value, exact_types=False, large_ints="allowed", max_depth=MAX_DEPTH, depth=len(path)
    ):
        at = (*path, *where)
        c.error(at, f"{named(at, 'the value')} {what}", STUDIO_JSON_ONLY)


def _string_keys(c: Checker, obj: dict[Any, Any], at: Path, root: str) -> list[str]:
    """The object's string keys; a key of another type is a finding."""
    keys: list[str] = []
    for key in list(obj):
        if isinstance(key, str):
            keys.append(key)
        else:
            c.error(at, f"{named(at, root)} {key_problem(key)}", STUDIO_JSON_ONLY)
    return keys


def _suggest(key: str, known: Iterable[str]) -> str:
    if len(key) > 64:
        return ""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def require(
    c: Checker, obj: dict[Any, Any], key: str, at: Path, what: str, rule: str, root: str
) -> bool:
    if key in obj:
        return True
    c.error((*at, key), f"{named((*at, key), root)} is required ({what})", rule)
    return False


def check_string(
    c: Checker, value: Any, at: Path, rule: str, root: str, *, non_empty: bool = False
) -> None:
    if not isinstance(value, str):
        kind = "a non-empty string" if non_empty else "a string"
        c.error(at, f"{named(at, root)} must be {kind}, got {type_name(value)}", rule)
    elif non_empty and value == "":
        c.error(at, f"{named(at, root)} must be a non-empty string, got an empty string", rule)


# --------------------------------------------------------------------------------------------
# Shapes


def _check_content_part(c: Checker, part: Any, at: Path, root: str) -> None:
    rule = STUDIO_MESSAGE_SHAPE
    if not isinstance(part, dict):
        c.error(at, f"{named(at, root)} must be a content part object, got {type_name(part)}", rule)
        return
    keys = _string_keys(c, part, at, root)
    if require(c, part, "type", at, "a non-empty string naming the part's kind", rule, root):
        check_string(c, part["type"], (*at, "type"), rule, root, non_empty=True)
    if part.get("type") == "text":
        if require(c, part, "text", at, "a string, in a text part", rule, root):
            check_string(c, part["text"], (*at, "text"), rule, root)
    elif part.get("text") is not None:
        check_string(c, part["text"], (*at, "text"), rule, root)
    for key in keys:
        if key not in ("type", "text"):
            _check_json(c, part[key], (*at, key))


def _check_tool_call(c: Checker, call: Any, at: Path, root: str) -> None:
    rule = STUDIO_MESSAGE_SHAPE
    if not isinstance(call, dict):
        c.error(at, f"{named(at, root)} must be a tool call object, got {type_name(call)}", rule)
        return
    keys = _string_keys(c, call, at, root)
    if require(c, call, "name", at, "a non-empty string naming the tool", rule, root):
        check_string(c, call["name"], (*at, "name"), rule, root, non_empty=True)
    if "id" in call and call["id"] is not None:
        check_string(c, call["id"], (*at, "id"), rule, root, non_empty=True)
    for key in keys:
        if key not in ("name", "id"):
            _check_json(c, call[key], (*at, key))


def _has_tool_calls(message: dict[Any, Any]) -> bool:
    calls = message.get("toolCalls")
    return isinstance(calls, list) and len(calls) > 0


def _check_message(c: Checker, message: Any, at: Path, root: str) -> None:
    rule = STUDIO_MESSAGE_SHAPE
    if not isinstance(message, dict):
        c.error(at, f"{named(at, root)} must be a message object, got {type_name(message)}", rule)
        return
    keys = _string_keys(c, message, at, root)
    roles = ", ".join(ROLES)
    role = message.get("role")
    if require(c, message, "role", at, f"one of {roles}", rule, root) and (
        not isinstance(role, str) or role not in ROLES
    ):
        c.error(
            (*at, "role"),
            f"{named((*at, 'role'), root)} must be one of {roles}, got {_show(role)}",
            rule,
        )

    content = message.get("content")
    may_omit = role == "assistant" and _has_tool_calls(message)
    if content is None and not may_omit:
        got = "null" if "content" in message else "nothing"
        c.error(
            (*at, "content"),
            f"{named((*at, 'content'), root)} must be a string or an array of content parts, "
            f"got {got} (only an assistant message with tool calls may leave it out)",
            rule,
        )
    elif isinstance(content, list):
        for i, part in enumerate(list(content)):
            _check_content_part(c, part, (*at, "content", i), root)
    elif content is not None and not isinstance(content, str):
        c.error(
            (*at, "content"),
            f"{named((*at, 'content'), root)} must be a string or an array of content parts, "
            f"got {type_name(content)}",
            rule,
        )

    calls = message.get("toolCalls")
    if calls is not None:
        if not isinstance(calls, list):
            c.error(
                (*at, "toolCalls"),
                f"{named((*at, 'toolCalls'), root)} must be an array of tool calls, "
                f"got {type_name(calls)}",
                rule,
            )
        else:
            for i, call in enumerate(list(calls)):
                _check_tool_call(c, call, (*at, "toolCalls", i), root)
            if calls and isinstance(role, str) and role in ROLES and role != "assistant":
                c.warn(
                    (*at, "toolCalls"),
                    f"{named((*at, 'toolCalls'), root)} is on a {role} message; only an "
                    "assistant message carries tool calls, so the studio ignores them",
                    rule,
                )

    call_id = message.get("toolCallId")
    if call_id is not None:
        check_string(c, call_id, (*at, "toolCallId"), rule, root, non_empty=True)

    if "tool_calls" in message:
        c.warn(
            (*at, "tool_calls"),
            f"{named((*at, 'tool_calls'), root)} is not read: the studio reads tool calls from "
            "toolCalls",
            rule,
        )
    for key in keys:
        if key not in MESSAGE_KEYS:
            _check_json(c, message[key], (*at, key))


def check_messages(c: Checker, value: Any, at: Path, root: str, rule: str) -> None:
    if not isinstance(value, list):
        c.error(at, f"{named(at, root)} must be an array of messages, got {type_name(value)}", rule)
        return
    for i, message in enumerate(list(value)):
        _check_message(c, message, (*at, i), root)


def check_escape_message(c: Checker, value: Any, at: Path, root: str) -> None:
    _check_message(c, value, at, root)
    role = value.get("role") if isinstance(value, dict) else None
    if isinstance(role, str) and role in ROLES and role != "assistant":
        c.warn(
            (*at, "role"),
            f"{named(at, root)} stands in for the model's answer but has role {role}, "
            "not assistant",
            STUDIO_ESCAPE_ROLE,
        )


def check_tools(c: Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, list):
        c.error(
            at,
            f"{named(at, root)} must be an array of tool definitions, got {type_name(value)}",
            RULE_TOOLS,
        )
        return
    seen: set[str] = set()
    for i, tool in enumerate(list(value)):
        here = (*at, i)
        if not isinstance(tool, dict):
            c.error(
                here,
                f"{named(here, root)} must be a tool definition object, got {type_name(tool)}",
                STUDIO_TOOL_NAMES,
            )
            continue
        keys = _string_keys(c, tool, here, root)
        if require(c, tool, "name", here, "a non-empty string", STUDIO_TOOL_NAMES, root):
            name = tool["name"]
            check_string(c, name, (*here, "name"), STUDIO_TOOL_NAMES, root, non_empty=True)
            if isinstance(name, str) and name:
                if name in seen:
                    c.warn(
                        (*here, "name"),
                        f"{named((*here, 'name'), root)}: another tool in this list is already "
                        f"named {_show(name)}",
                        STUDIO_TOOL_NAMES,
                    )
                seen.add(name)
        for key in keys:
            if key != "name":
                _check_json(c, tool[key], (*here, key))


def check_profile(c: Checker, value: Any, at: Path, root: str) -> None:
    if value is None:
        return
    rule = STUDIO_PROFILE_SHAPE
    if not isinstance(value, dict):
        c.error(
            at, f"{named(at, root)} must be an object or null, got {type_name(value)}", RULE_PROFILE
        )
        return
    keys = _string_keys(c, value, at, root)
    for key in PROFILE_TOKEN_KEYS:
        if require(c, value, key, at, "a positive whole number", rule, root):
            item = value[key]
            if not (is_whole_number(item) and 1 <= item <= MAX_SAFE_INTEGER):
                c.error(
                    (*at, key),
                    f"{named((*at, key), root)} must be a positive whole number, got {_show(item)}",
                    rule,
                )
    for key in PROFILE_COST_KEYS:
        if require(c, value, key, at, "a finite number, zero or more", rule, root):
            item = value[key]
            if not (_finite_number(item) and item >= 0):
                c.error(
                    (*at, key),
                    f"{named((*at, key), root)} must be a finite number, zero or more, "
                    f"got {_show(item)}",
                    rule,
                )
    for key in PROFILE_FLAG_KEYS:
        if require(c, value, key, at, "a boolean", rule, root) and not isinstance(value[key], bool):
            c.error(
                (*at, key),
                f"{named((*at, key), root)} must be a boolean, got {type_name(value[key])}",
                rule,
            )
    for key in keys:
        if key not in PROFILE_KEYS:
            _check_json(c, value[key], (*at, key))


def check_state(c: Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, dict):
        c.error(at, f"{named(at, root)} must be an object, got {type_name(value)}", RULE_STATE)
        return
    _check_json(c, value, at)


def check_model(c: Checker, value: Any, at: Path, root: str) -> None:
    check_string(c, value, at, STUDIO_MODEL_NAME, root, non_empty=True)


def check_interrupt(c: Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, dict):
        c.error(
            at,
            f"{named(at, root)} must be an object {{reason, value}}, got {type_name(value)}",
            RULE_INTERRUPT,
        )
        return
    for key in _string_keys(c, value, at, root):
        if key not in INTERRUPT_KEYS:
            c.error(
                (*at, key),
                f"{named(at, root)} has unknown key {_show(key)}{_suggest(key, INTERRUPT_KEYS)}; "
                "an interrupt holds only reason and value",
                STUDIO_RESULT_UNKNOWN_KEY,
            )
    if require(c, value, "reason", at, "a string saying why the turn pauses", RULE_INTERRUPT, root):
        reason = value["reason"]
        check_string(c, reason, (*at, "reason"), RULE_INTERRUPT, root)
        if reason == "":
            c.warn(
                (*at, "reason"),
                f"{named((*at, 'reason'), root)} is empty; the user is not told why the turn "
                "paused",
                STUDIO_INTERRUPT_SHAPE,
            )
    if "value" in value:
        _check_json(c, value["value"], (*at, "value"))


def check_retry(c: Checker, value: Any, at: Path, root: str) -> None:
    if not isinstance(value, dict):
        c.error(
            at,
            f"{named(at, root)} must be an object {{feedback, maxRetries?}}, "
            f"got {type_name(value)}",
            RULE_RETRY,
        )
        return
    for key in _string_keys(c, value, at, root):
        if key not in RETRY_KEYS:
            c.error(
                (*at, key),
                f"{named(at, root)} has unknown key {_show(key)}{_suggest(key, RETRY_KEYS)}; "
                "a retry holds only feedback and maxRetries",
                STUDIO_RESULT_UNKNOWN_KEY,
            )
    if require(c, value, "feedback", at, "a string for the model", RULE_RETRY, root):
        feedback = value["feedback"]
        check_string(c, feedback, (*at, "feedback"), RULE_RETRY, root)
        if feedback == "":
            c.warn(
                (*at, "feedback"),
                f"{named((*at, 'feedback'), root)} is empty; the retried call learns nothing",
                STUDIO_RETRY_SHAPE,
            )
    limit = value.get("maxRetries")
    if limit is not None and not (is_whole_number(limit) and 1 <= limit <= MAX_SAFE_INTEGER):
        c.error(
            (*at, "maxRetries"),
            f"{named((*at, 'maxRetries'), root)} must be a positive whole number, "
            f"got {_show(limit)}",
            STUDIO_RETRY_SHAPE,
        )


def context_keys(
    c: Checker, value: dict[Any, Any], at: Path, known: tuple[str, ...], root: str
) -> None:
    for key in _string_keys(c, value, at, root):
        if key not in known:
            c.warn(
                (*at, key),
                f"{named(at, root)} has key {_show(key)}{_suggest(key, known)} that the contract "
                "does not define; it is passed on unchanged",
                STUDIO_CONTEXT_EXTRA_KEY,
            )
            _check_json(c, value[key], (*at, key))


def result_keys(
    c: Checker, value: dict[Any, Any], known: tuple[str, ...], rule_text: str, root: str
) -> None:
    for key in _string_keys(c, value, (), root):
        if key not in known:
            c.error(
                (key,),
                f"{root} has unknown key {_show(key)}{_suggest(key, known)}; {rule_text}",
                STUDIO_RESULT_UNKNOWN_KEY,
            )
