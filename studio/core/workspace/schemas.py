"""The JSON Schema of the studio settings (``hookstudio.json``), derived from the settings model."""

from __future__ import annotations

import copy
from typing import Any

from studio.core.json.schema_parts import drop_titles, inline_refs, standalone
from studio.core.pre_llm.schemas import loop_name_schema
from studio.core.registry import CONTRACTS
from studio.core.workspace.folder import STUDIO_FILE, StudioSettings

_SETTINGS_DESCRIPTIONS = {
    "version": "the format of this file",
    "loops": "the agent's inner loop names, besides main, that the studio shows as targets",
    "env": "variables every hook gets, with these values",
    "pass_env": "names of the studio's own environment variables passed on to hooks as they are",
    "limits": "per worker process: address space, captured output per stream, result size",
    "sandbox": "Linux namespaces around every hook call (on where the kernel allows them), and "
    "whether hooks may use the network (also allowed by the agent's code_execution.network)",
}


def studio_settings_schema() -> dict[str, Any]:
    """``hookstudio.json``, derived from :class:`StudioSettings`, with the loop names filled in
    and the section of each contract that owns one."""
    generated = StudioSettings.model_json_schema()
    defs = generated.pop("$defs", {})
    schema: dict[str, Any] = drop_titles(inline_refs(generated, defs))
    properties = schema["properties"]
    for key, default in StudioSettings().model_dump(mode="json").items():
        properties[key].setdefault("default", default)
        properties[key]["description"] = _SETTINGS_DESCRIPTIONS[key]
    properties["loops"]["items"] = loop_name_schema()
    for contract in CONTRACTS.values():
        if contract.settings_key is not None:
            properties[contract.settings_key] = contract.settings_schema()[0]
    schema["title"] = f"studio settings ({STUDIO_FILE})"
    schema["description"] = "What the studio needs that the agent config does not say."
    return schema


def schemas() -> dict[str, dict[str, Any]]:
    """The studio settings schema by name, a standalone document (a fresh copy, free to change)."""
    documents = {
        "studio_settings": standalone(
            studio_settings_schema(),
            "studio_settings",
            {
                name: definition
                for contract in CONTRACTS.values()
                if contract.settings_key is not None
                for name, definition in contract.settings_schema()[1].items()
            },
        ),
    }
    return copy.deepcopy(documents)
