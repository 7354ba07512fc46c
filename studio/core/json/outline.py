"""Outlines of JSON values: the rows of a structured view, each with the JSON pointer of its
value, whose children are computed only when the row is opened.

Besides the generic tree of any value, the rows of chat messages, their content blocks and
tools live here: every contract's sample holds messages, and each contract's own outline (its
``outline`` module) builds on these.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from studio.core.findings import pointer


@dataclass
class Entry:
    """A row of the structured view; ``children`` is computed when the row is opened."""

    label: str
    detail: str = ""
    pointer: str | None = None
    children: Callable[[], list[Entry]] | None = None


def short(value: Any, limit: int = 90) -> str:
    """A one-line glimpse of a value that never reads more of it than it shows."""
    if isinstance(value, str):
        head = value[: limit * 2]
        text = " ".join(head.split())
        if len(text) > limit or len(value) > len(head):
            return json.dumps(text[:limit], ensure_ascii=False)[:-1] + '…"'
        return json.dumps(text, ensure_ascii=False)
    if isinstance(value, dict):
        keys = list(itertools.islice(value, 6))
        more = ", …" if len(value) > len(keys) else ""
        return "{" + ", ".join(keys) + more + "}" if keys else "{}"
    if isinstance(value, list):
        return f"[{len(value)} item{'s' if len(value) != 1 else ''}]"
    return json.dumps(value)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def at(base: str, *parts: str | int) -> str:
    """``base`` (a JSON pointer) extended by ``parts``."""
    return base + pointer(parts)


def json_entries(value: Any, where: str) -> list[Entry]:
    """Any JSON value as a generic tree."""
    if isinstance(value, dict):
        items: Iterable[tuple[str | int, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return []
    out = []
    for key, item in items:
        here = at(where, key)
        opens = isinstance(item, dict | list) and bool(item)
        out.append(
            Entry(
                str(key),
                short(item),
                here,
                partial(json_entries, item, here) if opens else None,
            )
        )
    return out


def list_entry(
    label: str, value: Any, where: str, word: str, make: Callable[[], list[Entry]]
) -> Entry:
    """A row for a list that says how many items it holds; ``make`` lists them when opened."""
    if not isinstance(value, list):
        return Entry(label, short(value), where)
    return Entry(label, plural(len(value), word), where, make if value else None)


def _block_detail(block: Any) -> tuple[str, str]:
    if not isinstance(block, dict):
        return "?", short(block)
    kind = block.get("type")
    label = kind if isinstance(kind, str) else "?"
    if kind == "text":
        return label, short(block.get("text"))
    if kind == "thinking":
        return label, short(block.get("thinking"))
    if kind == "tool_use":
        return label, f"{block.get('name')} {short(block.get('input'), 60)}  id {block.get('id')}"
    if kind == "tool_result":
        flag = "  (error)" if block.get("is_error") else ""
        return label, f"for {block.get('tool_use_id')}: {short(block.get('content'), 60)}{flag}"
    for key in ("image_url", "input_audio", "video_url"):
        if key in block:
            return label, short(block[key], 60)
    return label, short(block)


def _content_detail(content: Any) -> str:
    if isinstance(content, list):
        kinds = [b.get("type", "?") if isinstance(b, dict) else "?" for b in content[:6]]
        more = ", …" if len(content) > len(kinds) else ""
        return f"{plural(len(content), 'block')}: {', '.join(map(str, kinds))}{more}"
    return short(content)


def message_entries(messages: Any, where: str) -> list[Entry]:
    """Chat messages: role, a glimpse of the content and the tools called; blocks when opened."""
    if not isinstance(messages, list):
        return []
    out = []
    for i, message in enumerate(messages):
        here = at(where, i)
        if not isinstance(message, dict):
            out.append(Entry(f"{i}", short(message), here))
            continue
        role = message.get("role")
        content = message.get("content")
        detail = _content_detail(content)
        calls = message.get("toolCalls") or (message.get("metadata") or {}).get("toolCalls")
        if isinstance(calls, list) and calls:
            names = ", ".join(str(c.get("name")) for c in calls[:4] if isinstance(c, dict))
            detail += f"  · calls {names}"
        children = None
        if isinstance(content, list) and content:
            children = partial(_block_entries, content, at(here, "content"))
        out.append(Entry(f"{i}  {role}", detail, here, children))
    return out


def _block_entries(blocks: list[Any], where: str) -> list[Entry]:
    out = []
    for j, block in enumerate(blocks):
        label, detail = _block_detail(block)
        here = at(where, j)
        opens = isinstance(block, dict) and bool(block)
        out.append(
            Entry(label, detail, here, partial(json_entries, block, here) if opens else None)
        )
    return out


def tool_entries(tools: Any, where: str) -> list[Entry]:
    """Tool definitions by name and description; the input schema when opened."""
    if not isinstance(tools, list):
        return []
    out = []
    for i, tool in enumerate(tools):
        here = at(where, i)
        if isinstance(tool, dict):
            schema = tool.get("input_schema")
            opens = isinstance(schema, dict) and bool(schema)
            out.append(
                Entry(
                    str(tool.get("name")),
                    short(tool.get("description"), 70),
                    here,
                    partial(json_entries, schema, at(here, "input_schema")) if opens else None,
                )
            )
        else:
            out.append(Entry(short(tool, 40), "", here))
    return out
