"""A stored run as a ``RunOutcome`` again, so that it is shown by the same views as a live run.

The store keeps a run in two parts: its content-free run record and its payload, which
the user may clear. With the payload, the rebuilt outcome is the one that was stored. Without
it, what the run carried is gone: input, result and what the hook returned are ``None``, the
output is empty, the chain's returned values are ``None``, the host calls keep their method,
gate, source of reply, error code, depth and duration only, and the turn error says its kind's
title instead of its message, with no stderr tail, details or traceback code.
"""

from __future__ import annotations

from typing import Any

from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import KIND_TITLES

_DECISION_FIELDS = (
    "run_id",
    "started_at",
    "contract",
    "status",
    "sample",
    "loop",
    "hook",
    "duration_ms",
    "effective",
)


def rebuild_outcome(record: dict[str, Any], payload: dict[str, Any] | None) -> RunOutcome:
    """The run of a stored run record and its payload (``None`` once cleared).

    Raises ``ValueError`` (a pydantic ``ValidationError``) when the stored values do not make
    an outcome this version knows."""
    kept = payload or {}
    chain = []
    values = kept.get("chain") or []
    for index, step in enumerate(record.get("chain") or []):
        chain.append({**step, **(values[index] if index < len(values) else {})})
    fields: dict[str, Any] = {key: record.get(key) for key in _DECISION_FIELDS}
    fields.update(
        decision_record=record.get("inspection") or {},
        warnings=record.get("warnings") or [],
        stdout_truncated=bool(record.get("stdout_truncated")),
        stderr_truncated=bool(record.get("stderr_truncated")),
        turn_error=_turn_error(record, payload),
        chain=chain,
        calls=_calls(record, payload),
    )
    if payload is not None:
        fields.update(
            input=payload.get("input"),
            result=payload.get("result"),
            rejected=payload.get("rejected"),
            stdout=payload.get("stdout") or "",
            stderr=payload.get("stderr") or "",
        )
    return RunOutcome.model_validate(fields)


def _calls(record: dict[str, Any], payload: dict[str, Any] | None) -> list[dict[str, Any]]:
    kept = (payload or {}).get("calls") or []
    calls = []
    for index, stored in enumerate(record.get("calls") or []):
        carried = kept[index] if index < len(kept) else {}
        code = stored.get("code")
        call = {k: v for k, v in stored.items() if k != "code"}
        call.update(
            args=carried.get("args"),
            reply=carried.get("reply"),
            output=carried.get("output") or "",
            error=None if code is None else {"code": code, "message": carried.get("message") or ""},
        )
        calls.append(call)
    return calls


def _turn_error(record: dict[str, Any], payload: dict[str, Any] | None) -> Any:
    if payload is not None and payload.get("turn_error") is not None:
        return payload["turn_error"]
    stored = record.get("turn_error")
    if stored is None:
        return None
    return {**stored, "message": KIND_TITLES.get(stored["kind"], "Turn error")}
