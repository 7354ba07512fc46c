"""An OpenAI Chat Completions body (``POST /chat/completions``) as a pre-LLM request
(spec/provider-requests.md §3)."""

from __future__ import annotations

from typing import Any

from studio.core.findings import PathPart
from studio.core.provider.import_common import (
    join_system,
    message_content,
    not_representable,
    number_option,
    parse_arguments,
    restore_stamp,
)
from studio.core.provider.losses import LossReport

KNOWN_KEYS = frozenset(
    {
        "model",
        "messages",
        "tools",
        "max_tokens",
        "max_completion_tokens",
        "reasoning_effort",
        "reasoning",
        "temperature",
        "top_p",
    }
)
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def import_chat(body: dict[str, Any], report: LossReport) -> dict[str, Any]:
    raw = body.get("messages")
    messages = raw if isinstance(raw, list) else []
    system: list[tuple[tuple[PathPart, ...], str]] = []
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []  # a run of tool messages, waiting for their user message
    first_result: tuple[PathPart, ...] | None = None
    for k, message in enumerate(messages):
        path: tuple[PathPart, ...] = ("messages", k)
        if not isinstance(message, dict):
            report.drop(path, "not a message object")
            continue
        role = message.get("role")
        if role == "tool":
            if first_result is None:
                first_result = path
            results.append(_tool_result(message, path, report))
            continue
        if results:
            pending = results
            results = []
            if role == "user":
                merged = _user(message, path, report)
                content = merged["content"]
                blocks = (
                    content if isinstance(content, list) else [{"type": "text", "text": content}]
                )
                merged["content"] = pending + blocks
                report.change(path, "joined to the tool results before it, as one user message")
                out.append(merged)
                continue
            out.append({"role": "user", "content": pending})
        if role in ("system", "developer"):
            system += _system_texts(message, path, report)
            if out:
                report.change(path, "a system text after the first message moves to the system")
        elif role == "user":
            out.append(_user(message, path, report))
        elif role == "assistant":
            converted = _assistant(message, path, report)
            if converted is not None:
                out.append(converted)
        else:
            report.drop(path, f"a message with role {role!r}")
    if results:
        out.append({"role": "user", "content": results})
    if first_result is not None:
        report.unrepresentable(
            first_result,
            "whether a tool result was an error cannot be known from this format; "
            "is_error is left out",
        )
    request: dict[str, Any] = {
        "system": join_system(system, report),
        "messages": out,
        "tools": _tools(body.get("tools"), report),
        "options": _options(body, report),
    }
    if "model" in body:
        report.unrepresentable(("model",), "the model comes from the agent's config")
    not_representable(
        body,
        [key for key in body if key not in KNOWN_KEYS],
        report,
        "a request has no place for it",
    )
    return request


def _texts(content: Any, path: tuple[PathPart, ...], report: LossReport) -> list[str]:
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for k, part in enumerate(content if isinstance(content, list) else []):
        if isinstance(part, dict) and part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        else:
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            report.drop((*path, "content", k), f"a part of type {kind!r} where only text is kept")
    return texts


def _system_texts(
    message: dict[str, Any], path: tuple[PathPart, ...], report: LossReport
) -> list[tuple[tuple[PathPart, ...], str]]:
    texts = _texts(message.get("content"), path, report)
    return [(path, "\n".join(texts))] if texts else []


def _user(message: dict[str, Any], path: tuple[PathPart, ...], report: LossReport) -> Any:
    out: dict[str, Any] = {"role": "user"}
    out["content"] = message_content(out, message.get("content"), path, _user_part, report)
    return out


def _user_part(part: Any, path: tuple[PathPart, ...], report: LossReport) -> Any:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        return {"type": "text", "text": part.get("text")}
    if kind == "image_url":
        image = part.get("image_url")
        if isinstance(image, str):
            image = {"url": image}
        if isinstance(image, dict) and "detail" in image:
            report.drop((*path, "image_url", "detail"), "an image here has only its URL")
        url = image.get("url") if isinstance(image, dict) else None
        return {"type": "image_url", "image_url": {"url": url}}
    if kind == "input_audio":
        audio = part.get("input_audio")
        audio = audio if isinstance(audio, dict) else {}
        return {
            "type": "input_audio",
            "input_audio": {"data": audio.get("data"), "format": audio.get("format")},
        }
    report.drop(path, f"a part of type {kind!r}, which a request does not have")
    return None


def _assistant(message: dict[str, Any], path: tuple[PathPart, ...], report: LossReport) -> Any:
    out: dict[str, Any] = {"role": "assistant"}
    texts = _texts(message.get("content") or [], path, report)
    calls = message.get("tool_calls") or []
    for key in message:
        if key not in ("role", "content", "tool_calls"):
            report.drop((*path, key), "an assistant message here has only text and tool calls")
    if not calls:
        text = "\n".join(texts)
        out["content"] = restore_stamp(out, text, (*path, "content"), report)
        return out
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in texts if text]
    if blocks:
        blocks[0]["text"] = restore_stamp(out, blocks[0]["text"], (*path, "content"), report)
    for k, call in enumerate(calls if isinstance(calls, list) else []):
        where = (*path, "tool_calls", k)
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            report.drop(where, "a tool call that is not a function call")
            continue
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id"),
                "name": function.get("name"),
                "input": parse_arguments(
                    function.get("arguments"), (*where, "function", "arguments"), report
                ),
            }
        )
    out["content"] = blocks
    return out


def _tool_result(message: dict[str, Any], path: tuple[PathPart, ...], report: LossReport) -> Any:
    texts = _texts(message.get("content"), path, report)
    if len(texts) > 1:
        report.change((*path, "content"), f"{len(texts)} text parts joined by newlines")
    return {
        "type": "tool_result",
        "tool_use_id": message.get("tool_call_id"),
        "content": "\n".join(texts),
    }


def _tools(tools: Any, report: LossReport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k, tool in enumerate(tools if isinstance(tools, list) else []):
        path: tuple[PathPart, ...] = ("tools", k)
        function = tool.get("function") if isinstance(tool, dict) else None
        if (
            not isinstance(tool, dict)
            or tool.get("type") != "function"
            or not isinstance(function, dict)
        ):
            kind = tool.get("type") if isinstance(tool, dict) else None
            report.drop(path, f"a tool of type {kind!r}: only function tools are kept")
            continue
        schema = function.get("parameters")
        if schema is None:
            schema = dict(EMPTY_SCHEMA)
            report.change((*path, "function"), "no parameters: an empty object schema")
        if "strict" in function:
            report.drop((*path, "function", "strict"), "a tool here has no strict mode")
        out.append(
            {
                "name": function.get("name"),
                "description": function.get("description") or "",
                "input_schema": schema,
            }
        )
    return out


def _options(body: dict[str, Any], report: LossReport) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if body.get("max_completion_tokens") is not None:
        options["maxTokens"] = body["max_completion_tokens"]
        if body.get("max_tokens") is not None:
            report.drop(("max_tokens",), "max_completion_tokens is the one kept")
    else:
        number_option(body, "max_tokens", "maxTokens", options, report)
    number_option(body, "temperature", "temperature", options, report)
    number_option(body, "top_p", "topP", options, report)
    reasoning: dict[str, Any] = {}
    if isinstance(body.get("reasoning"), dict):
        reasoning.update(body["reasoning"])
    if body.get("reasoning_effort") is not None:
        reasoning["effort"] = body["reasoning_effort"]
    if reasoning:
        options["reasoning"] = reasoning
    return options
