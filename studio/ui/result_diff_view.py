"""The request diff, side by side: system, each message (and the blocks of a changed one), each
tool and each option, original on the left and transformed on the right, with the summary line
on top. The diff is computed once per outcome, by the engine's worker threads; rows are a model
over it, and a row's full text is only rendered when it is selected."""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QFont, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from studio.core.pre_llm.diff import (
    ARROW,
    BlockChange,
    LineRow,
    MessageEntry,
    OptionEntry,
    RequestDiff,
    Segment,
    ToolEntry,
    diff_request,
    diff_text,
    only_changes,
    short_json,
)
from studio.ui.engine_bridge import EngineBridge, Job
from studio.ui.result_json_tree import pretty, preview
from studio.ui.result_style import heading, note, tint

CELL_CHARS = 240
EXPANDED_MESSAGES = 50
DIFF_CHUNK = 500
"""A section of more entries than this shows them in ranges (of DIFF_CHUNK, of DIFF_CHUNK² …):
a tree view lays out every row of an open branch, so no branch may be long."""
DETAIL_DIFF_CHARS = 200_000
KIND_ROLE = Qt.ItemDataRole.UserRole + 20
DIFFS_KEPT = 8


@dataclass(frozen=True)
class DiffSides:
    """What a diff compares, and what the view calls its parts."""

    original: Any
    transformed: Any
    system_label: str = "System"
    options_label: str = "Options"
    headers: tuple[str, str] = ("Original request", "Transformed request")
    system_word: str = "system"


