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

Where the runtime meets an object's keys one by one (the request's own keys, ``options``), they are
taken in JavaScript's order, so "the first unsupported key" is the one it names.

Rules 1, 2, 6 and 7 are checked here; the messages, their blocks and the tool pairing (rules 3
to 5) in ``request_messages``; ``request_check`` holds the rule ids, the words and the walk.
"""

from __future__ import annotations

from typing import Any

from studio.core.findings import Finding
from studio.core.identity_cache import IdentityCache
from studio.core.json.js_order import js_key_order
from studio.core.json.values import is_whole_number, key_problem
from studio.core.pre_llm.request_check import (
    MISSING,
    RULE_JSON,
    RULE_MESSAGES,
    RULE_NOT_ENABLED,
    RULE_OBJECT,
    RULE_OPTIONS,
    RULE_SYSTEM,
    RULE_TOOLS,
    Check,
    Path,
    finite,
    got,
    loc,
    shape,
)
from studio.core.pre_llm.request_messages import check_messages

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

_REQUEST_KEY_SET = frozenset(REQUEST_KEYS)
_TOOL_KEYS = frozenset({"name", "description", "input_schema"})


_messages_checked: IdentityCache[tuple[list[Finding], list[Finding]]] = IdentityCache(4)


def validate_request(value: object, *, shares_with: object = None) -> list[Finding]:
    """Every finding of spec/adf.md §3 rules 1–8 for a hook's returned request, in the order
    that makes the first error the one the runtime fails the call on. Never raises.

    ``shares_with``: a request read from JSON text (so no container in it holds another around
    it) whose messages list ``value`` may hold as it is, as a hook that changed only the system
    prompt sends it back: the findings of those very messages are worked out once."""
    if value is None:
        return [Finding((), "the hook returned no JSON request", RULE_OBJECT)]
    check = Check()
    try:
        shared = shares_with.get("messages") if type(shares_with) is dict else None
        _validate(check, value, shared)
    except Exception as exc:  # a value whose own methods misbehave: fail closed, never raise
        check.findings.append(
            Finding(
                (),
                f"the returned value could not be checked as JSON ({type(exc).__name__})",
                RULE_JSON,
            )
        )
    return check.findings


def _validate(check: Check, root: object, shared_messages: object = None) -> None:
    add = check.add
    if type(root) is not dict:
        add(
            Finding(
                (),
                f"the hook must return the request as a JSON object, got {got(root)}",
                RULE_OBJECT,
            )
        )
        check.json(add, (), root, (), keep_self=False)
        return
    req: dict[Any, Any] = root

    # Rule 1: only the four keys, met in JavaScript's key order (index-like keys first).
    for key in js_key_order(req):
        sub = req[key]
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
        add(Finding(path, f"{loc(path)} is not allowed: {hint}", RULE_OBJECT))
        check.json(check.deferred.append, path, sub, (req,))

    # Rule 2: system.
    system = req.get("system", MISSING)
    if type(system) is not str:
        shape(check, ("system",), system, "must be a string (it may be empty)", RULE_SYSTEM, req)

    # Rules 3, 4 and 5: messages, their blocks, the tool pairing.
    messages = req.get("messages", MISSING)
    if type(messages) is list and messages and messages is shared_messages:
        found, pairing = _messages_checked.get(messages, lambda: _messages_alone(req, messages))
        check.findings.extend(found)
        check.pairing.extend(pairing)
    elif type(messages) is list and messages:
        check_messages(check, req, messages)
    else:
        shape(check, ("messages",), messages, "must be a non-empty array", RULE_MESSAGES, req)
    check.findings.extend(check.pairing)

    # Rule 6: tools.
    tools = req.get("tools", MISSING)
    if type(tools) is list:
        _check_tools(check, req, tools)
    else:
        shape(check, ("tools",), tools, "must be an array (it may be empty)", RULE_TOOLS, req)

    # Rule 7: options.
    options = req.get("options", MISSING)
    if type(options) is dict:
        _check_options(check, req, options)
    else:
        shape(
            check, ("options",), options, "must be an object (it may be empty)", RULE_OPTIONS, req
        )

    # Rule 8: what only the final whole-value check reaches.
    check.findings.extend(check.deferred)


def _messages_alone(
    req: dict[Any, Any], messages: list[Any]
) -> tuple[list[Finding], list[Finding]]:
    """What rules 3 to 5 find in ``messages``: they look at nothing else of the request (its
    object only as a container that a cycle could reach, which messages read from JSON text
    cannot)."""
    check = Check()
    check_messages(check, req, messages)
    return check.findings, check.pairing


def _check_tools(check: Check, req: dict[Any, Any], tools: list[Any]) -> None:
    add = check.add
    names: dict[str, int] = {}
    for k, tool in enumerate(tools):
        base: Path = ("tools", k)
        if type(tool) is not dict:
            shape(
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
        name = tool.get("name", MISSING)
        description = tool.get("description", MISSING)
        schema = tool.get("input_schema", MISSING)
        name_ok = type(name) is str and name != ""
        if not name_ok:
            shape(
                check, (*base, "name"), name, "must be a non-empty string", RULE_TOOLS, *ancestors
            )
        if type(description) is not str:
            shape(
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
            shape(
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
                        f"{loc(path)}: tool name '{name}' is used twice "
                        f"(first at {loc(('tools', first))})",
                        RULE_TOOLS,
                    )
                )
        # Extra tool keys are allowed; only the runtime's final check looks inside them.
        present = (name is not MISSING) + (description is not MISSING) + (schema is not MISSING)
        if len(tool) > present:
            check.extras(check.deferred.append, base, tool, _TOOL_KEYS, ancestors)


def _check_options(check: Check, req: dict[Any, Any], options: dict[Any, Any]) -> None:
    add = check.add
    ancestors = (req, options)
    for key in js_key_order(options):
        value = options[key]
        if type(key) is not str:
            add(Finding(("options",), f"request.options {key_problem(key)}", RULE_OPTIONS))
            continue
        path: Path = ("options", key)
        if key == "maxTokens" or key == "thinkingBudget":
            ok = is_whole_number(value) and value > 0
            wanted = "must be a positive integer"
        elif key == "temperature":
            ok = finite(value) and 0 <= value <= 2
            wanted = "must be a finite number from 0 to 2"
        elif key == "topP":
            ok = finite(value) and 0 <= value <= 1
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
                    f"{loc(path)} is not a supported option (one of {', '.join(OPTION_KEYS)})",
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
            add(Finding(path, f"{loc(path)} {wanted}, got {got(value)}", RULE_OPTIONS))
            check.json(add, path, value, ancestors, keep_self=False)


# ---------------------------------------------------------------------------------------------
# Presented but not enabled


def _enabled_names(input_tools: object) -> set[str]:
    tools: object = input_tools
    if type(tools) is dict:
        inner = tools.get("request", tools)
        tools = inner.get("tools") if type(inner) is dict else None
    names: set[str] = set()
    if type(tools) is list or type(tools) is tuple:
        for tool in tools:
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
        tools = returned_request.get("tools")
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
                        f"{loc(path)}: tool '{name}' is presented but not enabled: it was not "
                        "among the input's tools, so the provider is shown it but the runtime "
                        "never runs it",
                        RULE_NOT_ENABLED,
                        "warning",
                    )
                )
    except Exception:
        return out
    return out
