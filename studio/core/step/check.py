"""``hook-studio check-amendment FILE``: check one amendment against one baseline, headless.

The document is::

    {"baseline": {...}, "amendment": <any JSON>,
     "step": {"index": 0, "reason": "initial"},              (optional; extra keys ignored)
     "resources": [{"identity": "working-state:x", "value": <any JSON>}, ...]}   (optional)

``resources`` lists the reads the hook made, in completion order; a repeated identity is the
pinned value read again and is recorded once. Each value is hashed in the reference's domain
(see :mod:`studio.core.step.value_hash`), nested up to 1,500 levels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from studio.core.findings import Finding, PathPart, dotted, errors, first_error, warnings
from studio.core.json.canonical import NotCanonicalizable
from studio.core.json.values import is_safe_integer, type_name
from studio.core.step.amendment import error_for, plan_amendment, validate_amendment
from studio.core.step.baseline import StepBaseline, json_problem, parse_baseline, shown_value
from studio.core.step.decision_record import (
    STEP_REASONS,
    ResourceRead,
    StepReason,
    resource_read,
    step_decision_record,
)
from studio.core.step.effective import effective_from_plan
from studio.core.step.value_hash import HASHED_MAX_DEPTH

DOCUMENT_RULE: Final = "document"
_DOCUMENT_KEYS: Final = ("baseline", "amendment", "step", "resources")


class AmendmentDocumentError(ValueError):
    """The document itself is malformed, so no amendment can be checked; ``findings`` say why."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        listed = "; ".join(f"{f.pointer or '/'}: {f.message}" for f in findings)
        super().__init__(f"the amendment document is malformed: {listed}")


@dataclass(frozen=True, slots=True)
class AmendmentDocument:
    baseline: StepBaseline
    amendment: Any
    step_index: int
    reason: StepReason
    resources: tuple[ResourceRead, ...]


def check_amendment(document: Any, *, sealed_request_id: str | None = None) -> dict[str, Any]:
    """The verdict on the document's amendment, in the shape the CLI prints.

    Returns ``{"valid", "error", "explanation", "inspection", "effective", "warnings"}``: when
    the amendment is accepted, ``error`` and ``explanation`` are ``None`` and ``inspection`` (the
    reference's record) and ``effective`` (the studio's view of the change) are filled; when it
    fails, ``error`` is the reference's error (``{name, code, message, diagnostics}``, with
    ``requestId`` or ``reason`` where the reference has them, and its message quotes nothing)
    plus the ``rule`` that failed (``V1`` to ``V11``, or a rule outside that table such as
    ``tool-collision``), ``explanation`` is the studio's own finding for it (``{path, message,
    rule}``, naming the ids, tools and values involved), and the other two are ``None``.
    ``warnings`` lists what the studio read without knowing that the reference reads it so (a
    string in ``use.add``, an added entry equal to a baseline one) and selectors that select
    nothing.

    A malformed document (not an object, unknown or missing keys, an invalid baseline, step or
    resource list) raises :class:`AmendmentDocumentError`, whose ``findings`` carry JSON paths
    into the document. The amendment itself never raises: any value gets a verdict.
    """
    parsed = parse_document(document)
    plan = plan_amendment(parsed.baseline, parsed.amendment)
    failed = first_error(plan.findings)
    error = None if failed is None else {**error_for(failed), "rule": failed.rule}
    effective = effective_from_plan(plan)
    noted = [explained(f) for f in warnings(plan.findings)]
    if error is not None or effective is None:
        return {
            "valid": False,
            "error": error,
            "explanation": None if failed is None else explained(failed),
            "inspection": None,
            "effective": None,
            "warnings": noted,
        }
    inspection = step_decision_record(
        step_index=parsed.step_index,
        reason=parsed.reason,
        amendment=plan.snapshot,
        resources=parsed.resources,
        sealed_request_id=sealed_request_id,
    )
    return {
        "valid": True,
        "error": None,
        "explanation": None,
        "inspection": inspection.to_json(),
        "effective": effective.to_json(),
        "warnings": noted,
    }


def explained(finding: Finding) -> dict[str, str]:
    """The studio's own finding in a checked document's answer."""
    return {"path": finding.pointer, "message": finding.message, "rule": finding.rule}