def chain_sides(context: Any, final: Any) -> DiffSides:
    """A chain's request before the chain and the final request, in the diff's terms: the system
    prompt as ``system`` and the model as the one option."""

    def shape(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        if "systemPrompt" in value:
            out["system"] = value["systemPrompt"]
        for key in ("messages", "tools"):
            if key in value:
                out[key] = value[key]
        if "model" in value:
            out["options"] = {"model": value["model"]}
        return out

    return DiffSides(
        shape(context),
        shape(final),
        "System prompt",
        "Model",
        ("Before the chain", "Final request"),
        "system prompt",
    )


class DiffCache:
    """The diffs of the last few runs, each computed once by the engine's worker threads and
    shared by every view that shows the run."""

    def __init__(self, bridge: EngineBridge, keep: int = DIFFS_KEPT) -> None:
        self._bridge = bridge
        self._keep = keep
        self._jobs: OrderedDict[str, Job] = OrderedDict()

    def job(self, key: str, sides: DiffSides) -> Job:
        """The diff of ``sides`` known as ``key``: asked for the first time, it starts now."""
        job = self._jobs.get(key)
        if job is None or job.cancelled:
            job = self._bridge.submit(diff_request, sides.original, sides.transformed)
            self._jobs[key] = job
            while len(self._jobs) > self._keep:
                self._jobs.popitem(last=False)
        else:
            self._jobs.move_to_end(key)
        return job


# ---------------------------------------------------------------------------------------------
# Rows


@dataclass(eq=False)
class _Row:
    """A row of the diff view. A section's rows are made when the view first asks for them
    (``make``), so a request of forty thousand messages costs the rows on screen."""

    kind: str
    left: str
    right: str
    section: bool = False
    payload: tuple[Any, ...] = ()
    parent: _Row | None = None
    row: int = 0
    children: list[_Row] = field(default_factory=list)
    entries: Sequence[Any] = ()
    """The diff entries behind a lazy section, one per row."""
    make: Callable[[int], _Row] | None = None
    made: dict[int, _Row] = field(default_factory=dict)
    id: int = 0

    def add(self, child: _Row) -> _Row:
        child.parent = self
        child.row = len(self.children)
        self.children.append(child)
        return child

    @property
    def count(self) -> int:
        return len(self.entries) if self.make is not None else len(self.children)

    def child(self, row: int) -> _Row:
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
    row: _Row,
    entries: Sequence[Any],
    make: Callable[[Any], _Row],
    name: Callable[[Any, str], int | None],
) -> _Row:
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
        sub = _Row(
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


def _blocks(message: Any) -> list[Any]:
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


def _dict_at(value: dict[Any, Any], key: str) -> dict[Any, Any]:
    """``value[key]`` when it is an object, else an empty one."""
    item = value.get(key)
    return item if isinstance(item, dict) else {}


def build_rows(diff: RequestDiff, sides: DiffSides, changes_only: bool) -> _Row:
    """The view's rows: four sections, an entry per system line, message, tool and option (each
    made when it is first shown)."""
    root = _Row("same", "", "")
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
    section = _Row(system.kind, title, "", section=True, payload=("system",))
    root.add(_fill(section, lines, _folding("line", _line_row, _line_number), _line_number))

    title = f"Messages · {len(a_msgs)} {ARROW} {len(b_msgs)} · {_counts(diff.messages)}"
    changed = any(e.kind != "same" for e in diff.messages)
    section = _Row("changed" if changed else "same", title, "", section=True)
    make = _folding("message", lambda e: _message_row(e, a_msgs, b_msgs), _entry_number)
    messages = shown.messages if changes_only else _with_gaps(shown.messages)
    root.add(_fill(section, messages, make, _entry_number))

    title = f"Tools · {len(a_tools)} {ARROW} {len(b_tools)} · {_counts(diff.tools)}"
    changed = any(e.kind != "same" or e.moved for e in diff.tools)
    section = _Row("changed" if changed else "same", title, "", section=True)
    make = _folding("tool", lambda e: _tool_row(e, a_tools, b_tools), _entry_number)
    tools = shown.tools if changes_only else _with_gaps(shown.tools)
    root.add(_fill(section, tools, make, _entry_number))

    changed_options = [e.text for e in diff.options if e.kind != "same"]
    title = f"{sides.options_label} · " + (", ".join(changed_options) or "unchanged")
    section = _Row("changed" if changed_options else "same", title, "", section=True)
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
        flush(not started, False)
        started = True
        out.append(entry)
    flush(not started, True)
    return out


def _folding(
    noun: str, make: Callable[[Any], _Row], name: Callable[[Any, str], int | None]
) -> Callable[[Any], _Row]:
    """``make`` for a section with folded runs: a gap becomes a row that opens to its entries."""

    def row(item: Any) -> _Row:
        if not isinstance(item, _Gap):
            return make(item)
        count = len(item.entries)
        text = f"⋯ {count} unchanged {noun}" + ("" if count == 1 else "s")
        sides = []
        for side in ("left", "right"):
            span = _range_label(item.entries, side, name)
            sides.append(f"{text} ({span})" if span != "—" else text)
        gap = _Row("same", sides[0], sides[1], payload=("range",))
        return _fill(gap, item.entries, make, name)

    return row


def _line_row(line: LineRow) -> _Row:
    left_no = f"{line.original_line + 1:>4}  " if line.original_line is not None else ""
    right_no = f"{line.transformed_line + 1:>4}  " if line.transformed_line is not None else ""
    return _Row(
        line.kind,
        left_no + _one_line(line.original_text) if left_no else "",
        right_no + _one_line(line.transformed_text) if right_no else "",
        payload=("line", line),
    )


def _message_row(entry: MessageEntry, a_msgs: list[Any], b_msgs: list[Any]) -> _Row:
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
    row = _Row(entry.kind, left, right, payload=("message", i, j))
    if entry.kind == "changed":
        a_blocks = _blocks(a_msgs[i]) if i is not None and i < len(a_msgs) else []
        b_blocks = _blocks(b_msgs[j]) if j is not None and j < len(b_msgs) else []
        for note_text in entry.notes:
            row.add(_Row("changed", note_text, note_text))
        if entry.fields:
            text = "fields changed: " + ", ".join(entry.fields)
            row.add(_Row("changed", text, text))
        for block in entry.blocks:
            row.add(_block_row(block, a_blocks, b_blocks, i, j))
    return row


def _block_row(
    block: BlockChange, a_blocks: list[Any], b_blocks: list[Any], i: int | None, j: int | None
) -> _Row:
    bi, bj = block.original_index, block.transformed_index
    left = right = ""
    if bi is not None and bi < len(a_blocks):
        left = _one_line(f"[{bi}] {block.label} — {_block_text(a_blocks[bi])}")
    if bj is not None and bj < len(b_blocks):
        right = _one_line(f"[{bj}] {block.label} — {_block_text(b_blocks[bj])}")
    row = _Row(block.kind, left, right, payload=("block", i, j, bi, bj))
    if block.segments and block.kind == "changed":
        row.left = _one_line(f"[{bi}] {block.label} — {_excerpt(block.segments, 'left')}")
        row.right = _one_line(f"[{bj}] {block.label} — {_excerpt(block.segments, 'right')}")
    elif block.kind == "changed" and block.fields:
        suffix = f"  · changed: {', '.join(block.fields)}"
        row.left += suffix
        row.right += suffix
    return row


def _tool_row(tool: ToolEntry, a_tools: list[Any], b_tools: list[Any]) -> _Row:
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
    return _Row(kind, left, right, payload=("tool", tool.original_index, tool.transformed_index))


def _option_row(option: OptionEntry) -> _Row:
    def shown(value: Any) -> str:
        short = short_json(value)
        return short if short is not None else preview(value)

    left = f"{option.key}: {shown(option.old)}" if option.kind != "added" else ""
    right = f"{option.key}: {shown(option.new)}" if option.kind != "removed" else ""
    return _Row(option.kind, left, right, payload=("option", option.key))


class DiffModel(QAbstractItemModel):
    """The rows as a tree model; indexes carry row ids, so one that outlives a reset finds
    nothing rather than a freed object."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.headers = ("Original", "Transformed")
        self._ids = itertools.count(1)
        self._rows: dict[int, _Row] = {}
        self._root = _Row("same", "", "")
        self._bold = QFont()
        self._bold.setBold(True)

    def set_root(self, root: _Row, headers: tuple[str, str] | None = None) -> None:
        self.beginResetModel()
        self._rows = {}
        self._root = root
        if headers is not None:
            self.headers = headers
        self.endResetModel()

    def row_of(self, index: QModelIndex | QPersistentModelIndex) -> _Row:
        if not index.isValid():
            return self._root
        return self._rows.get(index.internalId(), self._root)

    def index_of(self, row: _Row) -> QModelIndex:
        if row is self._root or row.parent is None:
            return QModelIndex()
        return self._index(row, 0)

    def _index(self, row: _Row, column: int) -> QModelIndex:
        if not row.id or self._rows.get(row.id) is not row:
            row.id = next(self._ids)
            self._rows[row.id] = row
        return self.createIndex(row.row, column, row.id)

    def _known(self, index: Any) -> bool:
        return not index.isValid() or index.internalId() in self._rows

    def index(self, row: int, column: int, parent: Any = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not self._known(parent):
            return QModelIndex()
        node = self.row_of(parent)
        if 0 <= row < node.count and 0 <= column < 2:
            return self._index(node.child(row), column)
        return QModelIndex()

    def parent(self, index: Any = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid() or not self._known(index):
            return QModelIndex()
        up = self.row_of(index).parent
        if up is None or up is self._root:
            return QModelIndex()
        return self._index(up, 0)

    def rowCount(self, parent: Any = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and (parent.column() != 0 or not self._known(parent)):
            return 0
        return self.row_of(parent).count

    def hasChildren(self, parent: Any = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def columnCount(self, parent: Any = QModelIndex()) -> int:  # noqa: B008
        return 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        return None

    def flags(self, index: Any) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else _NO_FLAGS

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not self._known(index):
            return None
        row = self.row_of(index)
        left = index.column() == 0
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return row.left if left else row.right
        if role == KIND_ROLE:
            return row.kind
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if row.section else None
        if role == Qt.ItemDataRole.BackgroundRole and not row.section:
            if row.kind == "changed":
                return tint("changed", 40)
            if row.kind == "removed" and left:
                return tint("removed", 45)
            if row.kind == "added" and not left:
                return tint("added", 45)
        return None


_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_NO_FLAGS = Qt.ItemFlag.NoItemFlags


class _SideText(QPlainTextEdit):
    def __init__(self, placeholder: str) -> None:
        super().__init__()
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setPlaceholderText(placeholder)

    def show_segments(self, segments: Sequence[Segment], side: str) -> None:
        skip = "insert" if side == "left" else "delete"
        kind = "removed" if side == "left" else "added"
        self.clear()
        cursor = QTextCursor(self.document())
        plain = QTextCharFormat()
        marked = QTextCharFormat()
        color = tint(kind, 110)
        if color is not None:
            marked.setBackground(color)
        first_change = -1
        for seg in segments:
            if seg.op != "equal" and first_change < 0:
                first_change = cursor.position()
            if seg.op == skip:
                continue
            cursor.insertText(seg.text, plain if seg.op == "equal" else marked)
        self.moveCursor(QTextCursor.MoveOperation.Start)
        if first_change > 0:  # show the first change, not the common start
            at = QTextCursor(self.document())
            at.setPosition(first_change)
            self.setTextCursor(at)
            self.centerCursor()


class RequestDiffView(QWidget):
    """Summary line, "Only changes", the side-by-side rows, and the selected item in full."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary_label = heading()
        self.summary_label.setObjectName("diffSummary")
        self.problems_label = note()
        self.only_changes = QCheckBox("Only changes")
        self.only_changes.setToolTip("Hide unchanged messages, tools, options and system lines")
        self.only_changes.toggled.connect(self._on_only_changes_toggled)
        self.model = DiffModel(self)
        self.tree = QTreeView()
        self.tree.setObjectName("diffTree")
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.tree.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.left_text = _SideText("Select a row to see the original in full")
        self.right_text = _SideText("…and the transformed one here")
        self.detail_label = note()

        top = QHBoxLayout()
        top.addWidget(self.summary_label, 1)
        top.addWidget(self.only_changes, 0, Qt.AlignmentFlag.AlignTop)
        details = QWidget()
        details_layout = QVBoxLayout(details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.addWidget(self.detail_label)
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(self.left_text)
        sides.addWidget(self.right_text)
        details_layout.addWidget(sides)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(details)
        split.setSizes([420, 160])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.problems_label)
        layout.addWidget(split, 1)
        self.problems_label.hide()

        self.diff: RequestDiff | None = None
        self.sides: DiffSides | None = None
        self._cache: DiffCache | None = None
        self._key: str | None = None
        self._job: Job | None = None

    # ---- content ------------------------------------------------------------------------
    def show_diff(self, cache: DiffCache, key: str, sides: DiffSides) -> None:
        """Show the diff of ``sides`` (known in ``cache`` as ``key``); the rows appear when it
        is ready. It is asked for once the caller's own work is done: a diff thread holding the
        interpreter lock would slow every call the views make into Python meanwhile."""
        self._cache, self._key, self._job = cache, key, None
        self.diff = None
        self.sides = sides
        self.summary_label.setText("Computing the diff…")
        self.problems_label.hide()
        self.model.set_root(_Row("same", "", ""))
        self._clear_detail()
        QTimer.singleShot(0, self._ask_for_diff)

    def _ask_for_diff(self) -> None:
        if self._cache is None or self._key is None or self.sides is None:
            return
        job = self._cache.job(self._key, self.sides)
        self._job = job
        if job.done:
            self._on_diff_done(job)
        else:
            job.finished.connect(lambda _value: self._on_diff_done(job))
            job.failed.connect(lambda _error: self._on_diff_done(job))

    @property
    def summary(self) -> str:
        """The diff's summary line, in the words of what is compared."""
        if self.diff is None or self.sides is None:
            return ""
        text = self.diff.summary
        if self.sides.system_word != "system" and text.startswith("system changed"):
            text = self.sides.system_word + text[len("system") :]
        return text

    @property
    def ready(self) -> bool:
        return self.diff is not None or self.failed

    def clear(self) -> None:
        self._cache = self._key = self._job = None
        self.diff = None
        self.sides = None
        self.summary_label.clear()
        self.problems_label.hide()
        self.model.set_root(_Row("same", "", ""))
        self._clear_detail()

    @property
    def failed(self) -> bool:
        """Whether the diff on show could not be computed."""
        return self._job is not None and self._job.error is not None

    def _on_diff_done(self, job: Job) -> None:
        if job is not self._job:
            return  # another run is on show by now
        if job.error is not None:
            self.summary_label.setText(f"The diff could not be computed: {job.error}")
            return
        self.diff = job.value
        self.summary_label.setText(self.summary)
        problems = [p for p in self.diff.problems if p not in self.diff.summary]
        self.problems_label.setText("; ".join(problems))
        self.problems_label.setVisible(bool(problems))
        self._rebuild()

    def _rebuild(self) -> None:
        if self.diff is None or self.sides is None:
            return
        root = build_rows(self.diff, self.sides, self.only_changes.isChecked())
        self.model.set_root(root, self.sides.headers)
        for row in range(self.model.rowCount()):
            self.tree.setFirstColumnSpanned(row, QModelIndex(), True)
            self.tree.expand(self.model.index(row, 0))
        self._open_changed_messages(root.child(1))
        self._clear_detail()
        self._select_first_change(root)

    def _open_changed_messages(self, node: _Row) -> None:
        """Open the first changed messages (to show their blocks) and the ranges they are in."""
        opened = 0
        stack = [node]
        while stack and opened < EXPANDED_MESSAGES:
            current = stack.pop()
            if current.make is None:  # ranges: open those with changes, first one first
                changed = [c for c in current.children if c.kind != "same"]
                for child in reversed(changed[:2]):
                    self.tree.expand(self.model.index_of(child))
                    stack.append(child)
                continue
            for k, entry in enumerate(current.entries):
                if opened >= EXPANDED_MESSAGES:
                    break
                if entry.kind == "changed":
                    self.tree.expand(self.model.index_of(current.child(k)))
                    opened += 1

    def _select_first_change(self, root: _Row) -> None:
        """Select the first change, so that its full text shows below at once: a changed system
        prompt as a whole, else the first changed message, tool or option."""
        for row in range(root.count):
            section = root.child(row)
            if section.payload == ("system",):
                if section.kind != "same":
                    self.tree.setCurrentIndex(self.model.index_of(section))
                    return
                continue
            node = section
            first = node.first_change()
            while first is not None:
                node = node.child(first)
                if node.payload != ("range",):
                    self.tree.setCurrentIndex(self.model.index_of(node))
                    return
                first = node.first_change()

    def _on_only_changes_toggled(self, _checked: bool) -> None:
        self._rebuild()

    # ---- rows as text -----------------------------------------------------------------------
    def row_texts(self) -> list[tuple[str, str]]:
        """Every row's (left, right) text, depth first: what a reader sees, for tests."""
        out: list[tuple[str, str]] = []

        def walk(node: _Row) -> None:
            for row in range(node.count):
                child = node.child(row)
                out.append((child.left, child.right))
                walk(child)

        walk(self.model.row_of(QModelIndex()))
        return out

    # ---- details --------------------------------------------------------------------------
    def _clear_detail(self) -> None:
        self.left_text.clear()
        self.right_text.clear()
        self.detail_label.clear()

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid() or self.sides is None:
            return
        row = self.model.row_of(current)
        a, b, label = self._values(row.payload)
        self.detail_label.setText(label)
        if a is _MISSING and b is _MISSING:
            self._clear_detail()
            self.detail_label.setText(label)
            return
        text_a = "" if a is _MISSING else pretty(a)
        text_b = "" if b is _MISSING else pretty(b)
        if (
            a is not _MISSING
            and b is not _MISSING
            and len(text_a) + len(text_b) <= DETAIL_DIFF_CHARS
            and text_a != text_b
        ):
            segments = diff_text(text_a, text_b)
            self.left_text.show_segments(segments, "left")
            self.right_text.show_segments(segments, "right")
        else:
            self.left_text.setPlainText(text_a)
            self.right_text.setPlainText(text_b)
        if a is _MISSING:
            self.left_text.setPlainText(f"(not in the {self.sides.headers[0].lower()})")
        if b is _MISSING:
            self.right_text.setPlainText(f"(not in the {self.sides.headers[1].lower()})")

    def _values(self, payload: tuple[Any, ...]) -> tuple[Any, Any, str]:
        assert self.sides is not None
        a_req = self.sides.original if isinstance(self.sides.original, dict) else {}
        b_req = self.sides.transformed if isinstance(self.sides.transformed, dict) else {}
        if not payload:
            return _MISSING, _MISSING, ""
        what = payload[0]
        if what in ("system", "line"):
            return (
                a_req.get("system", _MISSING),
                b_req.get("system", _MISSING),
                self.sides.system_label,
            )
        if what == "message":
            _, i, j = payload
            return (
                _item(a_req.get("messages"), i),
                _item(b_req.get("messages"), j),
                f"Message {_pair(i, j)}",
            )
        if what == "block":
            _, i, j, bi, bj = payload
            a_msg, b_msg = _item(a_req.get("messages"), i), _item(b_req.get("messages"), j)
            a_blk = _item(_blocks(a_msg), bi) if a_msg is not _MISSING else _MISSING
            b_blk = _item(_blocks(b_msg), bj) if b_msg is not _MISSING else _MISSING
            return a_blk, b_blk, f"Message {_pair(i, j)}, block {_pair(bi, bj)}"
        if what == "tool":
            _, i, j = payload
            return (
                _item(a_req.get("tools"), i),
                _item(b_req.get("tools"), j),
                f"Tool {_pair(i, j)}",
            )
        if what == "option":
            key = payload[1]
            a_opts, b_opts = _dict_at(a_req, "options"), _dict_at(b_req, "options")
            return a_opts.get(key, _MISSING), b_opts.get(key, _MISSING), f"{key}"
        return _MISSING, _MISSING, ""


_MISSING: Any = object()


def _item(values: Any, index: int | None) -> Any:
    if index is None or not isinstance(values, list) or not 0 <= index < len(values):
        return _MISSING
    return values[index]


def _pair(i: int | None, j: int | None) -> str:
    left = f"#{i}" if i is not None else "—"
    right = f"#{j}" if j is not None else "—"
    return left if i == j else f"{left} {ARROW} {right}"


def message_label(text: str) -> QLabel:
    """A centred explanation shown in place of a diff."""
    label = note(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return label
