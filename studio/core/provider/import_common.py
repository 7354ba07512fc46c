"""What every importer does the same way: ADF's prefixes taken off the text (restoring
``created_at`` and ``seq``), several system texts joined, unknown top-level keys reported."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from studio.core.findings import PathPart, dotted
from studio.core.json.files import JsonFileError, parse_json_text
from studio.core.provider.losses import LossReport
from studio.core.provider.stamps import split_stamp

SYSTEM_JOIN = "\n\n"


def restore_stamp(
    message: dict[str, Any], text: str, path: tuple[PathPart, ...], report: LossReport
) -> str:
    """``text`` without ADF's prefix; the prefix's time and sequence go back on ``message``."""
    if not isinstance(text, str):
        return text  # the request checks name what is wrong with it
    rest, created, seq = split_stamp(text)
    if created is None:
        return text
    message["created_at"] = created
    if seq is not None:
        message["seq"] = seq
    kept = "created_at and seq" if seq is not None else "created_at"
    report.change(path, f"ADF's time prefix taken off the text ({kept} restored)")
    return rest


def message_content(
    message: dict[str, Any],
    content: Any,
    path: tuple[PathPart, ...],
    convert: Callable[[Any, tuple[PathPart, ...], LossReport], dict[str, Any] | None],
    report: LossReport,
) -> Any:
    """A message's content as a request holds it: a string without ADF's prefix, or the blocks
    ``convert`` keeps (None drops one), ADF's prefix taken off the first text block, where ADF
    put it. The prefix's time and sequence go back on ``message``."""
    if isinstance(content, str):
        return restore_stamp(message, content, (*path, "content"), report)
    blocks: list[dict[str, Any]] = []
    stamped = False
    for k, part in enumerate(content if isinstance(content, list) else []):
        where = (*path, "content", k)
        block = convert(part, where, report)
        if block is None:
            continue
        if block.get("type") == "text" and not stamped:
            block["text"] = restore_stamp(message, block["text"], where, report)
            stamped = True
        blocks.append(block)
    return blocks


def join_system(parts: list[tuple[tuple[PathPart, ...], str]], report: LossReport) -> str:
    """Several system texts become one (a request has one system string)."""
    if len(parts) > 1:
        where = ", ".join(dotted(path) for path, _ in parts)
        report.change(
            parts[1][0],
            f"{len(parts)} system texts joined into one, separated by a blank line ({where})",
        )
    return SYSTEM_JOIN.join(text for _, text in parts)


def parse_arguments(text: Any, path: tuple[PathPart, ...], report: LossReport) -> Any:
    """A tool call's arguments: the parsed JSON, or the text as it is when it does not parse."""
    if not isinstance(text, str):
        report.change(path, "the arguments are not a JSON string; kept as they are")
        return text
    try:
        return parse_json_text(text) if text.strip() else {}
    except JsonFileError as exc:
        why = str(exc).removeprefix("<text>: not JSON: ").replace(" at at ", " at ")
        report.change(
            path,
            f"the arguments are not valid JSON ({why}); the input keeps their text as a string",
        )
        return text


def not_representable(
    body: dict[str, Any], keys: Iterable[str], report: LossReport, why: str
) -> None:
    for key in keys:
        if key in body:
            report.unrepresentable((key,), why)


def number_option(
    body: dict[str, Any], key: str, option: str, options: dict[str, Any], report: LossReport
) -> None:
    value = body.get(key)
    if value is None:
        if key in body:
            report.drop((key,), "null; left out")
        return
    options[option] = value


def text_of(value: Any) -> str | None:
    return value if isinstance(value, str) else None
