"""A run outcome as text for a terminal: what happened, where, and what the hook printed."""

from __future__ import annotations

from studio.core.registry import CONTRACTS
from studio.core.run_outcome import RunOutcome


def _indent(text: str, prefix: str = "  ") -> str:
    return "".join(prefix + line for line in text.splitlines(keepends=True))


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
        target = where or " this loop"
        lines.append(f"not applied: the hook does not target{target}; the request goes as it is")
    else:
        error = outcome.turn_error
        assert error is not None
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
    for warning in outcome.warnings:
        lines.append(f"  warning {warning['path']}: {warning['message']}")
    for name, text, cut in (
        ("stdout", outcome.stdout, outcome.stdout_truncated),
        ("stderr", outcome.stderr, outcome.stderr_truncated),
    ):
        if text:
            lines.append(f"--- {name}{' (truncated)' if cut else ''}")
            lines.append(_indent(text.rstrip("\n")))
    return "\n".join(lines) + "\n"
