"""A monospace JSON editor with line numbers, and the places of a sample's problems in its text:
the 1-based lines and columns (in code points) that core reports, as positions in a Qt document
(which counts UTF-16 units), with the marks that underline them."""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from studio.core.workspace.sample_check import Problem
from studio.ui.json_highlighter import JsonTheme, VisibleHighlighter, json_theme

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class _Gutter(QWidget):
    def __init__(self, editor: JsonTextEdit) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor.paint_gutter(self, event)


class JsonTextEdit(QPlainTextEdit):
    """A monospace plain-text editor with line numbers; Ctrl+S asks for a save while it has the
    focus (ahead of any window-wide Save shortcut)."""

    save_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 2)
        self.error_lines: dict[int, str] = {}  # 0-based line -> "error" | "warning"
        self.theme: JsonTheme = json_theme(self.palette())
        self.visible_highlighter = VisibleHighlighter(self, self.theme)
        self._reserved_lines = 1
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._on_block_count_changed)
        self.updateRequest.connect(self._on_update_request)
        self._on_block_count_changed(1)
        # Whether the text has been painted since it was set.
        self.painted_text = False
        self.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.horizontalScrollBar().valueChanged.connect(self._on_scrolled)

    # ---- painting while text goes in -----------------------------------------------------------
    def hold_painting(self, held: bool) -> None:
        """While held, the text is not painted again until the user scrolls or the editor is
        resized: Qt repaints the whole view after each addition to the text, even when the text
        goes in below what is on screen. (What was painted stays on screen: the view paints its
        whole background itself, so nothing paints over it. The line numbers are painted as
        usual.)"""
        self.viewport().setUpdatesEnabled(not held)

    def painting_held(self) -> bool:
        return not self.viewport().updatesEnabled()

    def _on_scrolled(self, _value: int) -> None:
        if self.painting_held():
            self.hold_painting(False)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self.painted_text and self.document().characterCount() > 1:
            self.painted_text = True

    # ---- keys ----------------------------------------------------------------------------------
    def event(self, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.matches(QKeySequence.StandardKey.Save)
        ):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Save):
            event.accept()
            self.save_requested.emit()
            return
        super().keyPressEvent(event)

    # ---- line numbers ------------------------------------------------------------------------
    def reserve_lines(self, lines: int) -> None:
        """Size the line numbers for ``lines`` from the start: a gutter that widens while a
        large text streams in would make the editor lay out everything again each time."""
        self._reserved_lines = lines
        self._on_block_count_changed(self.blockCount())

    def gutter_width(self) -> int:
        digits = max(3, len(str(max(self._reserved_lines, self.blockCount()))))
        return 10 + self.fontMetrics().horizontalAdvance("9") * digits

    def refresh_gutter(self) -> None:
        self._gutter.update()

    def _on_block_count_changed(self, _count: int) -> None:
        width = self.gutter_width()
        if width != self.viewportMargins().left():
            self.setViewportMargins(width, 0, 0, 0)

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        if self.painting_held():
            self.hold_painting(False)
        super().resizeEvent(event)
        area = self.contentsRect()
        # As tall as the text, not over the horizontal scroll bar below it.
        height = self.viewport().height()
        self._gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), height))

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(gutter)
        palette = self.palette()
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        painter.fillRect(event.rect(), palette.color(QPalette.ColorRole.AlternateBase))
        dim = QColor(
            (text.red() + base.red() * 2) // 3,
            (text.green() + base.green() * 2) // 3,
            (text.blue() + base.blue() * 2) // 3,
        )
        current = self.textCursor().blockNumber()
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        height = self.fontMetrics().height()
        width = gutter.width() - 5
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                mark = self.error_lines.get(number)
                if mark:
                    colour = self.theme.error if mark == "error" else self.theme.warning
                    painter.fillRect(0, top, 3, height, colour)
                    painter.setPen(colour)
                else:
                    painter.setPen(text if number == current else dim)
                painter.drawText(
                    0, top, width, height, Qt.AlignmentFlag.AlignRight, str(number + 1)
                )
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1
        painter.end()


# ---- places in a document ----------------------------------------------------------------------


def text_of(document: QTextDocument) -> str:
    # toPlainText would turn non-breaking spaces into spaces; the raw text keeps them.
    return document.toRawText().replace("\u2029", "\n")


def position(document: QTextDocument, line: int, column: int) -> int:
    """A 1-based line and column (in code points) as a position in ``document``."""
    block = document.findBlockByNumber(max(0, line - 1))
    if not block.isValid():
        return max(0, document.characterCount() - 1)
    text = block.text()
    prefix = text[: max(0, column - 1)]
    units = len(prefix) + (0 if prefix.isascii() else len(_ASTRAL.findall(prefix)))
    return block.position() + min(units, block.length() - 1)


def span(document: QTextDocument, problem: Problem) -> tuple[int, int]:
    """Where ``problem`` is in ``document``: the value it is about, to the end of its first line
    when the value spans lines, or one character for a syntax error."""
    start = position(document, problem.line, problem.column)
    if problem.end_line == problem.line:
        end = position(document, problem.end_line, problem.end_column)
    else:
        block = document.findBlock(start)
        end = block.position() + block.length() - 1
    if problem.pointer is None or end <= start:  # a syntax error: mark one character
        end = min(start + 1, max(0, document.characterCount() - 1))
        if end <= start and start > 0:
            start -= 1
    return start, end


def problem_marks(
    document: QTextDocument, problem: Problem, theme: JsonTheme
) -> list[QTextEdit.ExtraSelection]:
    """A wavy underline under the problem; a syntax error's line is tinted too."""
    colour = theme.error if problem.severity == "error" else theme.warning
    start, end = span(document, problem)
    marks = []
    if problem.pointer is None:
        line = QTextEdit.ExtraSelection()
        line.format.setBackground(theme.error_line)
        line.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        line.cursor = QTextCursor(document.findBlock(start))
        marks.append(line)
    underline = QTextEdit.ExtraSelection()
    underline.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
    underline.format.setUnderlineColor(colour)
    cursor = QTextCursor(document)
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    underline.cursor = cursor
    marks.append(underline)
    return marks


def jump_mark(
    document: QTextDocument, start: int, end: int, theme: JsonTheme
) -> QTextEdit.ExtraSelection:
    """The highlight on the value the cursor was moved to."""
    mark = QTextEdit.ExtraSelection()
    mark.format.setBackground(theme.jump)
    cursor = QTextCursor(document)
    cursor.setPosition(start)
    cursor.setPosition(max(end, start), QTextCursor.MoveMode.KeepAnchor)
    mark.cursor = cursor
    return mark
