"""The ``step`` section of the studio settings (``hookstudio.json``): which hook prepares steps."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from studio.core.findings import Finding
from studio.core.source_ref import SourceRef, lexical_path_problem, parse_source_ref
from studio.core.workspace.folder import pydantic_findings


class StepSettings(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    source: str = Field(min_length=1, pattern=r"\S")

    @field_validator("source")
    @classmethod
    def _inside_workspace(cls, source: str) -> str:
        problem = lexical_path_problem(parse_source_ref(source.strip()).path)
        if problem:
            raise ValueError(problem)
        return source.strip()


# A step hook written in TypeScript or JavaScript is a module export; when the source names no
# function, the export the reference's users write is ``prepareStep`` (a Python hook keeps
# ``main``).
MODULE_DEFAULT_EXPORT = "prepareStep"
MODULE_EXTENSIONS = (".ts", ".mts", ".js", ".mjs")


def step_source_ref(source: str) -> SourceRef:
    """The file and the function a step source calls (``prepareStep`` for a module named
    without one)."""
    ref = parse_source_ref(source.strip())
    if source.strip() == ref.path and ref.path.endswith(MODULE_EXTENSIONS):
        return SourceRef(ref.path, MODULE_DEFAULT_EXPORT)
    return ref


_SECTION: TypeAdapter[StepSettings | None] = TypeAdapter(StepSettings | None)


def parse_step_settings(value: Any) -> StepSettings | list[Finding] | None:
    """The typed section, or its findings (paths inside the section)."""
    try:
        return _SECTION.validate_python(value)
    except ValidationError as exc:
        return pydantic_findings(exc)
