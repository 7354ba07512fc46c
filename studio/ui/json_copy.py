"""Copy as JSON: a value put on the clipboard as indented JSON text, whole (never cut as the
views cut what they show), non-ASCII characters as themselves; and the button and Ctrl+C that
every JSON view offers for it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QToolButton, QWidget

from studio.core.json.deep import deep_json
from studio.core.json.surrogates import escape_lone_surrogates

COPY_TEXT = "Copy as JSON"


def json_text(value: Any) -> str:
    """``value`` as JSON indented by two spaces; a lone surrogate (which no clipboard carries)
    as its escape; NaN and infinities as JavaScript writes them."""
    with deep_json():
        text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=True, default=str)
    return escape_lone_surrogates(text)


def copy_json(value: Any) -> str:
    """Put ``value`` on the clipboard as JSON text; returns the text."""
    text = json_text(value)
    QGuiApplication.clipboard().setText(text)
    return text


def copy_action(owner: QWidget, handler: Callable[[], object], tip: str) -> QAction:
    """Copy as JSON (Ctrl+C) while the focus is anywhere in ``owner``."""
    action = QAction(COPY_TEXT, owner)
    action.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    shown = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    action.setToolTip(f"{tip} ({shown})")
    action.setIconText("Copy")  # what its button says
    action.triggered.connect(handler)
    owner.addAction(action)
    return action


def copy_button(action: QAction, name: str) -> QToolButton:
    button = QToolButton()
    button.setObjectName(name)
    button.setDefaultAction(action)
    button.setAutoRaise(True)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button
