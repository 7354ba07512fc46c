"""The request a pre-LLM hook returns: every rule of spec/adf.md §3, as findings.

The runtime fails a call on the first problem it meets. ``validate_request`` lists every problem,
ordered so that its first error is that one: rules 1 to 8 in the runtime's order, and within the
messages, their blocks and the tools, in document order. JSON safety (rule 8) is checked where the
runtime checks it: each block and each message as it is met, a ``tool_use`` input, a tool's
``input_schema``, ``options.reasoning`` and ``options.providerParams`` in place, and whatever is
left (a tool's extra keys, the value under an unsupported key) at the end.

Plain JSON here means exactly ``dict`` (string keys), ``list``, ``str``, ``int``, ``float``
(finite), ``bool`` and ``None``; subclasses, tuples, sets and bytes are not JSON. An ``int`` too
large for a double counts as infinite, as it would once the runtime has read it.

Both public functions take any Python value and never raise: walks are iterative, and a cycle is
told apart from a shared value by tracking the containers on the current path only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from studio.core.findings import Finding, PathPart, dotted
from studio.core.json.values import (
    CYCLE,
    FINITE_INT_BOUND,
    JsonProblem,
    int_is_finite,
    is_number,
    is_whole_number,
    json_problems,
    key_problem,
)

RULE_OBJECT = "adf.request.1"
RULE_SYSTEM = "adf.request.2"
RULE_MESSAGES = "adf.request.3"
RULE_BLOCKS = "adf.request.4"
RULE_PAIRING = "adf.request.5"
RULE_TOOLS = "adf.request.6"
RULE_OPTIONS = "adf.request.7"
RULE_JSON = "adf.request.8"
RULE_NOT_ENABLED = "adf.request.presented_not_enabled"

REQUEST_KEYS = ("system", "messages", "tools", "options")
OPTION_KEYS = (
    "maxTokens",
    "thinkingBudget",
    "temperature",
    "topP",
    "dynamicInstructions",
    "reasoning",
    "providerParams",
)
BLOCK_TYPES = (
    "text",
    "thinking",
    "tool_use",
    "tool_result",
    "image_url",
    "input_audio",
    "video_url",
)

Path = tuple[PathPart, ...]

_MISSING: Any = object()
_REQUEST_KEY_SET = frozenset(REQUEST_KEYS)
_BLOCK_KEYS = {
    "text": frozenset({"type", "text"}),
    "thinking": frozenset({"type", "thinking"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error"}),
    "image_url": frozenset({"type", "image_url"}),
    "input_audio": frozenset({"type", "input_audio"}),
    "video_url": frozenset({"type", "video_url"}),
}
_TYPE_ONLY = frozenset({"type"})
_MESSAGE_KEYS = frozenset({"role", "content"})
_TOOL_KEYS = frozenset({"name", "description", "input_schema"})
_LONG_PATH = 48
_FAST_DEPTH = 48
_FAST_BUDGET = 2048


# ---------------------------------------------------------------------------------------------
# Words


def _loc(path: Path) -> str:
    """``request.messages[2].content[0]``; a very deep path keeps its head and its tail."""
    if len(path) <= _LONG_PATH:
        return dotted(path, "request")
    head = dotted(path[:16], "request")
    tail = dotted(path[-16:], "x")[1:]
    return f"{head}…({len(path) - 32} more levels)…{tail}"


def _finite(value: object) -> bool:
    """A finite JSON number (never a bool); an int too large for a double is not finite."""
    if not is_number(value):
        return False
    try:
        return math.isfinite(value)  # type: ignore[arg-type]
    except OverflowError:
        return False


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _got(value: object) -> str:
    """What a value is, for a message: ``null``, ``2.0001``, ``"system"``, ``an array``."""
    if value is _MISSING:
        return "nothing (the key is missing)"
    if value is None:
        return "null"
    t = type(value)
    if t is bool:
        return "true" if value else "false"
    if t is str:
        text: str = value  # type: ignore[assignment]
        return json.dumps(text) if len(text) <= 40 else "a string"
    if t is int:
        number: int = value  # type: ignore[assignment]
        if not int_is_finite(number):
            return "an integer too large for JSON (it reads as Infinity)"
        return str(number) if -(10**15) < number < 10**15 else "a very large integer"
    if t is float:
        real: float = value  # type: ignore[assignment]
        if math.isnan(real):
            return "NaN"
        if math.isinf(real):
            return "Infinity" if real > 0 else "-Infinity"
        return repr(real)
    if t is list:
        return "an array" if value else "an empty array"
    if t is dict:
        return "an object"
    return f"a Python {t.__name__}, which is not JSON"


# ---------------------------------------------------------------------------------------------
# Rule 8: the JSON-safety walk


def _scan(value: object, ancestors: tuple[object, ...], clean: dict[int, int]) -> list[JsonProblem]:
    """Every place under ``value`` (itself included) that is not plain JSON.

    ``ancestors`` are the containers that hold ``value`` on the way down from the request:
    reaching one of them again is a cycle. ``clean`` holds containers already walked without a
    problem, so a value shared in many places is walked once.
    """
    t = type(value)
    # Most values are small and plain: a bounded recursive pass proves that cheaply. It cannot be
    # fooled by a cycle (a cycle never ends, so it runs out of depth), and any doubt sends the
    # value to the exact walk, which also finds what is wrong and where.
    if (t is dict or t is list) and _plain(value, _FAST_DEPTH, _FAST_BUDGET) >= 0:
        return []
    return list(json_problems(value, ancestors=ancestors, clean=clean))


def _plain(value: Any, depth: int, budget: int) -> int:
    """The budget left when ``value`` (a dict or list) is plain JSON no deeper than ``depth``
    levels and holds fewer than ``budget`` containers; -1 otherwise (not plain, or not sure)."""
    if type(value) is dict:
        for k, v in value.items():
            if type(k) is not str:
                return -1
            t = type(v)
            if t is str or t is bool or v is None:
                continue
            if t is int:
                if -FINITE_INT_BOUND < v < FINITE_INT_BOUND:
                    continue
                return -1
            if t is float:
                if v - v == 0.0:  # false for NaN and for the infinities
                    continue
                return -1
            if (t is dict or t is list) and depth:
                budget = _plain(v, depth - 1, budget - 1)
                if budget >= 0:
                    continue
            return -1
        return budget
    for v in value:
        t = type(v)
        if t is str or t is bool or v is None:
            continue
        if t is int:
            if -FINITE_INT_BOUND < v < FINITE_INT_BOUND:
                continue
            return -1
        if t is float:
            if v - v == 0.0:
                continue
            return -1
        if (t is dict or t is list) and depth:
            budget = _plain(v, depth - 1, budget - 1)
            if budget >= 0:
                continue
        return -1
    return budget


# ---------------------------------------------------------------------------------------------
# The validator

_Add = Callable[[Finding], None]


class _Check:
    """One validation: the findings so far and the walk's memory of clean containers."""

    __slots__ = ("add", "clean", "deferred", "findings", "pairing")

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.pairing: list[Finding] = []
        self.deferred: list[Finding] = []
        self.add: _Add = self.findings.append
        self.clean: dict[int, int] = {}

    def problems(
        self,
        add: _Add,
        base: Path,
        problems: list[JsonProblem],
        keep_self: bool = True,
    ) -> None:
        """Report a walk's problems; ``keep_self=False`` drops the walked value's own type
        problem, already told by a shape finding at the same place."""
        for rel, text in problems:
            if rel or keep_self or text == CYCLE:
                path = base + rel
                add(Finding(path, f"{_loc(path)} {text}", RULE_JSON))

    def json(
        self,
        add: _Add,
        base: Path,
        value: object,
        ancestors: tuple[object, ...],
        keep_self: bool = True,
    ) -> None:
        self.problems(add, base, _scan(value, ancestors, self.clean), keep_self)

    def extras(
        self,
        add: _Add,
        base: Path,
        obj: dict[Any, Any],
        known: frozenset[str],
        ancestors: tuple[object, ...],
    ) -> None:
        """Rule 8 for the keys of ``obj`` that the shape rules do not look at."""
        for k, v in obj.items():
            if type(k) is not str:
                add(Finding(base, f"{_loc(base)} {key_problem(k)}", RULE_JSON))
            elif k not in known:
                t = type(v)
                if t is not str:
                    self.json(add, (*base, k), v, ancestors)


