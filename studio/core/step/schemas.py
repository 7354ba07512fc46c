"""JSON Schemas of a step-preparation sample and of the ``check-amendment`` document.

The parsers of this package are the authority; every closed object here lists the parser's own
keys, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import TypeAdapter

from studio.core.expectations.schema import expect_schema
from studio.core.json.schema_parts import (
    COUNT,
    NON_EMPTY,
    closed,
    drop_titles,
    inline_refs,
    standalone,
)
from studio.core.json.values import MAX_SAFE_INTEGER
from studio.core.step.baseline import (
    _BASELINE_KEYS,
    _BUDGET_KEYS,
    _CONTRIBUTOR_KEYS,
    CONTRIBUTOR_KINDS,
    MAX_CONTRIBUTOR_DEPTH,
)
from studio.core.step.check import _DOCUMENT_KEYS
from studio.core.step.decision_record import STEP_REASONS
from studio.core.step.sample import CONTRACT as STEP_CONTRACT
from studio.core.step.sample import SAMPLE_KEYS, STEP_KEYS
from studio.core.step.sample_messages import ASSISTANT_ONLY, MESSAGE_KEYS, PART_FIELDS
from studio.core.step.sample_messages import ROLES as STEP_ROLES
from studio.core.step.sample_resources import IDENTITY_PATTERN, RESOURCE_FAILURES
from studio.core.step.sample_stats import (
    ATTEMPT_KEYS,
    ATTEMPT_REASONS,
    CALL_KEYS,
    COVERAGE_KEYS,
    COVERAGES,
    SCOPE_KEYS,
    STATS_KEYS,
    TOKEN_KEYS,
    USAGE_KEYS,
)
from studio.core.step.settings import StepSettings


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


def step_baseline_defs() -> dict[str, dict[str, Any]]:
    """The baseline a step-preparation hook amends, and its contributors."""
    names = {"type": "array", "items": NON_EMPTY}
    limit = {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER}
    return {
        "step_baseline": closed(
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
                        closed(
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
                {"description": "a contributor id, shorthand for {id}", **NON_EMPTY},
                closed(
                    _CONTRIBUTOR_KEYS,
                    {
                        "id": NON_EMPTY,
                        "kind": {"enum": list(CONTRIBUTOR_KINDS), "default": "context"},
                        "_tag": {
                            "description": "the reference's tag (Context, Memory, "
                            "HistoryManaged, HistoryRecent, WorkPolicy, droppable or another); "
                            "where present, the rules judge it instead of kind",
                            **NON_EMPTY,
                        },
                        "protected": {
                            "description": "counts only on a context contributor",
                            "type": "boolean",
                            "default": False,
                        },
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
    required, optional = PART_FIELDS[kind]
    fields: dict[str, dict[str, Any]] = {"type": {"const": kind}}
    for key in required:
        fields[key] = {"type": "string"} if key == "text" else NON_EMPTY
    for key in optional:
        fields[key] = {"description": "any JSON value"} if key == "input" else {"type": "string"}
    fields["providerOptions"] = {"type": "object", "additionalProperties": {"type": "object"}}
    return closed(list(fields), fields, required=["type", *required])


def _role_is(*roles: str) -> dict[str, Any]:
    return {"required": ["role"], "properties": {"role": {"enum": list(roles)}}}


def step_sample_defs() -> dict[str, dict[str, Any]]:
    scope = closed(
        SCOPE_KEYS,
        {"usage": {"$ref": "#/$defs/step_usage"}, "modelCalls": {"$ref": "#/$defs/model_calls"}},
        required=SCOPE_KEYS,
    )
    coverage = {"enum": list(COVERAGES)}
    none = {"const": "none"}
    usage = closed(
        USAGE_KEYS,
        {
            **dict.fromkeys(TOKEN_KEYS, COUNT),
            "coverage": closed(
                COVERAGE_KEYS, dict.fromkeys(COVERAGE_KEYS, coverage), required=COVERAGE_KEYS
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
            "then": {"not": {"anyOf": [{"required": [key]} for key in TOKEN_KEYS]}},
        },
    )
    stats = closed(
        STATS_KEYS,
        {
            "at": {"type": "string"},
            "cursor": COUNT,
            "attempt": closed(
                ATTEMPT_KEYS,
                {
                    "number": {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER},
                    "reason": {"enum": list(ATTEMPT_REASONS)},
                },
                required=ATTEMPT_KEYS,
            ),
            "stepIndex": {"description": "equal to step.index", **COUNT},
            "run": scope,
            "root": {"description": "holds at least the run's model calls", **scope},
        },
        required=[key for key in STATS_KEYS if key != "at"],
        description="Derived from the step when absent or null.",
    )
    later = [reason for reason in STEP_REASONS if reason != "initial"]
    validation_retry = "validation-retry"
    is_retry = {"required": ["reason"], "properties": {"reason": {"const": validation_retry}}}
    step = closed(
        STEP_KEYS,
        {
            "index": COUNT,
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
    message = closed(
        MESSAGE_KEYS,
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
                "description": f"{' and '.join(ASSISTANT_ONLY)} parts are an assistant's only",
                "if": _role_is(*non_assistant),
                "then": {
                    "properties": {
                        "content": {
                            "items": {
                                "not": {
                                    "required": ["type"],
                                    "properties": {"type": {"enum": list(ASSISTANT_ONLY)}},
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
                                        "properties": {"id": NON_EMPTY, "name": NON_EMPTY},
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
                            "properties": {"toolCallId": NON_EMPTY, "toolName": NON_EMPTY},
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
        "step_part": {"oneOf": [_step_part_schema(kind) for kind in PART_FIELDS]},
        "step_usage": usage,
        "model_calls": closed(
            CALL_KEYS,
            dict.fromkeys(CALL_KEYS, COUNT),
            required=CALL_KEYS,
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
    return closed(
        SAMPLE_KEYS,
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
            "expect": expect_schema(),
        },
        required=["contract", "baseline", "step"],
        title="step-preparation sample (samples/*.json)",
    )


def amendment_check_schema() -> dict[str, Any]:
    read = closed(
        ("identity", "value"),
        {"identity": NON_EMPTY, "value": {"description": "the value the hook read"}},
        required=["identity", "value"],
    )
    return closed(
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
                            "index": {**COUNT, "default": 0},
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


def schemas() -> dict[str, dict[str, Any]]:
    """The step-preparation schemas by name, each a standalone document (a fresh copy)."""
    baseline_defs = step_baseline_defs()
    documents = {
        "step_sample": standalone(
            step_sample_schema(), "step_sample", {**baseline_defs, **step_sample_defs()}
        ),
        "amendment_check": standalone(amendment_check_schema(), "amendment_check", baseline_defs),
    }
    # Both documents hold the baseline, and small sub-schemas (a count, a name) recur.
    return copy.deepcopy(documents)


def step_settings_schema() -> dict[str, Any]:
    """The ``step`` section of the studio settings, derived from :class:`StepSettings`."""
    generated = TypeAdapter(StepSettings | None).json_schema()
    defs = generated.pop("$defs", {})
    section: dict[str, Any] = drop_titles(inline_refs(generated, defs))
    (step,) = (option for option in section["anyOf"] if option.get("type") == "object")
    step["properties"]["source"]["description"] = (
        "path[:function] of the step-preparation hook in the workspace; the function defaults "
        "to main"
    )
    section["default"] = None
    section["description"] = "the step-preparation hook"
    return section
