"""The studio's own settings: one model, saved as a diff from its defaults, with a version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from studio.core.file_reads import read_text
from studio.core.workspace.atomic_write import write_atomically

SETTINGS_VERSION = 1
MAX_RECENT = 10
MAX_REMEMBERED_WORKSPACES = 50


class WorkspaceChoices(BaseModel):
    """What was last chosen to run in one workspace."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    sample: str | None = None
    loop: str | None = None


class AppSettings(BaseModel):
    model_config = ConfigDict(extra="ignore")

    recent_workspaces: list[str] = Field(default_factory=list)
    last_workspace: str | None = None
    window_geometry: str | None = None
    window_state: str | None = None
    splitter_sizes: dict[str, list[int]] = Field(default_factory=dict)
    rerun_on_save: bool = False
    node: str = ""
    """The Node that runs TypeScript and JavaScript hooks; empty for the one installed with the
    studio. ``HOOK_STUDIO_NODE``, when set, overrides it."""
    workspace_choices: dict[str, WorkspaceChoices] = Field(default_factory=dict)
    """The last sample and loop of each workspace, by the path it was opened by; the most
    recently changed last."""

    def remember_workspace(self, path: str) -> AppSettings:
        recent = [path] + [p for p in self.recent_workspaces if p != path]
        return self.model_copy(
            update={"recent_workspaces": recent[:MAX_RECENT], "last_workspace": path}
        )

    def remember_choices(self, path: str, choices: WorkspaceChoices) -> AppSettings:
        """These settings with ``choices`` as the last ones of the workspace at ``path``."""
        if self.workspace_choices.get(path) == choices:
            return self
        kept = {p: c for p, c in self.workspace_choices.items() if p != path}
        kept[path] = choices
        # The workspaces not used for longest are forgotten first.
        recent = dict(list(kept.items())[-MAX_REMEMBERED_WORKSPACES:])
        return self.model_copy(update={"workspace_choices": recent})


def load_settings(path: Path) -> AppSettings:
    """The saved settings; a missing, unreadable or foreign file gives the defaults."""
    try:
        raw = json.loads(read_text(path))
    except (OSError, ValueError):
        return AppSettings()
    if not isinstance(raw, dict) or raw.get("version") != SETTINGS_VERSION:
        return AppSettings()
    try:
        return AppSettings.model_validate(raw.get("changed", {}))
    except ValidationError:
        return AppSettings()


def save_settings(path: Path, settings: AppSettings) -> None:
    defaults = AppSettings().model_dump()
    changed: dict[str, Any] = {
        key: value for key, value in settings.model_dump().items() if defaults.get(key) != value
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"version": SETTINGS_VERSION, "changed": changed}, indent=2)
    write_atomically(path, text.encode("utf-8"))
