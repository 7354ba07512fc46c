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
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterable
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from studio.core.findings import Finding, PathPart, dotted, errors
from studio.core.json.canonical import NotCanonicalizable
from studio.core.json.values import is_finite_number, is_safe_integer, type_name
from studio.core.step.baseline import StepBaseline, json_problem, parse_baseline, shown_value
from studio.core.step.decision_record import STEP_REASONS, StepReason, resource_read

SAMPLE_RULE: Final = "step-sample"
CONTRACT: Final = "step"

Coverage = Literal["complete", "partial", "none"]
COVERAGES: Final[tuple[str, ...]] = get_args(Coverage)
AttemptReason = Literal["initial", "retry", "fallback", "validation-retry"]
ATTEMPT_REASONS: Final[tuple[str, ...]] = get_args(AttemptReason)
ResourceFailure = Literal["unresolved", "storage-unavailable", "unauthorized"]
RESOURCE_FAILURES: Final[tuple[str, ...]] = get_args(ResourceFailure)
Role = Literal["system", "user", "assistant", "tool"]
ROLES: Final[tuple[str, ...]] = get_args(Role)

# The identities the reference gives its readable resources.
IDENTITY_PATTERN: Final = re.compile(r"^(?:working-state:.+|blackboard:.+|memory:[^:]+:.+)$", re.S)

_SAMPLE_KEYS: Final = ("contract", "description", "baseline", "step", "resources", "deadline_ms")
_STEP_KEYS: Final = ("index", "reason", "input", "messages", "stats")
_STATS_KEYS: Final = ("at", "cursor", "attempt", "stepIndex", "run", "root")
_ATTEMPT_KEYS: Final = ("number", "reason")
_SCOPE_KEYS: Final = ("usage", "modelCalls")
_TOKEN_KEYS: Final = ("inputTokens", "outputTokens", "totalTokens")
_USAGE_KEYS: Final = (*_TOKEN_KEYS, "coverage")
_COVERAGE_KEYS: Final = ("tokens", "cost")
_CALL_KEYS: Final = ("started", "succeeded", "failed", "cancelled", "transportRetries")
_MESSAGE_KEYS: Final = ("role", "content", "metadata")
_MEDIA_TYPES: Final = ("image", "audio", "video", "file")
_ASSISTANT_ONLY: Final = ("tool-call", "reasoning")
# Keys each part type may have besides ``type`` and ``providerOptions``: (required, optional).
_PART_FIELDS: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "text": (("text",), ()),
    "image": (("source",), ("mediaType",)),
    "audio": (("source",), ("mediaType",)),
    "video": (("source",), ("mediaType",)),
    "file": (("source",), ("mediaType", "filename")),
    "tool-call": (("toolCallId", "toolName"), ("input",)),
    "reasoning": (("text",), ()),
}

Path = tuple[PathPart, ...]


# ---------------------------------------------------------------------------------------------
# The parsed sample


class ModelCallStats(BaseModel):
    model_config = ConfigDict(frozen=True)

    started: int = 0
    succeeded: int = 0
    failed: int = 0
    cancelled: int = 0
    transport_retries: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "started": self.started,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "cancelled": self.cancelled,
            "transportRetries": self.transport_retries,
        }


