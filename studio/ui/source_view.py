"""A hook's source file, coloured by its language, scrolled to a line and with that line marked.

A source of the open workspace is read and saved through the workspace (for an ``.adf``, its
``adf_files`` row): the view shows whether the file is authorized and how it is protected, asks
before a save removes an authorization, and keeps ``read_only`` files and read-only agents
read-only. A save runs off the GUI thread (an ``.adf`` held by another program waits out its
busy timeout there); meanwhile the text cannot be edited, so what is marked saved is what was
written."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
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

from studio.core.file_reads import read_text
from studio.core.shown_text import LINE_CHARS_SHOWN, cut_long_lines
from studio.core.workspace.adf_file import AdfFileError, SourceWrite
from studio.core.workspace.folder import SourceFile, Workspace, WorkspaceFileError
from studio.engine.runtimes import runnable_extensions
from studio.ui.code_highlighter import CodeHighlighter, language_of
from studio.ui.engine_bridge import EngineBridge, Job
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


def _cut_long_lines(text: str) -> tuple[str, str | None]:
    """``text`` with its long lines cut (see :mod:`studio.core.shown_text`), and why the file
    is then read-only here (None when no line was cut: ``text`` as it was)."""
    shown = cut_long_lines(text)
    if not shown.cut:
        return text, None
    (first, length), others = shown.cut[0], len(shown.cut) - 1
    more = f", {others:,} more line{'s' if others > 1 else ''} as well" if others else ""
    why = (
        f"read-only here: line {first + 1} has {length:,} characters{more}; lines "
        f"are shown up to {LINE_CHARS_SHOWN:,}"
    )
    return shown.text, why


COLOURED_MOST = 500_000
"""Sources are coloured up to this many characters: the colours are worked out in Python, every
line of the file as it is shown, about 0.3 s a megabyte (a bundled script runs to megabytes)."""


def _too_large_to_colour(content: str) -> str | None:
    """Why ``content`` is shown without colours; None when it is coloured."""
    if len(content) <= COLOURED_MOST:
        return None
    return (
        f"not coloured: {len(content):,} characters (sources are coloured up to {COLOURED_MOST:,})"
    )


class SourceView(QWidget):
    """Signals: ``save_started(path)`` when a save begins, ``source_saved(path, warning)`` when
    it wrote (the warning is "" when none), ``save_finished(saved)`` when it ended either way."""

    save_started = Signal(str)
    source_saved = Signal(str, str)
    save_finished = Signal(bool)

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._save_job: Job | None = None
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
        self._uncoloured: str | None = None
        """Why the text shown is not coloured when it is too large to be; None otherwise."""
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
        self._saved_state = ""
        self.text.document().modificationChanged.connect(self._on_modified)
        self.save_button.clicked.connect(self.save_source)

    def set_workspace(self, workspace: Workspace | None) -> None:
        self.workspace = workspace
        self._save_job = None
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
        if not self.confirm_leave(then=partial(self.show_file, path, line, label)):
            return
        try:
            content, readable = read_text(path, errors="replace"), True
        except OSError as exc:
            content, readable = f"{label} cannot be read: {exc.strerror or exc}", False
        content, cut = _cut_long_lines(content)
        self.source = None
        self.editable = False
        self._uncoloured = _too_large_to_colour(content)
        self.state.setText("; ".join(note for note in (cut, self._uncoloured) if note))
        self._show(path, content, line, label, code=readable)

    def show_source(self, path: str, line: int) -> None:
        """The workspace's hook source ``path``, editable unless the agent or the file is
        read-only."""
        if self.workspace is None or not self.confirm_leave(
            then=partial(self.show_source, path, line)
        ):
            return
        reason = self.workspace.read_only_reason
        try:
            content = self.workspace.read_source(path)
            readable = True
        except WorkspaceFileError as exc:
            # In plain words, not highlighted as the code it is not.
            content = f"{path} " + "; ".join(finding.message for finding in exc.findings)
            readable = False
        content, cut = _cut_long_lines(content)
        info = self._info(path)
        self.source = path
        self.editable = (
            readable and not cut and not reason and not (info is not None and info.read_only)
        )
        self._uncoloured = _too_large_to_colour(content)
        self._show_state(info, reason, cut)
        self._show(self.workspace.source_root / path, content, line, path, code=readable)

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

    def _show_state(
        self,
        info: SourceFile | None,
        reason: str | None,
        cut: str | None = None,
    ) -> None:
        parts: list[str] = []
        tips: list[str] = []
        if info is not None:
            label, tip = source_state(info, hook_source=info.path.endswith(runnable_extensions()))
            parts.append(label)
            tips.append(tip)
        parts.extend(note for note in (cut, self._uncoloured) if note)
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

    def _show(self, path: Path, content: str, line: int, label: str, code: bool = True) -> None:
        self.path = path
        self.line = line
        self.title.setText(f"{label}, line {line}")
        coloured = code and self._uncoloured is None
        self.highlighter.set_language(language_of(path) if coloured else None)
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
        self.save_button.setEnabled(modified and self.editable and self._save_job is None)

    @property
    def modified(self) -> bool:
        return self.text.document().isModified()

    @property
    def saving(self) -> bool:
        return self._save_job is not None

    def confirm_leave(self, *, then: Callable[[], object] | None = None) -> bool:
        """Whether the source shown may be replaced now: unsaved edits are dropped, or kept on
        screen, as the user answers. An answer of Save starts the save and says False; ``then``
        runs once it has written."""
        if self._save_job is not None:
            return False
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
            self.save_source(then=then)
            return False
        if answer == QMessageBox.StandardButton.Discard:
            self.text.document().setModified(False)
            return True
        return False

    def save_source(self, *, then: Callable[[], object] | None = None) -> Job | None:
        """Write the edited text through the workspace, off the GUI thread; returns the job, or
        None when there is nothing to save here. An authorized file is written only after the
        user agrees that the edit removes its authorization (the default is No)."""
        if self.workspace is None or self.source is None or not self.editable or self.saving:
            return None
        return self._start_save(self.source, self.text.toPlainText(), False, then)

    def _start_save(
        self, path: str, text: str, deauthorize: bool, then: Callable[[], object] | None
    ) -> Job:
        assert self.workspace is not None
        job = self._bridge.submit(
            partial(self.workspace.write_source, path, text, deauthorize=deauthorize)
        )
        self._save_job = job
        self.text.setReadOnly(True)
        self.save_button.setEnabled(False)
        self._saved_state = self.state.text()
        self.state.setText("Saving…")
        job.finished.connect(partial(self._on_written, job, path, text, then))
        job.failed.connect(partial(self._on_write_failed, job, path))
        self.save_started.emit(path)
        return job

    def _end_save(self, job: Job) -> bool:
        """Whether this job is the save on show (another workspace drops it)."""
        if job is not self._save_job:
            return False
        self._save_job = None
        self.text.setReadOnly(not self.editable)
        self.state.setText(self._saved_state)
        self.save_button.setEnabled(self.modified and self.editable)
        return True

    def _on_written(
        self, job: Job, path: str, text: str, then: Callable[[], object] | None, result: SourceWrite
    ) -> None:
        if not self._end_save(job):
            return
        if result.status == "would_deauthorize":
            if self._confirm_deauthorize(path):
                self._start_save(path, text, True, then)
                return
            self.save_finished.emit(False)
            return
        self._saved(result)
        self.save_finished.emit(True)
        if then is not None:
            then()

    def _on_write_failed(self, job: Job, path: str, exc: BaseException) -> None:
        if not self._end_save(job):
            return
        reason = exc.reason if isinstance(exc, AdfFileError) else str(exc)
        QMessageBox.warning(self, TITLE, f"{path} was not saved:\n{reason}")
        self.save_finished.emit(False)

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
