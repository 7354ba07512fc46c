"""The structured view of a chain sample: the pre-model context (model, system prompt, messages,
tools, model profile, state) and the model's scripted responses."""

from __future__ import annotations

from typing import Any

from studio.core.json.outline import (
    Entry,
    json_entries,
    list_entry,
    message_entries,
    plural,
    short,
    tool_entries,
)


def _object_entry(label: str, value: Any, where: str) -> Entry:
    children = (lambda: json_entries(value, where)) if isinstance(value, dict) and value else None
    return Entry(label, short(value), where, children)


def _context_entry(document: dict[str, Any]) -> Entry:
    context = document.get("context")
    if not isinstance(context, dict):
        return Entry("Context", short(context) if "context" in document else "missing")
    messages = context.get("messages")
    tools = context.get("tools")

    def context_entries() -> list[Entry]:
        return [
            Entry("Model", short(context.get("model")), "/context/model"),
            Entry("System prompt", short(context.get("systemPrompt")), "/context/systemPrompt"),
            list_entry(
                "Messages",
                messages,
                "/context/messages",
                "message",
                lambda: message_entries(messages, "/context/messages"),
            ),
            list_entry(
                "Tools",
                tools,
                "/context/tools",
                "tool",
                lambda: tool_entries(tools, "/context/tools"),
            ),
            _object_entry("Model profile", context.get("modelProfile"), "/context/modelProfile"),
            _object_entry("State", context.get("state"), "/context/state"),
        ]

    count = len(messages) if isinstance(messages, list) else 0
    return Entry(
        "Context",
        f"model {context.get('model')} · {plural(count, 'message')}",
        "/context",
        context_entries,
    )


def chain_outline(document: dict[str, Any]) -> list[Entry]:
    out = []
    if "description" in document:
        out.append(Entry("Description", short(document["description"]), "/description"))
    out.append(_context_entry(document))
    responses = document.get("responses")
    out.append(
        list_entry(
            "Responses",
            responses,
            "/responses",
            "scripted response",
            lambda: message_entries(responses, "/responses"),
        )
    )
    return out
