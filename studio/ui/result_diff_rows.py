"""The rows of the request diff, side by side: a section each for the system prompt (a row per
line), the messages (and the blocks of a changed one), the tools and the options. A section's rows
are made when the view first shows them, long sections come in ranges, and long runs of unchanged
entries are folded into one row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from studio.core.pre_llm.diff import (
    ARROW,
    BlockChange,
    LineRow,
    MessageEntry,
    OptionEntry,
    RequestDiff,
    Segment,
    ToolEntry,
    only_changes,
    short_json,
)
from studio.ui.result_diff_sides import DiffSides
from studio.ui.result_json_tree import preview

CELL_CHARS = 240
DIFF_CHUNK = 500
"""A section of more entries than this shows them in ranges (of DIFF_CHUNK, of DIFF_CHUNK² …):
a tree view lays out every row of an open branch, so no branch may be long."""


@dataclass(eq=False)
class DiffRow:
    """A row of the diff view. A section's rows are made when the view first asks for them
    (``make``), so a request of forty thousand messages costs the rows on screen."""

    kind: str
    left: str
    right: str
    section: bool = False
    payload: tuple[Any, ...] = ()
    parent: DiffRow | None = None
    row: int = 0
    children: list[DiffRow] = field(default_factory=list)
    entries: Sequence[Any] = ()
    """The diff entries behind a lazy section, one per row."""
    make: Callable[[int], DiffRow] | None = None
    made: dict[int, DiffRow] = field(default_factory=dict)
    id: int = 0

    def add(self, child: DiffRow) -> DiffRow:
        child.parent = self
        child.row = len(self.children)
        self.children.append(child)
        return child

    @property
    def count(self) -> int:
        return len(self.entries) if self.make is not None else len(self.children)

    def child(self, row: int) -> DiffRow:
        if self.make is None:
            return self.children[row]
        made = self.made.get(row)
        if made is None:
            made = self.make(row)
            made.parent = self
            made.row = row
            self.made[row] = made
        return made

    def first_change(self) -> int | None:
        """The row of the first entry (or range) that is not the same, without making rows."""
        for row, entry in enumerate(self.entries if self.make is not None else self.children):
            if entry.kind != "same" or getattr(entry, "moved", False):
                return row
        return None


def _fill(
    row: DiffRow,
    entries: Sequence[Any],
    make: Callable[[Any], DiffRow],
    name: Callable[[Any, str], int | None],
) -> DiffRow:
    """Give ``row`` the rows of ``entries``: one each, made when shown, or, when there are more
    than DIFF_CHUNK, ranges of them. ``name(entry, side)`` is an entry's number on a side (a
    message index, a line number), for the ranges' labels."""
    count = len(entries)
    if count <= DIFF_CHUNK:
        row.entries = entries
        row.make = lambda k: make(entries[k])
        return row
    size = DIFF_CHUNK
    while count > size * DIFF_CHUNK:
        size *= DIFF_CHUNK
    for start in range(0, count, size):
        part = entries[start : start + size]
        changed = any(e.kind != "same" or getattr(e, "moved", False) for e in part)
        sub = DiffRow(
            "changed" if changed else "same",
            _range_label(part, "left", name),
            _range_label(part, "right", name) + f"  · {_counts(part)}",
            payload=("range",),
        )
        row.add(_fill(sub, part, make, name))
    return row


def _range_label(part: Sequence[Any], side: str, name: Callable[[Any, str], int | None]) -> str:
    """``#2000 … #2499``: the first and last numbers a range's entries have on one side."""

    def head(e: Any) -> Any:
        return e.entries[0] if isinstance(e, _Gap) else e

    def tail(e: Any) -> Any:
        return e.entries[-1] if isinstance(e, _Gap) else e

    first = next((n for n in (name(head(e), side) for e in part) if n is not None), None)
    last = next((n for n in (name(tail(e), side) for e in reversed(part)) if n is not None), None)
    if first is None or last is None:
        return "—"
    return f"#{first} … #{last}" if first != last else f"#{first}"


