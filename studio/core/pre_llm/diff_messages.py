"""The messages of the request diff: aligned, moved, paired by role, and their blocks compared.

A changed message's blocks are worked out only when asked for (``MessageEntry.blocks``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from studio.core.json.values import type_name
from studio.core.pre_llm.diff import (
    TEXT_DIFF_MOST,
    TEXT_FIELDS,
    TOKEN,
    BlockChange,
    Kind,
    MessageEntry,
    diff_text,
)
from studio.core.pre_llm.diff_align import (
    PAIRING_CELLS,
    EqualityClasses,
    block_fingerprint,
    differing_keys,
    message_fingerprint,
    opcodes,
    pair_runs,
)
from studio.core.pre_llm.diff_labels import Side, Sides, block_type, blocks_of, role_of

_LIKENESS_CHARS = 2000


def _texts(message: Any) -> str:
    """The words of a message, for likeness only."""
    if type(message) is not dict:
        return ""
    parts: list[str] = []
    size = 0
    for block in blocks_of(message.get("content")):
        if type(block) is not dict:
            continue
        for key in ("text", "thinking", "content", "name", "id", "tool_use_id"):
            value = block.get(key)
            if type(value) is str:
                parts.append(value[:_LIKENESS_CHARS])
                size += len(parts[-1])
        if size >= _LIKENESS_CHARS:
            break
    return " ".join(parts)[:_LIKENESS_CHARS]


def _words(message: Any) -> set[str]:
    return set(TOKEN.findall(_texts(message)))


def _pair_likeness(
    words_a: Sequence[set[str]], words_b: Sequence[set[str]], a: int, b: int
) -> float:
    """How alike two messages are, 0 to 1, by the words they share."""
    x, y = words_a[a], words_b[b]
    if not x and not y:
        return 1.0
    return len(x & y) / len(x | y)


def diff_messages(original: Sequence[Any], transformed: Sequence[Any]) -> tuple[MessageEntry, ...]:
    classes = EqualityClasses(message_fingerprint)
    ids_a = classes.ids(original)
    ids_b = classes.ids(transformed)
    ops = opcodes(ids_a, ids_b)

    # Moves: an unmatched original message equal to an unmatched transformed one.
    unmatched_b: dict[int, list[int]] = {}
    for tag, _i1, _i2, j1, j2 in ops:
        if tag != "equal":
            for j in range(j1, j2):
                unmatched_b.setdefault(ids_b[j], []).append(j)
    moved_to: dict[int, int] = {}
    if unmatched_b:
        for tag, i1, i2, _j1, _j2 in ops:
            if tag != "equal":
                for i in range(i1, i2):
                    waiting = unmatched_b.get(ids_a[i])
                    if waiting:
                        moved_to[i] = waiting.pop(0)
    moved_from = {j: i for i, j in moved_to.items()}

    sides = Sides(Side(original), Side(transformed))
    entries: list[MessageEntry] = []
    append = entries.append

    def removed(i: int) -> MessageEntry:
        return MessageEntry(
            "removed", i, None, role_of(original[i]), moved_to=moved_to.get(i), sides=sides
        )

    def added(j: int) -> MessageEntry:
        return MessageEntry(
            "added", None, j, role_of(transformed[j]), moved_from=moved_from.get(j), sides=sides
        )

    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            for k in range(i2 - i1):
                j = j1 + k
                append(MessageEntry("same", i1 + k, j, role_of(transformed[j]), sides=sides))
        elif tag == "delete":
            entries.extend(removed(i) for i in range(i1, i2))
        elif tag == "insert":
            entries.extend(added(j) for j in range(j1, j2))
        else:
            # Moved messages keep their places; the rest are paired by role, most alike first.
            left = [i for i in range(i1, i2) if i not in moved_to]
            right = [j for j in range(j1, j2) if j not in moved_from]
            small = len(left) * len(right) <= PAIRING_CELLS
            words_a = [_words(original[i]) for i in left] if small else []
            words_b = [_words(transformed[j]) for j in right] if small else []
            steps = pair_runs(
                [role_of(original[i]) for i in left],
                [role_of(transformed[j]) for j in right],
                partial(_pair_likeness, words_a, words_b) if small else None,
            )
            next_i, next_j = i1, j1
            for a, b in steps:
                left_i = left[a] if a is not None else None
                right_j = right[b] if b is not None else None
                while left_i is not None and next_i < left_i:
                    append(removed(next_i))
                    next_i += 1
                while right_j is not None and next_j < right_j:
                    append(added(next_j))
                    next_j += 1
                if left_i is not None and right_j is not None:
                    append(_changed_message(left_i, right_j, sides))
                elif left_i is not None:
                    append(removed(left_i))
                elif right_j is not None:
                    append(added(right_j))
                next_i = next_i + 1 if left_i is not None else next_i
                next_j = next_j + 1 if right_j is not None else next_j
            entries.extend(removed(i) for i in range(next_i, i2))
            entries.extend(added(j) for j in range(next_j, j2))
    return tuple(entries)


def diff_message_blocks(sides: Sides, i: int, j: int) -> tuple[BlockChange, ...]:
    content_a = sides.original.messages[i].get("content")
    content_b = sides.transformed.messages[j].get("content")
    return _diff_blocks(content_a, content_b, sides)


def _changed_message(i: int, j: int, sides: Sides) -> MessageEntry:
    message_a = sides.original.messages[i]
    message_b = sides.transformed.messages[j]
    fields = differing_keys(message_a, message_b, skip=("content",))
    notes: list[str] = []
    form_a, form_b = _content_form(message_a), _content_form(message_b)
    if form_a != form_b:
        notes.append(f"content was {form_a}, now {form_b}")
    return MessageEntry(
        "changed",
        i,
        j,
        role_of(message_b),
        fields=fields,
        notes=tuple(notes),
        sides=sides,
    )


def _content_form(message: dict[Any, Any]) -> str:
    if "content" not in message:
        return "missing"
    content = message["content"]
    if type(content) is str:
        return "a string"
    if type(content) is list:
        return "blocks"
    return type_name(content)


def _diff_blocks(content_a: Any, content_b: Any, sides: Sides) -> tuple[BlockChange, ...]:
    blocks_a, blocks_b = blocks_of(content_a), blocks_of(content_b)
    classes = EqualityClasses(block_fingerprint)
    ops = opcodes(classes.ids(blocks_a), classes.ids(blocks_b))
    out: list[BlockChange] = []

    def one(kind: Kind, i: int | None, j: int | None) -> BlockChange:
        if j is not None:
            block, label = blocks_b[j], sides.transformed.block_label(blocks_b[j])
        else:
            assert i is not None
            block, label = blocks_a[i], sides.original.block_label(blocks_a[i])
        return BlockChange(kind, i, j, block_type(block), label)

    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            out.extend(one("same", i1 + k, j1 + k) for k in range(i2 - i1))
        elif tag == "delete":
            out.extend(one("removed", i, None) for i in range(i1, i2))
        elif tag == "insert":
            out.extend(one("added", None, j) for j in range(j1, j2))
        else:
            steps = pair_runs(
                [block_type(x) for x in blocks_a[i1:i2]],
                [block_type(y) for y in blocks_b[j1:j2]],
            )
            for a, b in steps:
                if a is not None and b is not None:
                    label = sides.transformed.block_label(blocks_b[j1 + b])
                    out.append(_changed_block(i1 + a, j1 + b, blocks_a, blocks_b, label))
                elif a is not None:
                    out.append(one("removed", i1 + a, None))
                elif b is not None:
                    out.append(one("added", None, j1 + b))
    return tuple(out)


def _changed_block(
    i: int, j: int, blocks_a: Sequence[Any], blocks_b: Sequence[Any], label: str
) -> BlockChange:
    a, b = blocks_a[i], blocks_b[j]
    kind = block_type(b)
    if type(a) is not dict or type(b) is not dict:
        return BlockChange("changed", i, j, kind, label)
    fields = differing_keys(a, b)
    text_field = TEXT_FIELDS.get(kind)
    if text_field is not None and text_field in fields and type(a.get(text_field)) is str:
        text_b = b.get(text_field)
        if type(text_b) is str and len(a[text_field]) + len(text_b) <= TEXT_DIFF_MOST:
            segments = diff_text(a[text_field], text_b)
            return BlockChange("changed", i, j, kind, label, fields, text_field, segments)
    return BlockChange("changed", i, j, kind, label, fields)
