"""How the step-sample parser words its findings: one rule id, paths from the sample's root,
values shown the way the baseline's findings show them."""

from __future__ import annotations

import math
from typing import Any, Final

from studio.core.findings import Finding, PathPart, dotted
from studio.core.json.values import type_name
from studio.core.step.baseline import json_problem, shown_value

SAMPLE_RULE: Final = "step-sample"

Path = tuple[PathPart, ...]


def json_findings(at: Path, value: Any, findings: list[Finding]) -> None:
    problem = json_problem(value)
    if problem is not None:
        where, what = problem
        findings.append(sample_finding((*at, *where), f"{dotted((*at, *where))} {what}"))


def sample_finding(path: Path, message: str) -> Finding:
    return Finding(path=path, message=message, rule=SAMPLE_RULE)


def must_be(path: Path, what: str, value: Any) -> Finding:
    return sample_finding(
        path, f"{dotted(path) or 'the value'} must be {what}, got {_value(value)}"
    )


def _value(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return type_name(value)
    return shown_value(value)


def shown_field(value: dict[str, Any], key: str) -> str:
    return _value(value[key]) if key in value else "nothing"


def key_part(key: Any) -> PathPart:
    """An object key as a path part, even when a Python caller used a key JSON cannot have."""
    return key if isinstance(key, str) else repr(key)


def key_text(key: Any) -> str:
    return repr(key) if isinstance(key, str) else f"({type_name(key)})"
