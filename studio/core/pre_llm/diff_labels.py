"""The labels of messages and blocks in the request diff (``user · text, tool_use fs_read``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from studio.core.json.values import type_name


def role_of(message: Any) -> str:
    if type(message) is dict:
        role = message.get("role")
        if type(role) is str:
            return role
    return "?"


def blocks_of(content: Any) -> list[Any]:
    """The content as blocks: a string is one text block; anything else not a list is one
    opaque block."""
    if type(content) is str:
        return [{"type": "text", "text": content}]
    if type(content) is list:
        return content
    return [content]


def block_type(block: Any) -> str:
    if type(block) is dict:
        kind = block.get("type")
        return kind if type(kind) is str else "?"
    return "?"


def _tool_uses(message: Any) -> Iterable[tuple[str, str]]:
    if type(message) is not dict:
        return
    content = message.get("content")
    if type(content) is not list:
        return
    for block in content:
        if type(block) is dict and block.get("type") == "tool_use":
            use_id, name = block.get("id"), block.get("name")
            if type(use_id) is str and type(name) is str:
                yield use_id, name


class Side:
    """One side's messages, with what labels need from them, found on demand."""

    __slots__ = ("_labels", "_names", "messages")

    def __init__(self, messages: Sequence[Any]) -> None:
        self.messages = messages
        self._names: dict[str, str] | None = None
        self._labels: dict[int, str] = {}

    def tool_name(self, use_id: Any) -> str | None:
        """The name of the tool_use with this id (the first one, if ids repeat)."""
        if type(use_id) is not str:
            return None
        if self._names is None:
            names: dict[str, str] = {}
            for message in self.messages:
                for found, name in _tool_uses(message):
                    names.setdefault(found, name)
            self._names = names
        return self._names.get(use_id)

    def block_label(self, block: Any) -> str:
        if type(block) is not dict:
            return f"not a block ({type_name(block)})"
        kind = block_type(block)
        if kind == "tool_use":
            name = block.get("name")
            return f"tool_use {name}" if type(name) is str and name else "tool_use"
        if kind == "tool_result":
            name = self.tool_name(block.get("tool_use_id"))
            label = f"tool_result {name}" if name else "tool_result"
            return label + (" (error)" if block.get("is_error") is True else "")
        return kind

    def label(self, at: int) -> str:
        label = self._labels.get(at)
        if label is None:
            message = self.messages[at]
            label = self._labels[at] = f"{role_of(message)} · {self._content_label(message)}"
        return label

    def _content_label(self, message: Any) -> str:
        if type(message) is not dict:
            return f"not an object ({type_name(message)})"
        if "content" not in message:
            return "no content"
        content = message["content"]
        if type(content) is str:
            return "text"
        if type(content) is not list:
            return f"content is {type_name(content)}"
        if not content:
            return "empty"
        labels = [self.block_label(block) for block in content[:3]]
        if len(content) > 3:
            labels[2:] = [f"+{len(content) - 2} more"]
        return ", ".join(labels)


@dataclass(frozen=True, slots=True)
class Sides:
    original: Side
    transformed: Side
