"""The statistics of a step-preparation sample (``StepPreparationStats``, spec/crux.md §2): the
typed stats, their parser, and the honest stats derived when a sample gives none."""

from __future__ import annotations

from typing import Any, Final, Literal, TypeGuard, get_args

from pydantic import BaseModel, ConfigDict, Field

from studio.core.findings import Finding, dotted, errors
from studio.core.json.values import is_safe_integer
from studio.core.step.sample_findings import Path, key_part, key_text, must_be, sample_finding

Coverage = Literal["complete", "partial", "none"]
COVERAGES: Final[tuple[str, ...]] = get_args(Coverage)
AttemptReason = Literal["initial", "retry", "fallback", "validation-retry"]
ATTEMPT_REASONS: Final[tuple[str, ...]] = get_args(AttemptReason)


def _is_coverage(value: object) -> TypeGuard[Coverage]:
    return value in COVERAGES


def _is_attempt_reason(value: object) -> TypeGuard[AttemptReason]:
    return value in ATTEMPT_REASONS


STATS_KEYS: Final = ("at", "cursor", "attempt", "stepIndex", "run", "root")
ATTEMPT_KEYS: Final = ("number", "reason")
SCOPE_KEYS: Final = ("usage", "modelCalls")
TOKEN_KEYS: Final = ("inputTokens", "outputTokens", "totalTokens")
USAGE_KEYS: Final = (*TOKEN_KEYS, "coverage")
COVERAGE_KEYS: Final = ("tokens", "cost")
CALL_KEYS: Final = ("started", "succeeded", "failed", "cancelled", "transportRetries")


