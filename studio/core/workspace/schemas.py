"""The JSON Schema of the studio settings (``hookstudio.json``), derived from the settings model."""

from __future__ import annotations

import copy
from typing import Any

from studio.core.chain.schemas import chain_config_schema, chain_hook_schema
from studio.core.json.schema_parts import standalone
from studio.core.pre_llm.schemas import loop_name_schema
from studio.core.workspace.folder import STUDIO_FILE, StudioSettings


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
    schema: dict[str, Any] = _drop_titles(_inline_refs(generated, defs))
    properties = schema["properties"]
    for key, default in StudioSettings().model_dump(mode="json").items():
        properties[key].setdefault("default", default)
        properties[key]["description"] = _SETTINGS_DESCRIPTIONS[key]
    properties["loops"]["items"] = loop_name_schema()
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


def schemas() -> dict[str, dict[str, Any]]:
    """The studio settings schema by name, a standalone document (a fresh copy, free to change)."""
    documents = {
        "studio_settings": standalone(
            studio_settings_schema(),
            "studio_settings",
            {"chain_config": chain_config_schema(), "chain_hook": chain_hook_schema()},
        ),
    }
    return copy.deepcopy(documents)
