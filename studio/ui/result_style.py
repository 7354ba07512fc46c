"""Colours and small widgets shared by the results views.

Backgrounds are translucent tints over the palette's own base, so they read in light and dark
themes alike; text keeps the palette's colours."""

from __future__ import annotations

import re
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTreeWidget,
    QWidget,
)

from studio.ui.contrast import readable_on

_TINTS = {
    "removed": (220, 60, 60),
    "added": (40, 170, 80),
    "changed": (225, 150, 20),
    "error": (220, 60, 60),
    "ok": (40, 170, 80),
    "warning": (225, 150, 20),
    "info": (70, 130, 220),
}


def tint(kind: str, strength: int = 50) -> QColor | None:
    """A translucent background for ``kind`` (removed, added, changed, error, ok…)."""
    rgb = _TINTS.get(kind)
    return QColor(*rgb, strength) if rgb else None


def accent(kind: str) -> QColor:
    """A foreground colour for ``kind`` that reads on light and dark bases."""
    rgb = _TINTS.get(kind)
    if rgb is None:
        return QApplication.palette().color(QPalette.ColorRole.Text)
    base = QApplication.palette().color(QPalette.ColorRole.Base)
    color = QColor(*rgb)
    color = color.lighter(135) if base.lightness() < 128 else color.darker(125)
    return readable_on(color, base)


def heading(text: str = "", *, size: float = 1.0, bold: bool = True) -> QLabel:
    label = QLabel(text)
    font = QFont(label.font())
    font.setBold(bold)
    if size != 1.0:
        font.setPointSizeF(font.pointSizeF() * size)
    label.setFont(font)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


# Tried from the start of each word only: tried from every character, a pattern of a word's
# length costs the square of each word's length (200,000 characters of 1,999-character words:
# 0.35 s).
_LONG_WORD = re.compile(r"(?<!\S)\S{2000}")


def wrap_for(edit: QPlainTextEdit, text: str) -> None:
    """Wrap ``edit`` at word boundaries for ``text``, or anywhere when ``text`` holds a word of
    2,000 characters or more. Qt searches a word that long at length for where to break it (a
    hook's 200,000-character string held the window 8 s), and can only break it anywhere."""
    long_word = _LONG_WORD.search(text) is not None
    wrap = QTextOption.WrapMode.WrapAnywhere if long_word else QTextOption.WrapMode.WordWrap
    edit.setWordWrapMode(wrap)


def show_wrapped(edit: QPlainTextEdit, text: str) -> None:
    """``edit`` showing ``text``, wrapped as :func:`wrap_for` says."""
    wrap_for(edit, text)
    edit.setPlainText(text)


def note(text: str = "") -> QLabel:
    """A muted explanatory line."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


def steps_table(name: str, columns: Sequence[str]) -> QTreeWidget:
    """A read-only table of a run's steps, one row each: the second column takes the spare
    width, the others fit their contents."""
    table = QTreeWidget()
    table.setObjectName(name)
    table.setRootIsDecorated(False)
    table.setUniformRowHeights(True)
    table.setHeaderLabels(list(columns))
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    header = table.header()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
    header.setStretchLastSection(False)
    return table


def set_accent(widget: QWidget, kind: str | None) -> None:
    palette = widget.palette()
    color = accent(kind) if kind else QApplication.palette().color(QPalette.ColorRole.WindowText)
    palette.setColor(QPalette.ColorRole.WindowText, color)
    palette.setColor(QPalette.ColorRole.Text, color)
    widget.setPalette(palette)
