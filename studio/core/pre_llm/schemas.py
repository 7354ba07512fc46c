"""JSON Schemas of the agent config's ``pre_llm_hook``, of the request a hook returns and of a
pre-LLM sample.

The validators of this package are the authority: they also apply the rules a schema cannot say
(tool pairing, a source path that leaves the workspace). The schemas serve editors and scripts.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

from studio.core.expectations.schema import expect_schema
from studio.core.js_text import JS_NON_WHITESPACE_CLASS
from studio.core.json.schema_parts import standalone
from studio.core.pre_llm.config import (
    HOOK_KEY,
    LOOP_NAME_PATTERN,
    MAX_LOOPS,
    MAX_TIMEOUT_MS,
    MIN_TIMEOUT_MS,
)


def loop_name_schema() -> dict[str, Any]:
    """An inner loop's name, which ``main`` is not."""
    return {"type": "string", "pattern": f"^{LOOP_NAME_PATTERN}$", "not": {"const": "main"}}


def pre_llm_hook_schema() -> dict[str, Any]:
    return {
        "title": "pre_llm_hook",
        "description": "Runs a workspace function right before each conversational provider call.",
        "type": "object",
        "required": ["source"],
        "properties": {
            "source": {
                "description": "path[:function] in the workspace; the function defaults to main",
                "type": "string",
                "pattern": JS_NON_WHITESPACE_CLASS,
            },
            # null is left out: the runtime reads it as "all", but ADF's own editor refuses it.
            "scope": {"enum": ["all", "main", "loops"], "default": "all"},
            "loops": {
                "description": 'named inner loops; only with scope "loops"',
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_LOOPS,
                "uniqueItems": True,
                "items": loop_name_schema(),
            },
            "include_main": {
                "description": 'also run on Main; only with scope "loops"',
                "type": "boolean",
            },
            "timeout_ms": {
                "description": "capped by limits.execution_timeout_ms",
                "type": "integer",
                "minimum": MIN_TIMEOUT_MS,
                "maximum": MAX_TIMEOUT_MS,
            },
        },
        "if": {"required": ["scope"], "properties": {"scope": {"const": "loops"}}},
        "then": {"required": ["loops"]},
        "else": {"not": {"anyOf": [{"required": ["loops"]}, {"required": ["include_main"]}]}},
    }


def agent_config_schema() -> dict[str, Any]:
    return {
        "title": "agent config",
        "description": "An agent config document; keys other than these are kept as they are.",
        "type": "object",
        "properties": {
            "pre_llm_hook": {
                "anyOf": [
                    {"$ref": "#/$defs/pre_llm_hook"},
                    {"description": "no hook", "enum": [None, False, 0, ""]},
                ]
            },
            "limits": {
                "type": "object",
                "properties": {
                    "execution_timeout_ms": {
                        "description": "required by a hook: the runtime applies no default",
                        "type": "integer",
                        "exclusiveMinimum": 0,
                        "maximum": sys.float_info.max,
                    }
                },
            },
        },
        # Without a limit every hooked call fails (spec/adf.md §7).
        "if": {"required": [HOOK_KEY], "properties": {HOOK_KEY: {"type": "object"}}},
        "then": {
            "required": ["limits"],
            "properties": {"limits": {"required": ["execution_timeout_ms"]}},
        },
    }


def _block(block_type: str, roles: list[str], required: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type", *required],
        "properties": {"type": {"const": block_type}, **required},
        "x-roles": roles,
    }


