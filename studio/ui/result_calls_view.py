"""The calls a hook made to its host API (``adf.<method>(...)``), in the order it made them: a
table with the calls of a nested ``sys_lambda`` indented under it, and the selected call's
arguments, reply or error, and the nested function's output below.

Each row says whether a gate let the call through or which rule refused it, in the results'
colours (``result_style``), which follow the palette, and with a mark, so the word reads without
the colour too."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QEvent, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import (
    QAction,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QPalette,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from studio.core.run_outcome import HostCall
from studio.core.run_report import call_result, gate_text
from studio.ui.json_highlighter import JsonHighlighter, json_theme
from studio.ui.result_json_tree import pretty
from studio.ui.result_style import accent, heading, note, show_wrapped

Index = QModelIndex | QPersistentModelIndex

NUMBER, METHOD, GATE, ANSWERED_BY, RESULT, DURATION = range(6)
HEADERS = ("#", "Method", "Gate", "Answered by", "Result", "Duration")
NESTING_METHOD = "sys_lambda"
RESULT_CHARS = 200
RESULT_LEAST = 120
CLEARED_RESULT = "(cleared with the payload)"
_COLUMN_BOUNDS = {  # least and most widths, in pixels
    NUMBER: (24, 60),
    METHOD: (110, 200),
    GATE: (90, 260),
    ANSWERED_BY: (60, 240),
    DURATION: (50, 90),
}
TOOLTIP_CHARS = 2000
EXPANDED_CALLS = 2000
"""Up to this many calls, every sys_lambda shows its calls at once; past it, opening them all
would hold the window for seconds, so they open one by one."""

EMPTY_TEXT = (
    "This run made no adf calls.\n\n"
    "A hook's adf.<method>(…) calls, sys_lambda aside, get their replies from the sample,\n"
    "declared under adf.replies in the sample file."
)

_RULES = {
    "enabled_tools": "the method is not among the agent's enabled tools",
    "declared_tools": "the agent config does not declare this tool, or declares it disabled",
    "authorization": "only authorized code may make this call, and the calling source is not "
    "authorized",
    "excluded": "ADF never lets code call this tool",
    "circular": "the function it names is already running further up this chain of sys_lambda "
    "calls",
    "input": "its arguments are not what the method takes",
}


def rule_text(gate: str) -> str:
    """Why a rule refuses a call, in words; empty for a rule this version does not know."""
    if gate.startswith("code_execution."):
        return f"{gate} is off in the agent config"
    return _RULES.get(gate, "")


def refused(call: HostCall) -> bool:
    return call.gate != "allowed"


def failed(call: HostCall) -> bool:
    """A call the gates allowed that ended in an error."""
    return not refused(call) and call.error is not None


def calls_title(calls: list[HostCall]) -> str:
    """The tab's title: ``Calls``, ``Calls (3)``, ``Calls (3, 1 refused, 1 failed)``."""
    if not calls:
        return "Calls"
    parts = [str(len(calls))]
    refusals = sum(1 for call in calls if refused(call))
    failures = sum(1 for call in calls if failed(call))
    if refusals:
        parts.append(f"{refusals} refused")
    if failures:
        parts.append(f"{failures} failed")
    return f"Calls ({', '.join(parts)})"


def calls_trouble(calls: list[HostCall]) -> bool:
    """Whether any call was refused or failed."""
    return any(call.error is not None or refused(call) for call in calls)


def call_json(call: HostCall) -> str:
    return json.dumps(call.model_dump(mode="json"), indent=2, ensure_ascii=False)


def duration_words(ms: float) -> str:
    if ms < 10:
        return f"{ms:.2f} ms"
    if ms < 10_000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def nest(calls: list[HostCall]) -> list[int]:
    """Each call's parent (its position, or -1 at the top): the nearest ``sys_lambda`` before
    it that is shallower. A call deeper than any open ``sys_lambda`` stays at the top rather
    than go under a call that cannot have made it."""
    parents: list[int] = []
    open_calls: list[int] = []
    for position, call in enumerate(calls):
        while open_calls and calls[open_calls[-1]].depth >= call.depth:
            open_calls.pop()
        parents.append(open_calls[-1] if open_calls else -1)
        if call.method == NESTING_METHOD:
            open_calls.append(position)
    return parents


