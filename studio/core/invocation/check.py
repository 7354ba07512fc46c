"""``hook-studio check-amendment --invocation FILE``: check one invocation amendment, headless.

The document::

    {"baseline": {...},                          the agent's baseline
     "invocation": {"tools": ["lookupOrder"]},   (optional) the invocation's own tools
     "amendment": <any JSON>}

The answer has ``check-amendment``'s shape: ``{"valid", "error", "explanation", "inspection",
"effective", "warnings"}``. ``inspection`` is always ``None``: an invocation decision is not
journaled. ``effective`` is the child baseline the amendment produces, as the studio sees it.
"""

from __future__ import annotations

from typing import Any, Final

from studio.core.findings import Finding, errors, first_error, warnings
from studio.core.invocation.decision import invocation_failure, plan_invocation
from studio.core.invocation.sample import parse_invocation_tools
from studio.core.step.baseline import StepBaseline
from studio.core.step.check import DOCUMENT_RULE, document_baseline, explained, not_an_object
from studio.core.step.effective import effective_from_plan

_DOCUMENT_KEYS: Final = ("baseline", "invocation", "amendment")


def check_document(document: Any) -> dict[str, Any]:
    """The verdict on the document's amendment, or a malformed document's answer."""
    parsed = _parse(document)
    if isinstance(parsed, list):
        return {
            "valid": False,
            "error": {
                "name": "InvalidCheckDocument",
                "code": None,
                "message": "the file is not a {baseline, invocation, amendment} document the "
                "studio can check",
                "diagnostics": [f.to_json() for f in parsed],
                "rule": errors(parsed)[0].rule,
            },
            "explanation": None,
            "inspection": None,
            "effective": None,
            "warnings": [],
        }
    merged, amendment = parsed
    plan = plan_invocation(merged, amendment)
    noted = [explained(f) for f in warnings(plan.findings)]
    failed = first_error(plan.findings)
    if failed is not None:
        error = invocation_failure(failed).details["error"]
        return {
            "valid": False,
            "error": {**error, "rule": failed.rule},
            "explanation": explained(failed),
            "inspection": None,
            "effective": None,
            "warnings": noted,
        }
    effective = effective_from_plan(plan)
    return {
        "valid": True,
        "error": None,
        "explanation": None,
        "inspection": None,
        "effective": None if effective is None else effective.to_json(),
        "warnings": noted,
    }


def _parse(document: Any) -> tuple[StepBaseline, Any] | list[Finding]:
    if not isinstance(document, dict):
        return [not_an_object(document)]
    baseline, findings = document_baseline(document, _DOCUMENT_KEYS)
    tools = parse_invocation_tools(document.get("invocation"), baseline, findings)
    if errors(findings) or baseline is None:
        return [Finding(f.path, f.message, DOCUMENT_RULE, f.severity) for f in findings]
    merged = baseline.model_copy(update={"tools": (*baseline.tools, *tools)})
    return merged, document.get("amendment")
