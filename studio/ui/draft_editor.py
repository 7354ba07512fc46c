"""The part every hookstudio.json editor shares: a draft that each edit replaces through the
editor's undo stack, the findings on it, and Save refused while one is an error.

:class:`SourcedDraftEditor` adds what the editors of a section naming hook sources share: the
workspace's sources to pick from, their check against the files, and the notice above."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QLabel, QWidget

from studio.core.findings import Finding, errors
from studio.ui.config_editor_parts import DraftCommand, SectionCheck


class DraftEditor(QWidget):
    draft_changed = Signal(object)
    save_requested = Signal()

    def __init__(self, undo_stack: QUndoStack, draft: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.undo_stack = undo_stack
        self.draft = draft
        self.findings: list[Finding] = []
        self._showing = False

    @property
    def valid(self) -> bool:
        return not errors(self.findings)

    def apply(self, after: Any, text: str, merge: int = -1) -> None:
        if after == self.draft:
            return
        self.undo_stack.push(DraftCommand(self, self.draft, after, text, merge))

    def show_draft(self, draft: Any) -> None:
        raise NotImplementedError


class SourcedDraftEditor(DraftEditor):
    notice: QLabel

    def __init__(self, undo_stack: QUndoStack, draft: Any, parent: QWidget | None = None) -> None:
        super().__init__(undo_stack, draft, parent)
        self._sources: list[str] = []
        self._source_check: SectionCheck | None = None
        self._functions: Callable[[str], Sequence[str] | None] | None = None

    def set_context(
        self,
        sources: Sequence[str],
        source_check: SectionCheck | None,
        functions: Callable[[str], Sequence[str] | None] | None,
    ) -> None:
        """The workspace's hook sources (for the picker), how a source is checked against the
        files, and how the functions of a source are listed (None until they are known)."""
        self._sources = list(sources)
        self._source_check = source_check
        self._functions = functions
        self.recheck()

    def set_notice(self, text: str | None) -> None:
        self.notice.setText(text or "")
        self.notice.setVisible(bool(text))

    def load(self, draft: Any) -> None:
        """Show a draft from disk: a fresh start for undo."""
        self.undo_stack.clear()
        self.show_draft(draft)
        self.undo_stack.setClean()

    def recheck(self) -> None:
        """The findings and pickers again, after the files on disk changed."""
        self._render()

    def show_draft(self, draft: Any) -> None:
        self.draft = draft
        self._render()
        self.draft_changed.emit(draft)

    def _render(self) -> None:
        raise NotImplementedError
