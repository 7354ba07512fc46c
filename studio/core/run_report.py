"""A run outcome as text for a terminal: what happened, where, and what the hook printed."""

from __future__ import annotations

import json
from typing import Any

from studio.core.registry import CONTRACTS
from studio.core.run_outcome import HostCall, RunOutcome
from studio.core.sample_findings import is_sample_problem, sample_problem_line

PREVIEW_CHARS = 120
CALLS_SHOWN = 200
"""A hook that calls in a loop would bury the rest of the report; ``--json`` lists them all."""


def _indent(text: str, prefix: str = "  ") -> str:
    return "".join(prefix + line for line in text.splitlines(keepends=True))


def value_preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """``value`` as one line of JSON, cut at ``limit`` characters.

    A hook may pass megabytes as an argument: ``iterencode`` makes the JSON piece by piece, so
    the preview stops once the line is long enough instead of encoding all of it."""
    encoder = json.JSONEncoder(ensure_ascii=False, default=repr)
    text = ""
    try:
        for chunk in encoder.iterencode(value):
            text += chunk
            if len(text) > limit:
                return text[: limit - 1] + "…"
    except ValueError:  # a value that holds itself
        return repr(value)[:limit]
    return text


def gate_text(call: HostCall) -> str:
    """``allowed``, or ``refused by <rule>``."""
    return "allowed" if call.gate == "allowed" else f"refused by {call.gate}"


def call_result(call: HostCall, limit: int = PREVIEW_CHARS) -> str:
    """What a call came to in one line: ``CODE: message`` when it failed, else its reply."""
    if call.error is not None and not call.error.message:  # a stored call's, once cleared
        return call.error.code[:limit]
    if call.error is not None:
        return " ".join(f"{call.error.code}: {call.error.message}".splitlines())[:limit]
    return value_preview(call.reply, limit)


def call_lines(calls: list[HostCall], shown: int = CALLS_SHOWN) -> list[str]:
    """A ``calls:`` block, one line per call (up to ``shown``) indented by its depth; none
    without calls."""
    if not calls:
        return []
    lines = ["calls:"]
    for number, call in enumerate(calls[:shown], 1):
        indent = "  " * (call.depth + 1)
        lines.append(f"{indent}{number}. {call.method} · {gate_text(call)} · {call_result(call)}")
    if len(calls) > shown:
        lines.append(f"  … and {len(calls) - shown} more (--json lists every call)")
    return lines


def describe_outcome(outcome: RunOutcome) -> str:
    lines: list[str] = []
    hook = outcome.hook
    where = f" on loop '{outcome.loop}'" if outcome.loop else ""
    head = f"{hook.source}:{hook.function}" if hook else "hook"
    duration = f"{outcome.duration_ms:.1f} ms"
    contract = CONTRACTS[outcome.contract]
    head = contract.subject(outcome) or head
    if outcome.status == "ok":
        lines.append(f"ok: {head}{where} ({duration})")
        lines.extend(contract.describe(outcome))
    elif outcome.status == "not_applied":
        target = f"loop '{outcome.loop}'" if outcome.loop else "this loop"
        lines.append(f"not applied: the hook does not target {target}; the request goes as it is")
    else:
        error = outcome.turn_error
        assert error is not None
        if is_sample_problem(error):
            lines.append(sample_problem_line(outcome))
        else:
            lines.append(f"Turn error ({error.kind}, reason {error.reason}): {error.message}")
        if error.path:
            lines.append(f"  at {error.path}")
        for frame in error.traceback:
            column = f":{frame.column}" if frame.column else ""
            lines.append(f"  {frame.file}:{frame.line}{column} in {frame.function}")
            if frame.code:
                lines.append(f"      {frame.code}")
        if error.exit and (error.exit.code is not None or error.exit.signal):
            lines.append(f"  worker exit: {error.exit.signal or error.exit.code}")
        # A layered run may fail in a later layer: say which decisions stood before it.
        for layer in contract.layers(outcome):
            lines.append(f"  {layer.name}: {layer.status}")
    for warning in outcome.warnings:
        lines.append(f"  warning {warning['path']}: {warning['message']}")
    lines.extend(call_lines(outcome.calls))
    for name, text, cut in (
        ("stdout", outcome.stdout, outcome.stdout_truncated),
        ("stderr", outcome.stderr, outcome.stderr_truncated),
    ):
        if text:
            lines.append(f"--- {name}{' (truncated)' if cut else ''}")
            lines.append(_indent(text.rstrip("\n")))
    return "\n".join(lines) + "\n"
