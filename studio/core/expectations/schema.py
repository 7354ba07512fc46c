"""The JSON Schema of a sample's ``expect`` key, shared by every contract's sample schema."""

from __future__ import annotations

from typing import Any

from studio.core.expectations.model import BLOCK_KEYS, OUTCOMES
from studio.core.json.schema_parts import closed
from studio.core.turn_error import KIND_REASONS

_NAMES = {"type": "array", "items": {"type": "string", "minLength": 1}}


def expect_schema() -> dict[str, Any]:
    assertion = {
        "type": "object",
        "required": ["path"],
        "properties": {
            "path": {
                "description": 'a JSON pointer into the result ("" for all of it)',
                "type": "string",
                "pattern": "^(/.*)?$",
            },
            "equals": {"description": "the value there equals this (JSON equality)"},
            "contains": {
                "description": "a string holds this text, an array this element, an object "
                "these members"
            },
            "absent": {"description": "nothing is there", "const": True},
        },
        "additionalProperties": False,
        "oneOf": [{"required": [m]} for m in ("equals", "contains", "absent")],
    }
    block = closed(
        BLOCK_KEYS,
        {
            "targets": {
                "description": '"main", loop names and "future-loop"; leave out for every target '
                "the sample runs on",
                "type": "array",
                "minItems": 1,
                "items": {"type": "string", "minLength": 1},
            },
            "outcome": {"enum": list(OUTCOMES)},
            "turn_error": {
                "description": 'the turn error kind; implies the outcome "turn_error"',
                "enum": list(KIND_REASONS),
            },
            "result": {"type": "array", "items": assertion},
            "tools": closed(("removed", "kept"), {"removed": _NAMES, "kept": _NAMES}),
            "decision": {
                "description": "decision record fields (or /pointers into it) and the values "
                "they equal",
                "type": "object",
            },
        },
    )
    return {
        "description": "hook tests: what runs of this sample must give (hook-studio test)",
        "type": "array",
        "items": block,
    }