def validate_request(value: object) -> list[Finding]:
    """Every finding of spec/adf.md §3 rules 1–8 for a hook's returned request, in the order
    that makes the first error the one the runtime fails the call on. Never raises."""
    if value is None:
        return [Finding((), "the hook returned no JSON request", RULE_OBJECT)]
    check = _Check()
    try:
        _validate(check, value)
    except Exception as exc:  # a value whose own methods misbehave: fail closed, never raise
        check.findings.append(
            Finding(
                (),
                f"the returned value could not be checked as JSON ({type(exc).__name__})",
                RULE_JSON,
            )
        )
    return check.findings


def _validate(check: _Check, root: object) -> None:
    add = check.add
    if type(root) is not dict:
        add(
            Finding(
                (),
                f"the hook must return the request as a JSON object, got {_got(root)}",
                RULE_OBJECT,
            )
        )
        check.json(add, (), root, (), keep_self=False)
        return
    req: dict[Any, Any] = root  # type: ignore[assignment]

    # Rule 1: only the four keys.
    for key, sub in req.items():
        if type(key) is not str:
            add(Finding((), f"request {key_problem(key)}", RULE_OBJECT))
            continue
        if key in _REQUEST_KEY_SET:
            continue
        path: Path = (key,)
        if key in ("request", "loop"):
            hint = (
                "return the request itself (system, messages, tools, options), "
                "not the {request, loop} input"
            )
        else:
            hint = "a request has only system, messages, tools and options"
        add(Finding(path, f"{_loc(path)} is not allowed: {hint}", RULE_OBJECT))
        check.json(check.deferred.append, path, sub, (req,))

    # Rule 2: system.
    system = req.get("system", _MISSING)
    if type(system) is not str:
        _shape(check, ("system",), system, "must be a string (it may be empty)", RULE_SYSTEM, req)

    # Rules 3, 4 and 5: messages, their blocks, the tool pairing.
    messages = req.get("messages", _MISSING)
    if type(messages) is list and messages:
        _check_messages(check, req, messages)
    else:
        _shape(check, ("messages",), messages, "must be a non-empty array", RULE_MESSAGES, req)
    check.findings.extend(check.pairing)

    # Rule 6: tools.
    tools = req.get("tools", _MISSING)
    if type(tools) is list:
        _check_tools(check, req, tools)
    else:
        _shape(check, ("tools",), tools, "must be an array (it may be empty)", RULE_TOOLS, req)

    # Rule 7: options.
    options = req.get("options", _MISSING)
    if type(options) is dict:
        _check_options(check, req, options)
    else:
        _shape(
            check, ("options",), options, "must be an object (it may be empty)", RULE_OPTIONS, req
        )

    # Rule 8: what only the final whole-value check reaches.
    check.findings.extend(check.deferred)


