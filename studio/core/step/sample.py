"""A step-preparation sample (spec/crux.md §2, §5 and §7), parsed with every finding.

The document::

    {"contract": "step",
     "description": "...",                                     (optional)
     "baseline": {...},                                        (studio.core.step.baseline)
     "step": {"index": 0, "reason": "initial",
              "input": <any JSON>,                             (optional, default {})
              "messages": [<canonical message>...],            (optional, default [])
              "stats": {...}},                                 (optional: derived when absent)
     "resources": [{"identity": "working-state:x", "value": <any JSON>}
                   | {"identity": "...", "failure": "unresolved" | "storage-unavailable"
                                                    | "unauthorized"}],        (optional)
     "deadline_ms": 5000}                                      (optional caller deadline)

``resources`` is the declared graph's resources: only these can be read. ``undeclared`` is not a
failure mode a sample gives; it is what reading any handle *not* listed here gives.

Messages follow the reference library's canonical ``Message``: ``role`` (``system``, ``user``,
``assistant`` or ``tool``), ``content`` (a string or an array of parts) and an optional
``metadata`` object. Parts are ``text`` (``text``), ``image`` / ``audio`` / ``video`` / ``file``
(``source``, optional ``mediaType``, ``file`` also ``filename``); assistant messages may also carry
``tool-call`` (``toolCallId``, ``toolName``, ``input``) and ``reasoning`` (``text``) parts; every
part may carry ``providerOptions``. An assistant announces tool calls in ``metadata.toolCalls``
(``[{id, name, args?}]``, the form the reference's tool history reads) or as ``tool-call`` parts; a
tool message answers one call, named by ``metadata.toolCallId`` (and optionally
``metadata.toolName``), with its ``content`` as the result.

``toolHistory`` is projected from the messages as the reference projects it: one entry per call id
in first-seen order, ``{callId, name}`` while unanswered and ``{callId, name, result}`` once a tool
message answers it; a later announcement of the same id resets its entry in place. One deliberate
difference: the reference reads assistant calls from ``metadata.toolCalls`` only, the studio also
from ``tool-call`` parts, so that an unanswered call written either way shows up.

Statistics are honest: when the sample gives none they are derived from the step as the reference
derives them for a run without usage reports: ``cursor``, ``stepIndex`` and
``modelCalls.started``/``succeeded`` equal the index (each earlier boundary sealed one call that
completed), nothing failed, was cancelled or retried, and token coverage is ``none``, so the token
fields are absent, not zero. Cost coverage is always ``none``.

The messages and the tool history are in ``sample_messages``, the statistics in ``sample_stats``,
the declared resources in ``sample_resources``, and the wording of findings in ``sample_findings``.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from studio.core.findings import Finding, errors
from studio.core.json.values import is_finite_number, is_safe_integer, type_name
from studio.core.step.baseline import StepBaseline, parse_baseline
from studio.core.step.decision_record import STEP_REASONS, StepReason
from studio.core.step.sample_findings import (
    Path,
    json_findings,
    key_part,
    key_text,
    must_be,
    sample_finding,
    shown_field,
)
from studio.core.step.sample_messages import ToolHistoryEntry, check_messages, tool_history
from studio.core.step.sample_resources import (
    DeclaredResource,
    declared_resource,
    parse_resources,
)
from studio.core.step.sample_stats import StepStats, derived_stats, parse_stats

CONTRACT: Final = "step"

SAMPLE_KEYS: Final = (
    "contract",
    "description",
    "baseline",
    "step",
    "resources",
    "deadline_ms",
    "expect",
)
STEP_KEYS: Final = ("index", "reason", "input", "messages", "stats")


class StepSample(BaseModel):
    """Everything a step-preparation run needs: the baseline, the boundary and the resources."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    baseline: StepBaseline
    index: int
    reason: StepReason
    input: Any = Field(default_factory=dict)
    messages: tuple[Any, ...] = ()
    stats: StepStats
    stats_given: bool = False
    resources: tuple[DeclaredResource, ...] = ()
    deadline_ms: float | None = None
    description: str | None = None
    warnings: tuple[Finding, ...] = ()

    @property
    def tool_history(self) -> tuple[ToolHistoryEntry, ...]:
        return tool_history(self.messages)

    def resource(self, identity: str) -> DeclaredResource | None:
        """The declared resource with ``identity``; ``None`` when reading it is ``undeclared``."""
        return declared_resource(self.resources, identity)


# ---------------------------------------------------------------------------------------------
# What the hook sees


def step_context(sample: StepSample) -> dict[str, Any]:
    """The JSON-safe step context (everything of ``StepContext`` but ``resources``); a copy."""
    return {
        "operation": "language",
        "input": copy.deepcopy(sample.input),
        "index": sample.index,
        "reason": sample.reason,
        "messages": copy.deepcopy(list(sample.messages)),
        "toolHistory": [entry.to_json() for entry in sample.tool_history],
        "stats": sample.stats.to_json(),
    }


def step_worker_payload(sample: StepSample) -> dict[str, Any]:
    """What the engine sends a step worker: ``{"context", "resources"}`` (see engine.hook_api)."""
    return {
        "context": step_context(sample),
        "resources": [declared.to_json() for declared in sample.resources],
    }


# ---------------------------------------------------------------------------------------------
# Parsing