class ModelCallStats(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

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

    model_config = ConfigDict(defer_build=True, frozen=True)

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    tokens: Coverage = "none"
    cost: Coverage = "none"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in zip(
            TOKEN_KEYS, (self.input_tokens, self.output_tokens, self.total_tokens), strict=True
        ):
            if value is not None:
                out[key] = value
        out["coverage"] = {"tokens": self.tokens, "cost": self.cost}
        return out


class ScopeStats(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    usage: UsageStats = Field(default_factory=UsageStats)
    model_calls: ModelCallStats = Field(default_factory=ModelCallStats)

    def to_json(self) -> dict[str, Any]:
        return {"usage": self.usage.to_json(), "modelCalls": self.model_calls.to_json()}


class StepStats(BaseModel):
    """``StepPreparationStats``: committed activity before this boundary."""

    model_config = ConfigDict(defer_build=True, frozen=True)

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


def derived_stats(index: int, reason: str) -> StepStats:
    """Honest statistics when the sample gives none, as ``studio.core.step.sample`` describes."""
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


def parse_stats(
    value: Any, index: int | None, reason: str | None, findings: list[Finding]
) -> StepStats | None:
    at: Path = ("step", "stats")
    if not isinstance(value, dict):
        findings.append(must_be(at, "an object", value))
        return None
    start = len(findings)
    for key in value:
        if key not in STATS_KEYS:
            findings.append(
                sample_finding((*at, key_part(key)), f"unknown stats field {key_text(key)}")
            )
    for key in ("cursor", "attempt", "stepIndex", "run", "root"):
        if key not in value:
            findings.append(
                sample_finding((*at, key_part(key)), f"{dotted((*at, key))} is required")
            )
    at_time = value.get("at")
    if "at" in value and not isinstance(at_time, str):
        findings.append(must_be((*at, "at"), "a timestamp string", at_time))
    cursor = parse_count(value, "cursor", at, findings)
    step_index = parse_count(value, "stepIndex", at, findings)
    if step_index is not None and index is not None and step_index != index:
        findings.append(
            sample_finding(
                (*at, "stepIndex"),
                f"step.stats.stepIndex ({step_index}) must equal step.index ({index})",
            )
        )

    attempt_number = 1
    attempt_reason: AttemptReason = "initial"
    attempt = value.get("attempt")
    if "attempt" in value:
        if not isinstance(attempt, dict):
            findings.append(must_be((*at, "attempt"), "an object", attempt))
        else:
            for key in attempt:
                if key not in ATTEMPT_KEYS:
                    findings.append(
                        sample_finding(
                            (*at, "attempt", key_part(key)),
                            f"unknown attempt field {key_text(key)}",
                        )
                    )
            number = attempt.get("number")
            if not (is_safe_integer(number) and number >= 1):
                findings.append(
                    must_be((*at, "attempt", "number"), "a whole number, 1 or more", number)
                )
            else:
                attempt_number = int(number)
            raw_reason = attempt.get("reason")
            if not _is_attempt_reason(raw_reason):
                findings.append(
                    must_be(
                        (*at, "attempt", "reason"),
                        f"one of {', '.join(ATTEMPT_REASONS)}",
                        raw_reason,
                    )
                )
            else:
                attempt_reason = raw_reason
                if reason is not None and (attempt_reason == "validation-retry") != (
                    reason == "validation-retry"
                ):
                    findings.append(
                        sample_finding(
                            (*at, "attempt", "reason"),
                            f'step.stats.attempt.reason "{attempt_reason}" does not fit '
                            f'step.reason "{reason}": a validation retry is both, or neither',
                        )
                    )

    run = parse_scope(value.get("run"), (*at, "run"), findings) if "run" in value else None
    root = parse_scope(value.get("root"), (*at, "root"), findings) if "root" in value else None
    if run is not None:
        started = run.model_calls.started
        if reason == "initial" and started != 0:
            findings.append(
                sample_finding(
                    (*at, "run", "modelCalls", "started"),
                    f'step.reason "initial" means no earlier call in the run, so '
                    f"run.modelCalls.started must be 0, got {started}",
                )
            )
        elif reason is not None and reason != "initial" and started == 0:
            findings.append(
                sample_finding(
                    (*at, "run", "modelCalls", "started"),
                    f'step.reason "{reason}" follows an earlier call, so run.modelCalls.started '
                    "must be 1 or more",
                )
            )
    if run is not None and root is not None:
        run_calls, root_calls = run.model_calls.to_json(), root.model_calls.to_json()
        for key in CALL_KEYS:
            if root_calls[key] < run_calls[key]:
                findings.append(
                    sample_finding(
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


def parse_scope(value: Any, at: Path, findings: list[Finding]) -> ScopeStats | None:
    if not isinstance(value, dict):
        findings.append(must_be(at, "an object with usage and modelCalls", value))
        return None
    start = len(findings)
    for key in value:
        if key not in SCOPE_KEYS:
            findings.append(
                sample_finding((*at, key_part(key)), f"unknown scope field {key_text(key)}")
            )
    for key in SCOPE_KEYS:
        if key not in value:
            findings.append(
                sample_finding((*at, key_part(key)), f"{dotted((*at, key))} is required")
            )

    usage = None
    raw_usage = value.get("usage")
    if "usage" in value:
        usage = _parse_usage(raw_usage, (*at, "usage"), findings)

    calls: dict[str, int] = {}
    raw_calls = value.get("modelCalls")
    where: Path = (*at, "modelCalls")
    if "modelCalls" in value:
        if not isinstance(raw_calls, dict):
            findings.append(must_be(where, "an object", raw_calls))
        else:
            for key in raw_calls:
                if key not in CALL_KEYS:
                    findings.append(
                        sample_finding(
                            (*where, key_part(key)), f"unknown modelCalls field {key_text(key)}"
                        )
                    )
            for key in CALL_KEYS:
                if key not in raw_calls:
                    findings.append(
                        sample_finding(
                            (*where, key_part(key)), f"{dotted((*where, key))} is required"
                        )
                    )
                    continue
                count = parse_count(raw_calls, key, where, findings)
                if count is not None:
                    calls[key] = count
            ended = sum(calls.get(k, 0) for k in ("succeeded", "failed", "cancelled"))
            if "started" in calls and ended > calls["started"]:
                findings.append(
                    sample_finding(
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
        findings.append(must_be(at, "an object", value))
        return None
    start = len(findings)
    for key in value:
        if key not in USAGE_KEYS:
            findings.append(
                sample_finding((*at, key_part(key)), f"unknown usage field {key_text(key)}")
            )
    coverage = value.get("coverage")
    tokens, cost = "none", "none"
    if "coverage" not in value:
        findings.append(
            sample_finding((*at, "coverage"), f"{dotted((*at, 'coverage'))} is required")
        )
    elif not isinstance(coverage, dict):
        findings.append(must_be((*at, "coverage"), "an object with tokens and cost", coverage))
    else:
        for key in coverage:
            if key not in COVERAGE_KEYS:
                findings.append(
                    sample_finding(
                        (*at, "coverage", key_part(key)), f"unknown coverage field {key_text(key)}"
                    )
                )
        for key in COVERAGE_KEYS:
            level = coverage.get(key)
            if level not in COVERAGES:
                findings.append(
                    must_be((*at, "coverage", key), f"one of {', '.join(COVERAGES)}", level)
                )
        tokens = coverage.get("tokens", "none")
        cost = coverage.get("cost", "none")
    counts: dict[str, int | None] = {}
    for key in TOKEN_KEYS:
        if key not in value:
            counts[key] = None
            continue
        if tokens == "none":
            findings.append(
                sample_finding(
                    (*at, key),
                    f'{dotted((*at, key))} must be absent when coverage.tokens is "none": an '
                    "unknown token count is absent, never zero",
                )
            )
        counts[key] = parse_count(value, key, at, findings)
    if errors(findings[start:]):
        return None
    assert _is_coverage(tokens) and _is_coverage(cost)  # a level that is not one is an error above
    return UsageStats(
        input_tokens=counts["inputTokens"],
        output_tokens=counts["outputTokens"],
        total_tokens=counts["totalTokens"],
        tokens=tokens,
        cost=cost,
    )


def parse_count(value: dict[str, Any], key: str, at: Path, findings: list[Finding]) -> int | None:
    if key not in value:
        return None
    raw = value[key]
    if not (is_safe_integer(raw) and raw >= 0):
        findings.append(must_be((*at, key), "a whole number, 0 or more", raw))
        return None
    return int(raw)
