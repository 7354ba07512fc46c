"""The selected row of the request diff in full: what it stands for on each side, and the two
texts with their differences marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtGui import QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from studio.core.pre_llm.diff import ARROW, Segment
from studio.ui.result_diff_rows import content_blocks, dict_at
from studio.ui.result_diff_sides import DiffSides
from studio.ui.result_style import tint, wrap_for

MISSING: Any = object()
"""A side that holds nothing for a row (where ``None`` would be a JSON null)."""


def _item(values: Any, index: int | None) -> Any:
    if index is None or not isinstance(values, list) or not 0 <= index < len(values):
        return MISSING
    return values[index]


def _pair(i: int | None, j: int | None) -> str:
    left = f"#{i}" if i is not None else "—"
    right = f"#{j}" if j is not None else "—"
    return left if i == j else f"{left} {ARROW} {right}"


def row_values(sides: DiffSides, payload: tuple[Any, ...]) -> tuple[Any, Any, str]:
    """What a row stands for on each side (MISSING where a side has none of it), and its label."""
    a_req = sides.original if isinstance(sides.original, dict) else {}
    b_req = sides.transformed if isinstance(sides.transformed, dict) else {}
    if not payload:
        return MISSING, MISSING, ""
    what = payload[0]
    if what in ("system", "line"):
        return (
            a_req.get("system", MISSING),
            b_req.get("system", MISSING),
            sides.system_label,
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
        a_blk = _item(content_blocks(a_msg), bi) if a_msg is not MISSING else MISSING
        b_blk = _item(content_blocks(b_msg), bj) if b_msg is not MISSING else MISSING
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
        a_opts, b_opts = dict_at(a_req, "options"), dict_at(b_req, "options")
        return a_opts.get(key, MISSING), b_opts.get(key, MISSING), f"{key}"
    return MISSING, MISSING, ""


class SideText(QPlainTextEdit):
    """One side of the selected row in full, with what the other side lacks marked."""

    def __init__(self, placeholder: str) -> None:
        super().__init__()
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setPlaceholderText(placeholder)

    def setPlainText(self, text: str) -> None:
        wrap_for(self, text)
        super().setPlainText(text)

    def show_segments(self, segments: Sequence[Segment], side: str) -> None:
        skip = "insert" if side == "left" else "delete"
        kind = "removed" if side == "left" else "added"
        self.clear()
        wrap_for(self, "".join(seg.text for seg in segments if seg.op != skip))
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
