"""The messages of a step-preparation sample, checked as the reference library's canonical
``Message`` (see ``studio.core.step.sample``), and the tool history projected from them."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict

from studio.core.findings import Finding, dotted
from studio.core.step.baseline import shown_value
from studio.core.step.sample_findings import (
    SAMPLE_RULE,
    Path,
    json_findings,
    key_part,
    key_text,
    must_be,
    sample_finding,
)

Role = Literal["system", "user", "assistant", "tool"]
ROLES: Final[tuple[str, ...]] = get_args(Role)

MESSAGE_KEYS: Final = ("role", "content", "metadata")
ASSISTANT_ONLY: Final = ("tool-call", "reasoning")
# Keys each part type may have besides ``type`` and ``providerOptions``: (required, optional).
PART_FIELDS: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "text": (("text",), ()),
    "image": (("source",), ("mediaType",)),
    "audio": (("source",), ("mediaType",)),
    "video": (("source",), ("mediaType",)),
    "file": (("source",), ("mediaType", "filename")),
    "tool-call": (("toolCallId", "toolName"), ("input",)),
    "reasoning": (("text",), ()),
}


class ToolHistoryEntry(BaseModel):
    """``StepToolHistoryEntry``: ``answered`` says whether ``result`` is present."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    call_id: str
    name: str
    answered: bool = False
    result: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"callId": self.call_id, "name": self.name}
        if self.answered:
            out["result"] = copy.deepcopy(self.result)
        return out


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
            for announced_id, announced_name in _announced_calls(message, metadata):
                calls[announced_id] = ToolHistoryEntry(call_id=announced_id, name=announced_name)
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


def check_messages(messages: list[Any], findings: list[Finding]) -> None:
    announced: set[str] = set()
    for i, message in enumerate(messages):
        at: Path = ("step", "messages", i)
        if not isinstance(message, dict):
            findings.append(must_be(at, "a message object with a role and content", message))
            continue
        for key in message:
            if key not in MESSAGE_KEYS:
                findings.append(
                    sample_finding(
                        (*at, key_part(key)),
                        f"unknown message field {key_text(key)}: a message has role, content and "
                        "metadata",
                    )
                )
        role = message.get("role")
        if role not in ROLES:
            findings.append(must_be((*at, "role"), f"one of {', '.join(ROLES)}", role))
            role = None
        if "content" not in message:
            findings.append(
                sample_finding((*at, "content"), f"{dotted((*at, 'content'))} is required")
            )
        else:
            _check_content(message["content"], (*at, "content"), role, findings)
        metadata = message.get("metadata")
        if "metadata" in message and not isinstance(metadata, dict):
            findings.append(must_be((*at, "metadata"), "an object", metadata))
            metadata = None
        elif metadata is not None:
            json_findings((*at, "metadata"), metadata, findings)
        if role == "assistant":
            _check_tool_calls(metadata, at, findings)
            announced.update(call_id for call_id, _ in _announced_calls(message, metadata or {}))
        elif role == "tool":
            _check_tool_answer(metadata, at, announced, findings)


def _check_content(content: Any, at: Path, role: str | None, findings: list[Finding]) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        findings.append(must_be(at, "a string or an array of parts", content))
        return
    for j, part in enumerate(content):
        _check_part(part, (*at, j), role, findings)


def _check_part(part: Any, at: Path, role: str | None, findings: list[Finding]) -> None:
    if not isinstance(part, dict):
        findings.append(must_be(at, "a part object with a type", part))
        return
    kind = part.get("type")
    if kind not in PART_FIELDS:
        known = ", ".join(PART_FIELDS)
        findings.append(must_be((*at, "type"), f"one of {known}", kind))
        return
    if kind in ASSISTANT_ONLY and role is not None and role != "assistant":
        findings.append(
            sample_finding(
                (*at, "type"),
                f'a "{kind}" part belongs to an assistant message only, not to a {role} message',
            )
        )
    required, optional = PART_FIELDS[kind]
    allowed = {"type", "providerOptions", *required, *optional}
    for key in part:
        if key not in allowed:
            findings.append(
                sample_finding(
                    (*at, key_part(key)), f'unknown field {key_text(key)} in a "{kind}" part'
                )
            )
    for key in required:
        field = part.get(key)
        if not isinstance(field, str) or (key != "text" and not field):
            what = "a string" if key == "text" else "a non-empty string"
            findings.append(must_be((*at, key), what, field))
    for key in ("mediaType", "filename"):
        if key in optional and key in part and not isinstance(part[key], str):
            findings.append(must_be((*at, key), "a string", part[key]))
    if "input" in part:
        json_findings((*at, "input"), part["input"], findings)
    if "providerOptions" in part:
        options = part["providerOptions"]
        if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
            findings.append(
                must_be((*at, "providerOptions"), "an object of per-provider objects", options)
            )
        else:
            json_findings((*at, "providerOptions"), options, findings)


def _check_tool_calls(metadata: dict[str, Any] | None, at: Path, findings: list[Finding]) -> None:
    if metadata is None or "toolCalls" not in metadata:
        return
    calls = metadata["toolCalls"]
    where: Path = (*at, "metadata", "toolCalls")
    if not isinstance(calls, list):
        findings.append(must_be(where, "an array of {id, name} tool calls", calls))
        return
    for k, call in enumerate(calls):
        if not isinstance(call, dict):
            findings.append(must_be((*where, k), "a tool call object with an id and a name", call))
            continue
        for key in ("id", "name"):
            if not isinstance(call.get(key), str) or not call.get(key):
                findings.append(must_be((*where, k, key), "a non-empty string", call.get(key)))


def _check_tool_answer(
    metadata: dict[str, Any] | None, at: Path, announced: set[str], findings: list[Finding]
) -> None:
    metadata = metadata or {}
    call_id = metadata.get("toolCallId")
    if not isinstance(call_id, str) or not call_id:
        findings.append(
            sample_finding(
                (*at, "metadata", "toolCallId"),
                f"a tool message answers one call: {dotted((*at, 'metadata', 'toolCallId'))} must "
                f"be the call's id, got {shown_value(call_id)}",
            )
        )
        return
    name = metadata.get("toolName")
    if "toolName" in metadata and (not isinstance(name, str) or not name):
        findings.append(must_be((*at, "metadata", "toolName"), "a non-empty string", name))
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
