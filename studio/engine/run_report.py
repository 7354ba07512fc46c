"""A run outcome as text for a terminal: what happened, where, and what the hook printed."""

from __future__ import annotations

from studio.core.run_outcome import RunOutcome


def _indent(text: str, prefix: str = "  ") -> str:
    return "".join(prefix + line for line in text.splitlines(keepends=True))


def _names(names: list[str], shown: int = 8) -> str:
    listed = ", ".join(names[:shown])
    return listed + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _contract_lines(outcome: RunOutcome) -> list[str]:
    lines: list[str] = []
    if outcome.contract == "step" and outcome.inspection:
        asked = outcome.inspection.get("amendment") or {}
        lines.append(
            "  amendment: "
            + ", ".join(f"{k} {v}" for k, v in asked.items() if v not in (0, False, None))
            or "  amendment: none"
        )
        for read in outcome.inspection.get("resources") or []:
            lines.append(f"  read {read['identity']} ({read['valueHash'][:12]})")
        effective = outcome.effective or {}
        if effective:
            lines.append(f"  effective model: {effective.get('model')!r}")
            tools = effective.get("activeTools") or effective.get("tools") or []
            lines.append(f"  effective tools: {', '.join(tools) or 'none'}")
    if outcome.contract == "chain":
        for step in outcome.chain:
            change = ", ".join(step.changed) or "no change"
            stop = f"; stopped the chain ({step.stopped})" if step.stopped else ""
            attempt = f" (retry {step.attempt})" if step.attempt else ""
            lines.append(f"  {step.chain}[{step.position}] {step.hook}{attempt}: {change}{stop}")
    return lines


def describe_outcome(outcome: RunOutcome) -> str:
    lines: list[str] = []
    hook = outcome.hook
    where = f" on loop '{outcome.loop}'" if outcome.loop else ""
    head = f"{hook.source}:{hook.function}" if hook else "hook"
    duration = f"{outcome.duration_ms:.1f} ms"
    if outcome.contract == "chain" and outcome.chain:
        head = f"chain of {len({(c.chain, c.position) for c in outcome.chain})} hooks"
    if outcome.status == "ok":
        lines.append(f"ok: {head}{where} ({duration})")
        lines.extend(_contract_lines(outcome))
        decision = outcome.inspection
        changed = decision.get("changed") or {}
        if changed:
            parts = [k for k, v in changed.items() if v]
            lines.append("  changed: " + (", ".join(parts) if parts else "nothing"))
        tools = decision.get("tools") or {}
        if tools.get("added") or tools.get("removed"):
            lines.append(
                f"  tools: {tools.get('before')} -> {tools.get('after')}"
                + (f", removed {_names(tools['removed'])}" if tools.get("removed") else "")
                + (f", added {_names(tools['added'])}" if tools.get("added") else "")
            )
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
            lines.append(f"  {frame.file}:{frame.line} in {frame.function}")
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
