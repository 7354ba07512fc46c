"""The structured view of a pre-LLM sample: its loop and the request's system prompt,
messages, tools and options."""

from __future__ import annotations

import itertools
from typing import Any

from studio.core.json.outline import (
    Entry,
    json_entries,
    list_entry,
    message_entries,
    short,
    tool_entries,
)
from studio.core.pre_llm.config import MAIN


def pre_llm_outline(document: dict[str, Any]) -> list[Entry]:
    out = []
    if "description" in document:
        out.append(Entry("Description", short(document["description"]), "/description"))
    out.append(Entry("Loop", str(document.get("loop", f"{MAIN} (default)")), "/loop"))
    request = document.get("request")
    if not isinstance(request, dict):
        out.append(Entry("Request", short(request) if "request" in document else "missing"))
        return out
    if "system" in request:
        out.append(Entry("System", short(request["system"]), "/request/system"))
    messages = request.get("messages")
    out.append(
        list_entry(
            "Messages",
            messages,
            "/request/messages",
            "message",
            lambda: message_entries(messages, "/request/messages"),
        )
    )
    tools = request.get("tools")
    out.append(
        list_entry(
            "Tools", tools, "/request/tools", "tool", lambda: tool_entries(tools, "/request/tools")
        )
    )
    options = request.get("options")
    if isinstance(options, dict):
        out.append(
            Entry(
                "Options",
                ", ".join(f"{k} {short(v, 20)}" for k, v in itertools.islice(options.items(), 4))
                or "none",
                "/request/options",
                (lambda: json_entries(options, "/request/options")) if options else None,
            )
        )
    elif "options" in request:
        out.append(Entry("Options", short(options), "/request/options"))
    adf = document.get("adf")
    if isinstance(adf, dict) and isinstance(adf.get("replies"), dict):
        replies = adf["replies"]
        out.append(
            Entry(
                "ADF replies",
                ", ".join(itertools.islice(replies, 6)) or "none",
                "/adf/replies",
                (lambda: json_entries(replies, "/adf/replies")) if replies else None,
            )
        )
    return out
