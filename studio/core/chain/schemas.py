"""JSON Schemas of the model hook chains: the ``chain`` section of the studio settings, a user's
hook in a chain, and a chain sample with its context and messages."""

from __future__ import annotations

import copy
from typing import Any

from studio.core.chain.builtins import BUILTIN_HOOKS, DEFAULT_POST_HOOKS
from studio.core.chain.config import (
    CONFIG_KEYS,
    DEFAULT_HOOK_TIMEOUT_MS,
    ENTRY_KEYS,
    MAX_HOOK_TIMEOUT_MS,
)
from studio.core.chain.sample import (
    CHAIN_CONTRACT,
    SAMPLE_KEYS,
)
from studio.core.chain.shape_keys import (
    PRE_CONTEXT_KEYS,
    PROFILE_COST_KEYS,
    PROFILE_FLAG_KEYS,
    PROFILE_TOKEN_KEYS,
)
from studio.core.chain.shape_keys import ROLES as CHAIN_ROLES
from studio.core.expectations.schema import expect_schema
from studio.core.js_text import _IDENTIFIER as JS_IDENTIFIER
from studio.core.json.schema_parts import NON_EMPTY, closed, standalone
from studio.core.json.values import MAX_SAFE_INTEGER

# The end of the text, in ECMA-262 and Python alike (``$`` also matches before a final newline in
# Python, which is what the python-jsonschema library uses).
_END = r"(?![\s\S])"


def _source_path_problems() -> list[dict[str, Any]]:
    """Sources whose path (the text before a final ``:function``) is refused by
    ``lexical_path_problem`` for a reason a pattern can say: absolute, a NUL, or a first segment
    (after ``.`` and empty ones) that is ``..``. A ``..`` that leaves the workspace later in the
    path (``a/../../x``) needs a count no pattern keeps, and a drive letter is matched in ASCII
    only; the validator refuses those too."""
    function = f"(?::{JS_IDENTIFIER.pattern}{_END})"
    return [
        {"description": "an absolute path", "pattern": r"^[/\\]"},
        {
            "description": "a drive letter",
            "pattern": f"^[A-Za-z]:(?!{JS_IDENTIFIER.pattern}{_END})",
        },
        {"description": "a NUL character", "pattern": r"\x00"},
        {
            "description": "a path that starts by leaving the workspace through '..'",
            "pattern": rf"^(?:\.?[/\\])*\.\.(?:[/\\]|{_END}|{function})",
        },
    ]


def chain_hook_schema() -> dict[str, Any]:
    """A user's hook in a chain: ``{source, timeout_ms}``."""
    return closed(
        ENTRY_KEYS,
        {
            "source": {
                "description": (
                    "path[:function] in the workspace; without a function, main in a Python "
                    "file and the default export in a TypeScript or JavaScript one"
                ),
                "type": "string",
                "minLength": 1,
                "not": {"anyOf": _source_path_problems()},
            },
            "timeout_ms": {
                "description": "how long this hook may run",
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_HOOK_TIMEOUT_MS,
                "default": DEFAULT_HOOK_TIMEOUT_MS,
            },
        },
        required=["source"],
    )


def chain_config_schema() -> dict[str, Any]:
    """The ``chain`` section of hookstudio.json (what ``parse_chain_config`` reads)."""

    def chain(kind: str) -> dict[str, Any]:
        names = [name for name, (hook_kind, _) in BUILTIN_HOOKS.items() if hook_kind == kind]
        return {
            "description": f"the {kind}-model hooks in the order they run",
            "type": "array",
            "default": [],
            "items": {
                "anyOf": [
                    {"description": f"a built-in {kind}-model hook", "enum": names},
                    {"$ref": "#/$defs/chain_hook"},
                ]
            },
        }

    return closed(
        CONFIG_KEYS,
        {
            "pre": chain("pre"),
            "post": chain("post"),
            "default_post_validators": {
                "description": f"run {' and then '.join(DEFAULT_POST_HOOKS)} after the post "
                "hooks (a default validator listed in post runs at that place only)",
                "type": "boolean",
                "default": True,
            },
        },
        description="The pre/post model hook chains a chain sample runs.",
    )


