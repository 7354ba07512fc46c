"""An Anthropic Messages body (``POST /v1/messages``) as a pre-LLM request
(spec/provider-requests.md §3)."""

from __future__ import annotations

from typing import Any

from studio.core.findings import PathPart
from studio.core.provider.import_common import (
    join_system,
    message_content,
    not_representable,
    number_option,
)
from studio.core.provider.losses import LossReport

KNOWN_KEYS = frozenset(
    {"model", "system", "messages", "tools", "max_tokens", "thinking", "temperature", "top_p"}
)
UNREPRESENTABLE = ("top_k", "stop_sequences", "tool_choice", "metadata", "stream")
SERVER_BLOCKS = frozenset(
    {
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
        "search_result",
        "tool_search_tool_result",
    }
)


def import_anthropic(body: dict[str, Any], report: LossReport) -> dict[str, Any]:
    request: dict[str, Any] = {
        "system": _system(body.get("system"), report),
        "messages": [],
        "tools": _tools(body.get("tools"), report),
        "options": {},
    }
    raw = body.get("messages")
    for k, message in enumerate(raw if isinstance(raw, list) else []):
        converted = _message(message, ("messages", k), report)
        if converted is not None:
            request["messages"].append(converted)
    _options(body, request["options"], report)
    if "model" in body:
        report.unrepresentable(("model",), "the model comes from the agent's config")
    not_representable(body, UNREPRESENTABLE, report, "a request has no place for it")
    for key in body:
        if key not in KNOWN_KEYS and key not in UNREPRESENTABLE:
            report.unrepresentable((key,), "a request has no place for it")
    return request


def _system(system: Any, report: LossReport) -> str:
    if system is None:
        return ""
    if isinstance(system, str):
        return system
    if not isinstance(system, list):
        report.drop(("system",), "neither a string nor a list of text blocks")
        return ""
    parts: list[tuple[tuple[PathPart, ...], str]] = []
    for k, block in enumerate(system):
        path: tuple[PathPart, ...] = ("system", k)
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append((path, str(block.get("text", ""))))
            _cache_control(block, path, report)
        else:
            report.drop(path, "a system block that is not text")
    return join_system(parts, report)


def _cache_control(block: dict[str, Any], path: tuple[PathPart, ...], report: LossReport) -> None:
    if "cache_control" in block:
        report.drop((*path, "cache_control"), "ADF sets no cache breakpoints of its own")


def _tools(tools: Any, report: LossReport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k, tool in enumerate(tools if isinstance(tools, list) else []):
        path: tuple[PathPart, ...] = ("tools", k)
        if not isinstance(tool, dict):
            report.drop(path, "not a tool object")
            continue
        kind = tool.get("type", "custom")
        if kind != "custom" or "input_schema" not in tool:
            name = tool.get("name", kind)
            report.drop(path, f"server tool {name!r} ({kind}): the provider runs it, not ADF")
            continue
        out.append(
            {
                "name": tool.get("name"),
                "description": tool.get("description", ""),
                "input_schema": tool["input_schema"],
            }
        )
        _cache_control(tool, path, report)
        for key in tool:
            if key not in ("type", "name", "description", "input_schema", "cache_control"):
                report.drop((*path, key), "a tool here has only name, description, input_schema")
    return out


def _message(message: Any, path: tuple[PathPart, ...], report: LossReport) -> Any:
    if not isinstance(message, dict):
        report.drop(path, "not a message object")
        return None
    out: dict[str, Any] = {"role": message.get("role")}
    content = message_content(out, message.get("content"), path, _block, report)
    if isinstance(content, list) and not content:
        report.drop(path, "nothing of this message could be kept")
        return None
    out["content"] = content
    return out


def _block(block: Any, path: tuple[PathPart, ...], report: LossReport) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        report.drop(path, "not a content block")
        return None
    kind = block.get("type")
    _cache_control(block, path, report)
    if kind == "text":
        if "citations" in block:
            report.drop((*path, "citations"), "a text block here has only its text")
        return {"type": "text", "text": block.get("text")}
    if kind == "image":
        image: dict[str, Any] | None = _image(block, path, report)
        return image
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": block.get("id"),
            "name": block.get("name"),
            "input": block.get("input", {}),
        }
    if kind == "tool_result":
        result: dict[str, Any] = _tool_result(block, path, report)
        return result
    if kind == "thinking":
        if "signature" in block:
            report.drop((*path, "signature"), "a thinking block here has only its text")
        return {"type": "thinking", "thinking": block.get("thinking")}
    if kind == "redacted_thinking":
        report.drop(path, "redacted thinking: its content is encrypted for the provider")
    elif kind == "document":
        report.drop(path, "a document: a request has no document blocks")
    elif isinstance(kind, str) and kind in SERVER_BLOCKS:
        report.drop(path, f"{kind}: part of a server tool's round, which the provider runs")
    else:
        report.drop(path, f"a block of type {kind!r}, which a request does not have")
    return None


def _image(block: dict[str, Any], path: tuple[PathPart, ...], report: LossReport) -> Any:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64":
        url = f"data:{source.get('media_type')};base64,{source.get('data')}"
        report.change(path, "base64 image as an image_url data URL")
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(source, dict) and source.get("type") == "url":
        return {"type": "image_url", "image_url": {"url": source.get("url")}}
    kind = source.get("type") if isinstance(source, dict) else None
    report.drop(path, f"an image whose source is {kind!r} (only base64 and url are kept)")
    return None


def _tool_result(block: dict[str, Any], path: tuple[PathPart, ...], report: LossReport) -> Any:
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.get("tool_use_id")}
    content = block.get("content", "")
    if isinstance(content, str):
        out["content"] = content
    else:
        texts: list[str] = []
        for k, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            else:
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                report.drop(
                    (*path, "content", k),
                    f"a part of type {kind!r} of a tool result: a tool result here is a string",
                )
        if len(texts) > 1:
            report.change((*path, "content"), f"{len(texts)} text parts joined by newlines")
        out["content"] = "\n".join(texts)
    if "is_error" in block:
        out["is_error"] = block["is_error"]
    return out


def _options(body: dict[str, Any], options: dict[str, Any], report: LossReport) -> None:
    thinking = body.get("thinking")
    budget = None
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if budget is not None:
            options["thinkingBudget"] = budget
    elif isinstance(thinking, dict) and thinking.get("type") != "disabled":
        report.unrepresentable(("thinking",), f"thinking of type {thinking.get('type')!r}")
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool):
        if isinstance(budget, int) and not isinstance(budget, bool):
            if max_tokens - budget > 0:
                options["maxTokens"] = max_tokens - budget
                report.change(
                    ("max_tokens",),
                    f"maxTokens is max_tokens less the thinking budget ({max_tokens} - {budget}),"
                    " as ADF adds the budget back when it sends",
                )
            else:
                report.drop(("max_tokens",), "not above the thinking budget")
        else:
            options["maxTokens"] = max_tokens
    elif max_tokens is not None:
        options["maxTokens"] = max_tokens  # the validator names what is wrong with it
    number_option(body, "temperature", "temperature", options, report)
    number_option(body, "top_p", "topP", options, report)