def _shape(
    check: _Check,
    path: Path,
    value: object,
    wanted: str,
    rule: str,
    *ancestors: object,
) -> None:
    """A value of the wrong shape: say so, then report what inside it is not JSON either."""
    add = check.add
    if value is _MISSING:
        add(Finding(path, f"{_loc(path)} is missing; it {wanted}", rule))
        return
    add(Finding(path, f"{_loc(path)} {wanted}, got {_got(value)}", rule))
    check.json(add, path, value, ancestors, keep_self=False)


def _check_messages(check: _Check, req: dict[Any, Any], messages: list[Any]) -> None:
    add = check.add
    clean = check.clean
    block_keys = _BLOCK_KEYS
    outstanding: dict[str, tuple[int, int]] = {}
    answered: dict[str, tuple[int, int]] = {}
    for i, msg in enumerate(messages):
        if type(msg) is not dict:
            _shape(
                check,
                ("messages", i),
                msg,
                "must be an object with role and content",
                RULE_MESSAGES,
                req,
                messages,
            )
            continue
        role = msg.get("role", _MISSING)
        content = msg.get("content", _MISSING)
        known = (role is not _MISSING) + (content is not _MISSING)
        if type(role) is not str or (role != "user" and role != "assistant"):
            _shape(
                check,
                ("messages", i, "role"),
                role,
                'must be "user" or "assistant"',
                RULE_MESSAGES,
                req,
                messages,
                msg,
            )
            role = None
        tc = type(content)
        if tc is list:
            for j, block in enumerate(content):
                if type(block) is not dict:
                    _shape(
                        check,
                        ("messages", i, "content", j),
                        block,
                        "must be a content block (an object with a string type)",
                        RULE_BLOCKS,
                        req,
                        messages,
                        msg,
                        content,
                    )
                    continue
                ancestors = (req, messages, msg, content, block)
                btype = block.get("type", _MISSING)
                if type(btype) is not str:
                    path = ("messages", i, "content", j, "type")
                    _shape(
                        check,
                        path,
                        btype,
                        "must be a string naming the block type",
                        RULE_BLOCKS,
                        *ancestors,
                    )
                    check.extras(add, path[:-1], block, _TYPE_ONLY, ancestors)
                    continue
                n = 1
                if btype == "text":
                    text = block.get("text", _MISSING)
                    if type(text) is str:
                        n = 2
                    else:
                        n += _field(check, ancestors, i, j, "text", text, "text must be a string")
                elif btype == "tool_use":
                    if role == "user":
                        _misplaced(add, i, j, "a tool_use must be in an assistant message", role)
                    use_id = block.get("id", _MISSING)
                    name = block.get("name", _MISSING)
                    if type(use_id) is str and use_id:
                        n += 1
                        if use_id in outstanding or use_id in answered:
                            first = outstanding.get(use_id) or answered[use_id]
                            path = ("messages", i, "content", j)
                            where = _loc(("messages", first[0], "content", first[1]))
                            check.pairing.append(
                                Finding(
                                    path,
                                    f"{_loc(path)}: tool_use id '{use_id}' is used twice "
                                    f"(first at {where})",
                                    RULE_PAIRING,
                                )
                            )
                            if use_id in answered:
                                outstanding[use_id] = (i, j)
                                del answered[use_id]
                        else:
                            outstanding[use_id] = (i, j)
                    else:
                        n += _field(
                            check,
                            ancestors,
                            i,
                            j,
                            "id",
                            use_id,
                            "tool_use id must be a non-empty string",
                        )
                    if type(name) is str and name:
                        n += 1
                    else:
                        n += _field(
                            check,
                            ancestors,
                            i,
                            j,
                            "name",
                            name,
                            "tool_use name must be a non-empty string",
                        )
                    tool_input = block.get("input", _MISSING)
                    if tool_input is not _MISSING:
                        n += 1
                        if type(tool_input) is not str:
                            problems = _scan(tool_input, ancestors, clean)
                            if problems:
                                check.problems(
                                    add, ("messages", i, "content", j, "input"), problems
                                )
                elif btype == "tool_result":
                    if role == "assistant":
                        _misplaced(add, i, j, "a tool_result must be in a user message", role)
                    use_id = block.get("tool_use_id", _MISSING)
                    result = block.get("content", _MISSING)
                    is_error = block.get("is_error", _MISSING)
                    if type(use_id) is str and use_id:
                        n += 1
                        where_from = outstanding.pop(use_id, None)
                        if where_from is None:
                            path = ("messages", i, "content", j)
                            check.pairing.append(
                                Finding(
                                    path,
                                    f"{_loc(path)}: tool_result '{use_id}' does not answer an "
                                    "earlier unmatched tool_use",
                                    RULE_PAIRING,
                                )
                            )
                        else:
                            answered[use_id] = where_from
                    else:
                        n += _field(
                            check,
                            ancestors,
                            i,
                            j,
                            "tool_use_id",
                            use_id,
                            "tool_result tool_use_id must be a non-empty string",
                        )
                    if type(result) is str:
                        n += 1
                    else:
                        n += _field(
                            check,
                            ancestors,
                            i,
                            j,
                            "content",
                            result,
                            "tool_result content must be a string",
                        )
                    if is_error is not _MISSING:
                        if type(is_error) is bool:
                            n += 1
                        else:
                            n += _field(
                                check,
                                ancestors,
                                i,
                                j,
                                "is_error",
                                is_error,
                                "tool_result is_error must be a boolean when present",
                            )
                elif btype == "thinking":
                    if role == "user":
                        _misplaced(
                            add, i, j, "a thinking block must be in an assistant message", role
                        )
                    thought = block.get("thinking", _MISSING)
                    if type(thought) is str:
                        n = 2
                    else:
                        n += _field(
                            check, ancestors, i, j, "thinking", thought, "thinking must be a string"
                        )
                elif btype in block_keys:
                    # image_url, input_audio, video_url: user blocks holding a small object.
                    if role == "assistant":
                        _misplaced(
                            add,
                            i,
                            j,
                            f"{_article(btype)} {btype} block must be in a user message",
                            role,
                        )
                    n += _media(check, ancestors, block, i, j, btype)
                else:
                    path = ("messages", i, "content", j, "type")
                    add(
                        Finding(
                            path,
                            f"{_loc(path)} {_got(btype)} is not a supported block type "
                            f"(one of {', '.join(BLOCK_TYPES)})",
                            RULE_BLOCKS,
                        )
                    )
                    check.extras(add, path[:-1], block, _TYPE_ONLY, ancestors)
                    continue
                if len(block) > n:
                    check.extras(
                        add,
                        ("messages", i, "content", j),
                        block,
                        block_keys[btype],
                        ancestors,
                    )
        elif tc is not str:
            _shape(
                check,
                ("messages", i, "content"),
                content,
                "must be a string or an array of content blocks",
                RULE_MESSAGES,
                req,
                messages,
                msg,
            )
        if len(msg) > known:
            check.extras(add, ("messages", i), msg, _MESSAGE_KEYS, (req, messages, msg))

    for use_id, (i, j) in outstanding.items():
        path = ("messages", i, "content", j)
        check.pairing.append(
            Finding(
                path,
                f"{_loc(path)}: tool_use '{use_id}' is never answered by a later tool_result",
                RULE_PAIRING,
            )
        )


