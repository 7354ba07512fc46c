"""What a request diff compares: the two requests, and the words the view uses for their parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DiffSides:
    """What a diff compares, and what the view calls its parts."""

    original: Any
    transformed: Any
    system_label: str = "System"
    options_label: str = "Options"
    headers: tuple[str, str] = ("Original request", "Transformed request")
    system_word: str = "system"


def chain_sides(context: Any, final: Any) -> DiffSides:
    """A chain's request before the chain and the final request, in the diff's terms: the system
    prompt as ``system`` and the model as the one option."""

    def shape(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        if "systemPrompt" in value:
            out["system"] = value["systemPrompt"]
        for key in ("messages", "tools"):
            if key in value:
                out[key] = value[key]
        if "model" in value:
            out["options"] = {"model": value["model"]}
        return out

    return DiffSides(
        shape(context),
        shape(final),
        "System prompt",
        "Model",
        ("Before the chain", "Final request"),
        "system prompt",
    )
