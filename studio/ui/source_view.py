"""A hook's source file, read-only, coloured by its language, scrolled to a line and with that
line marked."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QVBoxLayout, QWidget

from studio.ui.code_highlighter import CodeHighlighter, language_of
from studio.ui.json_highlighter import json_theme


class SourceView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("No file open")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.highlighter = CodeHighlighter(self.text.document(), json_theme(self.text.palette()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.text)
        self.path: Path | None = None
        self.line = 0

    def show_file(self, path: Path, line: int, label: str) -> None:
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            content = f"cannot read {label}: {exc.strerror or exc}"
        self.path = path
        self.line = line
        self.title.setText(f"{label}, line {line}")
        self.highlighter.set_language(language_of(path))
        self.text.setPlainText(content)
        block = self.text.document().findBlockByLineNumber(max(line - 1, 0))
        cursor = QTextCursor(block)
        self.text.setTextCursor(cursor)
        self.text.centerCursor()
        mark = QTextEdit.ExtraSelection()
        mark.format.setBackground(QColor(255, 200, 0, 90))
        mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        mark.cursor = cursor
        self.text.setExtraSelections([mark])
