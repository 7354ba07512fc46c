"""A pre-LLM sample: the request a pre-LLM hook receives and the loop it runs on, with every
finding (its own keys first, then the request's, spec/adf.md §3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.core.findings import Finding, errors
from studio.core.pre_llm.config import MAIN, loop_name_problem
from studio.core.pre_llm.host_calls import reply_findings
from studio.core.pre_llm.request import validate_request

KEYS = ("contract", "description", "loop", "request", "adf", "expect")
RULE = "workspace.sample"


@dataclass(frozen=True)
class PreLlmSample:
    request: dict[str, Any]
    loop: str
    description: str | None = None
    warnings: tuple[Finding, ...] = ()
    replies: dict[str, Any] = field(default_factory=dict)
    """What the hook's ``adf.<method>(...)`` calls get, by method (``adf.replies``)."""


def pre_llm_sample_findings(document: dict[str, Any]) -> list[Finding]:
    """Every finding on a pre-LLM sample: its own keys, then the request."""
    found: list[Finding] = []
    for key in document:
        if key not in KEYS:
            found.append(
                Finding(
                    (key,),
                    f"'{key}' is not a field of a pre-LLM sample ({', '.join(KEYS)}); "
                    "it is ignored",
                    RULE,
                    "warning",
                )
            )
    if "description" in document and not isinstance(document["description"], str):
        found.append(Finding(("description",), "description must be a string", RULE))
    if "loop" in document:
        loop = document["loop"]
        problem = None if loop == MAIN else loop_name_problem(loop)
        if problem:
            found.append(
                Finding(("loop",), f'loop must be "main" or an inner loop: {problem}', RULE)
            )
    if "adf" in document:
        found += reply_findings(document["adf"])
    if "request" not in document:
        found.append(Finding(("request",), 'a pre-LLM sample needs a "request" object', RULE))
        return found
    own_errors = [f for f in found if f.severity == "error"]
    own_warnings = [f for f in found if f.severity != "error"]
    request = [
        Finding(("request", *f.path), f.message, f.rule, f.severity)
        for f in validate_request(document["request"])
    ]
    return (
        own_errors
        + [f for f in request if f.severity == "error"]
        + own_warnings
        + [f for f in request if f.severity != "error"]
    )


def parse_pre_llm_sample(document: Any) -> PreLlmSample | list[Finding]:
    """The typed sample, or every finding when one of them is an error."""
    if not isinstance(document, dict):
        return [Finding((), "a sample must be a JSON object", RULE)]
    found = pre_llm_sample_findings(document)
    if errors(found):
        return found
    description = document.get("description")
    return PreLlmSample(
        request=document["request"],
        loop=document.get("loop", MAIN),
        description=description,
        warnings=tuple(found),
        replies=dict(document.get("adf", {}).get("replies", {})),
    )