def _field(
    check: _Check,
    ancestors: tuple[object, ...],
    i: int,
    j: int,
    key: str,
    value: object,
    wanted: str,
) -> int:
    """A block field of the wrong shape; returns 1 when the key is present (for the key count)."""
    path = ("messages", i, "content", j, key)
    if value is _MISSING:
        check.add(Finding(path, f"{_loc(path)} is missing: {wanted}", RULE_BLOCKS))
        return 0
    check.add(Finding(path, f"{_loc(path)}: {wanted}, got {_got(value)}", RULE_BLOCKS))
    check.json(check.add, path, value, ancestors, keep_self=False)
    return 1


def _misplaced(add: _Add, i: int, j: int, rule_text: str, role: str) -> None:
    path = ("messages", i, "content", j)
    add(
        Finding(
            path,
            f'{_loc(path)}: {rule_text} (this message\'s role is "{role}")',
            RULE_BLOCKS,
        )
    )


_MEDIA_FIELDS = {
    "image_url": ("url",),
    "input_audio": ("data", "format"),
    "video_url": ("url",),
}


def _media(
    check: _Check,
    ancestors: tuple[object, ...],
    block: dict[Any, Any],
    i: int,
    j: int,
    btype: str,
) -> int:
    """``image_url.url``, ``input_audio.data``/``.format``, ``video_url.url``; returns 1 when
    the inner object's key is present."""
    fields = _MEDIA_FIELDS[btype]
    inner = block.get(btype, _MISSING)
    path: Path = ("messages", i, "content", j, btype)
    if type(inner) is not dict:
        wanted = " and ".join(f"a string {f}" for f in fields)
        _shape(check, path, inner, f"must be an object with {wanted}", RULE_BLOCKS, *ancestors)
        return 0 if inner is _MISSING else 1
    present = 0
    for f in fields:
        v = inner.get(f, _MISSING)
        if v is not _MISSING:
            present += 1
        if type(v) is not str:
            _shape(check, (*path, f), v, "must be a string", RULE_BLOCKS, *ancestors, inner)
    if len(inner) > present:
        check.extras(check.add, path, inner, frozenset(fields), (*ancestors, inner))
    return 1


