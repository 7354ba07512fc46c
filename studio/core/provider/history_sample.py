"""A pre-LLM sample rebuilt from an ``.adf``'s own history (spec/provider-requests.md §4).

The rows of one loop of ``adf_loop``, in the runtime's order, become the request's messages
``{role, content, created_at, seq}``; the tools are the config's enabled tools and the options
its model settings. ADF builds the system prompt when it calls the model and never stores it, so
the caller supplies it. What the file cannot give back (tool descriptions and schemas, model
settings that are no request option, rows that are not block arrays) is listed in a loss report,
as an import's is, and the sample must pass the request validator before it is saved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.findings import Finding, PathPart, errors
from studio.core.json.values import is_whole_number
from studio.core.pre_llm.sample import pre_llm_sample_findings
from studio.core.provider.losses import Loss, LossReport
from studio.core.workspace.adf_file import LoopRow
from studio.core.workspace.atomic_write import write_atomically
from studio.core.workspace.sample_files import create_sample_file, sample_name_problem

# The config's model settings that are request options, by the option they become.
MODEL_OPTIONS = {
    "max_tokens": "maxTokens",
    "thinking_budget": "thinkingBudget",
    "temperature": "temperature",
    "top_p": "topP",
}
# What names the model rather than shaping the request.
MODEL_IDENTITY = ("provider", "model_id")
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

_RANGE = re.compile(r"\s*(\d*)\s*:\s*(\d*)\s*")


class HistorySampleError(ValueError):
    """A loop or row range that names no history; the message says which and what exists."""


@dataclass(frozen=True)
class RowRange:
    """Rows by ``seq``, both ends included; an open end reaches the loop's first or last row."""

    first: int | None = None
    last: int | None = None

    def label(self) -> str:
        first = "" if self.first is None else str(self.first)
        last = "" if self.last is None else str(self.last)
        return f"{first}:{last}"


def parse_row_range(text: str) -> RowRange:
    """``A:B``, ``A:``, ``:B`` or ``:`` (every row), or one ``seq`` alone."""
    if text.strip().isdigit():
        seq = int(text)
        return RowRange(seq, seq)
    match = _RANGE.fullmatch(text)
    if match is None:
        raise HistorySampleError(
            f"rows {text!r}: write FIRST:LAST with the rows' seq numbers (4:9, 4:, :9 or :)"
        )
    first = int(match.group(1)) if match.group(1) else None
    last = int(match.group(2)) if match.group(2) else None
    return RowRange(first, last)  # the order is the loop's, checked by select_rows


def select_rows(history: Sequence[LoopRow], rows: RowRange, loop: str) -> list[LoopRow]:
    """The rows from ``rows.first`` to ``rows.last`` in the loop's order (the runtime's
    ``COALESCE(ord, seq), seq``), so a range is what the runtime would have sent in a row."""
    if not history:
        raise HistorySampleError(f"loop {loop!r} has no history")
    where = {row.seq: k for k, row in enumerate(history)}
    start, end = 0, len(history) - 1
    for seq in (rows.first, rows.last):
        if seq is not None and seq not in where:
            shown = f"S{history[0].seq} to S{history[-1].seq}"
            raise HistorySampleError(
                f"rows {rows.label()}: loop {loop!r} has no row S{seq} (its rows: {shown}, "
                f"{len(history)} in all)"
            )
    if rows.first is not None:
        start = where[rows.first]
    if rows.last is not None:
        end = where[rows.last]
    if start > end:
        raise HistorySampleError(
            f"rows {rows.label()}: S{rows.first} comes after S{rows.last} in loop {loop!r}"
        )
    return list(history[start : end + 1])


@dataclass(frozen=True)
class HistorySample:
    """The sample, what it could not keep (``losses``, paths in the agent file's terms) and the
    sample's findings (paths in the sample)."""

    loop: str
    rows: tuple[LoopRow, ...]
    sample: dict[str, Any]
    losses: list[Loss]
    findings: list[Finding] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not errors(self.findings)

    def text(self) -> str:
        return json.dumps(self.sample, indent=2, ensure_ascii=False) + "\n"

    def row_of(self, finding: Finding) -> LoopRow | None:
        """The history row of the message a finding is in, if it is in one."""
        path = finding.path
        if (
            len(path) >= 3
            and path[:2] == ("request", "messages")
            and isinstance(path[2], int)
            and 0 <= path[2] < len(self.rows)
        ):
            return self.rows[path[2]]
        return None

    def where(self, finding: Finding) -> str:
        """A finding's place, with the history row a message came from."""
        row = self.row_of(finding)
        return (finding.pointer or "/") + (f" (row S{row.seq})" if row else "")

    def report_lines(self) -> list[str]:
        seqs = f"S{self.rows[0].seq} to S{self.rows[-1].seq}" if self.rows else "no rows"
        lines = [f"loop {self.loop}: {len(self.rows)} rows, {seqs}"]
        if self.losses:
            lines.append(f"{len(self.losses)} dropped or changed:")
            lines += [f"  {loss.line()}" for loss in self.losses]
        else:
            lines.append("nothing dropped or changed")
        for finding in self.findings:
            lines.append(f"{finding.severity}: {self.where(finding)}: {finding.message}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "loop": self.loop,
            "rows": [row.seq for row in self.rows],
            "valid": self.valid,
            "sample": self.sample,
            "losses": [loss.to_json() for loss in self.losses],
            "findings": [{**f.to_json(), "severity": f.severity} for f in self.findings],
        }


