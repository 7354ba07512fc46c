"""The body each wire format carries for a prepared request (spec/provider-requests.md §1, §2).

Each encoder takes the request (for system, tools and options) and its prepared messages
(:func:`~studio.core.provider.sending.prepared_messages`) and returns the body and notes: what the
format cannot carry, and what the body leaves to the provider library's defaults. Blocks are
rebuilt from their known fields only, so ``cache_control`` and other extra keys never reach the
provider."""

from __future__ import annotations

import json
import re
from typing import Any

from studio.core.provider.sending import output_tokens

_DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)


def _arguments(value: Any) -> str:
    """A tool call's input as JavaScript's ``JSON.stringify`` writes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _texts(blocks: list[dict[str, Any]]) -> str:
    return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


# ---- Anthropic Messages -------------------------------------------------------------------------


def anthropic_body(
    request: dict[str, Any], messages: list[dict[str, Any]], notes: list[str]
) -> dict[str, Any]:
    options = request.get("options", {})
    body: dict[str, Any] = {}
    tokens = output_tokens(options)
    budget = options.get("thinkingBudget")
    if tokens is not None:
        body["max_tokens"] = tokens + budget if isinstance(budget, int) else tokens
    else:
        notes.append("max_tokens: the request sets no maxTokens; the provider library's default")
    if request.get("system"):
        body["system"] = [{"type": "text", "text": request["system"]}]
    grouped: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message["role"] == "assistant" else "user"
        content = _anthropic_content(message, notes)
        if grouped and grouped[-1]["role"] == role:
            grouped[-1]["content"] += content  # the library sends consecutive turns as one
        else:
            grouped.append({"role": role, "content": content})
    body["messages"] = grouped
    if request.get("tools"):
        body["tools"] = [
            {"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]}
            for t in request["tools"]
        ]
    if isinstance(budget, int):
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        for key in ("temperature", "topP"):
            if key in options:
                notes.append(f"{key}: left out, as Anthropic takes none with thinking on")
    else:
        _sampling(options, body)
    if "reasoning" in options:
        notes.append("reasoning: not part of an Anthropic request")
    return body


def _anthropic_content(message: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    content = message["content"]
    if message["role"] == "tool":
        out = []
        for result in content:
            block = {
                "type": "tool_result",
                "tool_use_id": result["id"],
                "content": result["output"],
            }
            if result["is_error"]:
                block["is_error"] = True
            out.append(block)
        return out
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": block.get("text", "")})
        elif kind == "tool_use":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": block.get("input", {}),
                }
            )
        elif kind == "thinking":
            blocks.append({"type": "thinking", "thinking": block.get("thinking", "")})
        elif kind == "image_url":
            url = str(block.get("image_url", {}).get("url", ""))
            match = _DATA_URL.fullmatch(url)
            source = (
                {"type": "base64", "media_type": match.group(1), "data": match.group(2)}
                if match
                else {"type": "url", "url": url}
            )
            blocks.append({"type": "image", "source": source})
        else:
            notes.append(f"a {kind} block: Anthropic takes none; not sent")
    return blocks


# ---- OpenAI Responses ---------------------------------------------------------------------------


def responses_body(
    request: dict[str, Any], messages: list[dict[str, Any]], notes: list[str]
) -> dict[str, Any]:
    options = request.get("options", {})
    items: list[dict[str, Any]] = []
    if request.get("system"):
        items.append({"role": "system", "content": request["system"]})
    for message in messages:
        items += _responses_items(message, notes)
    body: dict[str, Any] = {"input": items}
    if request.get("tools"):
        body["tools"] = [
            {
                "type": "function",
                "name": t["name"],
                "description": t["description"],
                "parameters": t["input_schema"],
            }
            for t in request["tools"]
        ]
    tokens = output_tokens(options)
    if tokens is not None:
        body["max_output_tokens"] = tokens
    _sampling(options, body)
    if "reasoning" in options:
        body["reasoning"] = options["reasoning"]
    if "thinkingBudget" in options:
        notes.append("thinkingBudget: OpenAI takes reasoning.effort instead; not sent")
    return body


def _responses_items(message: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    content = message["content"]
    role = message["role"]
    if role == "tool":
        return [
            {"type": "function_call_output", "call_id": r["id"], "output": r["output"]}
            for r in content
        ]
    if role == "user":
        parts: list[dict[str, Any]] = []
        blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else content
        )
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                parts.append({"type": "input_text", "text": block.get("text", "")})
            elif kind == "image_url":
                parts.append({"type": "input_image", "image_url": block["image_url"]["url"]})
            else:
                notes.append(f"a {kind} block: the Responses API takes none here; not sent")
        return [{"role": "user", "content": parts}]
    items: list[dict[str, Any]] = []
    for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
        kind = block.get("type")
        if kind == "text":
            items.append(
                {"role": "assistant", "content": [{"type": "output_text", "text": block["text"]}]}
            )
        elif kind == "tool_use":
            items.append(
                {
                    "type": "function_call",
                    "call_id": block["id"],
                    "name": block["name"],
                    "arguments": _arguments(block.get("input", {})),
                }
            )
        elif kind == "thinking":
            notes.append("a thinking block: the Responses API takes no plain reasoning text")
    return items


def subscription_body(
    request: dict[str, Any], messages: list[dict[str, Any]], notes: list[str]
) -> dict[str, Any]:
    """The Responses body as ADF patches it for a ChatGPT subscription."""
    body = responses_body(request, messages, notes)
    items = body["input"]
    if items and items[0].get("role") == "system":
        body = {"instructions": items[0]["content"], **body, "input": items[1:]}
    body.pop("max_output_tokens", None)
    body["store"] = False
    body["stream"] = True
    params = request.get("options", {}).get("providerParams")
    if isinstance(params, dict):
        body.update(params)
    return body


# ---- Chat Completions ----------------------------------------------------------------------


def chat_body(
    request: dict[str, Any],
    messages: list[dict[str, Any]],
    notes: list[str],
    *,
    openrouter: bool = False,
) -> dict[str, Any]:
    options = request.get("options", {})
    out: list[dict[str, Any]] = []
    if request.get("system"):
        out.append({"role": "system", "content": request["system"]})
    for message in messages:
        out += _chat_messages(message, notes, openrouter)
    body: dict[str, Any] = {"messages": out}
    if request.get("tools"):
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["input_schema"],
                },
            }
            for t in request["tools"]
        ]
    tokens = output_tokens(options)
    if tokens is not None:
        body["max_tokens"] = tokens
    _sampling(options, body)
    reasoning = options.get("reasoning")
    if openrouter and isinstance(reasoning, dict):
        body["reasoning"] = reasoning
    elif isinstance(reasoning, dict) and "effort" in reasoning:
        body["reasoning_effort"] = reasoning["effort"]
    if "thinkingBudget" in options and not openrouter:
        notes.append("thinkingBudget: Chat Completions takes reasoning_effort instead; not sent")
    return body


def _chat_messages(
    message: dict[str, Any], notes: list[str], openrouter: bool
) -> list[dict[str, Any]]:
    content = message["content"]
    role = message["role"]
    if role == "tool":
        return [{"role": "tool", "tool_call_id": r["id"], "content": r["output"]} for r in content]
    if role == "user":
        if isinstance(content, str):
            return [{"role": "user", "content": content}]
        parts: list[dict[str, Any]] = []
        for block in content:
            kind = block.get("type")
            if kind == "text":
                parts.append({"type": "text", "text": block.get("text", "")})
            elif kind == "image_url":
                parts.append({"type": "image_url", "image_url": {"url": block["image_url"]["url"]}})
            elif kind == "input_audio":
                parts.append({"type": "input_audio", "input_audio": block["input_audio"]})
            else:
                notes.append(f"a {kind} block: Chat Completions takes none; not sent")
        return [{"role": "user", "content": parts}]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    out: dict[str, Any] = {"role": "assistant", "content": _texts(blocks)}
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": _arguments(b.get("input", {}))},
        }
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    if calls:
        out["tool_calls"] = calls
    details = [d for b in blocks if b.get("type") == "thinking" for d in _details(b)]
    if openrouter and details:
        out["reasoning_details"] = details
    return [out]


def _details(block: dict[str, Any]) -> list[Any]:
    details = block.get("reasoning_details")
    return details if isinstance(details, list) else [details]


def _sampling(options: dict[str, Any], body: dict[str, Any]) -> None:
    """The sampling options, under the names every wire format here gives them."""
    if "temperature" in options:
        body["temperature"] = options["temperature"]
    if "topP" in options:
        body["top_p"] = options["topP"]
