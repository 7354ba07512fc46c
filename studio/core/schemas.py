"""JSON Schemas (draft 2020-12) of the agent config's ``pre_llm_hook`` and of the studio's files.

The validators in this package are the authority: they also apply the rules a schema cannot say
(tool pairing, a source path that leaves the workspace). The schemas serve editors and scripts.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from studio.core.chain.builtins import BUILTIN_HOOKS, DEFAULT_POST_HOOKS
from studio.core.chain.run import (
    CHAIN_CONTRACT,
    CONFIG_KEYS,
    DEFAULT_HOOK_TIMEOUT_MS,
    ENTRY_KEYS,
    MAX_HOOK_TIMEOUT_MS,
    SAMPLE_KEYS,
)
from studio.core.chain.shapes import (
    PRE_CONTEXT_KEYS,
    PROFILE_COST_KEYS,
    PROFILE_FLAG_KEYS,
    PROFILE_TOKEN_KEYS,
)
from studio.core.chain.shapes import ROLES as CHAIN_ROLES
from studio.core.js_text import _IDENTIFIER as JS_IDENTIFIER
from studio.core.js_text import JS_NON_WHITESPACE_CLASS
from studio.core.json.values import MAX_SAFE_INTEGER
from studio.core.pre_llm.config import (
    DEFAULT_EXECUTION_TIMEOUT_MS,
    LOOP_NAME_PATTERN,
    MAX_LOOPS,
    MAX_TIMEOUT_MS,
    MIN_TIMEOUT_MS,
)
from studio.core.step.baseline import (
    _BASELINE_KEYS,
    _BUDGET_KEYS,
    _CONTRIBUTOR_KEYS,
    CONTRIBUTOR_KINDS,
    MAX_CONTRIBUTOR_DEPTH,
)
from studio.core.step.check import _DOCUMENT_KEYS
from studio.core.step.decision_record import STEP_REASONS
from studio.core.step.sample import (
    _ASSISTANT_ONLY,
    _ATTEMPT_KEYS,
    _CALL_KEYS,
    _COVERAGE_KEYS,
    _MESSAGE_KEYS,
    _PART_FIELDS,
    _SAMPLE_KEYS,
    _SCOPE_KEYS,
    _STATS_KEYS,
    _STEP_KEYS,
    _TOKEN_KEYS,
    _USAGE_KEYS,
    ATTEMPT_REASONS,
    COVERAGES,
    IDENTITY_PATTERN,
    RESOURCE_FAILURES,
)
from studio.core.step.sample import CONTRACT as STEP_CONTRACT
from studio.core.step.sample import ROLES as STEP_ROLES
from studio.core.workspace.folder import STUDIO_FILE, StudioSettings

DIALECT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://hook-studio.invalid/schema/"


def _loop_name_schema() -> dict[str, Any]:
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
            "scope": {"enum": ["all", "main", "loops"], "default": "all"},
            "loops": {
                "description": 'named inner loops; only with scope "loops"',
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_LOOPS,
                "uniqueItems": True,
                "items": _loop_name_schema(),
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
                        "type": "integer",
                        "exclusiveMinimum": 0,
                        "default": DEFAULT_EXECUTION_TIMEOUT_MS,
                    }
                },
            },
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
        },
    }


# ---------------------------------------------------------------------------------------------
# The studio's own files: hookstudio.json, step and chain samples, the check-amendment document

# The end of the text, in ECMA-262 and Python alike (``$`` also matches before a final newline in
# Python, which is what the python-jsonschema library uses).
_END = r"(?![\s\S])"
_NON_EMPTY: dict[str, Any] = {"type": "string", "minLength": 1}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER}


def _closed(
    keys: Sequence[str],
    properties: dict[str, dict[str, Any]],
    required: Sequence[str] = (),
    **rest: Any,
) -> dict[str, Any]:
    """An object that holds only ``keys``, the parser's own list of them, in its order."""
    if set(keys) != set(properties) or not set(required) <= set(keys):
        raise ValueError(f"the schema's keys {sorted(properties)} are not the parser's {keys}")
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {key: properties[key] for key in keys},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    schema.update(rest)
    return schema


