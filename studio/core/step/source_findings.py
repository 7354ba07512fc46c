"""Findings about the step-preparation hook's source in ``hookstudio.json`` (``step.source``):
the file is there, the export (or function) is in it, the studio can run its language."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studio.core.findings import Finding, PathPart
from studio.core.hook_source_findings import SourceLookup
from studio.core.step.step_draft import STEP_HOOK


def step_source_findings(
    section: Any,
    lookup: SourceLookup | None,
    *,
    language_problem: Callable[[str], str | None] | None = None,
    base: tuple[PathPart, ...] = ("step",),
) -> list[Finding]:
    """The findings about ``section``'s source (the ``step`` section as written), with paths
    under ``base``. A section the settings rules refuse gets none here: those rules say why."""
    return STEP_HOOK.source_findings(section, lookup, language_problem=language_problem, base=base)
