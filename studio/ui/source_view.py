"""A hook's source file, coloured by its language, scrolled to a line and with that line marked.

A source of the open workspace is read and saved through the workspace (for an ``.adf``, its
``adf_files`` row): the view shows whether the file is authorized and how it is protected, asks
before a save removes an authorization, and keeps ``read_only`` files and read-only agents
read-only."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from studio.core.source_ref import SourceOutsideWorkspace
from studio.core.workspace.adf_file import AdfFileError, SourceWrite
from studio.core.workspace.folder import SourceFile, Workspace, WorkspaceFileError
from studio.engine.runtimes import runnable_extensions
from studio.ui.code_highlighter import CodeHighlighter, language_of
from studio.ui.json_highlighter import json_theme

TITLE = "Hook Studio"


PROTECTION = {
    "read_only": ("read-only", "read_only in the agent: the studio never writes it."),
    "no_delete": ("no delete", "no_delete in the agent: it may be edited, not deleted."),
}


def source_state(source: SourceFile, *, hook_source: bool = True) -> tuple[str, str]:
    """A file's state as a short label and a tooltip: for a hook source whether it is
    authorized, and for every file its protection in the agent."""
    label: list[str] = []
    tip: list[str] = []
    if hook_source:
        label.append("✓ authorized" if source.authorized else "not authorized")
        tip.append(
            "Authorized: it runs with authorized privileges; saving an edit removes that "
            "(ADF sets authorized = 0 on every change)."
            if source.authorized
            else "Not authorized: it runs without authorized privileges."
        )
    if source.protection in PROTECTION:
        label.append(PROTECTION[source.protection][0])
        tip.append(PROTECTION[source.protection][1])
    return ", ".join(label), " ".join(tip)


class SourceView(QWidget):
    source_saved = Signal(str, str)  # the source's path, and a warning ("" when none)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("No file open")
        self.state = QLabel()
        self.state.setObjectName("sourceState")
        self.state.setWordWrap(True)
        self.save_button = QPushButton("&Save Source")
        self.save_button.setObjectName("saveSource")
        self.save_button.setEnabled(False)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.highlighter = CodeHighlighter(self.text.document(), json_theme(self.text.palette()))
        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.state)
        layout.addWidget(self.text)
        self.path: Path | None = None
        self.line = 0
        self.workspace: Workspace | None = None
        self.source: str | None = None
        self.editable = False
        self.text.document().modificationChanged.connect(self._on_modified)
        self.save_button.clicked.connect(self.save_source)

    def set_workspace(self, workspace: Workspace | None) -> None:
        self.workspace = workspace
        self.source = None
        self.path = None
        self.editable = False
        self.title.setText("No file open")
        self.state.clear()
        self.text.setReadOnly(True)
        self.text.setPlainText("")
        self.save_button.setEnabled(False)

    def show_file(self, path: Path, line: int, label: str) -> None:
        """A file outside the workspace's sources, read-only."""
        if not self.confirm_leave():
            return
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            content = f"cannot read {label}: {exc.strerror or exc}"
        self.source = None
        self.editable = False
        self.state.clear()
        self._show(path, content, line, label)

    def show_source(self, path: str, line: int) -> None:
        """The workspace's hook source ``path``, editable unless the agent or the file is
        read-only."""
        if self.workspace is None or not self.confirm_leave():
            return
        reason = self.workspace.read_only_reason
        try:
            content = self.workspace.read_source(path)
            readable = True
        except WorkspaceFileError as exc:
            content = f"cannot read {path}: {exc}"
            readable = False
        info = self._info(path)
        self.source = path
        self.editable = readable and not reason and not (info is not None and info.read_only)
        self._show_state(info, reason)
        self._show(self.workspace.source_root / path, content, line, path)

    def _info(self, path: str) -> SourceFile | None:
        assert self.workspace is not None
        suffix = PurePosixPath(path).suffix
        if not suffix:
            return None
        try:
            found = self.workspace.source_files((suffix,))
        except WorkspaceFileError:
            return None
        return next((f for f in found if f.path == path), None)

    def _show_state(self, info: SourceFile | None, reason: str | None) -> None:
        parts: list[str] = []
        tips: list[str] = []
        if info is not None:
            label, tip = source_state(info, hook_source=info.path.endswith(runnable_extensions()))
            parts.append(label)
            tips.append(tip)
        if reason:
            parts.append(f"read-only agent: {reason}")
        elif self.workspace is not None and self.workspace.looks_open():
            parts.append("the agent looks open in ADF: its open editor may write its copy back")
        self.state.setText("; ".join(parts))
        self.state.setToolTip(" ".join(tips))
        self.save_button.setToolTip(
            "Save this source to the agent"
            if self.editable
            else "This file cannot be changed here" + (f": {parts[-1]}" if parts else "")
        )

    def _show(self, path: Path, content: str, line: int, label: str) -> None:
        self.path = path
        self.line = line
        self.title.setText(f"{label}, line {line}")
        self.highlighter.set_language(language_of(path))
        self.text.setReadOnly(not self.editable)
        self.text.setPlainText(content)
        self.text.document().setModified(False)
        self.save_button.setEnabled(False)
        block = self.text.document().findBlockByLineNumber(max(line - 1, 0))
        cursor = QTextCursor(block)
        self.text.setTextCursor(cursor)
        self.text.centerCursor()
        mark = QTextEdit.ExtraSelection()
        mark.format.setBackground(QColor(255, 200, 0, 90))
        mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        mark.cursor = cursor
        self.text.setExtraSelections([mark])

    def _on_modified(self, modified: bool) -> None:
        self.save_button.setEnabled(modified and self.editable)

    @property
    def modified(self) -> bool:
        return self.text.document().isModified()

    def confirm_leave(self) -> bool:
        """Whether the source shown may be replaced: unsaved edits are saved or dropped as the
        user answers (Cancel keeps them on screen)."""
        if not self.modified or not self.editable or self.source is None:
            return True
        answer = QMessageBox.question(
            self,
            TITLE,
            f"{self.source} has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save_source()
        if answer == QMessageBox.StandardButton.Discard:
            self.text.document().setModified(False)
            return True
        return False

    def save_source(self) -> bool:
        """Write the edited text through the workspace. An authorized file is written only
        after the user agrees that the edit removes its authorization (the default is No)."""
        if self.workspace is None or self.source is None or not self.editable:
            return False
        path, text = self.source, self.text.toPlainText()
        try:
            result = self.workspace.write_source(path, text)
            if result.status == "would_deauthorize":
                if not self._confirm_deauthorize(path):
                    return False
                result = self.workspace.write_source(path, text, deauthorize=True)
        except AdfFileError as exc:
            QMessageBox.warning(self, TITLE, f"{path} was not saved:\n{exc.reason}")
            return False
        except (OSError, WorkspaceFileError, SourceOutsideWorkspace) as exc:
            QMessageBox.warning(self, TITLE, f"{path} was not saved:\n{exc}")
            return False
        self._saved(result)
        return True

    def _confirm_deauthorize(self, path: str) -> bool:
        answer = QMessageBox.question(
            self,
            TITLE,
            f"{path} is authorized in the agent: it runs with authorized privileges.\n\n"
            "Saving this edit removes its authorization (as ADF does for every change); it can "
            "be authorized again in ADF. Save anyway?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _saved(self, result: SourceWrite) -> None:
        self.text.document().setModified(False)
        reason = self.workspace.read_only_reason if self.workspace else None
        self._show_state(self._info(result.path), reason)
        if result.warning:
            self.state.setText(f"{self.state.text()}; saved, but {result.warning}")
        self.source_saved.emit(result.path, result.warning or "")