def _dotall(pattern: str) -> str:
    r"""A Python pattern compiled with ``re.S`` as a JSON Schema pattern: ``.`` outside a class
    becomes ``[\s\S]``, which matches any character in ECMA-262 and Python alike."""
    out: list[str] = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == ".":
            out.append(r"[\s\S]")
            continue
        out.append(char)
    return "".join(out)


def _drop_titles(schema: Any) -> Any:
    """A pydantic-generated schema without the titles it makes up from field names."""
    if isinstance(schema, list):
        return [_drop_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key in ("properties", "$defs"):
            out[key] = {name: _drop_titles(sub) for name, sub in value.items()}
        elif key == "default":
            out[key] = value
        else:
            out[key] = _drop_titles(value)
    return out


def _inline_refs(schema: Any, defs: dict[str, Any]) -> Any:
    if isinstance(schema, list):
        return [_inline_refs(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
    return {key: _inline_refs(value, defs) for key, value in schema.items()}


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
    return _closed(
        ENTRY_KEYS,
        {
            "source": {
                "description": "path[:function] in the workspace; the function defaults to main",
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

    return _closed(
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


_SETTINGS_DESCRIPTIONS = {
    "version": "the format of this file",
    "loops": "the agent's inner loop names, besides main, that the studio shows as targets",
    "env": "variables every hook gets, with these values",
    "pass_env": "names of the studio's own environment variables passed on to hooks as they are",
    "limits": "per worker process: address space, captured output per stream, result size",
    "step": "the step-preparation hook",
    "chain": "the model hook chains; absent or null is the default (no user hooks)",
}


def studio_settings_schema() -> dict[str, Any]:
    """``hookstudio.json``, derived from :class:`StudioSettings`; the loop names and the chain
    section, which the model leaves to other parsers, are filled in."""
    generated = StudioSettings.model_json_schema()
    defs = generated.pop("$defs", {})
    schema = _drop_titles(_inline_refs(generated, defs))
    properties = schema["properties"]
    for key, default in StudioSettings().model_dump(mode="json").items():
        properties[key].setdefault("default", default)
        properties[key]["description"] = _SETTINGS_DESCRIPTIONS[key]
    properties["loops"]["items"] = _loop_name_schema()
    (step,) = (option for option in properties["step"]["anyOf"] if option.get("type") == "object")
    step["properties"]["source"]["description"] = (
        "path[:function] of the step-preparation hook in the workspace; the function defaults "
        "to main"
    )
    properties["chain"] = {
        "description": _SETTINGS_DESCRIPTIONS["chain"],
        "anyOf": [{"$ref": "#/$defs/chain_config"}, {"type": "null"}],
        "default": None,
    }
    schema["title"] = f"studio settings ({STUDIO_FILE})"
    schema["description"] = "What the studio needs that the agent config does not say."
    return schema


def step_baseline_defs() -> dict[str, dict[str, Any]]:
    """The baseline a step-preparation hook amends, and its contributors."""
    names = {"type": "array", "items": _NON_EMPTY}
    limit = {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER}
    return {
        "step_baseline": _closed(
            _BASELINE_KEYS,
            {
                "contributors": {"type": "array", "items": {"$ref": "#/$defs/contributor"}},
                "tools": {
                    "description": "the tools the definition declares itself",
                    **names,
                    "uniqueItems": True,
                },
                "activeTools": {"anyOf": [names, {"type": "null"}]},
                "model": {"description": "any JSON value"},
                "inputBudget": {
                    "anyOf": [
                        _closed(
                            _BUDGET_KEYS,
                            {"optimizeAt": limit, "max": limit},
                            description="optimizeAt must not exceed max",
                        ),
                        {"type": "null"},
                    ]
                },
            },
            required=["contributors", "tools", "model"],
            description="A tool name has one owner in the whole graph: the baseline's tools or "
            "one contributor.",
        ),
        "contributor": {
            "anyOf": [
                {"description": "a contributor id, shorthand for {id}", **_NON_EMPTY},
                _closed(
                    _CONTRIBUTOR_KEYS,
                    {
                        "id": _NON_EMPTY,
                        "kind": {"enum": list(CONTRIBUTOR_KINDS), "default": "context"},
                        "protected": {"type": "boolean", "default": False},
                        "tools": {**names, "uniqueItems": True, "default": []},
                        "children": {
                            "description": f"nested at most {MAX_CONTRIBUTOR_DEPTH} levels deep",
                            "type": "array",
                            "items": {"$ref": "#/$defs/contributor"},
                            "default": [],
                        },
                    },
                    required=["id"],
                ),
            ]
        },
    }


def _step_part_schema(kind: str) -> dict[str, Any]:
    required, optional = _PART_FIELDS[kind]
    fields: dict[str, dict[str, Any]] = {"type": {"const": kind}}
    for key in required:
        fields[key] = {"type": "string"} if key == "text" else _NON_EMPTY
    for key in optional:
        fields[key] = {"description": "any JSON value"} if key == "input" else {"type": "string"}
    fields["providerOptions"] = {"type": "object", "additionalProperties": {"type": "object"}}
    return _closed(list(fields), fields, required=["type", *required])


def _role_is(*roles: str) -> dict[str, Any]:
    return {"required": ["role"], "properties": {"role": {"enum": list(roles)}}}


def step_sample_defs() -> dict[str, dict[str, Any]]:
    scope = _closed(
        _SCOPE_KEYS,
        {"usage": {"$ref": "#/$defs/step_usage"}, "modelCalls": {"$ref": "#/$defs/model_calls"}},
        required=_SCOPE_KEYS,
    )
    coverage = {"enum": list(COVERAGES)}
    none = {"const": "none"}
    usage = _closed(
        _USAGE_KEYS,
        {
            **dict.fromkeys(_TOKEN_KEYS, _COUNT),
            "coverage": _closed(
                _COVERAGE_KEYS, dict.fromkeys(_COVERAGE_KEYS, coverage), required=_COVERAGE_KEYS
            ),
        },
        required=["coverage"],
        description='A token count is absent, never zero, when coverage.tokens is "none".',
        **{
            "if": {
                "required": ["coverage"],
                "properties": {
                    "coverage": {"required": ["tokens"], "properties": {"tokens": none}}
                },
            },
            "then": {"not": {"anyOf": [{"required": [key]} for key in _TOKEN_KEYS]}},
        },
    )
    stats = _closed(
        _STATS_KEYS,
        {
            "at": {"type": "string"},
            "cursor": _COUNT,
            "attempt": _closed(
                _ATTEMPT_KEYS,
                {
                    "number": {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER},
                    "reason": {"enum": list(ATTEMPT_REASONS)},
                },
                required=_ATTEMPT_KEYS,
            ),
            "stepIndex": {"description": "equal to step.index", **_COUNT},
            "run": scope,
            "root": {"description": "holds at least the run's model calls", **scope},
        },
        required=[key for key in _STATS_KEYS if key != "at"],
        description="Derived from the step when absent or null.",
    )
    later = [reason for reason in STEP_REASONS if reason != "initial"]
    validation_retry = "validation-retry"
    is_retry = {"required": ["reason"], "properties": {"reason": {"const": validation_retry}}}
    step = _closed(
        _STEP_KEYS,
        {
            "index": _COUNT,
            "reason": {"enum": list(STEP_REASONS)},
            "input": {"description": "any JSON value", "default": {}},
            "messages": {
                "type": "array",
                "items": {"$ref": "#/$defs/step_message"},
                "default": [],
            },
            "stats": {"anyOf": [stats, {"type": "null"}]},
        },
        required=["index", "reason"],
        allOf=[
            {
                "description": 'index 0 is the "initial" step, and only index 0',
                "if": {"required": ["reason"], "properties": {"reason": {"const": "initial"}}},
                "then": {"properties": {"index": {"const": 0}}},
                "else": {"properties": {"index": {"minimum": 1}}},
            },
            {
                "description": "no model call was started before the initial step, and at least "
                "one before a later one",
                "if": {"required": ["reason"], "properties": {"reason": {"const": "initial"}}},
                "then": _calls_started({"const": 0}),
                "else": {
                    "if": {"required": ["reason"], "properties": {"reason": {"enum": later}}},
                    "then": _calls_started({"minimum": 1}),
                },
            },
            {
                "description": "a validation retry is both the step's reason and the attempt's, "
                "or neither",
                "if": is_retry,
                "then": _attempt_reason({"const": validation_retry}),
                "else": _attempt_reason({"not": {"const": validation_retry}}),
            },
        ],
    )
    non_assistant = [role for role in STEP_ROLES if role != "assistant"]
    message = _closed(
        _MESSAGE_KEYS,
        {
            "role": {"enum": list(STEP_ROLES)},
            "content": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"$ref": "#/$defs/step_part"}},
                ]
            },
            "metadata": {"type": "object"},
        },
        required=["role", "content"],
        allOf=[
            {
                "description": f"{' and '.join(_ASSISTANT_ONLY)} parts are an assistant's only",
                "if": _role_is(*non_assistant),
                "then": {
                    "properties": {
                        "content": {
                            "items": {
                                "not": {
                                    "required": ["type"],
                                    "properties": {"type": {"enum": list(_ASSISTANT_ONLY)}},
                                }
                            }
                        }
                    }
                },
            },
            {
                "description": "an assistant announces its tool calls in metadata.toolCalls",
                "if": _role_is("assistant"),
                "then": {
                    "properties": {
                        "metadata": {
                            "properties": {
                                "toolCalls": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["id", "name"],
                                        "properties": {"id": _NON_EMPTY, "name": _NON_EMPTY},
                                    },
                                }
                            }
                        }
                    }
                },
            },
            {
                "description": "a tool message answers one call, named by metadata.toolCallId",
                "if": _role_is("tool"),
                "then": {
                    "required": ["metadata"],
                    "properties": {
                        "metadata": {
                            "required": ["toolCallId"],
                            "properties": {"toolCallId": _NON_EMPTY, "toolName": _NON_EMPTY},
                        }
                    },
                },
            },
        ],
    )
    resource = {
        "type": "object",
        "required": ["identity"],
        "properties": {
            "identity": {
                "description": "working-state:<id>, blackboard:<id> or "
                "memory:<memoryId>:<blockId>; each declared once",
                "type": "string",
                "pattern": _dotall(IDENTITY_PATTERN.pattern),
            },
            "value": {"description": "any JSON value, null included"},
            "failure": {"enum": list(RESOURCE_FAILURES)},
        },
        "additionalProperties": False,
        "oneOf": [{"required": ["value"]}, {"required": ["failure"]}],
    }
    return {
        "step": step,
        "step_message": message,
        "step_part": {"oneOf": [_step_part_schema(kind) for kind in _PART_FIELDS]},
        "step_usage": usage,
        "model_calls": _closed(
            _CALL_KEYS,
            dict.fromkeys(_CALL_KEYS, _COUNT),
            required=_CALL_KEYS,
            description="succeeded, failed and cancelled add up to at most started",
        ),
        "declared_resource": resource,
    }


def _calls_started(rule: dict[str, Any]) -> dict[str, Any]:
    return {
        "properties": {
            "stats": {
                "properties": {
                    "run": {"properties": {"modelCalls": {"properties": {"started": rule}}}}
                }
            }
        }
    }


def _attempt_reason(rule: dict[str, Any]) -> dict[str, Any]:
    return {"properties": {"stats": {"properties": {"attempt": {"properties": {"reason": rule}}}}}}


def step_sample_schema() -> dict[str, Any]:
    return _closed(
        _SAMPLE_KEYS,
        {
            "contract": {"const": STEP_CONTRACT},
            "description": {"type": "string"},
            "baseline": {"$ref": "#/$defs/step_baseline"},
            "step": {"$ref": "#/$defs/step"},
            "resources": {
                "description": "the declared graph's resources: only these can be read",
                "type": "array",
                "items": {"$ref": "#/$defs/declared_resource"},
                "default": [],
            },
            "deadline_ms": {
                "description": "the caller's deadline; the preparation timeout is the shorter of "
                "this and the contract's own",
                "type": "number",
                "minimum": 0,
            },
        },
        required=["contract", "baseline", "step"],
        title="step-preparation sample (samples/*.json)",
    )


def chain_message_defs() -> dict[str, dict[str, Any]]:
    """A message of the model hook contract (studio rule message-shape); other keys are kept."""
    nullable_name = {"anyOf": [{"type": "null"}, _NON_EMPTY]}
    part = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": _NON_EMPTY, "text": {"type": ["string", "null"]}},
        "if": {"required": ["type"], "properties": {"type": {"const": "text"}}},
        "then": {"required": ["text"], "properties": {"text": {"type": "string"}}},
    }
    tool_call = {
        "type": "object",
        "required": ["name"],
        "properties": {"name": _NON_EMPTY, "id": nullable_name},
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
        "model": _NON_EMPTY,
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
            "items": {"type": "object", "required": ["name"], "properties": {"name": _NON_EMPTY}},
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


def amendment_check_schema() -> dict[str, Any]:
    read = _closed(
        ("identity", "value"),
        {"identity": _NON_EMPTY, "value": {"description": "the value the hook read"}},
        required=["identity", "value"],
    )
    return _closed(
        _DOCUMENT_KEYS,
        {
            "baseline": {"$ref": "#/$defs/step_baseline"},
            "amendment": {
                "description": "what the hook returned: any JSON value gets a verdict",
            },
            "step": {
                "anyOf": [
                    {
                        "description": "other keys are ignored",
                        "type": "object",
                        "properties": {
                            "index": {**_COUNT, "default": 0},
                            "reason": {"enum": list(STEP_REASONS), "default": "initial"},
                        },
                    },
                    {"type": "null"},
                ]
            },
            "resources": {
                "description": "the reads the hook made, in completion order",
                "anyOf": [{"type": "array", "items": read}, {"type": "null"}],
            },
        },
        required=["baseline", "amendment"],
        title="hook-studio check-amendment document",
    )


def _with_defs(root: dict[str, Any], name: str, defs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    document = {"$schema": DIALECT, "$id": ID_BASE + name, **root}
    merged = dict(document.get("$defs", {}))
    merged.update(defs)
    if merged:
        document["$defs"] = merged
    return document


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema by name, each a standalone document (a fresh copy, free to change)."""
    request = pre_llm_request_schema()
    request_defs = request.pop("$defs")
    baseline_defs = step_baseline_defs()
    schemas = {
        "pre_llm_hook": _with_defs(pre_llm_hook_schema(), "pre_llm_hook", {}),
        "agent_config": _with_defs(
            agent_config_schema(), "agent_config", {"pre_llm_hook": pre_llm_hook_schema()}
        ),
        "pre_llm_request": _with_defs(request, "pre_llm_request", request_defs),
        "pre_llm_sample": _with_defs(
            pre_llm_sample_schema(), "pre_llm_sample", {"pre_llm_request": request, **request_defs}
        ),
        "studio_settings": _with_defs(
            studio_settings_schema(),
            "studio_settings",
            {"chain_config": chain_config_schema(), "chain_hook": chain_hook_schema()},
        ),
        "step_sample": _with_defs(
            step_sample_schema(), "step_sample", {**baseline_defs, **step_sample_defs()}
        ),
        "chain_sample": _with_defs(
            chain_sample_schema(),
            "chain_sample",
            {"chain_context": chain_context_schema(), **chain_message_defs()},
        ),
        "amendment_check": _with_defs(amendment_check_schema(), "amendment_check", baseline_defs),
    }
    # The builders share small sub-schemas (a count, a non-empty string) between places.
    return copy.deepcopy(schemas)