def pre_llm_request_schema() -> dict[str, Any]:
    """What a pre-LLM hook returns. Block roles and tool pairing are checked by the validator."""
    non_empty = {"type": "string", "minLength": 1}
    url = {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}}}
    return {
        "title": "pre-LLM hook result (the replacement request)",
        "type": "object",
        "required": ["system", "messages", "tools", "options"],
        "additionalProperties": False,
        "properties": {
            "system": {"type": "string"},
            "messages": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["role", "content"],
                    "properties": {
                        "role": {"enum": ["user", "assistant"]},
                        "content": {
                            "anyOf": [
                                {"type": "string"},
                                {"type": "array", "items": {"$ref": "#/$defs/block"}},
                            ]
                        },
                    },
                },
            },
            "tools": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "description", "input_schema"],
                    "properties": {
                        "name": non_empty,
                        "description": {"type": "string"},
                        "input_schema": {"type": "object"},
                    },
                },
            },
            "options": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "maxTokens": {"type": "integer", "exclusiveMinimum": 0},
                    "thinkingBudget": {"type": "integer", "exclusiveMinimum": 0},
                    "temperature": {"type": "number", "minimum": 0, "maximum": 2},
                    "topP": {"type": "number", "minimum": 0, "maximum": 1},
                    "dynamicInstructions": {"type": "string"},
                    "reasoning": {"type": "object"},
                    "providerParams": {"type": "object"},
                },
            },
        },
        "$defs": {
            "block": {
                "oneOf": [
                    _block("text", ["user", "assistant"], {"text": {"type": "string"}}),
                    _block("thinking", ["assistant"], {"thinking": {"type": "string"}}),
                    _block("tool_use", ["assistant"], {"id": non_empty, "name": non_empty}),
                    _block(
                        "tool_result",
                        ["user"],
                        {"tool_use_id": non_empty, "content": {"type": "string"}},
                    ),
                    _block("image_url", ["user"], {"image_url": url}),
                    _block(
                        "input_audio",
                        ["user"],
                        {
                            "input_audio": {
                                "type": "object",
                                "required": ["data", "format"],
                                "properties": {
                                    "data": {"type": "string"},
                                    "format": {"type": "string"},
                                },
                            }
                        },
                    ),
                    _block("video_url", ["user"], {"video_url": url}),
                ]
            }
        },
    }


def pre_llm_sample_schema() -> dict[str, Any]:
    return {
        "title": "pre-LLM sample (samples/*.json)",
        "type": "object",
        "required": ["request"],
        "properties": {
            "description": {"type": "string"},
            "loop": {
                "description": '"main" or an inner loop name',
                "type": "string",
                "default": "main",
            },
            "request": {"$ref": "#/$defs/pre_llm_request"},
            "expect": expect_schema(),
            "adf": {
                "description": "what the hook's adf.<method>(...) calls get, studio only",
                "type": "object",
                "properties": {
                    "replies": {
                        "description": "by method: one reply answers every call, a list answers "
                        "calls in turn; a reply with args answers only calls with those arguments",
                        "type": "object",
                        "additionalProperties": {
                            "anyOf": [
                                {"$ref": "#/$defs/adf_reply"},
                                {"type": "array", "items": {"$ref": "#/$defs/adf_reply"}},
                            ]
                        },
                    }
                },
            },
        },
    }


def adf_reply_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "args": {"description": "answer only calls with exactly these arguments"},
            "result": {"description": "the value the call returns"},
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": {"type": "string", "minLength": 1},
                    "message": {"type": "string", "minLength": 1},
                },
            },
        },
        "oneOf": [{"required": ["result"]}, {"required": ["error"]}],
    }


def schemas() -> dict[str, dict[str, Any]]:
    """The pre-LLM schemas by name, each a standalone document (a fresh copy, free to change)."""
    request = pre_llm_request_schema()
    request_defs = request.pop("$defs")
    documents = {
        "pre_llm_hook": standalone(pre_llm_hook_schema(), "pre_llm_hook", {}),
        "agent_config": standalone(
            agent_config_schema(), "agent_config", {"pre_llm_hook": pre_llm_hook_schema()}
        ),
        "pre_llm_request": standalone(request, "pre_llm_request", request_defs),
        "pre_llm_sample": standalone(
            pre_llm_sample_schema(),
            "pre_llm_sample",
            {"pre_llm_request": request, "adf_reply": adf_reply_schema(), **request_defs},
        ),
    }
    # The request is a document and a definition of the sample; small sub-schemas recur.
    return copy.deepcopy(documents)