def _check_tools(check: _Check, req: dict[Any, Any], tools: list[Any]) -> None:
    add = check.add
    names: dict[str, int] = {}
    for k, tool in enumerate(tools):
        base: Path = ("tools", k)
        if type(tool) is not dict:
            _shape(
                check,
                base,
                tool,
                "must be an object with name, description and input_schema",
                RULE_TOOLS,
                req,
                tools,
            )
            continue
        ancestors = (req, tools, tool)
        name = tool.get("name", _MISSING)
        description = tool.get("description", _MISSING)
        schema = tool.get("input_schema", _MISSING)
        name_ok = type(name) is str and name != ""
        if not name_ok:
            _shape(
                check, (*base, "name"), name, "must be a non-empty string", RULE_TOOLS, *ancestors
            )
        if type(description) is not str:
            _shape(
                check,
                (*base, "description"),
                description,
                "must be a string (it may be empty)",
                RULE_TOOLS,
                *ancestors,
            )
        if type(schema) is dict:
            check.json(add, (*base, "input_schema"), schema, ancestors)
        else:
            _shape(
                check,
                (*base, "input_schema"),
                schema,
                "must be a JSON object (a JSON Schema)",
                RULE_TOOLS,
                *ancestors,
            )
        if name_ok:
            first = names.get(name)
            if first is None:
                names[name] = k
            else:
                path = (*base, "name")
                add(
                    Finding(
                        path,
                        f"{_loc(path)}: tool name '{name}' is used twice "
                        f"(first at {_loc(('tools', first))})",
                        RULE_TOOLS,
                    )
                )
        # Extra tool keys are allowed; only the runtime's final check looks inside them.
        present = (name is not _MISSING) + (description is not _MISSING) + (schema is not _MISSING)
        if len(tool) > present:
            check.extras(check.deferred.append, base, tool, _TOOL_KEYS, ancestors)


