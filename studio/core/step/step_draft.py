"""The ``step`` section as the step-hook editor holds it: the source of the hook that prepares
steps, written back over the section it was loaded from.

The section configures the source only: the preparation's time limit is the contract's (a fixed
30-second ceiling, or the sample's ``deadline_ms`` when shorter; spec/crux.md §4), not a setting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.core.source_ref import DEFAULT_FUNCTION
from studio.core.step.decision import PREPARATION_TIMEOUT_MS
from studio.core.step.settings import MODULE_DEFAULT_EXPORT, MODULE_EXTENSIONS, step_source_ref
from studio.core.workspace.studio_config_edit import ABSENT


def default_function(path: str) -> str:
    """What runs when the source names no function: the module's ``prepareStep`` export in
    TypeScript and JavaScript, ``main`` in Python."""
    return MODULE_DEFAULT_EXPORT if path.endswith(MODULE_EXTENSIONS) else DEFAULT_FUNCTION


def split_source(source: str) -> tuple[str, str]:
    """``(path, function)`` as the runtime reads the source."""
    if not source.strip():
        return "", ""
    ref = step_source_ref(source)
    return ref.path, ref.function


def join_source(path: str, function: str) -> str:
    """The source text for a path and a function (an empty function: the runtime's default).
    ``:main`` is left out of a Python source only, where leaving it out means the same."""
    path, function = path.strip(), function.strip()
    if not path:
        return ""
    if not function or function == default_function(path) == DEFAULT_FUNCTION:
        return path
    return f"{path}:{function}"


def deadline_text() -> str:
    return (
        f"{PREPARATION_TIMEOUT_MS // 1000} s, fixed by the step contract; "
        "a sample's deadline_ms makes it shorter"
    )


@dataclass(frozen=True)
class StepDraft:
    source: str = ""
    """``path:function``; empty when no hook prepares steps."""
    base: Any = ABSENT
    """The section as loaded: other keys in it are kept."""

    @classmethod
    def load(cls, section: Any) -> StepDraft:
        source = section.get("source") if isinstance(section, dict) else None
        return cls(source if isinstance(source, str) else "", section)

    def value(self) -> Any:
        """The section's JSON value; ``ABSENT`` (the key is removed) for no step hook."""
        if not self.source.strip():
            return ABSENT
        if isinstance(self.base, dict):
            return {**self.base, "source": self.source}
        return {"source": self.source}