def _message(row: LoopRow, report: LossReport) -> dict[str, Any]:
    content = row.content
    if isinstance(content, str):
        report.change(
            ("adf_loop", f"S{row.seq}", "content_json"),
            "not a JSON array of blocks; the message keeps it as text",
        )
    message: dict[str, Any] = {"role": row.role, "content": content}
    if is_whole_number(row.created_at):
        message["created_at"] = int(row.created_at)
    message["seq"] = row.seq
    return message


def _tools(config: dict[str, Any], report: LossReport) -> list[dict[str, Any]]:
    declared = config.get("tools", [])
    if not isinstance(declared, list):
        report.drop(("tools",), "the config's tools are not a list; the sample has none")
        return []
    tools: list[dict[str, Any]] = []
    bare: list[str] = []
    for k, entry in enumerate(declared):
        path: tuple[PathPart, ...] = ("tools", k)
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            report.drop(path, "not a tool object with a name")
            continue
        if entry.get("enabled") is not True:
            continue
        tool: dict[str, Any] = {"name": entry["name"]}
        description, schema = entry.get("description"), entry.get("input_schema")
        tool["description"] = description if isinstance(description, str) else ""
        tool["input_schema"] = schema if isinstance(schema, dict) else dict(EMPTY_SCHEMA)
        if not isinstance(description, str) or not isinstance(schema, dict):
            bare.append(entry["name"])
        tools.append(tool)
    if bare:
        report.change(
            ("tools",),
            "ADF adds each tool's description and input schema when it calls the model, and the "
            f"file does not hold them: {', '.join(bare)} have an empty description and an "
            "object schema",
        )
    return tools


def _options(config: dict[str, Any], report: LossReport) -> dict[str, Any]:
    model = config.get("model")
    options: dict[str, Any] = {}
    if model is None:
        return options
    if not isinstance(model, dict):
        report.drop(("model",), "the config's model is not an object; the sample has no options")
        return options
    for key, value in model.items():
        if key in MODEL_OPTIONS:
            if value is None:
                report.drop(("model", key), "null; left out")
            else:
                options[MODEL_OPTIONS[key]] = value
        elif key not in MODEL_IDENTITY:
            report.unrepresentable(("model", key), "a model setting that is no request option")
    return options


def build_history_sample(
    config: dict[str, Any],
    loop: str,
    rows: Sequence[LoopRow],
    system: str,
    *,
    origin: str = "the agent",
) -> HistorySample:
    """The pre-LLM sample of ``rows`` (one loop's, in the runtime's order) with ``system`` as the
    system prompt; ``origin`` names the agent file in the description."""
    report = LossReport()
    messages = [_message(row, report) for row in rows]
    request = {
        "system": system,
        "messages": messages,
        "tools": _tools(config, report),
        "options": _options(config, report),
    }
    span = f"S{rows[0].seq} to S{rows[-1].seq}" if rows else "no rows"
    sample = {
        "contract": "pre_llm",
        "description": f"History of loop {loop} in {origin}, rows {span}",
        "loop": loop,
        "request": request,
    }
    return HistorySample(loop, tuple(rows), sample, report.losses, pre_llm_sample_findings(sample))


def save_history_sample(
    samples: Path, name: str, built: HistorySample, *, force: bool = False
) -> Path:
    """Write ``samples/NAME.json`` atomically. Raises ``FileExistsError`` when the sample exists
    and not ``force`` (the caller asks first), ``ValueError`` for a bad name or a sample that
    does not pass the request validator."""
    problem = sample_name_problem(name)
    if problem:
        raise ValueError(problem)
    if not built.valid:
        first = errors(built.findings)[0]
        raise ValueError(
            f"the sample does not pass the request checks: {built.where(first)}: {first.message}"
        )
    target = samples / f"{name}.json"
    samples.mkdir(parents=True, exist_ok=True)
    data = built.text().encode("utf-8")
    if force:
        write_atomically(target, data)
    else:
        create_sample_file(target, data)
    return target


def row_kinds(row: LoopRow) -> str:
    """The kinds of a row's blocks, in order and each once (``text + tool_use``); ``text`` for
    plain text content."""
    content = row.content
    if isinstance(content, str):
        return "text"
    if not isinstance(content, list):
        return type(content).__name__
    kinds: list[str] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        name = kind if isinstance(kind, str) else "?"
        if name not in kinds:
            kinds.append(name)
    return " + ".join(kinds) or "empty"


def _block_preview(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return f"{block.get('name', '?')}({json.dumps(block.get('input', {}), ensure_ascii=False)})"
    if kind == "tool_result":
        inner = block.get("content", "")
        text = inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False)
        return f"→ {text}"
    if kind == "thinking":
        return f"(thinking) {block.get('thinking', '')}"
    return f"({kind})"


def row_preview(row: LoopRow, limit: int = 120) -> str:
    """A row's content in one short line."""
    content = row.content
    if isinstance(content, list):
        text = " · ".join(" ".join(p.split()) for p in map(_block_preview, content) if p)
    else:
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