def _check_options(check: _Check, req: dict[Any, Any], options: dict[Any, Any]) -> None:
    add = check.add
    ancestors = (req, options)
    for key, value in options.items():
        if type(key) is not str:
            add(Finding(("options",), f"request.options {key_problem(key)}", RULE_OPTIONS))
            continue
        path: Path = ("options", key)
        if key == "maxTokens" or key == "thinkingBudget":
            ok = is_whole_number(value) and value > 0  # type: ignore[operator]
            wanted = "must be a positive integer"
        elif key == "temperature":
            ok = _finite(value) and 0 <= value <= 2  # type: ignore[operator]
            wanted = "must be a finite number from 0 to 2"
        elif key == "topP":
            ok = _finite(value) and 0 <= value <= 1  # type: ignore[operator]
            wanted = "must be a finite number from 0 to 1"
        elif key == "dynamicInstructions":
            ok = type(value) is str
            wanted = "must be a string"
        elif key == "reasoning" or key == "providerParams":
            ok = type(value) is dict
            wanted = "must be a JSON object"
        else:
            add(
                Finding(
                    path,
                    f"{_loc(path)} is not a supported option (one of {', '.join(OPTION_KEYS)})",
                    RULE_OPTIONS,
                )
            )
            check.json(check.deferred.append, path, value, ancestors)
            continue
        if ok:
            # The value has the right shape; rule 8 still wants it plain (no int subclass, no
            # integer that would read as Infinity, nothing odd inside an object).
            check.json(add, path, value, ancestors)
        else:
            add(Finding(path, f"{_loc(path)} {wanted}, got {_got(value)}", RULE_OPTIONS))
            check.json(add, path, value, ancestors, keep_self=False)


# ---------------------------------------------------------------------------------------------
# Presented but not enabled


def _enabled_names(input_tools: object) -> set[str]:
    tools: object = input_tools
    if type(tools) is dict:
        inner = tools.get("request", tools)  # type: ignore[attr-defined]
        tools = inner.get("tools") if type(inner) is dict else None
    names: set[str] = set()
    if type(tools) is list or type(tools) is tuple:
        for tool in tools:  # type: ignore[attr-defined]
            if type(tool) is str:
                names.add(tool)
            elif type(tool) is dict:
                name = tool.get("name")
                if type(name) is str:
                    names.add(name)
    return names


def presented_not_enabled(input_tools: object, returned_request: object) -> list[Finding]:
    """Warnings for returned tools whose name was not among the input's tools.

    ``input_tools`` is the input request's ``tools`` (tool objects or names); the input request,
    or the whole ``{request, loop}`` input, is accepted too. A hook can only narrow what the
    provider is shown: a tool it adds is shown but never run. Never raises.
    """
    out: list[Finding] = []
    try:
        enabled = _enabled_names(input_tools)
        if type(returned_request) is not dict:
            return out
        tools = returned_request.get("tools")  # type: ignore[attr-defined]
        if type(tools) is not list:
            return out
        for k, tool in enumerate(tools):
            if type(tool) is not dict:
                continue
            name = tool.get("name")
            if type(name) is str and name and name not in enabled:
                path: Path = ("tools", k)
                out.append(
                    Finding(
                        path,
                        f"{_loc(path)}: tool '{name}' is presented but not enabled: it was not "
                        "among the input's tools, so the provider is shown it but the runtime "
                        "never runs it",
                        RULE_NOT_ENABLED,
                        "warning",
                    )
                )
    except Exception:
        return out
    return out
