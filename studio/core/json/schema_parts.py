"""Building blocks shared by the studio's JSON Schemas (draft 2020-12).

Each contract package builds the schemas of its own files with these, so that every document has
the same dialect, the same ``$id`` base and the same notion of a closed object.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from studio.core.json.values import MAX_SAFE_INTEGER

DIALECT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://hook-studio.invalid/schema/"

NON_EMPTY: dict[str, Any] = {"type": "string", "minLength": 1}
COUNT: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER}


def closed(
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


def standalone(root: dict[str, Any], name: str, defs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``root`` as a document of its own, whose ``$defs`` also hold ``defs``."""
    document = {"$schema": DIALECT, "$id": ID_BASE + name, **root}
    merged = dict(document.get("$defs", {}))
    merged.update(defs)
    if merged:
        document["$defs"] = merged
    return document


def drop_titles(schema: Any) -> Any:
    """A pydantic-generated schema without the titles it makes up from field names."""
    if isinstance(schema, list):
        return [drop_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key in ("properties", "$defs"):
            out[key] = {name: drop_titles(sub) for name, sub in value.items()}
        elif key == "default":
            out[key] = value
        else:
            out[key] = drop_titles(value)
    return out


def inline_refs(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` with every local ``$ref`` into ``defs`` replaced by the definition."""
    if isinstance(schema, list):
        return [inline_refs(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
    return {key: inline_refs(value, defs) for key, value in schema.items()}
