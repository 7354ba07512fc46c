"""Findings about the chain hooks' sources in ``hookstudio.json`` (``chain.pre`` and
``chain.post``): each user hook's file is there, its export (or function) is in it, and the
studio can run its language. Built-in hooks have no source."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studio.core.chain.config import MODULE_EXTENSIONS, ChainHookRef
from studio.core.findings import Finding, PathPart
from studio.core.hook_source_findings import SourceLookup, source_findings
from studio.core.source_ref import lexical_path_problem


def chain_source_findings(
    section: Any,
    lookup: SourceLookup | None,
    *,
    language_problem: Callable[[str], str | None] | None = None,
    base: tuple[PathPart, ...] = ("chain",),
) -> list[Finding]:
    """The findings about every user hook's source in ``section`` (the ``chain`` section as
    written), in chain order, with paths under ``base``. Entries the chain config rules refuse
    get none here: those rules say why."""
    if not isinstance(section, dict):
        return []
    found: list[Finding] = []
    for chain in ("pre", "post"):
        entries = section.get(chain)
        if not isinstance(entries, list):
            continue
        for index, entry in enumerate(entries):
            source = entry.get("source") if isinstance(entry, dict) else None
            if not isinstance(source, str) or not source:
                continue
            ref = ChainHookRef(source=source).source_ref
            if ref is None or lexical_path_problem(ref.path):
                continue
            found += source_findings(
                ref,
                (*base, chain, index, "source"),
                lookup,
                language_problem=language_problem,
                export=ref.path.endswith(MODULE_EXTENSIONS),
            )
    return found