def _entry_number(entry: Any, side: str) -> int | None:
    return entry.original_index if side == "left" else entry.transformed_index


def _line_number(line: LineRow, side: str) -> int | None:
    number = line.original_line if side == "left" else line.transformed_line
    return number + 1 if number is not None else None


def _one_line(text: str, limit: int = CELL_CHARS) -> str:
    text = text[: limit + 1]
    flat = text.replace("\r\n", "⏎ ").replace("\n", "⏎ ").replace("\t", " ")
    return flat[:limit] + ("…" if len(text) > limit else "")


def _excerpt(segments: Sequence[Segment], side: str, context: int = 40) -> str:
    """A side's text around its first change: a little of what comes before, then the change
    (so that a row shows where two long texts differ, not their common start)."""
    skip = "insert" if side == "left" else "delete"
    before = ""
    for seg in segments:
        if seg.op == skip:
            continue
        if seg.op == "equal":
            before = seg.text[-(context + 1) :]
            continue
        lead = ("…" + before[-context:]) if len(before) > context else before
        return _one_line(lead + seg.text)
    return ""


def _message_text(message: Any) -> str:
    """The first words of a message, for its row (never more than a cell's worth)."""
    if not isinstance(message, dict):
        return preview(message)
    content = message.get("content")
    if isinstance(content, str):
        return content[: CELL_CHARS + 1]
    if isinstance(content, list):
        for block in content[:8]:
            if not isinstance(block, dict):
                continue
            for key in ("text", "thinking", "content"):
                value = block.get(key)
                if isinstance(value, str) and value:
                    return value[: CELL_CHARS + 1]
            if block.get("type") == "tool_use":
                return f"{block.get('name', '')}({preview(block.get('input'), 80)})"
    return ""


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return preview(block)
    for key in ("text", "thinking", "content"):
        value = block.get(key)
        if isinstance(value, str):
            return value[: CELL_CHARS + 1]
    if block.get("type") == "tool_use":
        return preview(block.get("input"), 120)
    return preview(block, 120)


