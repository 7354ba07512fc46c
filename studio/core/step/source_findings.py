"""Findings about the step-preparation hook's source in ``hookstudio.json`` (``step.source``):
the file is there, the export (or function) is in it, the studio can run its language."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studio.core.findings import Finding, PathPart
from studio.core.hook_source_findings import SourceLookup, source_findings
from studio.core.source_ref import lexical_path_problem
from studio.core.step.settings import MODULE_EXTENSIONS, step_source_ref


def step_source_findings(
    section: Any,
    lookup: SourceLookup | None,
    *,
    language_problem: Callable[[str], str | None] | None = None,
    base: tuple[PathPart, ...] = ("step",),
) -> list[Finding]:
    """The findings about ``section``'s source (the ``step`` section as written), with paths
    under ``base``. A section the settings rules refuse gets none here: those rules say why."""
    source = section.get("source") if isinstance(section, dict) else None
    if not isinstance(source, str) or not source.strip():
        return []
    ref = step_source_ref(source)
    if lexical_path_problem(ref.path):
        return []
    return source_findings(
        ref,
        (*base, "source"),
        lookup,
        language_problem=language_problem,
        export=ref.path.endswith(MODULE_EXTENSIONS),
    )
