"""What the hook editors share: a draft change as an undo command, the findings list, the
source-path and function pickers, and the scrolling body with Save below it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoCommand
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from studio.core.findings import Finding

ERROR_STYLE = "border: 1px solid #d04040; border-radius: 3px;"

SectionCheck = Callable[[Any], list[Finding]]
"""The findings on a section's hook sources from the files on disk (the section as written)."""


class DraftHolder(Protocol):
    def show_draft(self, draft: Any) -> None: ...


class DraftCommand(QUndoCommand):
    """One edit of an editor's draft; typing in one field merges into one step (``merge`` >= 0)."""

    def __init__(self, editor: DraftHolder, before: Any, after: Any, text: str, merge: int):
        super().__init__(text)
        self.editor = editor
        self.before = before
        self.after = after
        self.merge = merge

    def id(self) -> int:
        return self.merge

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, DraftCommand) or other.merge != self.merge or self.merge < 0:
            return False
        self.after = other.after
        return True

    def redo(self) -> None:
        self.editor.show_draft(self.after)

    def undo(self) -> None:
        self.editor.show_draft(self.before)


def source_row(source: QWidget, function: QWidget) -> QHBoxLayout:
    """The source file and its function side by side, as ``file:function`` is written."""
    row = QHBoxLayout()
    row.addWidget(source, 3)
    row.addWidget(QLabel(":"))
    row.addWidget(function, 2)
    return row


def scrolled_editor(
    editor: QWidget, notice: QLabel, sections: Sequence[QWidget], actions: QHBoxLayout
) -> None:
    """Lays out an editor: its notice, its sections in a scroll area, and its actions below.

    Below its natural height the editor scrolls, and Save stays in view below it."""
    content = QWidget()
    layout = QVBoxLayout(content)
    for section in sections:
        layout.addWidget(section)
    layout.addStretch(1)
    scroll = QScrollArea()
    scroll.setWidget(content)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    # The area itself is no Tab stop: Tab goes straight to its fields.
    scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    outer = QVBoxLayout(editor)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(notice)
    outer.addWidget(scroll, 1)
    actions.setContentsMargins(6, 2, 6, 4)
    outer.addLayout(actions)


def findings_list() -> QListWidget:
    found = QListWidget()
    found.setObjectName("findings")
    # A finding is read whole: long ones wrap instead of scrolling sideways.
    found.setWordWrap(True)
    found.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    found.setMaximumHeight(110)
    found.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
    return found


def show_findings(widget: QListWidget, findings: Sequence[Finding], ok_text: str) -> None:
    """Each finding with its JSON path as tooltip and data, so activating it can go there."""
    widget.clear()
    for finding in findings:
        # The marks of the hook editor's findings, so all three editors read alike.
        mark = "✗ " if finding.severity == "error" else "⚠ "
        item = QListWidgetItem(mark + finding.message)
        item.setToolTip(finding.pointer or "/")
        item.setData(Qt.ItemDataRole.UserRole, finding.pointer)
        item.setData(Qt.ItemDataRole.UserRole + 1, finding.rule)
        widget.addItem(item)
    if not findings:
        widget.addItem(QListWidgetItem("✓ " + ok_text))


def path_picker(tip: str) -> QComboBox:
    """An editable choice among the workspace's hook sources."""
    box = QComboBox()
    box.setEditable(True)
    box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    box.setMinimumContentsLength(8)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setToolTip(tip)
    return box


def set_choices(box: QComboBox, choices: Sequence[str], text: str) -> None:
    """Replace the items, keeping ``text`` as the edit text; emits no edit signal a user's
    typing would (callers block while they fill)."""
    box.blockSignals(True)
    try:
        if [box.itemText(i) for i in range(box.count())] != list(choices):
            box.clear()
            box.addItems(list(choices))
        if box.currentText() != text:
            box.setEditText(text)
    finally:
        box.blockSignals(False)
