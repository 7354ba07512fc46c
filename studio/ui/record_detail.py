"""One stored run in detail: its decision record field by field, its turn error with clickable
traceback frames, and its payload (input, result, stdout, stderr) or the note that it was cleared.

``load_detail`` reads the record and formats the payload off the GUI thread; the widget only
shows the prepared ``RecordDetailData``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.records.store import RecordStore, StoredRecord
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import KIND_TITLES, TurnError
from studio.ui.record_table import (
    CONTRACT_TITLES,
    duration_label,
    outcome_label,
    time_label,
)

# A payload shown in full could be hundreds of megabytes; the text views show the start of it.
MAX_SHOWN_CHARS = 1_000_000
PAYLOAD_FIELDS = ("input", "result", "stdout", "stderr")
PAYLOAD_TITLES = {"input": "Input", "result": "Result", "stdout": "Stdout", "stderr": "Stderr"}
CLEARED_TEXT = (
    "Payload cleared. The input, result and output of this run are gone; "
    "its decision record (the Decision tab) is kept."
)
DECISION_TAB, ERROR_TAB, PAYLOAD_TAB = range(3)
FRAME_ROLE = Qt.ItemDataRole.UserRole + 1

_MUTED = QColor(128, 128, 128)
_ERROR = QColor(214, 48, 49)


@dataclass(frozen=True)
class RecordDetailData:
    """A stored run, ready to show: the record, the run as an outcome, the payload as text."""

    record: StoredRecord
    outcome: RunOutcome | None
    payload_texts: dict[str, str] = field(default_factory=dict)
    problem: str | None = None

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def turn_error(self) -> TurnError | None:
        return self.outcome.turn_error if self.outcome is not None else None


def json_text(value: Any) -> str:
    """``value`` as indented JSON, cut at ``MAX_SHOWN_CHARS`` with a note saying so."""
    if value is None:
        return "null"
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return _cut(text)


def _cut(text: str) -> str:
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    rest = len(text) - MAX_SHOWN_CHARS
    return f"{text[:MAX_SHOWN_CHARS]}\n\n… {rest:,} more characters (export the run to see all)"


def load_detail(store: RecordStore, run_id: str) -> RecordDetailData | None:
    """Read ``run_id`` and prepare it for the detail view; meant to run off the GUI thread."""
    record = store.get(run_id)
    if record is None:
        return None
    problem = None
    try:
        outcome: RunOutcome | None = record.outcome()
    except ValueError as exc:  # a record this version cannot read back: show what is there
        outcome, problem = None, f"the stored run cannot be read back as an outcome ({exc})"
    texts: dict[str, str] = {}
    payload = record.payload
    if payload is not None:
        texts["input"] = json_text(payload.get("input"))
        texts["result"] = json_text(payload.get("result"))
        texts["stdout"] = _cut(payload.get("stdout") or "")
        texts["stderr"] = _cut(payload.get("stderr") or "")
    return RecordDetailData(record, outcome, texts, problem)


# --- JSON as tree items ------------------------------------------------------------------------


def scalar_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value.replace("\n", " ⏎ ")
    if isinstance(value, float):
        return repr(value)
    return str(value)


def container_text(value: Any) -> str:
    if isinstance(value, dict):
        return "{ }" if not value else f"{{{len(value)} field{'s' if len(value) != 1 else ''}}}"
    return "[ ]" if not value else f"[{len(value)} item{'s' if len(value) != 1 else ''}]"


def add_json_item(parent: QTreeWidget | QTreeWidgetItem, key: str, value: Any) -> QTreeWidgetItem:
    """An item ``key | value`` under ``parent``; objects and arrays get one child per entry."""
    item = QTreeWidgetItem([key, ""])
    if isinstance(parent, QTreeWidget):
        parent.addTopLevelItem(item)
    else:
        parent.addChild(item)
    if isinstance(value, dict | list):
        item.setText(1, container_text(value))
        item.setForeground(1, QBrush(_MUTED))
        entries = value.items() if isinstance(value, dict) else enumerate(value)
        for child_key, child in entries:
            add_json_item(item, str(child_key), child)
    else:
        item.setText(1, scalar_text(value))
        item.setToolTip(1, scalar_text(value) if isinstance(value, str) else "")
        if value is None:
            item.setForeground(1, QBrush(_MUTED))
    return item


def _fixed_font() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


# --- the widget --------------------------------------------------------------------------------


class TurnErrorPanel(QWidget):
    """The turn error of a run: what went wrong in words, where, and the frames of the user's
    files; a frame opens the hook source at its line."""

    frame_activated = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._title = QLabel()
        self._title.setObjectName("turnErrorTitle")
        self._title.setWordWrap(True)
        title_font = self._title.font()
        title_font.setBold(True)
        self._title.setFont(title_font)
        self._fields: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setContentsMargins(0, 0, 0, 0)
        for key, label in (
            ("kind", "Kind"),
            ("reason", "Reason"),
            ("message", "Message"),
            ("path", "JSON path"),
            ("hook", "Hook"),
            ("loop", "Loop"),
            ("exit", "Worker exit"),
            ("duration", "Duration"),
            ("frames", "Traceback"),
        ):
            value = QLabel()
            value.setObjectName(f"turnError_{key}")
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(f"{label}:", value)
            self._fields[key] = value

        self.frames = QTreeWidget()
        self.frames.setObjectName("turnErrorFrames")
        self.frames.setHeaderLabels(["Frame", "Function", "Code"])
        self.frames.setRootIsDecorated(False)
        self.frames.setUniformRowHeights(True)
        self.frames.setToolTip(
            "Click a frame (or press Enter on it) to open the source at that line"
        )
        self.frames.header().setStretchLastSection(True)
        self.frames.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.frames.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.frames.clicked.connect(self._on_frame_clicked)
        self.frames.activated.connect(self._on_frame_activated)
        self.stderr = QPlainTextEdit()
        self.stderr.setObjectName("turnErrorStderr")
        self.stderr.setReadOnly(True)
        self.stderr.setFont(_fixed_font())
        self.stderr.setMaximumBlockCount(2000)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self._title)
        left_layout.addLayout(form)
        left_layout.addStretch(1)
        left_scroll = QScrollArea()
        left_scroll.setWidget(left)
        left_scroll.setWidgetResizable(True)
        left_scroll.setFrameShape(QFrame.Shape.NoFrame)
        left_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        left_scroll.setMinimumWidth(240)
        left_scroll.viewport().setAutoFillBackground(False)
        left.setAutoFillBackground(False)
        self._frames_box = QWidget()
        frames_layout = QVBoxLayout(self._frames_box)
        frames_layout.setContentsMargins(0, 0, 0, 0)
        frames_label = QLabel("Traceback, innermost last:")
        frames_label.setToolTip("Click a frame to open the hook source at its line")
        frames_layout.addWidget(frames_label)
        frames_layout.addWidget(self.frames)
        self._stderr_box = QWidget()
        stderr_layout = QVBoxLayout(self._stderr_box)
        stderr_layout.setContentsMargins(0, 0, 0, 0)
        stderr_layout.addWidget(QLabel("Stderr tail:"))
        stderr_layout.addWidget(self.stderr)
        self._right = QSplitter(Qt.Orientation.Vertical)
        self._right.addWidget(self._frames_box)
        self._right.addWidget(self._stderr_box)
        self._right.setChildrenCollapsible(False)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left_scroll)
        splitter.addWidget(self._right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)
        self._workspace_root: Path | None = None

    def set_workspace_root(self, root: Path | None) -> None:
        self._workspace_root = root

    def show_error(self, error: TurnError, payload_kept: bool) -> None:
        self._title.setText(KIND_TITLES.get(error.kind, error.kind))
        self._title.setStyleSheet(f"color: {_ERROR.name()};")
        self._fields["kind"].setText(error.kind)
        self._fields["reason"].setText(error.reason)
        message = error.message
        if not payload_kept:
            message += "  (the full message was cleared with the payload)"
        self._fields["message"].setText(message)
        self._fields["path"].setText(error.path or "—")
        hook = error.hook
        self._fields["hook"].setText(f"{hook.source}:{hook.function}" if hook else "—")
        self._fields["loop"].setText(error.loop or "—")
        if error.exit is None:
            exit_text = "—"
        elif error.exit.signal:
            exit_text = f"signal {error.exit.signal}"
        else:
            exit_text = f"code {error.exit.code}" if error.exit.code is not None else "—"
        self._fields["exit"].setText(exit_text)
        self._fields["duration"].setText(duration_label(error.duration_ms))

        self.frames.clear()
        for frame in error.traceback:
            item = QTreeWidgetItem([f"{frame.file}:{frame.line}", frame.function, frame.code or ""])
            item.setData(0, FRAME_ROLE, (frame.file, frame.line))
            where = str(self._workspace_root / frame.file) if self._workspace_root else frame.file
            item.setToolTip(0, f"Open {where} at line {frame.line}")
            item.setFont(2, _fixed_font())
            link = item.font(0)
            link.setUnderline(True)
            item.setFont(0, link)
            item.setForeground(0, QBrush(QGuiApplication.palette().link()))
            self.frames.addTopLevelItem(item)
        count = len(error.traceback)
        if count:
            self.frames.setCurrentItem(self.frames.topLevelItem(count - 1))
            last = error.traceback[-1]
            self._fields["frames"].setText(
                f"{count} frame{'s' if count != 1 else ''}, innermost {last.file}:{last.line}"
            )
        else:
            self._fields["frames"].setText("no frame in the workspace's files")
        tail = error.stderr_tail
        self.stderr.setPlainText(tail)
        self._frames_box.setVisible(bool(count))
        self._stderr_box.setVisible(bool(tail))
        self._right.setVisible(bool(count or tail))

    def _frame_at(self, index: QModelIndex) -> tuple[str, int] | None:
        item = self.frames.itemFromIndex(index)
        if item is None:
            return None
        frame = item.data(0, FRAME_ROLE)
        return (str(frame[0]), int(frame[1])) if frame else None

    def _on_frame_clicked(self, index: QModelIndex) -> None:
        frame = self._frame_at(index)
        if frame is not None:
            self.frame_activated.emit(*frame)

    def _on_frame_activated(self, index: QModelIndex) -> None:
        # A double click activates too; its first click already opened the frame.
        if QGuiApplication.mouseButtons() != Qt.MouseButton.NoButton:
            return
        self._on_frame_clicked(index)


class RecordDetail(QWidget):
    """The detail of one stored run (see the module docstring)."""

    frame_activated = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._data: RecordDetailData | None = None
        self._header = QLabel()
        self._header.setObjectName("recordHeader")
        self._header.setTextFormat(Qt.TextFormat.RichText)
        self._header.setWordWrap(True)
        self._header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.decision = QTreeWidget()
        self.decision.setObjectName("decisionTree")
        self.decision.setHeaderLabels(["Field", "Value"])
        self.decision.setUniformRowHeights(True)
        self.decision.setAlternatingRowColors(True)
        self.decision.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.decision.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.decision.setColumnWidth(0, 220)

        self.error_panel = TurnErrorPanel()
        self.error_panel.setObjectName("turnErrorPanel")
        self.error_panel.frame_activated.connect(self.frame_activated)

        self._payload_tabs = QTabWidget()
        self._payload_tabs.setObjectName("payloadTabs")
        self._payload_tabs.setDocumentMode(True)
        self.payload_views: dict[str, QPlainTextEdit] = {}
        for key in PAYLOAD_FIELDS:
            view = QPlainTextEdit()
            view.setObjectName(f"payload_{key}")
            view.setReadOnly(True)
            view.setFont(_fixed_font())
            view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            self._payload_tabs.addTab(view, PAYLOAD_TITLES[key])
            self.payload_views[key] = view
        self._cleared = QLabel(CLEARED_TEXT)
        self._cleared.setObjectName("payloadCleared")
        self._cleared.setWordWrap(True)
        self._cleared.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._cleared.setEnabled(False)
        self._payload = QStackedWidget()
        self._payload.addWidget(self._payload_tabs)
        self._payload.addWidget(self._cleared)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("detailTabs")
        self.tabs.addTab(self.decision, "Decision")
        self.tabs.addTab(self.error_panel, "Turn error")
        self.tabs.addTab(self._payload, "Payload")

        self._placeholder = QLabel()
        self._placeholder.setObjectName("detailPlaceholder")
        self._placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._placeholder.setWordWrap(True)
        self._placeholder.setEnabled(False)
        self._pages = QStackedWidget()
        self._pages.addWidget(self._placeholder)
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(self._header)
        body_layout.addWidget(self.tabs, 1)
        self._pages.addWidget(body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._pages)
        self.show_placeholder("Select a run to see its decision record.")

    @property
    def data(self) -> RecordDetailData | None:
        return self._data

    @property
    def run_id(self) -> str | None:
        return self._data.run_id if self._data else None

    def set_workspace_root(self, root: Path | None) -> None:
        self.error_panel.set_workspace_root(root)

    def show_placeholder(self, text: str) -> None:
        self._data = None
        self._placeholder.setText(text)
        self._pages.setCurrentIndex(0)

    def show_record(self, data: RecordDetailData) -> None:
        same_run = self._data is not None and self._data.run_id == data.run_id
        self._data = data
        record = data.record
        summary = record.summary
        self._header.setText(self._header_html(data))

        expanded = self._expanded_paths() if same_run else None
        scroll = self.decision.verticalScrollBar().value() if same_run else 0
        self.decision.setUpdatesEnabled(False)
        self.decision.clear()
        for key, value in record.decision.items():
            item = add_json_item(self.decision, key, value)
            if key == "started_at" and isinstance(value, int | float):
                item.setText(1, f"{value!r}  ({time_label(value)})")
        if expanded is None:
            self.decision.expandToDepth(0)
        else:
            self._expand_paths(expanded)
        self.decision.setUpdatesEnabled(True)
        self.decision.verticalScrollBar().setValue(scroll)

        error = data.turn_error
        self.tabs.setTabEnabled(ERROR_TAB, error is not None)
        self.tabs.setTabText(ERROR_TAB, f"Turn error: {error.kind}" if error else "Turn error")
        if error is not None:
            self.error_panel.show_error(error, summary.has_payload)
        elif self.tabs.currentIndex() == ERROR_TAB:
            self.tabs.setCurrentIndex(DECISION_TAB)

        if record.payload is None:
            self._payload.setCurrentWidget(self._cleared)
            self.tabs.setTabText(PAYLOAD_TAB, "Payload (cleared)")
            for view in self.payload_views.values():
                view.clear()
        else:
            self._payload.setCurrentWidget(self._payload_tabs)
            self.tabs.setTabText(PAYLOAD_TAB, "Payload")
            for key, view in self.payload_views.items():
                text = data.payload_texts.get(key, "")
                if view.toPlainText() != text:
                    view.setPlainText(text)
            flags = record.decision
            for index, key in enumerate(PAYLOAD_FIELDS):
                title = PAYLOAD_TITLES[key]
                if key in ("stdout", "stderr"):
                    if not data.payload_texts.get(key):
                        title += " (empty)"
                    elif flags.get(f"{key}_truncated"):
                        title += " (truncated)"
                self._payload_tabs.setTabText(index, title)
        self._pages.setCurrentIndex(1)

    def payload_state(self) -> str:
        """``cleared``, ``kept``, or ``none`` when no run is shown."""
        if self._data is None:
            return "none"
        return "cleared" if self._data.record.payload is None else "kept"

    @staticmethod
    def _header_html(data: RecordDetailData) -> str:
        summary = data.record.summary
        color = {"turn_error": _ERROR.name(), "not_applied": _MUTED.name()}.get(summary.status)
        outcome = outcome_label(summary.status, summary.error_kind)
        outcome_html = f"<b style='color:{color}'>{outcome}</b>" if color else f"<b>{outcome}</b>"
        parts = [
            outcome_html,
            CONTRACT_TITLES.get(summary.contract, summary.contract),
            _escape(summary.hook_label or "no hook"),
            *([f"loop {_escape(summary.loop)}"] if summary.loop else []),
            *([f"sample {_escape(summary.sample)}"] if summary.sample else []),
            time_label(summary.started_at),
            duration_label(summary.duration_ms),
        ]
        if not summary.has_payload:
            parts.append("<i>payload cleared</i>")
        if data.problem:
            parts.append(f"<span style='color:{_ERROR.name()}'>{_escape(data.problem)}</span>")
        return " · ".join(parts)

    def _expanded_paths(self) -> set[tuple[str, ...]]:
        paths: set[tuple[str, ...]] = set()

        def walk(item: QTreeWidgetItem, path: tuple[str, ...]) -> None:
            for i in range(item.childCount()):
                child = item.child(i)
                child_path = (*path, child.text(0))
                if child.isExpanded():
                    paths.add(child_path)
                    walk(child, child_path)

        walk(self.decision.invisibleRootItem(), ())
        return paths

    def _expand_paths(self, paths: set[tuple[str, ...]]) -> None:
        def walk(item: QTreeWidgetItem, path: tuple[str, ...]) -> None:
            for i in range(item.childCount()):
                child = item.child(i)
                child_path = (*path, child.text(0))
                if child_path in paths:
                    child.setExpanded(True)
                    walk(child, child_path)

        walk(self.decision.invisibleRootItem(), ())


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