class UsageStats(BaseModel):
    """Token usage with its coverage; a token field is ``None`` (absent in JSON) when unknown."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    tokens: Coverage = "none"
    cost: Coverage = "none"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in zip(
            _TOKEN_KEYS, (self.input_tokens, self.output_tokens, self.total_tokens), strict=True
        ):
            if value is not None:
                out[key] = value
        out["coverage"] = {"tokens": self.tokens, "cost": self.cost}
        return out


class ScopeStats(BaseModel):
    model_config = ConfigDict(frozen=True)

    usage: UsageStats = Field(default_factory=UsageStats)
    model_calls: ModelCallStats = Field(default_factory=ModelCallStats)

    def to_json(self) -> dict[str, Any]:
        return {"usage": self.usage.to_json(), "modelCalls": self.model_calls.to_json()}


class StepStats(BaseModel):
    """``StepPreparationStats``: committed activity before this boundary."""

    model_config = ConfigDict(frozen=True)

    cursor: int
    attempt_number: int = 1
    attempt_reason: AttemptReason = "initial"
    step_index: int
    run: ScopeStats
    root: ScopeStats
    at: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.at is not None:
            out["at"] = self.at
        out.update(
            {
                "cursor": self.cursor,
                "attempt": {"number": self.attempt_number, "reason": self.attempt_reason},
                "stepIndex": self.step_index,
                "run": self.run.to_json(),
                "root": self.root.to_json(),
            }
        )
        return out


class DeclaredResource(BaseModel):
    """A resource of the declared graph: its value, or the way reading it fails."""

    model_config = ConfigDict(frozen=True)

    identity: str
    value: Any = None
    failure: ResourceFailure | None = None

    @property
    def readable(self) -> bool:
        return self.failure is None

    def to_json(self) -> dict[str, Any]:
        if self.failure is not None:
            return {"identity": self.identity, "failure": self.failure}
        return {"identity": self.identity, "value": copy.deepcopy(self.value)}


class ToolHistoryEntry(BaseModel):
    """``StepToolHistoryEntry``: ``answered`` says whether ``result`` is present."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    name: str
    answered: bool = False
    result: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"callId": self.call_id, "name": self.name}
        if self.answered:
            out["result"] = copy.deepcopy(self.result)
        return out


class StepSample(BaseModel):
    """Everything a step-preparation run needs: the baseline, the boundary and the resources."""

    model_config = ConfigDict(frozen=True)

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
        for declared in self.resources:
            if declared.identity == identity:
                return declared
        return None


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


def tool_history(messages: Iterable[Any]) -> tuple[ToolHistoryEntry, ...]:
    """Tool calls and their results in first-seen order (spec/crux.md §2).

    Tolerant of malformed messages (they contribute nothing), so it can run on any value.
    """
    calls: dict[str, ToolHistoryEntry] = {}
    for message in messages:
        if not isinstance(message, dict):
            continue
        metadata = message.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        role = message.get("role")
        if role == "assistant":
            for call_id, name in _announced_calls(message, metadata):
                calls[call_id] = ToolHistoryEntry(call_id=call_id, name=name)
        elif role == "tool":
            call_id = metadata.get("toolCallId")
            if not isinstance(call_id, str) or not call_id:
                continue
            name = metadata.get("toolName")
            if not isinstance(name, str):
                known = calls.get(call_id)
                name = known.name if known is not None else None
            if name is None:
                continue
            calls[call_id] = ToolHistoryEntry(
                call_id=call_id, name=name, answered=True, result=message.get("content")
            )
    return tuple(calls.values())