def not_an_object(document: Any) -> Finding:
    return _finding((), f"the document must be an object, got {type_name(document)}")


def document_baseline(
    document: dict[str, Any], keys: tuple[str, ...]
) -> tuple[StepBaseline | None, list[Finding]]:
    """A checked document's baseline, with the findings on its keys (only ``keys`` are known,
    ``baseline`` and ``amendment`` are required) and on the baseline."""
    findings: list[Finding] = []
    for key in document:
        if key not in keys:
            findings.append(_finding((key,), f"unknown document field {key!r}"))
    for key in ("baseline", "amendment"):
        if key not in document:
            findings.append(_finding((key,), f"the document field {key!r} is required"))
    if "baseline" not in document:
        return None, findings
    parsed = parse_baseline(document["baseline"], at=("baseline",))
    if isinstance(parsed, StepBaseline):
        return parsed, findings
    return None, [*findings, *parsed]


def amendment_document_findings(document: Any) -> list[Finding]:
    """Every finding in the document, for the editor to underline; paths start at the document.

    The document's own findings come first; the amendment's follow, in the reference's order,
    only when the document is well formed. Never raises.
    """
    try:
        parsed = parse_document(document)
    except AmendmentDocumentError as exc:
        return exc.findings
    return [
        Finding(("amendment", *f.path), f.message, f.rule, f.severity)
        for f in validate_amendment(parsed.baseline, parsed.amendment)
    ]


def parse_document(document: Any) -> AmendmentDocument:
    """The document's parts, or :class:`AmendmentDocumentError` with every finding."""
    if not isinstance(document, dict):
        raise AmendmentDocumentError([not_an_object(document)])
    baseline, findings = document_baseline(document, _DOCUMENT_KEYS)
    step_index, reason = _step(document.get("step"), findings)
    resources = _resources(document.get("resources"), findings)

    if errors(findings) or baseline is None:
        raise AmendmentDocumentError(findings)
    return AmendmentDocument(
        baseline=baseline,
        amendment=document.get("amendment"),
        step_index=step_index,
        reason=reason,
        resources=resources,
    )


def _step(value: Any, findings: list[Finding]) -> tuple[int, StepReason]:
    if value is None:
        return 0, "initial"
    if not isinstance(value, dict):
        findings.append(_finding(("step",), f"step must be an object, got {type_name(value)}"))
        return 0, "initial"
    index = value.get("index", 0)
    if not (is_safe_integer(index) and index >= 0):
        message = f"step.index must be a whole number 0 or more, got {shown_value(index)}"
        findings.append(_finding(("step", "index"), message))
        index = 0
    reason = value.get("reason", "initial")
    if reason not in STEP_REASONS:
        findings.append(
            _finding(
                ("step", "reason"),
                f"step.reason must be one of {', '.join(STEP_REASONS)}, got {shown_value(reason)}",
            )
        )
        reason = "initial"
    return int(index), reason


def _resources(value: Any, findings: list[Finding]) -> tuple[ResourceRead, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        findings.append(
            _finding(("resources",), f"resources must be an array, got {type_name(value)}")
        )
        return ()
    reads = []
    for i, entry in enumerate(value):
        path: tuple[PathPart, ...] = ("resources", i)
        if not isinstance(entry, dict) or set(entry) != {"identity", "value"}:
            findings.append(
                _finding(path, f"resources[{i}] must be an object with 'identity' and 'value'")
            )
            continue
        identity = entry["identity"]
        if not isinstance(identity, str) or not identity:
            findings.append(
                _finding((*path, "identity"), f"resources[{i}].identity must be a non-empty string")
            )
            continue
        problem = json_problem(entry["value"], max_depth=HASHED_MAX_DEPTH, infinite_numbers=True)
        if problem is not None:
            where, what = problem
            at = (*path, "value", *where)
            findings.append(_finding(at, f"{dotted(at)} {what}"))
            continue
        try:
            reads.append(resource_read(identity, entry["value"]))
        except NotCanonicalizable as exc:
            findings.append(
                _finding((*path, "value"), f"resources[{i}].value has no canonical JSON: {exc}")
            )
    return tuple(reads)


def _finding(path: tuple[PathPart, ...], message: str) -> Finding:
    return Finding(path=path, message=message, rule=DOCUMENT_RULE)
