"""A section of ``hookstudio.json`` that names one hook by its source (``step``,
``invocation``): what the editor of such a section needs to know about it, and the draft it
edits.

The sections share their shape (``{"source": "path[:function]"}``) and their source rules; they
differ in the export a module hook is called by when none is named, and in the time rule the
contract runs the hook under, which the editor shows beside the source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from studio.core.findings import Finding, PathPart
from studio.core.hook_source_findings import SourceLookup, source_findings
from studio.core.source_ref import DEFAULT_FUNCTION, SourceRef, lexical_path_problem
from studio.core.workspace.studio_config_edit import ABSENT


@dataclass(frozen=True)
class HookSourceSection:
    """One ``{"source": ...}`` section of hookstudio.json, as its editor presents it."""

    key: str
    """The section's key: ``step``."""
    title: str
    """The editor's heading: ``Step-preparation hook``."""
    noun: str
    """How messages name what is saved: ``step hook``."""
    rule: str
    """The time rule the hook runs under, shown beside its source."""
    rule_tip: str
    function_tip: str
    absent_note: str
    """What the editor says when no source is set."""
    source_ref: Callable[[str], SourceRef]
    """The file and the function a source calls, as the contract runs it (a module named
    without a function: the contract's default export; Python: ``main``)."""
    module_extensions: tuple[str, ...]
    """The sources that are modules, whose functions are exports."""

    def default_function(self, path: str) -> str:
        return self.source_ref(path).function

    def split(self, source: str) -> tuple[str, str]:
        """``(path, function)`` as the runtime reads the source."""
        if not source.strip():
            return "", ""
        ref = self.source_ref(source)
        return ref.path, ref.function

    def join(self, path: str, function: str) -> str:
        """The source text for a path and a function (an empty function: the runtime's
        default). ``:main`` is left out of a Python source only, where leaving it out means the
        same."""
        path, function = path.strip(), function.strip()
        if not path:
            return ""
        if not function or function == self.default_function(path) == DEFAULT_FUNCTION:
            return path
        return f"{path}:{function}"

    def source_findings(
        self,
        section: Any,
        lookup: SourceLookup | None,
        *,
        language_problem: Callable[[str], str | None] | None = None,
        base: tuple[PathPart, ...] | None = None,
    ) -> list[Finding]:
        """The findings about ``section``'s source (the section as written): the file is there,
        the export or function is in it, the studio can run its language; paths under ``base``
        (the section's key). A section the settings rules refuse gets none here: those rules
        say why."""
        source = section.get("source") if isinstance(section, dict) else None
        if not isinstance(source, str) or not source.strip():
            return []
        ref = self.source_ref(source)
        if lexical_path_problem(ref.path):
            return []
        return source_findings(
            ref,
            (*(base if base is not None else (self.key,)), "source"),
            lookup,
            language_problem=language_problem,
            export=ref.path.endswith(self.module_extensions),
        )


@dataclass(frozen=True)
class HookSourceDraft:
    """The section as its editor holds it: the source, written back over the section it was
    loaded from."""

    source: str = ""
    """``path:function``; empty when no hook is set."""
    base: Any = ABSENT
    """The section as loaded (``ABSENT`` when there was none): other keys in it are kept."""

    @classmethod
    def load(cls, section: Any) -> HookSourceDraft:
        source = section.get("source") if isinstance(section, dict) else None
        return cls(source if isinstance(source, str) else "", section)

    def value(self) -> Any:
        """The section's JSON value; ``ABSENT`` (the key is removed) for no hook."""
        if not self.source.strip():
            return ABSENT
        if isinstance(self.base, dict):
            return {**self.base, "source": self.source}
        return {"source": self.source}