def _announced_calls(message: dict[str, Any], metadata: dict[str, Any]) -> list[tuple[str, str]]:
    """The ``(id, name)`` of each call an assistant message makes: metadata first, then parts."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    raw = metadata.get("toolCalls")
    for call in raw if isinstance(raw, list) else ():
        if isinstance(call, dict):
            call_id, name = call.get("id"), call.get("name")
            if isinstance(call_id, str) and isinstance(name, str) and call_id:
                found.append((call_id, name))
                seen.add(call_id)
    content = message.get("content")
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and part.get("type") == "tool-call":
            call_id, name = part.get("toolCallId"), part.get("toolName")
            if isinstance(call_id, str) and isinstance(name, str) and call_id not in seen:
                found.append((call_id, name))
                seen.add(call_id)
    return found


def derived_stats(index: int, reason: str) -> StepStats:
    """Honest statistics when the sample gives none: see the module docstring."""
    scope = ScopeStats(
        usage=UsageStats(tokens="none", cost="none"),
        model_calls=ModelCallStats(started=index, succeeded=index),
    )
    return StepStats(
        cursor=index,
        attempt_number=1,
        attempt_reason="validation-retry" if reason == "validation-retry" else "initial",
        step_index=index,
        run=scope,
        root=scope,
    )


# ---------------------------------------------------------------------------------------------
# Parsing


def parse_step_sample(value: Any) -> StepSample | list[Finding]:
    """The sample, or every finding (errors, then warnings) that stops it being one.

    Paths start at the sample's root. Never raises: any Python value gets an answer. Warnings
    alone do not stop a sample; they travel on :attr:`StepSample.warnings`.
    """
    if not isinstance(value, dict):
        return [_finding((), f"a step sample must be an object, got {type_name(value)}")]
    findings: list[Finding] = []
    for key in value:
        if key not in _SAMPLE_KEYS:
            findings.append(_finding((_part(key),), f"unknown step sample field {_key(key)}"))
    contract = value.get("contract")
    if contract != CONTRACT:
        findings.append(
            _finding(
                ("contract",),
                f'contract must be "{CONTRACT}" for a step-preparation sample, '
                f"got {_shown(value, 'contract')}",
            )
        )
    description = value.get("description")
    if "description" in value and not isinstance(description, str):
        findings.append(_must(("description",), "a string", description))

    baseline: StepBaseline | None = None
    if "baseline" not in value:
        findings.append(_finding(("baseline",), "the sample field 'baseline' is required"))
    else:
        parsed = parse_baseline(value["baseline"], at=("baseline",))
        if isinstance(parsed, StepBaseline):
            baseline = parsed
        else:
            findings.extend(parsed)

    step = _StepParts()
    if "step" not in value:
        findings.append(_finding(("step",), "the sample field 'step' is required"))
    else:
        step = _parse_step(value["step"], findings)
    resources = _parse_resources(value.get("resources", []), findings)

    deadline = value.get("deadline_ms")
    if "deadline_ms" in value and not (is_finite_number(deadline) and deadline >= 0):
        findings.append(_must(("deadline_ms",), "a number of milliseconds, 0 or more", deadline))
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
        description=description if isinstance(description, str) else None,
        warnings=tuple(findings),
    )


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
        findings.append(_must(at, "an object", value))
        return out
    for key in value:
        if key not in _STEP_KEYS:
            findings.append(_finding((*at, _part(key)), f"unknown step field {_key(key)}"))

    index = value.get("index")
    if "index" not in value:
        findings.append(_finding((*at, "index"), "step.index is required"))
    elif not (is_safe_integer(index) and index >= 0):
        findings.append(_must((*at, "index"), "a whole number, 0 or more", index))
    else:
        out.index = int(index)

    reason = value.get("reason")
    if "reason" not in value:
        findings.append(_finding((*at, "reason"), "step.reason is required"))
    elif reason not in STEP_REASONS:
        findings.append(_must((*at, "reason"), f"one of {', '.join(STEP_REASONS)}", reason))
    else:
        out.reason = reason

    if out.index is not None and out.reason is not None:
        if out.reason == "initial" and out.index > 0:
            findings.append(
                _finding(
                    (*at, "index"),
                    f'step.reason "initial" means no earlier call in the run, so step.index must '
                    f"be 0 (each earlier evaluation led to a sealed call), got {out.index}",
                )
            )
        elif out.reason != "initial" and out.index == 0:
            findings.append(
                _finding(
                    (*at, "reason"),
                    f'step.reason "{out.reason}" follows an earlier sealed call, whose own '
                    'preparation used index 0: at index 0 the reason is "initial"',
                )
            )

    if "input" in value:
        out.input = value["input"]
        _json_findings((*at, "input"), out.input, findings)

    messages = value.get("messages", [])
    if not isinstance(messages, list):
        findings.append(_must((*at, "messages"), "an array of messages", messages))
    else:
        _check_messages(messages, findings)
        out.messages = messages

    if value.get("stats") is not None:
        out.stats = _parse_stats(value["stats"], out.index, out.reason, findings)
    return out


# ---- messages --------------------------------------------------------------------------------


def _check_messages(messages: list[Any], findings: list[Finding]) -> None:
    announced: set[str] = set()
    for i, message in enumerate(messages):
        at: Path = ("step", "messages", i)
        if not isinstance(message, dict):
            findings.append(_must(at, "a message object with a role and content", message))
            continue
        for key in message:
            if key not in _MESSAGE_KEYS:
                findings.append(
                    _finding(
                        (*at, _part(key)),
                        f"unknown message field {_key(key)}: a message has role, content and "
                        "metadata",
                    )
                )
        role = message.get("role")
        if role not in ROLES:
            findings.append(_must((*at, "role"), f"one of {', '.join(ROLES)}", role))
            role = None
        if "content" not in message:
            findings.append(_finding((*at, "content"), f"{dotted((*at, 'content'))} is required"))
        else:
            _check_content(message["content"], (*at, "content"), role, findings)
        metadata = message.get("metadata")
        if "metadata" in message and not isinstance(metadata, dict):
            findings.append(_must((*at, "metadata"), "an object", metadata))
            metadata = None
        elif metadata is not None:
            _json_findings((*at, "metadata"), metadata, findings)
        if role == "assistant":
            _check_tool_calls(metadata, at, findings)
            announced.update(call_id for call_id, _ in _announced_calls(message, metadata or {}))
        elif role == "tool":
            _check_tool_answer(metadata, at, announced, findings)


def _check_content(content: Any, at: Path, role: str | None, findings: list[Finding]) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        findings.append(_must(at, "a string or an array of parts", content))
        return
    for j, part in enumerate(content):
        _check_part(part, (*at, j), role, findings)


def _check_part(part: Any, at: Path, role: str | None, findings: list[Finding]) -> None:
    if not isinstance(part, dict):
        findings.append(_must(at, "a part object with a type", part))
        return
    kind = part.get("type")
    if kind not in _PART_FIELDS:
        known = ", ".join(_PART_FIELDS)
        findings.append(_must((*at, "type"), f"one of {known}", kind))
        return
    if kind in _ASSISTANT_ONLY and role is not None and role != "assistant":
        findings.append(
            _finding(
                (*at, "type"),
                f'a "{kind}" part belongs to an assistant message only, not to a {role} message',
            )
        )
    required, optional = _PART_FIELDS[kind]
    allowed = {"type", "providerOptions", *required, *optional}
    for key in part:
        if key not in allowed:
            findings.append(
                _finding((*at, _part(key)), f'unknown field {_key(key)} in a "{kind}" part')
            )
    for key in required:
        field = part.get(key)
        if not isinstance(field, str) or (key != "text" and not field):
            what = "a string" if key == "text" else "a non-empty string"
            findings.append(_must((*at, key), what, field))
    for key in ("mediaType", "filename"):
        if key in optional and key in part and not isinstance(part[key], str):
            findings.append(_must((*at, key), "a string", part[key]))
    if "input" in part:
        _json_findings((*at, "input"), part["input"], findings)
    if "providerOptions" in part:
        options = part["providerOptions"]
        if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
            findings.append(
                _must((*at, "providerOptions"), "an object of per-provider objects", options)
            )
        else:
            _json_findings((*at, "providerOptions"), options, findings)


def _check_tool_calls(metadata: dict[str, Any] | None, at: Path, findings: list[Finding]) -> None:
    if metadata is None or "toolCalls" not in metadata:
        return
    calls = metadata["toolCalls"]
    where: Path = (*at, "metadata", "toolCalls")
    if not isinstance(calls, list):
        findings.append(_must(where, "an array of {id, name} tool calls", calls))
        return
    for k, call in enumerate(calls):
        if not isinstance(call, dict):
            findings.append(_must((*where, k), "a tool call object with an id and a name", call))
            continue
        for key in ("id", "name"):
            if not isinstance(call.get(key), str) or not call.get(key):
                findings.append(_must((*where, k, key), "a non-empty string", call.get(key)))


def _check_tool_answer(
    metadata: dict[str, Any] | None, at: Path, announced: set[str], findings: list[Finding]
) -> None:
    metadata = metadata or {}
    call_id = metadata.get("toolCallId")
    if not isinstance(call_id, str) or not call_id:
        findings.append(
            _finding(
                (*at, "metadata", "toolCallId"),
                f"a tool message answers one call: {dotted((*at, 'metadata', 'toolCallId'))} must "
                f"be the call's id, got {shown_value(call_id)}",
            )
        )
        return
    name = metadata.get("toolName")
    if "toolName" in metadata and (not isinstance(name, str) or not name):
        findings.append(_must((*at, "metadata", "toolName"), "a non-empty string", name))
    elif name is None and call_id not in announced:
        findings.append(
            Finding(
                (*at, "metadata", "toolCallId"),
                f"this tool message answers call {call_id!r}, which no earlier assistant message "
                "made, and names no metadata.toolName: it does not appear in toolHistory",
                SAMPLE_RULE,
                "warning",
            )
        )


# ---- statistics ------------------------------------------------------------------------------


def _parse_stats(
    value: Any, index: int | None, reason: str | None, findings: list[Finding]
) -> StepStats | None:
    at: Path = ("step", "stats")
    if not isinstance(value, dict):
        findings.append(_must(at, "an object", value))
        return None
    start = len(findings)
    for key in value:
        if key not in _STATS_KEYS:
            findings.append(_finding((*at, _part(key)), f"unknown stats field {_key(key)}"))
    for key in ("cursor", "attempt", "stepIndex", "run", "root"):
        if key not in value:
            findings.append(_finding((*at, _part(key)), f"{dotted((*at, key))} is required"))
    at_time = value.get("at")
    if "at" in value and not isinstance(at_time, str):
        findings.append(_must((*at, "at"), "a timestamp string", at_time))
    cursor = _count(value, "cursor", at, findings)
    step_index = _count(value, "stepIndex", at, findings)
    if step_index is not None and index is not None and step_index != index:
        findings.append(
            _finding(
                (*at, "stepIndex"),
                f"step.stats.stepIndex ({step_index}) must equal step.index ({index})",
            )
        )

    attempt_number, attempt_reason = 1, "initial"
    attempt = value.get("attempt")
    if "attempt" in value:
        if not isinstance(attempt, dict):
            findings.append(_must((*at, "attempt"), "an object", attempt))
        else:
            for key in attempt:
                if key not in _ATTEMPT_KEYS:
                    findings.append(
                        _finding((*at, "attempt", _part(key)), f"unknown attempt field {_key(key)}")
                    )
            number = attempt.get("number")
            if not (is_safe_integer(number) and number >= 1):
                findings.append(
                    _must((*at, "attempt", "number"), "a whole number, 1 or more", number)
                )
            else:
                attempt_number = int(number)
            attempt_reason = attempt.get("reason")
            if attempt_reason not in ATTEMPT_REASONS:
                findings.append(
                    _must(
                        (*at, "attempt", "reason"),
                        f"one of {', '.join(ATTEMPT_REASONS)}",
                        attempt_reason,
                    )
                )
            elif reason is not None and (attempt_reason == "validation-retry") != (
                reason == "validation-retry"
            ):
                findings.append(
                    _finding(
                        (*at, "attempt", "reason"),
                        f'step.stats.attempt.reason "{attempt_reason}" does not fit step.reason '
                        f'"{reason}": a validation retry is both, or neither',
                    )
                )

    run = _parse_scope(value.get("run"), (*at, "run"), findings) if "run" in value else None
    root = _parse_scope(value.get("root"), (*at, "root"), findings) if "root" in value else None
    if run is not None:
        started = run.model_calls.started
        if reason == "initial" and started != 0:
            findings.append(
                _finding(
                    (*at, "run", "modelCalls", "started"),
                    f'step.reason "initial" means no earlier call in the run, so '
                    f"run.modelCalls.started must be 0, got {started}",
                )
            )
        elif reason is not None and reason != "initial" and started == 0:
            findings.append(
                _finding(
                    (*at, "run", "modelCalls", "started"),
                    f'step.reason "{reason}" follows an earlier call, so run.modelCalls.started '
                    "must be 1 or more",
                )
            )
    if run is not None and root is not None:
        run_calls, root_calls = run.model_calls.to_json(), root.model_calls.to_json()
        for key in _CALL_KEYS:
            if root_calls[key] < run_calls[key]:
                findings.append(
                    _finding(
                        (*at, "root", "modelCalls", key),
                        f"root.modelCalls.{key} ({root_calls[key]}) cannot be less than the "
                        f"run's ({run_calls[key]}): the root scope contains the run",
                    )
                )

    if errors(findings[start:]) or None in (cursor, step_index, run, root):
        return None
    assert cursor is not None and step_index is not None and run is not None and root is not None
    return StepStats(
        cursor=cursor,
        attempt_number=attempt_number,
        attempt_reason=attempt_reason,
        step_index=step_index,
        run=run,
        root=root,
        at=at_time if isinstance(at_time, str) else None,
    )


def _parse_scope(value: Any, at: Path, findings: list[Finding]) -> ScopeStats | None:
    if not isinstance(value, dict):
        findings.append(_must(at, "an object with usage and modelCalls", value))
        return None
    start = len(findings)
    for key in value:
        if key not in _SCOPE_KEYS:
            findings.append(_finding((*at, _part(key)), f"unknown scope field {_key(key)}"))
    for key in _SCOPE_KEYS:
        if key not in value:
            findings.append(_finding((*at, _part(key)), f"{dotted((*at, key))} is required"))

    usage = None
    raw_usage = value.get("usage")
    if "usage" in value:
        usage = _parse_usage(raw_usage, (*at, "usage"), findings)

    calls: dict[str, int] = {}
    raw_calls = value.get("modelCalls")
    where: Path = (*at, "modelCalls")
    if "modelCalls" in value:
        if not isinstance(raw_calls, dict):
            findings.append(_must(where, "an object", raw_calls))
        else:
            for key in raw_calls:
                if key not in _CALL_KEYS:
                    findings.append(
                        _finding((*where, _part(key)), f"unknown modelCalls field {_key(key)}")
                    )
            for key in _CALL_KEYS:
                if key not in raw_calls:
                    findings.append(
                        _finding((*where, _part(key)), f"{dotted((*where, key))} is required")
                    )
                    continue
                count = _count(raw_calls, key, where, findings)
                if count is not None:
                    calls[key] = count
            ended = sum(calls.get(k, 0) for k in ("succeeded", "failed", "cancelled"))
            if "started" in calls and ended > calls["started"]:
                findings.append(
                    _finding(
                        (*where, "started"),
                        f"{dotted(where)}: succeeded, failed and cancelled ({ended}) cannot "
                        f"exceed started ({calls['started']})",
                    )
                )
    if errors(findings[start:]) or usage is None:
        return None
    return ScopeStats(
        usage=usage,
        model_calls=ModelCallStats(
            started=calls["started"],
            succeeded=calls["succeeded"],
            failed=calls["failed"],
            cancelled=calls["cancelled"],
            transport_retries=calls["transportRetries"],
        ),
    )


def _parse_usage(value: Any, at: Path, findings: list[Finding]) -> UsageStats | None:
    if not isinstance(value, dict):
        findings.append(_must(at, "an object", value))
        return None
    start = len(findings)
    for key in value:
        if key not in _USAGE_KEYS:
            findings.append(_finding((*at, _part(key)), f"unknown usage field {_key(key)}"))
    coverage = value.get("coverage")
    tokens, cost = "none", "none"
    if "coverage" not in value:
        findings.append(_finding((*at, "coverage"), f"{dotted((*at, 'coverage'))} is required"))
    elif not isinstance(coverage, dict):
        findings.append(_must((*at, "coverage"), "an object with tokens and cost", coverage))
    else:
        for key in coverage:
            if key not in _COVERAGE_KEYS:
                findings.append(
                    _finding((*at, "coverage", _part(key)), f"unknown coverage field {_key(key)}")
                )
        for key in _COVERAGE_KEYS:
            level = coverage.get(key)
            if level not in COVERAGES:
                findings.append(
                    _must((*at, "coverage", key), f"one of {', '.join(COVERAGES)}", level)
                )
        tokens = coverage.get("tokens", "none")
        cost = coverage.get("cost", "none")
    counts: dict[str, int | None] = {}
    for key in _TOKEN_KEYS:
        if key not in value:
            counts[key] = None
            continue
        if tokens == "none":
            findings.append(
                _finding(
                    (*at, key),
                    f'{dotted((*at, key))} must be absent when coverage.tokens is "none": an '
                    "unknown token count is absent, never zero",
                )
            )
        counts[key] = _count(value, key, at, findings)
    if errors(findings[start:]):
        return None
    return UsageStats(
        input_tokens=counts["inputTokens"],
        output_tokens=counts["outputTokens"],
        total_tokens=counts["totalTokens"],
        tokens=tokens,
        cost=cost,
    )


def _count(value: dict[str, Any], key: str, at: Path, findings: list[Finding]) -> int | None:
    if key not in value:
        return None
    raw = value[key]
    if not (is_safe_integer(raw) and raw >= 0):
        findings.append(_must((*at, key), "a whole number, 0 or more", raw))
        return None
    return int(raw)


# ---- resources -------------------------------------------------------------------------------


def _parse_resources(value: Any, findings: list[Finding]) -> list[DeclaredResource]:
    if not isinstance(value, list):
        findings.append(_must(("resources",), "an array of declared resources", value))
        return []
    out: list[DeclaredResource] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(value):
        at: Path = ("resources", i)
        if not isinstance(entry, dict):
            findings.append(_must(at, "an object with an identity and a value or a failure", entry))
            continue
        start = len(findings)
        for key in entry:
            if key not in ("identity", "value", "failure"):
                findings.append(
                    _finding(
                        (*at, _part(key)),
                        f"unknown resource field {_key(key)}: a declared resource has an "
                        "identity and either a value or a failure",
                    )
                )
        identity = entry.get("identity")
        if not isinstance(identity, str) or not IDENTITY_PATTERN.match(identity):
            findings.append(
                _must(
                    (*at, "identity"),
                    "a resource identity (working-state:<id>, blackboard:<id> or "
                    "memory:<memoryId>:<blockId>)",
                    identity,
                )
            )
        elif identity in seen:
            findings.append(
                _finding(
                    (*at, "identity"),
                    f"{identity!r} is already declared at resources[{seen[identity]}]: each "
                    "resource is declared once",
                )
            )
        else:
            seen[identity] = i
        has_value, has_failure = "value" in entry, "failure" in entry
        if has_value == has_failure:
            findings.append(
                _finding(
                    at,
                    f"resources[{i}] must have either a value (null included) or a failure, "
                    f"not {'both' if has_value else 'neither'}",
                )
            )
        elif has_failure and entry["failure"] not in RESOURCE_FAILURES:
            hint = (
                ' ("undeclared" is what reading a resource missing from this list gives)'
                if entry["failure"] == "undeclared"
                else ""
            )
            findings.append(
                _must(
                    (*at, "failure"),
                    f"one of {', '.join(RESOURCE_FAILURES)}{hint}",
                    entry["failure"],
                )
            )
        elif has_value and isinstance(identity, str):
            before = len(findings)
            _json_findings((*at, "value"), entry["value"], findings)
            if len(findings) == before:
                try:
                    resource_read(identity, entry["value"])
                except (NotCanonicalizable, RecursionError) as exc:
                    findings.append(
                        _finding(
                            (*at, "value"), f"resources[{i}].value has no canonical JSON: {exc}"
                        )
                    )
        if len(findings) == start:
            out.append(
                DeclaredResource(
                    identity=identity,
                    value=entry.get("value"),
                    failure=entry.get("failure"),
                )
            )
    return out


# ---- helpers ---------------------------------------------------------------------------------


def _json_findings(at: Path, value: Any, findings: list[Finding]) -> None:
    problem = json_problem(value)
    if problem is not None:
        where, what = problem
        findings.append(_finding((*at, *where), f"{dotted((*at, *where))} {what}"))


def _finding(path: Path, message: str) -> Finding:
    return Finding(path=path, message=message, rule=SAMPLE_RULE)


def _must(path: Path, what: str, value: Any) -> Finding:
    return _finding(path, f"{dotted(path) or 'the value'} must be {what}, got {_value(value)}")


def _value(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return type_name(value)
    return shown_value(value)


def _shown(value: dict[str, Any], key: str) -> str:
    return _value(value[key]) if key in value else "nothing"


def _part(key: Any) -> PathPart:
    """An object key as a path part, even when a Python caller used a key JSON cannot have."""
    return key if isinstance(key, str) else repr(key)


def _key(key: Any) -> str:
    return repr(key) if isinstance(key, str) else f"({type_name(key)})"