def chain_message_defs() -> dict[str, dict[str, Any]]:
    """A message of the model hook contract (studio rule message-shape); other keys are kept."""
    nullable_name = {"anyOf": [{"type": "null"}, NON_EMPTY]}
    part = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": NON_EMPTY, "text": {"type": ["string", "null"]}},
        "if": {"required": ["type"], "properties": {"type": {"const": "text"}}},
        "then": {"required": ["text"], "properties": {"text": {"type": "string"}}},
    }
    tool_call = {
        "type": "object",
        "required": ["name"],
        "properties": {"name": NON_EMPTY, "id": nullable_name},
    }
    with_tool_calls = {
        "required": ["role", "toolCalls"],
        "properties": {
            "role": {"const": "assistant"},
            "toolCalls": {"type": "array", "minItems": 1},
        },
    }
    message = {
        "type": "object",
        "required": ["role"],
        "properties": {
            "role": {"enum": list(CHAIN_ROLES)},
            "content": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"$ref": "#/$defs/chain_content_part"}},
                    {"type": "null"},
                ]
            },
            "toolCalls": {
                "anyOf": [
                    {"type": "null"},
                    {"type": "array", "items": {"$ref": "#/$defs/chain_tool_call"}},
                ]
            },
            "toolCallId": nullable_name,
        },
        "if": {"not": with_tool_calls},
        "then": {
            "description": "content may be null or absent only on an assistant message that "
            "carries tool calls",
            "required": ["content"],
            "properties": {"content": {"not": {"type": "null"}}},
        },
    }
    return {
        "chain_message": message,
        "chain_content_part": part,
        "chain_tool_call": tool_call,
    }


def chain_context_schema() -> dict[str, Any]:
    """The pre-model hook context; other keys are passed on to the hooks unchanged."""
    token_limit = {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER}
    profile_fields = {
        **dict.fromkeys(PROFILE_TOKEN_KEYS, token_limit),
        **{key: {"type": "number", "minimum": 0} for key in PROFILE_COST_KEYS},
        **{key: {"type": "boolean"} for key in PROFILE_FLAG_KEYS},
    }
    fields: dict[str, dict[str, Any]] = {
        "messages": {"type": "array", "items": {"$ref": "#/$defs/chain_message"}},
        "model": NON_EMPTY,
        "modelProfile": {
            "anyOf": [
                {
                    "type": "object",
                    "required": list(profile_fields),
                    "properties": profile_fields,
                },
                {"type": "null"},
            ]
        },
        "tools": {
            "type": "array",
            "items": {"type": "object", "required": ["name"], "properties": {"name": NON_EMPTY}},
        },
        "systemPrompt": {"type": "string"},
        "state": {"type": "object"},
    }
    if set(fields) != set(PRE_CONTEXT_KEYS):
        raise ValueError(f"the context keys {sorted(fields)} are not {PRE_CONTEXT_KEYS}")
    return {
        "type": "object",
        "required": list(PRE_CONTEXT_KEYS),
        "properties": {key: fields[key] for key in PRE_CONTEXT_KEYS},
    }


def chain_sample_schema() -> dict[str, Any]:
    fields: dict[str, dict[str, Any]] = {
        "contract": {"const": CHAIN_CONTRACT},
        "context": {"$ref": "#/$defs/chain_context"},
        "responses": {
            "description": "the scripted model responses, one per model call, in order",
            "type": "array",
            "items": {"$ref": "#/$defs/chain_message"},
        },
        "name": {"type": ["string", "null"]},
        "description": {"type": ["string", "null"]},
        "expect": expect_schema(),
    }
    if set(fields) != set(SAMPLE_KEYS):
        raise ValueError(f"the chain sample keys {sorted(fields)} are not {SAMPLE_KEYS}")
    return {
        "title": "chain sample (samples/*.json)",
        "description": "Other keys are ignored (a warning).",
        "type": "object",
        "required": ["contract", "context", "responses"],
        "properties": {key: fields[key] for key in SAMPLE_KEYS},
    }


def schemas() -> dict[str, dict[str, Any]]:
    """The chain schemas by name, each a standalone document (a fresh copy, free to change)."""
    documents = {
        "chain_sample": standalone(
            chain_sample_schema(),
            "chain_sample",
            {"chain_context": chain_context_schema(), **chain_message_defs()},
        ),
    }
    # Small sub-schemas (a non-empty name) recur between places.
    return copy.deepcopy(documents)