def parse_step_sample(value: Any) -> StepSample | list[Finding]:
    """The sample, or every finding (errors, then warnings) that stops it being one.

    Paths start at the sample's root. Never raises: any Python value gets an answer. Warnings
    alone do not stop a sample; they travel on :attr:`StepSample.warnings`.
    """
    if not isinstance(value, dict):
        return [sample_finding((), f"a step sample must be an object, got {type_name(value)}")]
    findings: list[Finding] = []
    description, baseline = parse_sample_head(
        value,
        SAMPLE_KEYS,
        CONTRACT,
        findings,
        name="step sample",
        sample="a step-preparation sample",
    )

    step = _StepParts()
    if "step" not in value:
        findings.append(sample_finding(("step",), "the sample field 'step' is required"))
    else:
        step = _parse_step(value["step"], findings)
    resources = parse_resources(value.get("resources", []), findings)

    deadline = value.get("deadline_ms")
    if "deadline_ms" in value and not (is_finite_number(deadline) and deadline >= 0):
        findings.append(must_be(("deadline_ms",), "a number of milliseconds, 0 or more", deadline))
        deadline = None

    if errors(findings) or baseline is None or step.index is None or step.reason is None:
        return errors(findings) + [f for f in findings if f.severity == "warning"]
    return StepSample(
        baseline=baseline,
        index=step.index,
        reason=step.reason,
        input=step.input,
        messages=tuple(step.messages),
        stats=step.stats or derived_stats(step.index, step.reason),
        stats_given=step.stats is not None,
        resources=tuple(resources),
        deadline_ms=None if deadline is None else float(deadline),
        description=description,
        warnings=tuple(findings),
    )


def parse_sample_head(
    value: dict[str, Any],
    keys: tuple[str, ...],
    contract: str,
    findings: list[Finding],
    *,
    name: str,
    sample: str,
) -> tuple[str | None, StepBaseline | None]:
    """The description and baseline every preparation sample starts with, each finding on
    them, on an unknown key (only ``keys`` are known) and on a ``contract`` other than
    ``contract`` added to ``findings``. ``name`` names the sample in the unknown-key message
    ("step sample"), ``sample`` in the contract message ("a step-preparation sample")."""
    for key in value:
        if key not in keys:
            findings.append(
                sample_finding((key_part(key),), f"unknown {name} field {key_text(key)}")
            )
    if value.get("contract") != contract:
        findings.append(
            sample_finding(
                ("contract",),
                f'contract must be "{contract}" for {sample}, got {shown_field(value, "contract")}',
            )
        )
    description = value.get("description")
    if "description" in value and not isinstance(description, str):
        findings.append(must_be(("description",), "a string", description))
    if "baseline" not in value:
        findings.append(sample_finding(("baseline",), "the sample field 'baseline' is required"))
        return _text_or_none(description), None
    parsed = parse_baseline(value["baseline"], at=("baseline",))
    if isinstance(parsed, StepBaseline):
        return _text_or_none(description), parsed
    findings.extend(parsed)
    return _text_or_none(description), None


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _StepParts:
    def __init__(self) -> None:
        self.index: int | None = None
        self.reason: StepReason | None = None
        self.input: Any = {}
        self.messages: list[Any] = []
        self.stats: StepStats | None = None


def _parse_step(value: Any, findings: list[Finding]) -> _StepParts:
    out = _StepParts()
    at: Path = ("step",)
    if not isinstance(value, dict):
        findings.append(must_be(at, "an object", value))
        return out
    for key in value:
        if key not in STEP_KEYS:
            findings.append(
                sample_finding((*at, key_part(key)), f"unknown step field {key_text(key)}")
            )

    index = value.get("index")
    if "index" not in value:
        findings.append(sample_finding((*at, "index"), "step.index is required"))
    elif not (is_safe_integer(index) and index >= 0):
        findings.append(must_be((*at, "index"), "a whole number, 0 or more", index))
    else:
        out.index = int(index)

    reason = value.get("reason")
    if "reason" not in value:
        findings.append(sample_finding((*at, "reason"), "step.reason is required"))
    elif reason not in STEP_REASONS:
        findings.append(must_be((*at, "reason"), f"one of {', '.join(STEP_REASONS)}", reason))
    else:
        out.reason = reason

    if out.index is not None and out.reason is not None:
        if out.reason == "initial" and out.index > 0:
            findings.append(
                sample_finding(
                    (*at, "index"),
                    f'step.reason "initial" means no earlier call in the run, so step.index must '
                    f"be 0 (each earlier evaluation led to a sealed call), got {out.index}",
                )
            )
        elif out.reason != "initial" and out.index == 0:
            findings.append(
                sample_finding(
                    (*at, "reason"),
                    f'step.reason "{out.reason}" follows an earlier sealed call, whose own '
                    'preparation used index 0: at index 0 the reason is "initial"',
                )
            )

    if "input" in value:
        out.input = value["input"]
        json_findings((*at, "input"), out.input, findings)

    messages = value.get("messages", [])
    if not isinstance(messages, list):
        findings.append(must_be((*at, "messages"), "an array of messages", messages))
    else:
        check_messages(messages, findings)
        out.messages = messages

    if value.get("stats") is not None:
        out.stats = parse_stats(value["stats"], out.index, out.reason, findings)
    return out
