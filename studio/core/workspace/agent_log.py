"""The agent's own log of its pre-LLM hook: the ``adf_logs`` rows ADF writes around each hook
call (spec/js-runtime.md §1, Logs), as the studio shows and filters them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from studio.core.json.values import is_whole_number
from studio.core.workspace.adf_file import LogRow

LEVELS = ("debug", "info", "warn", "error")


def log_time(created_at: Any) -> str:
    """Epoch milliseconds as UTC text with milliseconds; empty when not a time."""
    if not is_whole_number(created_at):
        return ""
    try:
        when = datetime.fromtimestamp(created_at / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond // 1000:03d}"


def log_event(row: LogRow) -> str:
    """Who logged and what: ``pre_llm_hook execute``, ``executor pre_llm_hook_error``."""
    return " ".join(part for part in (row.origin, row.event) if part)


def log_data(row: LogRow) -> str:
    """The row's data as one line of JSON (its text as is when it was not JSON)."""
    if row.data is None:
        return ""
    if isinstance(row.data, str):
        return row.data
    return json.dumps(row.data, ensure_ascii=False, separators=(", ", ": "))


def log_text(row: LogRow) -> str:
    """Everything a text filter looks at, lowercased."""
    parts = (row.level, log_event(row), row.target, row.message, log_data(row), row.loop)
    return " ".join(p for p in parts if p).lower()


def matches(row: LogRow, text: str = "", level: str | None = None) -> bool:
    """Whether ``row`` has ``level`` (any when None) and every word of ``text``."""
    if level is not None and (row.level or "").lower() != level:
        return False
    haystack = log_text(row)
    return all(word in haystack for word in text.lower().split())


def log_json(row: LogRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "time": log_time(row.created_at),
        "created_at": row.created_at,
        "level": row.level,
        "origin": row.origin,
        "event": row.event,
        "target": row.target,
        "message": row.message,
        "data": row.data,
        "loop": row.loop,
    }


def log_lines(rows: Sequence[LogRow]) -> list[str]:
    """The rows as aligned text lines, oldest first."""
    table = [
        (log_time(r.created_at), r.level or "", log_event(r), r.target or "", r.loop or "")
        for r in rows
    ]
    widths = [max((len(cells[k]) for cells in table), default=0) for k in range(5)]
    lines = []
    for cells, row in zip(table, rows, strict=True):
        head = "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True))
        data = log_data(row)
        lines.append(f"{head}  {row.message}" + (f"  {data}" if data else ""))
    return lines
