"""A captured provider body as a pre-LLM sample: the mapping of one format, the loss report,
the request validator's findings, and saving the sample with the original body beside it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.findings import Finding, errors
from studio.core.json.files import JsonFileError, parse_json_text
from studio.core.pre_llm.config import MAIN
from studio.core.pre_llm.sample import pre_llm_sample_findings
from studio.core.provider.formats import (
    ANTHROPIC,
    FORMATS,
    OPENAI_CHAT,
    TITLES,
    FormatUnknown,
    detect_format,
)
from studio.core.provider.import_anthropic import import_anthropic
from studio.core.provider.import_chat import import_chat
from studio.core.provider.import_responses import import_responses
from studio.core.provider.losses import Loss, LossReport
from studio.core.workspace.atomic_write import write_atomically
from studio.core.workspace.sample_files import create_sample_file, sample_name_problem

ORIGINALS_DIR = "originals"
"""Under the samples folder: the sample lister reads only the folder's own ``*.json`` files."""


class ImportFailed(ValueError):
    """The body cannot be imported: not JSON, not an object, or of no known format."""


@dataclass(frozen=True)
class Imported:
    format: str
    sample: dict[str, Any]
    losses: list[Loss]
    incomplete: bool
    findings: list[Finding] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not errors(self.findings)

    def text(self) -> str:
        return json.dumps(self.sample, indent=2, ensure_ascii=False) + "\n"

    def report_lines(self) -> list[str]:
        lines = [f"format: {TITLES[self.format]}"]
        if self.incomplete:
            lines.append("incomplete: part of the history lives on the provider's server")
        if self.losses:
            lines.append(f"{len(self.losses)} dropped or changed:")
            lines += [f"  {loss.line()}" for loss in self.losses]
        else:
            lines.append("nothing dropped or changed")
        for finding in self.findings:
            where = finding.pointer or "/"
            lines.append(f"{finding.severity}: {where}: {finding.message}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "valid": self.valid,
            "incomplete": self.incomplete,
            "sample": self.sample,
            "losses": [loss.to_json() for loss in self.losses],
            "findings": [{**f.to_json(), "severity": f.severity} for f in self.findings],
        }


def parse_body(data: bytes, origin: str = "the body") -> Any:
    """The JSON value of a captured body's bytes; :class:`ImportFailed` says where it is not."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFailed(
            f"{origin}: not UTF-8 text (byte {exc.start} cannot be decoded)"
        ) from None
    try:
        return parse_json_text(text, origin)
    except JsonFileError as exc:
        raise ImportFailed(str(exc)) from None


def import_body(
    body: Any, format: str | None = None, *, dynamic_instructions: bool = False
) -> Imported:
    """``body`` (parsed JSON) as a pre-LLM sample; ``format`` None detects it."""
    if format is None:
        try:
            format = detect_format(body)
        except FormatUnknown as exc:
            raise ImportFailed(str(exc)) from None
    if format not in FORMATS:
        raise ImportFailed(f"no format named {format!r} (one of {', '.join(FORMATS)})")
    if not isinstance(body, dict):
        raise ImportFailed("the body is not a JSON object, so it is no provider request")
    report = LossReport()
    incomplete = False
    if format == ANTHROPIC:
        request = import_anthropic(body, report)
    elif format == OPENAI_CHAT:
        request = import_chat(body, report)
    else:
        request, incomplete = import_responses(body, report)
    if dynamic_instructions:
        _final_user_as_dynamic(request, report)
    request["messages"] = [_role_and_content_first(m) for m in request["messages"]]
    description = f"Imported from an {TITLES[format]} body"
    if incomplete:
        description += " (incomplete: part of its history lives on the provider's server)"
    sample = {"contract": "pre_llm", "description": description, "loop": MAIN, "request": request}
    losses = _in_body_order(body, report.losses)
    return Imported(format, sample, losses, incomplete, pre_llm_sample_findings(sample))


def _in_body_order(body: Any, losses: list[Loss]) -> list[Loss]:
    """The losses in the order their places come in the body, so the report reads top down."""
    order: dict[tuple[Any, ...], int] = {}
    stack: list[tuple[tuple[Any, ...], Any]] = [((), body)]
    while stack:
        path, value = stack.pop()
        order[path] = len(order)
        if isinstance(value, dict):
            children = [((*path, key), sub) for key, sub in value.items()]
        elif isinstance(value, list):
            children = [((*path, k), sub) for k, sub in enumerate(value)]
        else:
            continue
        stack.extend(reversed(children))

    def place(loss: Loss) -> int:
        path = loss.path
        while path not in order:
            path = path[:-1]
        return order[path] if path else len(order)  # about the whole body: last

    return sorted(losses, key=place)


def _role_and_content_first(message: dict[str, Any]) -> dict[str, Any]:
    head: dict[str, Any] = {key: message[key] for key in ("role", "content") if key in message}
    return {**head, **{k: v for k, v in message.items() if k not in head}}


def _final_user_as_dynamic(request: dict[str, Any], report: LossReport) -> None:
    messages = request["messages"]
    last = messages[-1] if messages else None
    if last is None or last.get("role") != "user" or len(messages) < 2:
        report.unrepresentable((), "no final user message to take as dynamicInstructions")
        return
    content = last.get("content")
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" for b in content
    ):
        content = "\n".join(str(b.get("text", "")) for b in content)
    if not isinstance(content, str):
        report.unrepresentable((), "the final user message holds more than text: kept as a message")
        return
    messages.pop()
    request["options"]["dynamicInstructions"] = content
    report.change((), "the final user message became options.dynamicInstructions")


@dataclass(frozen=True)
class SavedImport:
    sample: Path
    original: Path


def original_path(samples: Path, name: str) -> Path:
    return samples / ORIGINALS_DIR / f"{name}.json"


def save_import(
    samples: Path, name: str, imported: Imported, original: bytes, *, force: bool = False
) -> SavedImport:
    """Write ``samples/NAME.json`` and the original body beside it, each atomically.

    Raises ``FileExistsError`` when the sample exists and not ``force``, ``ValueError`` for a bad
    name or a sample that does not pass the request validator."""
    problem = sample_name_problem(name)
    if problem:
        raise ValueError(problem)
    if not imported.valid:
        first = errors(imported.findings)[0]
        raise ValueError(
            f"the imported sample does not pass the request checks: "
            f"{first.pointer or '/'}: {first.message}"
        )
    target = samples / f"{name}.json"
    kept = original_path(samples, name)
    samples.mkdir(parents=True, exist_ok=True)
    kept.parent.mkdir(exist_ok=True)
    data = imported.text().encode("utf-8")
    if force:
        write_atomically(target, data)
    else:
        create_sample_file(target, data)
    write_atomically(kept, original)
    return SavedImport(target, kept)