class CallsModel(QAbstractItemModel):
    """A tree over a run's calls: the hook's own calls at the top, the calls a nested
    ``sys_lambda`` made as its children. An index's internal id is its parent's position
    plus one (0 at the top)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._calls: list[HostCall] = []
        self._kids: dict[int, list[int]] = {-1: []}
        self._parents: list[int] = []
        self._rows: list[int] = []
        self._results: dict[int, str] = {}
        self._cleared = False
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def set_calls(self, calls: list[HostCall], *, payload_cleared: bool = False) -> None:
        """``payload_cleared``: a stored run's calls without their arguments, replies,
        messages and output; the result column then says so instead of showing nothing."""
        self.beginResetModel()
        self._cleared = payload_cleared
        self._calls = list(calls)
        self._parents = nest(self._calls)
        self._kids = {-1: []}
        self._rows = []
        for position, parent in enumerate(self._parents):
            siblings = self._kids.setdefault(parent, [])
            self._rows.append(len(siblings))
            siblings.append(position)
        self._results = {}
        self.endResetModel()

    def _result(self, position: int) -> str:
        """The result column's text, made when the row is first shown: a hook that calls in
        a loop has more rows than anyone scrolls to."""
        text = self._results.get(position)
        if text is None:
            call = self._calls[position]
            if self._cleared:
                text = CLEARED_RESULT if call.error is None else call.error.code
            else:
                text = call_result(call, RESULT_CHARS)
            self._results[position] = text
        return text

    @property
    def calls(self) -> list[HostCall]:
        return self._calls

    def position_of(self, index: Index) -> int | None:
        """The position in the run's calls of the call at ``index``."""
        if not index.isValid():
            return None
        siblings = self._kids.get(index.internalId() - 1)
        if siblings is None or not 0 <= index.row() < len(siblings):
            return None
        return siblings[index.row()]

    def index_of(self, position: int) -> QModelIndex:
        if not 0 <= position < len(self._calls):
            return QModelIndex()
        return self.createIndex(self._rows[position], 0, self._parents[position] + 1)

    # ---- Qt model -----------------------------------------------------------------------
    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return QModelIndex()
        holder = self.position_of(parent) if parent.isValid() else -1
        if holder is None:
            return QModelIndex()
        siblings = self._kids.get(holder, [])
        if 0 <= row < len(siblings) and 0 <= column < len(HEADERS):
            return self.createIndex(row, column, holder + 1)
        return QModelIndex()

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        holder = index.internalId() - 1
        return self.index_of(holder) if holder >= 0 else QModelIndex()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._kids[-1])
        if parent.column() != 0:
            return 0
        position = self.position_of(parent)
        return len(self._kids.get(position, [])) if position is not None else 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        position = self.position_of(index)
        if position is None:
            return None
        call = self._calls[position]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(position, call, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(position, call, column)
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == GATE:
                return accent("error" if refused(call) else "ok")
            if column == RESULT and call.error is not None:
                return accent("error")
            if column == RESULT and self._cleared:
                return QPalette().color(QPalette.ColorRole.PlaceholderText)
            return None
        if role == Qt.ItemDataRole.FontRole:
            if column == RESULT:
                return self._mono
            if column == GATE and refused(call):
                font = QFont()
                font.setBold(True)
                return font
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (NUMBER, DURATION):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _text(self, position: int, call: HostCall, column: int) -> str:
        if column == NUMBER:
            return str(position + 1)
        if column == METHOD:
            return call.method
        if column == GATE:
            return ("✗ " if refused(call) else "✓ ") + gate_text(call)
        if column == ANSWERED_BY:
            return call.answered_by or "—"
        if column == RESULT:
            return self._result(position)
        return duration_words(call.duration_ms)

    def _tip(self, position: int, call: HostCall, column: int) -> str | None:
        if column == GATE and refused(call):
            why = rule_text(call.gate)
            return f"Refused by {call.gate}" + (f": {why}" if why else "")
        if column == RESULT:
            return self._result(position) if self._cleared else call_result(call, TOOLTIP_CHARS)
        if column == ANSWERED_BY and call.answered_by:
            return call.answered_by
        if column == METHOD and call.depth:
            return f"adf.{call.method}, called inside a nested sys_lambda (depth {call.depth})"
        if column == METHOD:
            return f"adf.{call.method}, called by the hook"
        return None


class _CallTree(QTreeView):
    """The calls' table: Tab leaves it, Copy takes the selected call as JSON, and its columns
    fit its width, so the result stays in view in a narrow results pane."""

    def __init__(self, view: CallsView) -> None:
        super().__init__()
        self._view = view

    def fit_columns(self) -> None:
        """Each column as wide as its contents (within bounds) and the result the rest; when
        that is too wide, the gate, answered-by and method columns give way first, down to
        their least widths, and their text is elided."""
        header = self.header()
        widths = {
            column: max(least, min(most, self.sizeHintForColumn(column)))
            for column, (least, most) in _COLUMN_BOUNDS.items()
        }
        for column in _COLUMN_BOUNDS:
            widths[column] = max(widths[column], header.sectionSizeHint(column))
        spare = self.viewport().width() - sum(widths.values()) - RESULT_LEAST
        for column in (ANSWERED_BY, GATE, METHOD):
            if spare >= 0:
                break
            least = _COLUMN_BOUNDS[column][0]
            give = min(widths[column] - least, -spare)
            widths[column] -= give
            spare += give
        for column, width in widths.items():
            header.resizeSection(column, width)
        header.resizeSection(RESULT, RESULT_LEAST + max(spare, 0))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_columns()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self._view.copy_call()
            event.accept()
            return
        super().keyPressEvent(event)


class _Section(QWidget):
    """A titled read-only text: JSON in colour, or plain output."""

    def __init__(self, title: str, *, json_text: bool = True) -> None:
        super().__init__()
        self.title = heading(title)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setTabChangesFocus(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.highlighter = (
            JsonHighlighter(self.text.document(), json_theme(self.text.palette()))
            if json_text
            else None
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.text, 1)

    def show_text(self, title: str, text: str) -> None:
        self.title.setText(title)
        show_wrapped(self.text, text)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        # A switch to a dark (or light) palette while the tab is open recolours the JSON.
        kinds = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
        if event.type() in kinds and getattr(self, "highlighter", None) is not None:
            assert self.highlighter is not None
            self.highlighter.set_theme(json_theme(self.palette()))


class CallsView(QWidget):
    """The Calls tab of a run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = CallsModel(self)
        self.table = _CallTree(self)
        self.table.setObjectName("callsTable")
        self.table.setModel(self.model)
        self.table.setTreePosition(METHOD)
        self.table.setUniformRowHeights(True)
        self.table.setAlternatingRowColors(True)
        self.table.setTabKeyNavigation(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.copy_action = QAction("Copy Call as JSON", self.table)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_action.triggered.connect(self.copy_call)
        self.table.addAction(self.copy_action)
        header = self.table.header()
        header.setStretchLastSection(False)
        header.setResizeContentsPrecision(100)
        header.setMinimumSectionSize(24)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_changed)

        self.summary = heading()
        self.summary.setObjectName("callSummary")
        self.gate_note = note()
        self.gate_note.setObjectName("callGate")
        self.arguments = _Section("Arguments")
        self.reply = _Section("Reply")
        self.output = _Section("Output", json_text=False)
        self.output.setToolTip("What the nested function printed")
        sides = QSplitter(Qt.Orientation.Horizontal)
        for section in (self.arguments, self.reply, self.output):
            sides.addWidget(section)
        detail = QWidget()
        detail_layout = QVBoxLayout(detail)
        detail_layout.setContentsMargins(0, 4, 0, 0)
        detail_layout.addWidget(self.summary)
        detail_layout.addWidget(self.gate_note)
        detail_layout.addWidget(sides, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(detail)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)

        self.empty = note(EMPTY_TEXT)
        self.empty.setObjectName("callsEmpty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(split)
        self._cleared = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages)
        self.show_calls([])

    @property
    def calls(self) -> list[HostCall]:
        return self.model.calls

    def show_calls(self, calls: list[HostCall], *, payload_cleared: bool = False) -> None:
        """Show ``calls``, the first refused or failed one selected (else the first);
        ``payload_cleared``: a stored run's calls, kept without what they carried."""
        self._cleared = payload_cleared
        self.model.set_calls(calls, payload_cleared=payload_cleared)
        self._show_detail(None)
        if not calls:
            self.pages.setCurrentWidget(self.empty)
            return
        self.pages.setCurrentIndex(1)
        if len(calls) <= EXPANDED_CALLS:
            self.table.expandAll()
        self.table.fit_columns()
        first = next((n for n, call in enumerate(calls) if calls_trouble([call])), 0)
        self.select(first)

    def select(self, position: int) -> None:
        index = self.model.index_of(position)
        if index.isValid():
            self.table.setCurrentIndex(index)
            self.table.scrollTo(index)

    def current_call(self) -> HostCall | None:
        position = self.model.position_of(self.table.currentIndex())
        return self.calls[position] if position is not None else None

    def copy_call(self) -> None:
        call = self.current_call()
        if call is not None:
            QGuiApplication.clipboard().setText(call_json(call))

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_detail(self.model.position_of(current))

    def _show_detail(self, position: int | None) -> None:
        call = self.calls[position] if position is not None else None
        if call is None or position is None:
            self.summary.setText("Select a call to see its arguments and reply.")
            self.gate_note.hide()
            for section in (self.arguments, self.reply):
                section.show_text(section.title.text(), "")
            self.output.hide()
            return
        where = "the hook" if call.depth == 0 else f"a nested sys_lambda (depth {call.depth})"
        parts = [f"#{position + 1} adf.{call.method}", f"called by {where}", gate_text(call)]
        if call.answered_by:
            parts.append(f"answered by {call.answered_by}")
        parts.append(duration_words(call.duration_ms))
        self.summary.setText(" · ".join(parts))
        if refused(call):
            why = rule_text(call.gate)
            self.gate_note.setText(
                f"Refused before any answer was sought, by the rule {call.gate}"
                + (f": {why}." if why else ".")
            )
        self.gate_note.setVisible(refused(call))
        if self._cleared:
            self.arguments.show_text("Arguments", CLEARED_RESULT)
            if call.error is not None:
                message = "(the message was cleared with the payload)"
                self.reply.show_text("Error", f"{call.error.code}\n{message}")
            else:
                self.reply.show_text("Reply", CLEARED_RESULT)
            self.output.hide()
            return
        self.arguments.show_text("Arguments", pretty(call.args))
        if call.error is not None:
            self.reply.show_text("Error", pretty(call.error.model_dump(mode="json")))
        else:
            self.reply.show_text("Reply", pretty(call.reply))
        self.output.show_text("Output (printed by the nested function)", call.output)
        self.output.setVisible(bool(call.output))
