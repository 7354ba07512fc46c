"""The three captured body formats, and telling which one a body is."""

from __future__ import annotations

from typing import Any

ANTHROPIC = "anthropic"
OPENAI_CHAT = "openai-chat"
OPENAI_RESPONSES = "openai-responses"
FORMATS = (ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES)
TITLES = {
    ANTHROPIC: "Anthropic Messages",
    OPENAI_CHAT: "OpenAI Chat Completions",
    OPENAI_RESPONSES: "OpenAI Responses",
}

_ANTHROPIC_KEYS = ("system", "thinking", "top_k", "stop_sequences")
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"}
)
_CHAT_KEYS = (
    "max_completion_tokens",
    "reasoning_effort",
    "n",
    "stop",
    "response_format",
    "logprobs",
    "frequency_penalty",
    "presence_penalty",
    "seed",
    "stream_options",
)
_CHAT_PARTS = frozenset({"image_url", "input_audio", "file"})


class FormatUnknown(ValueError):
    """The body's format cannot be told: none fits, or more than one does."""


def detect_format(body: Any) -> str:
    """The format of ``body`` when only one fits; else :class:`FormatUnknown` saying why."""
    if not isinstance(body, dict):
        raise FormatUnknown("the body is not a JSON object, so it is no provider request")
    if "input" in body or "instructions" in body:
        if "messages" in body:
            raise FormatUnknown("ambiguous: the body has both messages and input; say --format")
        return OPENAI_RESPONSES
    if not isinstance(body.get("messages"), list):
        raise FormatUnknown(
            "not a provider request: no messages (Anthropic, Chat Completions) or input (Responses)"
        )
    anthropic = _anthropic_signs(body)
    chat = _chat_signs(body)
    if anthropic and not chat:
        return ANTHROPIC
    if chat and not anthropic:
        return OPENAI_CHAT
    if anthropic and chat:
        raise FormatUnknown(
            f"ambiguous: Anthropic ({anthropic[0]}) and Chat Completions ({chat[0]}) signs; "
            "say --format"
        )
    raise FormatUnknown(
        "ambiguous: Anthropic Messages or OpenAI Chat Completions (nothing tells them apart); "
        "say --format"
    )


def _anthropic_signs(body: dict[str, Any]) -> list[str]:
    signs = [f"a top-level {key!r}" for key in _ANTHROPIC_KEYS if key in body]
    for tool in _list(body.get("tools")):
        if isinstance(tool, dict) and "input_schema" in tool:
            signs.append("a tool with input_schema")
            break
    for message in _list(body.get("messages")):
        for block in _list(message.get("content") if isinstance(message, dict) else None):
            if isinstance(block, dict) and _kind(block) in _ANTHROPIC_BLOCKS:
                signs.append(f"a {block['type']} block")
                return signs
    return signs


def _chat_signs(body: dict[str, Any]) -> list[str]:
    signs = [f"a top-level {key!r}" for key in _CHAT_KEYS if key in body]
    for tool in _list(body.get("tools")):
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            signs.append("a tool with function")
            break
    for message in _list(body.get("messages")):
        if not isinstance(message, dict):
            continue
        if message.get("role") in ("system", "developer", "tool"):
            signs.append(f"a {message['role']} message")
            return signs
        if "tool_calls" in message:
            signs.append("tool_calls")
            return signs
        for part in _list(message.get("content")):
            if isinstance(part, dict) and _kind(part) in _CHAT_PARTS:
                signs.append(f"a {part['type']} part")
                return signs
    return signs


def _kind(value: dict[str, Any]) -> str:
    kind = value.get("type")
    return kind if isinstance(kind, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
