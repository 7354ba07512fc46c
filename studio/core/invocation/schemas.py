"""JSON Schemas of an invocation-preparation sample and of the ``check-amendment --invocation``
document; the baseline, the steps, the stats scopes and the resources are the step contract's."""

from __future__ import annotations

import copy
from typing import Any

from studio.core.expectations.schema import expect_schema
from studio.core.invocation.check import _DOCUMENT_KEYS
from studio.core.invocation.sample import (
    _HOP_KEYS,
    _STATS_KEYS,
    CONTRACT,
    PAYLOAD_KEYS,
    POSITION_KEYS,
    SAMPLE_KEYS,
)
from studio.core.json.schema_parts import COUNT, NON_EMPTY, closed, standalone
from studio.core.step.schemas import step_baseline_defs, step_sample_defs

_TOOLS = {"type": "array", "items": NON_EMPTY, "uniqueItems": True}


def _position(kind: str) -> dict[str, Any]:
    if kind in ("pipeline", "parallel"):
        return closed(
            ("name", "index"), {"name": NON_EMPTY, "index": COUNT}, required=["name", "index"]
        )
    if kind == "consensus":
        return closed(("index",), {"index": COUNT}, required=["index"])
    return closed(
        _HOP_KEYS,
        {
            "index": COUNT,
            "path": {"type": "array", "items": NON_EMPTY},
            "fromAgent": {"type": "string"},
            "reason": {"type": "string"},
        },
        required=["index", "path"],
    )


def _composition(kind: str) -> dict[str, Any]:
    key = POSITION_KEYS[kind]
    return closed(
        ("id", "kind", key),
        {"id": NON_EMPTY, "kind": {"const": kind}, key: _position(kind)},
        required=["id", "kind", key],
    )


def invocation_sample_schema() -> dict[str, Any]:
    scope = {"$ref": "#/$defs/invocation_scope"}
    by_kind = [
        {
            "if": {"properties": {"composition": {"properties": {"kind": {"const": kind}}}}},
            "then": {"not": {"required": [other]}},
        }
        for kind, wanted in PAYLOAD_KEYS.items()
        for other in ("context", "input")
        if other != wanted
    ]
    return closed(
        SAMPLE_KEYS,
        {
            "contract": {"const": CONTRACT},
            "description": {"type": "string"},
            "baseline": {"$ref": "#/$defs/step_baseline"},
            "target": closed(
                ("id", "operation"),
                {"id": NON_EMPTY, "operation": {"const": "language"}},
                required=["id"],
            ),
            "composition": {"oneOf": [_composition(kind) for kind in POSITION_KEYS]},
            "invocation": closed(("tools",), {"tools": _TOOLS}),
            "context": {"description": "the composition's context (pipeline and parallel)"},
            "input": {"description": "the composition's input (consensus and swarm)"},
            "stats": closed(
                _STATS_KEYS,
                {"at": {"type": "string"}, "cursor": COUNT, "run": scope, "root": scope},
                required=["cursor", "run", "root"],
            ),
            "resources": {
                "type": "array",
                "items": {"$ref": "#/$defs/declared_resource"},
                "default": [],
            },
            "prepareStep": {
                "description": "path[:function] of the step hook of a layered run",
                "type": "string",
                "minLength": 1,
            },
            "steps": {
                "description": "the child's provider calls, in order (step i has index i)",
                "type": "array",
                "items": {"$ref": "#/$defs/step"},
            },
            "expect": expect_schema(),
        },
        required=["contract", "baseline", "target", "composition"],
        title="invocation-preparation sample (samples/*.json)",
        allOf=by_kind,
    )


def invocation_check_schema() -> dict[str, Any]:
    return closed(
        _DOCUMENT_KEYS,
        {
            "baseline": {"$ref": "#/$defs/step_baseline"},
            "invocation": closed(("tools",), {"tools": _TOOLS}),
            "amendment": {"description": "what the hook returned: any JSON value gets a verdict"},
        },
        required=["baseline", "amendment"],
        title="hook-studio check-amendment --invocation document",
    )


def schemas() -> dict[str, dict[str, Any]]:
    baseline_defs = step_baseline_defs()
    step_defs = step_sample_defs()
    stats = step_defs["step"]["properties"]["stats"]["anyOf"][0]
    scope = stats["properties"]["run"]
    documents = {
        "invocation_sample": standalone(
            invocation_sample_schema(),
            "invocation_sample",
            {**baseline_defs, **step_defs, "invocation_scope": scope},
        ),
        "invocation_amendment_check": standalone(
            invocation_check_schema(), "invocation_amendment_check", baseline_defs
        ),
    }
    return copy.deepcopy(documents)
