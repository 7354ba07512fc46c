"""Every JSON Schema (draft 2020-12) the studio publishes, gathered from the contracts
in the registry and from the workspace package.

Each package's validators are the authority: they also apply the rules a schema cannot say (tool
pairing, a source path that leaves the workspace). The schemas serve editors and scripts.
"""

from __future__ import annotations

from typing import Any, Protocol

from studio.core.registry import CONTRACTS
from studio.core.workspace import schemas as workspace

# The order ``hook-studio schema`` has always printed them in; a schema not named here follows.
_ORDER = (
    "pre_llm_hook",
    "agent_config",
    "pre_llm_request",
    "pre_llm_sample",
    "studio_settings",
    "step_sample",
    "chain_sample",
    "amendment_check",
)


class _Publisher(Protocol):
    """A contract, or a package module, that publishes schemas."""

    def schemas(self) -> dict[str, dict[str, Any]]: ...


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema by name, each a standalone document (a fresh copy, free to change)."""
    merged: dict[str, dict[str, Any]] = {}
    owners: tuple[_Publisher, ...] = (*CONTRACTS.values(), workspace)
    for owner in owners:
        for name, schema in owner.schemas().items():
            if name in merged:
                raise ValueError(f"two packages publish a schema named {name!r}")
            merged[name] = schema
    ordered = {name: merged.pop(name) for name in _ORDER if name in merged}
    return {**ordered, **merged}
