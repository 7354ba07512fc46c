"""A turn error in words: what went wrong, where in the result, which lines of the user's file,
how the worker ended and what it wrote to stderr. The one view of a turn error, for a run just
made and for a stored one (whose message may have been cleared with its payload)."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QFrame,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from studio.core.json.surrogates import escape_lone_surrogates
from studio.core.sample_findings import is_sample_problem
from studio.core.turn_error import TurnError
from studio.ui.engine_bridge import STUDIO_TRACEBACK
from studio.ui.result_json_tree import JsonTreeView
from studio.ui.result_style import heading, note, set_accent

REASON_WORDS = {
    "callback": "callback: the hook failed, or returned something its contract rejects",
    "timeout": "timeout: the hook ran past its time limit and was stopped",
    "aborted": "aborted: the run was cancelled before the hook finished",
}
SAMPLE_REASON = "the sample: it breaks its contract's sample rules, so the hook is not to blame"
CLEARED_MESSAGE = "  (the full message was cleared with the payload)"
STDERR_TITLE = "Stderr (the last lines the worker wrote)"
STUDIO_TRACEBACK_TITLE = "The studio's traceback (a bug in the studio, not in your hook)"
_HIDDEN_DETAILS = ("findings", "count", STUDIO_TRACEBACK)


def _mono_text(max_height: int = 160) -> QPlainTextEdit:
    text = QPlainTextEdit()
    text.setReadOnly(True)
    text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    text.setMaximumHeight(max_height)
    return text


class _ClickList(QListWidget):
    """A short list whose rows act on a click or on Enter."""

    row_chosen = Signal(QListWidgetItem)

    def __init__(self) -> None:
        super().__init__()
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.itemClicked.connect(self.row_chosen)
        self.itemActivated.connect(self._on_item_activated)

    def _on_item_activated(self, item: QListWidgetItem) -> None:
        # A double click activates too; its first click already chose the row.
        if QGuiApplication.mouseButtons() == Qt.MouseButton.NoButton:
            self.row_chosen.emit(item)

    def fit(self, rows: int) -> None:
        height = self.sizeHintForRow(0) if self.count() else 20
        self.setFixedHeight(min(max(rows, 1), 8) * (height + 2) + 2 * self.frameWidth() + 4)


class TurnErrorView(QWidget):
    """Emits ``frame_activated(file, line)`` for a traceback frame and ``pointer_activated``
    for the error's JSON path or a finding's."""

    frame_activated = Signal(str, int)
    pointer_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = heading(size=1.3)
        self.title.setObjectName("errorTitle")
        self.message = QLabel()
        self.message.setObjectName("errorMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.kind = QLabel()
        self.kind.setObjectName("errorKind")
        self.reason = QLabel()
        self.reason.setObjectName("errorReason")
        self.reason.setWordWrap(True)
        self.where = QLabel()
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.path = QLabel()
        self.path.setObjectName("errorPath")
        self.path.setTextFormat(Qt.TextFormat.RichText)
        self.path.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.path.setToolTip("Show this value in the Result tab")
        self.path.linkActivated.connect(self.pointer_activated)
        self.exit = QLabel()
        self.exit.setObjectName("errorExit")

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Kind", self.kind)
        form.addRow("Reason", self.reason)
        form.addRow("Where", self.where)
        form.addRow("JSON path", self.path)
        form.addRow("Worker", self.exit)
        self._form = form

        self.frames_title = heading("Traceback (your files; click a frame to open it)")
        self.frames = _ClickList()
        self.frames.setObjectName("errorFrames")
        self.frames.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.frames.row_chosen.connect(self._on_frame_chosen)
        self.findings_title = heading("Findings")
        self.findings = QWidget()
        self.findings.setObjectName("errorFindings")
        self.findings_layout = QVBoxLayout(self.findings)
        self.findings_layout.setContentsMargins(0, 0, 0, 0)
        self.finding_labels: list[QLabel] = []
        self.stderr_title = heading("Stderr (last lines)")
        self.stderr = _mono_text()
        self.stderr.setObjectName("errorStderr")
        self.details_title = heading("Details")
        self.details = JsonTreeView(detail=False)
        self.details.setObjectName("errorDetails")

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.title)
        layout.addWidget(self.message)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        layout.addWidget(line)
        layout.addLayout(form)
        for widget in self._sections():
            layout.addWidget(widget)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.error: TurnError | None = None
        self._workspace_root: Path | None = None
        self.empty = note("No turn error: the run succeeded.")
        layout.insertWidget(0, self.empty)
        self.clear()

    # ---- content ------------------------------------------------------------------------
    def clear(self, text: str = "No turn error: the run succeeded.") -> None:
        self.error = None
        self.empty.setText(text)
        self.empty.show()
        for widget in self._content_widgets():
            widget.hide()
        self._set_form_visible(False)

    def _content_widgets(self) -> list[QWidget]:
        return [self.title, self.message, *self._sections()]

    def _sections(self) -> list[QWidget]:
        """The titled sections below the form, in layout order."""
        return [
            self.frames_title,
            self.frames,
            self.findings_title,
            self.findings,
            self.stderr_title,
            self.stderr,
            self.details_title,
            self.details,
        ]

    def _set_form_visible(self, visible: bool) -> None:
        for row in range(self._form.rowCount()):
            self._form.setRowVisible(row, visible)

    def set_workspace_root(self, root: Path | None) -> None:
        """Where the frames' files are, for their tooltips."""
        self._workspace_root = root

    def show_error(self, error: TurnError, *, payload_cleared: bool = False) -> None:
        """``payload_cleared``: a stored run's error, whose message is its kind's title now."""
        self.error = error
        self.empty.hide()
        self.title.setText(error.title)
        set_accent(self.title, "error")
        self.title.show()
        message = escape_lone_surrogates(error.message)  # Qt would drop them
        self.message.setText(message + (CLEARED_MESSAGE if payload_cleared else ""))
        self.message.show()
        self._set_form_visible(True)
        self.kind.setText(error.kind)
        self.reason.setText(
            SAMPLE_REASON
            if is_sample_problem(error)
            else REASON_WORDS.get(error.reason, error.reason)
        )
        self.where.setText(_where(error))
        if error.path is not None:
            pointer = error.path or "/"
            self.path.setText(
                f'<a href="{html.escape(error.path, quote=True)}">{html.escape(pointer)}</a>'
                "&nbsp;&nbsp;(show the value)"
            )
        else:
            self.path.setText("—")
        self.exit.setText(_exit_text(error))

        self.frames.clear()
        for frame in error.traceback:
            column = f", column {frame.column}" if frame.column else ""
            text = f"{frame.file}, line {frame.line}{column}, in {frame.function}"
            if frame.code:
                text += f"\n    {frame.code}"
            item = QListWidgetItem(text)
            where = self._workspace_root / frame.file if self._workspace_root else frame.file
            item.setToolTip(f"Open {where} at line {frame.line}")
            self.frames.addItem(item)
        has_frames = bool(error.traceback)
        self.frames_title.setVisible(has_frames)
        self.frames.setVisible(has_frames)
        if has_frames:
            self.frames.fit(self.frames.count())

        self._show_findings(error)

        studio_traceback = error.details.get(STUDIO_TRACEBACK)
        if isinstance(studio_traceback, str):
            self.stderr_title.setText(STUDIO_TRACEBACK_TITLE)
            text = studio_traceback
        else:
            self.stderr_title.setText(STDERR_TITLE)
            text = error.stderr_tail
        self.stderr.setPlainText(escape_lone_surrogates(text))
        self.stderr_title.setVisible(bool(text))
        self.stderr.setVisible(bool(text))

        rest = {k: v for k, v in error.details.items() if k not in _HIDDEN_DETAILS}
        self.details.set_value(rest)
        self.details.expand_all()
        self._fit_details()
        self.details_title.setVisible(bool(rest))
        self.details.setVisible(bool(rest))

    # ---- actions --------------------------------------------------------------------------
    def _on_frame_chosen(self, item: QListWidgetItem) -> None:
        row = self.frames.row(item)
        if self.error is not None and 0 <= row < len(self.error.traceback):
            frame = self.error.traceback[row]
            self.frame_activated.emit(frame.file, frame.line)

    def _show_findings(self, error: TurnError) -> None:
        for label in self.finding_labels:
            label.setParent(None)
            label.deleteLater()
        self.finding_labels = []
        findings = error.details.get("findings")
        if isinstance(findings, list):
            for finding in findings:
                if not isinstance(finding, dict):
                    continue
                self._add_finding(finding)
            count = error.details.get("count")
            if isinstance(count, int) and count > len(findings):
                self._add_label(f"… and {count - len(findings)} more")
        shown = len(self.finding_labels)
        self.findings_title.setText(f"Findings ({shown})")
        self.findings_title.setVisible(shown > 0)
        self.findings.setVisible(shown > 0)

    def _add_finding(self, finding: dict[str, object]) -> None:
        path = finding.get("path", finding.get("pointer"))
        message = html.escape(str(finding.get("message", "")))
        severity = finding.get("severity")
        mark = "⚠ " if severity == "warning" else "• "
        if isinstance(path, str):
            shown = html.escape(path or "/")
            link = f'<a href="{html.escape(path, quote=True)}">{shown}</a>'
            self._add_label(f"{mark}{link}&nbsp;&nbsp;{message}", rich=True)
        else:
            self._add_label(f"{mark}{message}", rich=True)

    def _add_label(self, text: str, *, rich: bool = False) -> None:
        label = QLabel(text)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        label.linkActivated.connect(self.pointer_activated)
        self.findings_layout.addWidget(label)
        self.finding_labels.append(label)

    def _fit_details(self) -> None:
        rows = 0
        model = self.details.model
        stack = [self.details.tree.rootIndex()]
        while stack and rows < 12:
            parent = stack.pop()
            for r in range(model.rowCount(parent)):
                rows += 1
                stack.append(model.index(r, 0, parent))
        row_height = max(self.details.tree.sizeHintForRow(0), 18)
        header = self.details.tree.header().sizeHint().height()
        self.details.setFixedHeight(header + min(max(rows, 1), 12) * row_height + 8)

    def activate_path(self) -> None:
        """What clicking the JSON path does."""
        if self.error is not None and self.error.path is not None:
            self.pointer_activated.emit(self.error.path)


def _where(error: TurnError) -> str:
    parts: list[str] = []
    hook = error.hook
    if hook is not None:
        text = f"{hook.source}:{hook.function}"
        if hook.chain is not None and hook.position is not None:
            text += f" at {hook.chain}[{hook.position}]"
        parts.append(text)
    if error.loop:
        parts.append(f"loop {error.loop}")
    if error.duration_ms:
        parts.append(f"after {error.duration_ms:.0f} ms")
    rule = error.details.get("rule")
    if isinstance(rule, str):
        parts.append(f"rule {rule}")
    return " · ".join(parts) or "—"


def _exit_text(error: TurnError) -> str:
    status = error.exit
    if status is None:
        return "—"
    if status.signal:
        return f"ended by signal {status.signal}"
    if status.code is not None:
        return f"exit code {status.code}"
    return "—"
