"""The tools and the options of the request diff: tools matched by name, options by key, each
shown in the transformed order with what was removed placed where it was."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from studio.core.pre_llm.diff import Kind, OptionEntry, ToolEntry
from studio.core.pre_llm.diff_align import (
    differing_keys,
    display_order,
    json_equal,
    key_text,
    opcodes,
)


def _tool_keys(tools: Sequence[Any]) -> tuple[list[tuple[str, int]], list[str]]:
    """A key per tool, (name, occurrence), so that duplicate names still line up; and names."""
    keys: list[tuple[str, int]] = []
    names: list[str] = []
    seen: dict[str, int] = {}
    for tool in tools:
        name = tool.get("name") if type(tool) is dict else None
        shown = str.__str__(name) if isinstance(name, str) else "(unnamed)"
        marker = shown if isinstance(name, str) else "\0"
        seen[marker] = seen.get(marker, 0) + 1
        keys.append((marker, seen[marker]))
        names.append(shown)
    return keys, names


def diff_tools(original: Sequence[Any], transformed: Sequence[Any]) -> tuple[ToolEntry, ...]:
    keys_a, names_a = _tool_keys(original)
    keys_b, names_b = _tool_keys(transformed)
    steps = display_order(keys_a, keys_b)
    kept = [(i, j) for i, j in steps if i is not None and j is not None]
    in_place: set[int] = set()
    order = [i for i, _ in kept]
    ascending = sorted(order)
    for tag, i1, i2, _j1, _j2 in opcodes(ascending, order):
        if tag == "equal":
            in_place.update(ascending[i1:i2])
    entries: list[ToolEntry] = []
    for i, j in steps:
        if i is not None and j is not None:
            a, b = original[i], transformed[j]
            if json_equal(a, b):
                entries.append(ToolEntry("same", names_b[j], i, j, moved=i not in in_place))
            else:
                keys = differing_keys(a, b) if type(a) is dict and type(b) is dict else ()
                entries.append(
                    ToolEntry("changed", names_b[j], i, j, keys, moved=i not in in_place)
                )
        elif i is not None:
            entries.append(ToolEntry("removed", names_a[i], i, None))
        elif j is not None:
            entries.append(ToolEntry("added", names_b[j], None, j))
    return tuple(entries)


def diff_options(original: dict[Any, Any], transformed: dict[Any, Any]) -> tuple[OptionEntry, ...]:
    keys_a, keys_b = list(original), list(transformed)
    entries: list[OptionEntry] = []
    for i, j in display_order(keys_a, keys_b):
        if j is not None:
            key = keys_b[j]
            new = transformed[key]
            if i is None:
                entries.append(OptionEntry("added", key_text(key), None, new))
            else:
                old = original[key]
                kind: Kind = "same" if json_equal(old, new) else "changed"
                entries.append(OptionEntry(kind, key_text(key), old, new))
        elif i is not None:
            key = keys_a[i]
            entries.append(OptionEntry("removed", key_text(key), original[key], None))
    return tuple(entries)
