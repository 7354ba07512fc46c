"""Fields the dialogs that make a sample share: monospace JSON and report panes, the sample's
name, held to the rule sample files follow, and the status line."""

from __future__ import annotations

from PySide6.QtCore import QRegularExpression
from PySide6.QtGui import QFontDatabase, QRegularExpressionValidator
from PySide6.QtWidgets import QLabel, QLineEdit, QPlainTextEdit

from studio.core.workspace.sample_files import NAME_PATTERN, NAME_RULE
from studio.ui.result_style import set_accent


def mono(edit: QPlainTextEdit) -> None:
    """A fixed-width font, and Tab moving focus on rather than typing a tab."""
    edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    edit.setTabChangesFocus(True)


def read_only_pane(object_name: str) -> QPlainTextEdit:
    pane = QPlainTextEdit()
    pane.setObjectName(object_name)
    pane.setReadOnly(True)
    mono(pane)
    return pane


def sample_name_field(object_name: str) -> QLineEdit:
    field = QLineEdit()
    field.setObjectName(object_name)
    field.setValidator(QRegularExpressionValidator(QRegularExpression(NAME_PATTERN), field))
    field.setToolTip(f"The sample's name: {NAME_RULE}")
    return field


def show_status(status: QLabel, text: str, kind: str | None) -> str:
    """Say ``text`` in the dialog's status line, coloured by ``kind``; returns it as the
    dialog's problem when it is an error, else an empty string."""
    status.setText(text)
    set_accent(status, kind)
    return text if kind == "error" else ""