def content_blocks(message: Any) -> list[Any]:
    """A message's content as blocks, so that a block change's index finds its block: a string
    is one text block; anything else not a list is one opaque block."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else [content]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _counts(entries: Sequence[Any]) -> str:
    kinds: dict[str, int] = {}
    for e in entries:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    parts = [f"{kinds[k]} {k}" for k in ("added", "removed", "changed") if kinds.get(k)]
    return ", ".join(parts) if parts else "unchanged"


def _list_at(value: dict[Any, Any], key: str) -> list[Any]:
    """``value[key]`` when it is a list, else an empty one."""
    item = value.get(key)
    return item if isinstance(item, list) else []


def dict_at(value: dict[Any, Any], key: str) -> dict[Any, Any]:
    """``value[key]`` when it is an object, else an empty one."""
    item = value.get(key)
    return item if isinstance(item, dict) else {}


def build_rows(diff: RequestDiff, sides: DiffSides, changes_only: bool) -> DiffRow:
    """The view's rows: four sections, an entry per system line, message, tool and option (each
    made when it is first shown)."""
    root = DiffRow("same", "", "")
    shown = only_changes(diff) if changes_only else diff
    a_req = sides.original if isinstance(sides.original, dict) else {}
    b_req = sides.transformed if isinstance(sides.transformed, dict) else {}
    a_msgs, b_msgs = _list_at(a_req, "messages"), _list_at(b_req, "messages")
    a_tools, b_tools = _list_at(a_req, "tools"), _list_at(b_req, "tools")

    system = diff.system
    lines_a = sum(1 for r in system.lines if r.original_line is not None)
    lines_b = sum(1 for r in system.lines if r.transformed_line is not None)
    state = "changed" if system.kind == "changed" else "unchanged"
    if changes_only:
        lines: Sequence[Any] = [r for r in system.lines if r.kind != "same"]
    else:
        lines = _with_gaps(system.lines)
    title = f"{sides.system_label} · {state} · {_plural(lines_a, 'line')} {ARROW} {lines_b}"
    section = DiffRow(system.kind, title, "", section=True, payload=("system",))
    root.add(_fill(section, lines, _folding("line", _line_row, _line_number), _line_number))

    title = f"Messages · {len(a_msgs)} {ARROW} {len(b_msgs)} · {_counts(diff.messages)}"
    changed = any(e.kind != "same" for e in diff.messages)
    section = DiffRow("changed" if changed else "same", title, "", section=True)
    make = _folding("message", lambda e: _message_row(e, a_msgs, b_msgs), _entry_number)
    messages = shown.messages if changes_only else _with_gaps(shown.messages)
    root.add(_fill(section, messages, make, _entry_number))

    title = f"Tools · {len(a_tools)} {ARROW} {len(b_tools)} · {_counts(diff.tools)}"
    changed = any(e.kind != "same" or e.moved for e in diff.tools)
    section = DiffRow("changed" if changed else "same", title, "", section=True)
    make = _folding("tool", lambda e: _tool_row(e, a_tools, b_tools), _entry_number)
    tools = shown.tools if changes_only else _with_gaps(shown.tools)
    root.add(_fill(section, tools, make, _entry_number))

    changed_options = [e.text for e in diff.options if e.kind != "same"]
    title = f"{sides.options_label} · " + (", ".join(changed_options) or "unchanged")
    section = DiffRow("changed" if changed_options else "same", title, "", section=True)
    root.add(_fill(section, shown.options, _option_row, lambda e, side: None))
    return root


@dataclass(frozen=True)
class _Gap:
    """A run of unchanged entries (lines, messages, tools), folded into one row that opens to
    show them."""

    entries: Sequence[Any]
    kind: str = "same"


GAP_CONTEXT = 3
"""Unchanged entries kept on show on either side of a change."""


def _unchanged(entry: Any) -> bool:
    return entry.kind == "same" and not getattr(entry, "moved", False)


def _with_gaps(entries: Sequence[Any]) -> list[Any]:
    """The entries with each long run of unchanged ones folded into a ``_Gap``, keeping
    GAP_CONTEXT on show around every change."""
    out: list[Any] = []
    run: list[Any] = []

    def flush(at_start: bool, at_end: bool) -> None:
        head = 0 if at_start else GAP_CONTEXT
        tail = 0 if at_end else GAP_CONTEXT
        if len(run) > head + tail + 2:
            out.extend(run[:head])
            out.append(_Gap(tuple(run[head : len(run) - tail])))
            out.extend(run[len(run) - tail :])
        else:
            out.extend(run)
        run.clear()

    started = False
    for entry in entries:
        if _unchanged(entry):
            run.append(entry)
            continue
        if run:
            flush(not started, False)
        started = True
        out.append(entry)
    flush(not started, True)
    return out


def _folding(
    noun: str, make: Callable[[Any], DiffRow], name: Callable[[Any, str], int | None]
) -> Callable[[Any], DiffRow]:
    """``make`` for a section with folded runs: a gap becomes a row that opens to its entries."""

    def row(item: Any) -> DiffRow:
        if not isinstance(item, _Gap):
            return make(item)
        count = len(item.entries)
        text = f"⋯ {count} unchanged {noun}" + ("" if count == 1 else "s")
        sides = []
        for side in ("left", "right"):
            span = _range_label(item.entries, side, name)
            sides.append(f"{text} ({span})" if span != "—" else text)
        gap = DiffRow("same", sides[0], sides[1], payload=("range",))
        return _fill(gap, item.entries, make, name)

    return row


def _line_row(line: LineRow) -> DiffRow:
    left_no = f"{line.original_line + 1:>4}  " if line.original_line is not None else ""
    right_no = f"{line.transformed_line + 1:>4}  " if line.transformed_line is not None else ""
    return DiffRow(
        line.kind,
        left_no + _one_line(line.original_text) if left_no else "",
        right_no + _one_line(line.transformed_text) if right_no else "",
        payload=("line", line),
    )


def _message_row(entry: MessageEntry, a_msgs: list[Any], b_msgs: list[Any]) -> DiffRow:
    i, j = entry.original_index, entry.transformed_index
    left = right = ""
    if i is not None and i < len(a_msgs):
        label = entry.original_label or entry.label
        left = _one_line(f"#{i} {label} — {_message_text(a_msgs[i])}")
    if j is not None and j < len(b_msgs):
        right = _one_line(f"#{j} {entry.label} — {_message_text(b_msgs[j])}")
    if entry.moved_to is not None:
        right = f"moved to #{entry.moved_to}"
    if entry.moved_from is not None:
        left = f"moved from #{entry.moved_from}"
    row = DiffRow(entry.kind, left, right, payload=("message", i, j))
    if entry.kind == "changed":
        a_blocks = content_blocks(a_msgs[i]) if i is not None and i < len(a_msgs) else []
        b_blocks = content_blocks(b_msgs[j]) if j is not None and j < len(b_msgs) else []
        for note_text in entry.notes:
            row.add(DiffRow("changed", note_text, note_text))
        if entry.fields:
            text = "fields changed: " + ", ".join(entry.fields)
            row.add(DiffRow("changed", text, text))
        for block in entry.blocks:
            row.add(_block_row(block, a_blocks, b_blocks, i, j))
    return row


def _block_row(
    block: BlockChange, a_blocks: list[Any], b_blocks: list[Any], i: int | None, j: int | None
) -> DiffRow:
    bi, bj = block.original_index, block.transformed_index
    left = right = ""
    if bi is not None and bi < len(a_blocks):
        left = _one_line(f"[{bi}] {block.label} — {_block_text(a_blocks[bi])}")
    if bj is not None and bj < len(b_blocks):
        right = _one_line(f"[{bj}] {block.label} — {_block_text(b_blocks[bj])}")
    row = DiffRow(block.kind, left, right, payload=("block", i, j, bi, bj))
    if block.segments and block.kind == "changed":
        row.left = _one_line(f"[{bi}] {block.label} — {_excerpt(block.segments, 'left')}")
        row.right = _one_line(f"[{bj}] {block.label} — {_excerpt(block.segments, 'right')}")
    elif block.kind == "changed" and block.fields:
        suffix = f"  · changed: {', '.join(block.fields)}"
        row.left += suffix
        row.right += suffix
    return row


def _tool_row(tool: ToolEntry, a_tools: list[Any], b_tools: list[Any]) -> DiffRow:
    def text(index: int | None, tools: list[Any]) -> str:
        if index is None or index >= len(tools):
            return ""
        value = tools[index]
        desc = value.get("description") if isinstance(value, dict) else None
        base = f"{tool.name}"
        if isinstance(desc, str) and desc:
            base += f" — {desc}"
        return _one_line(base)

    left, right = text(tool.original_index, a_tools), text(tool.transformed_index, b_tools)
    if tool.kind == "changed" and tool.keys:
        suffix = f"  · changed: {', '.join(tool.keys)}"
        left += suffix
        right += suffix
    if tool.moved:
        right += "  · moved"
    if tool.kind == "added":
        right += "  · presented, not enabled"
    kind = tool.kind if tool.kind != "same" or not tool.moved else "changed"
    return DiffRow(kind, left, right, payload=("tool", tool.original_index, tool.transformed_index))


def _option_row(option: OptionEntry) -> DiffRow:
    def shown(value: Any) -> str:
        short = short_json(value)
        return short if short is not None else preview(value)

    left = f"{option.key}: {shown(option.old)}" if option.kind != "added" else ""
    right = f"{option.key}: {shown(option.new)}" if option.kind != "removed" else ""
    return DiffRow(option.kind, left, right, payload=("option", option.key))
