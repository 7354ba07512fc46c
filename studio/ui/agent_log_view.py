"""The Agent log: what an ``.adf`` agent's own runtime logged about its pre-LLM hook (the
``pre_llm_hook`` and ``pre_llm_hook_error`` rows of ``adf_logs``, spec/js-runtime.md §1), read
only, beside the studio's own records. It follows the file: a change to the agent file or its
``-wal`` (ADF writing while it runs) reloads the rows, keeping the selection and the scroll; the
studio's own reads, which make and remove an empty ``-wal``, do not."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QFileSystemWatcher,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.workspace.adf_file import AdfFile, AdfFileError, LogRow
from studio.core.workspace.adf_workspace import AdfWorkspace
from studio.core.workspace.agent_log import LEVELS, log_data, log_event, log_time, matches
from studio.ui.engine_bridge import EngineBridge, Job
from studio.ui.result_style import accent, set_accent
from studio.ui.rows_table_model import RowsTableModel

AnyIndex = QModelIndex | QPersistentModelIndex
HEADERS = ("Time", "Level", "Event", "Target", "Loop", "Message", "Data")
TIME, LEVEL, EVENT, TARGET, LOOP, MESSAGE, DATA = range(len(HEADERS))
ROW_ID_ROLE = Qt.ItemDataRole.UserRole + 1
LEVEL_KINDS = {"error": "error", "warn": "warning"}
NO_AGENT = "The agent log is an .adf agent's own log; a folder workspace has none."


class AgentLogModel(RowsTableModel):
    """The log rows, oldest first. New rows at the end are inserted, so views keep their
    selection; any other change resets the model."""

    headers = HEADERS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[LogRow] = []

    @property
    def rows(self) -> list[LogRow]:
        return self._rows

    def set_rows(self, rows: list[LogRow]) -> None:
        old = self._rows
        grew = (
            old and len(rows) > len(old) and [r.id for r in rows[: len(old)]] == [r.id for r in old]
        )
        if grew:
            self.beginInsertRows(QModelIndex(), len(old), len(rows) - 1)
            self._rows = list(rows)
            self.endInsertRows()
        elif [r.id for r in rows] != [r.id for r in old]:
            self.beginResetModel()
            self._rows = list(rows)
            self.endResetModel()

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row, column = self._rows[index.row()], index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            text = self._text(row, column)
            if role == Qt.ItemDataRole.ToolTipRole:
                return text if column in (MESSAGE, DATA) and text else None
            return text
        if role == Qt.ItemDataRole.ForegroundRole and column == LEVEL:
            kind = LEVEL_KINDS.get((row.level or "").lower())
            return accent(kind) if kind else None
        if role == ROW_ID_ROLE:
            return row.id
        return None

    @staticmethod
    def _text(row: LogRow, column: int) -> str:
        if column == TIME:
            return log_time(row.created_at)
        if column == LEVEL:
            return row.level or ""
        if column == EVENT:
            return log_event(row)
        if column == TARGET:
            return row.target or ""
        if column == LOOP:
            return row.loop or ""
        if column == MESSAGE:
            return row.message
        if column == DATA:
            return log_data(row)
        return ""


class AgentLogFilter(QSortFilterProxyModel):
    """Rows holding every word of the text, of one level or any."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._level: str | None = None

    def set_filter(self, text: str, level: str | None) -> None:
        if (text, level) == (self._text, self._level):
            return
        self.beginFilterChange()
        self._text, self._level = text, level
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: AnyIndex) -> bool:
        model = self.sourceModel()
        if not isinstance(model, AgentLogModel) or not 0 <= source_row < len(model.rows):
            return False
        return matches(model.rows[source_row], self._text, self._level)


def _read(adf: AdfFile) -> list[LogRow]:
    return adf.hook_logs()


class AgentLogView(QWidget):
    """The table of an ``.adf``'s hook log rows, with a text and level filter and Refresh;
    empty and disabled for a folder workspace."""

    rows_loaded = Signal()

    def __init__(self, bridge: EngineBridge | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._adf: AdfFile | None = None
        self._job: Job | None = None
        # The agent file each read was for, so that a read's rows go only to the file they are of.
        self._reading: dict[QObject, AdfFile] = {}
        self._reload_wanted = False
        self._read_stamp: tuple[tuple[int, int] | None, ...] = ()

        self.filter = QLineEdit()
        self.filter.setObjectName("agentLogFilter")
        self.filter.setPlaceholderText("Filter: event, source, message, data, loop…")
        self.filter.setClearButtonEnabled(True)
        self.filter.setToolTip("Every word must occur in the row")
        self.level = QComboBox()
        self.level.setObjectName("agentLogLevel")
        self.level.setToolTip("Show the rows of one level")
        self.level.addItem("All levels", None)
        for level in LEVELS:
            self.level.addItem(level, level)
        self.refresh_action = QAction("Refresh", self)
        self.refresh_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Refresh))
        self.refresh_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.refresh_action.setToolTip("Read the agent's log again (F5)")
        self.refresh_action.triggered.connect(self.refresh)
        self.addAction(self.refresh_action)
        refresh_button = QToolButton()
        refresh_button.setDefaultAction(self.refresh_action)
        self.count = QLabel()
        self.count.setObjectName("agentLogCount")
        self.message = QLabel()
        self.message.setObjectName("agentLogMessage")
        self.message.setWordWrap(True)

        self.model = AgentLogModel(self)
        self.proxy = AgentLogFilter(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setObjectName("agentLogTable")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.setTabKeyNavigation(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setResizeContentsPrecision(200)  # ten thousand rows: size columns by a few
        for column in (TIME, LEVEL, EVENT, TARGET, LOOP):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(MESSAGE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(DATA, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(DATA, 200)

        bar = QHBoxLayout()
        bar.addWidget(self.filter, 1)
        bar.addWidget(self.level)
        bar.addWidget(refresh_button)
        bar.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.message)
        layout.addWidget(self.table, 1)

        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._on_changed)
        self.watcher.directoryChanged.connect(self._on_changed)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(300)
        self._settle.timeout.connect(self.refresh)

        self.filter.textChanged.connect(self._on_filter_changed)
        self.level.currentIndexChanged.connect(self._on_filter_changed)
        self.model.rowsInserted.connect(self._update_count)
        self.model.modelReset.connect(self._update_count)
        self.set_workspace(None)

    # ---- the workspace -----------------------------------------------------------------------
    @property
    def adf(self) -> AdfFile | None:
        return self._adf

    def set_workspace(self, workspace: object) -> None:
        """Show ``workspace``'s agent log when it is an ``.adf``; otherwise nothing."""
        self._adf = workspace.adf if isinstance(workspace, AdfWorkspace) else None
        if self._job is not None:
            self._job.cancel()
            self._job = None
        self._reading.clear()
        self._reload_wanted = False
        self.model.set_rows([])
        self._watch()
        enabled = self._adf is not None
        for widget in (self.filter, self.level, self.table):
            widget.setEnabled(enabled)
        self.refresh_action.setEnabled(enabled)
        self._say("" if enabled else NO_AGENT, None)
        self.refresh()

    def _watch(self) -> None:
        paths = self.watcher.files() + self.watcher.directories()
        if paths:
            self.watcher.removePaths(paths)
        if self._adf is None:
            return
        path = self._adf.path
        wanted = [path, path.with_name(path.name + "-wal"), path.parent]
        existing = [str(p) for p in wanted if p.exists()]
        if existing:
            self.watcher.addPaths(existing)

    def _stamp(self) -> tuple[tuple[int, int] | None, ...]:
        """The agent file's and its ``-wal``'s modification time and size. An empty ``-wal`` is
        left out: reading the file makes one for as long as the connection lasts, so the
        studio's own reads must not look like ADF writing."""
        if self._adf is None:
            return ()
        path = self._adf.path
        parts: list[tuple[int, int] | None] = []
        for candidate in (path, path.with_name(path.name + "-wal")):
            try:
                info = candidate.stat()
            except OSError:
                parts.append(None)
                continue
            parts.append((info.st_mtime_ns, info.st_size) if info.st_size else None)
        return tuple(parts)

    def _on_changed(self, _path: str) -> None:
        self._watch()  # ADF opening the agent makes a -wal, whose growth is its writing
        if self._stamp() != self._read_stamp:
            self._settle.start()

    # ---- reading ------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read the rows again (off the GUI thread when there is a bridge)."""
        self._settle.stop()
        adf = self._adf
        if adf is None:
            self._update_count()
            return
        self._watch()  # a -wal may have appeared or gone
        self._read_stamp = self._stamp()
        if self._job is not None and not self._job.done:
            self._reload_wanted = True
            return
        if self._bridge is None:
            try:
                rows = _read(adf)
            except AdfFileError as exc:
                self._on_read(adf, None, exc)
            else:
                self._on_read(adf, rows, None)
            return
        job = self._bridge.submit(_read, adf)
        # Bound methods, not lambdas: Qt drops these connections when the view is deleted, so
        # a read that ends after the window closed touches nothing.
        self._reading[job] = adf
        job.finished.connect(self._on_rows)
        job.failed.connect(self._on_failure)
        self._job = job

    def _on_rows(self, rows: Any) -> None:
        adf = self._reading.pop(self.sender(), None)
        if adf is not None:
            self._on_read(adf, rows, None)

    def _on_failure(self, error: BaseException) -> None:
        adf = self._reading.pop(self.sender(), None)
        if adf is not None:
            self._on_read(adf, None, error)

    def _on_read(self, adf: AdfFile, rows: Any, error: BaseException | None) -> None:
        self._job = None
        if adf is not self._adf:
            return
        if error is not None:
            reason = error.reason if isinstance(error, AdfFileError) else str(error)
            self._say(f"{adf.path.name}: {reason}", "error")
        else:
            self._say("", None)
            self.model.set_rows(list(rows))
        self._update_count()
        self.rows_loaded.emit()
        if self._reload_wanted:
            self._reload_wanted = False
            self.refresh()

    # ---- filter and count ---------------------------------------------------------------------
    def _on_filter_changed(self, *_: Any) -> None:
        self.proxy.set_filter(self.filter.text(), self.level.currentData())
        self._update_count()

    def _update_count(self, *_: Any) -> None:
        total, shown = self.model.rowCount(), self.proxy.rowCount()
        if self._adf is None:
            self.count.setText("")
        elif shown == total:
            self.count.setText(f"{total} rows")
        else:
            self.count.setText(f"{shown} of {total} rows")

    def _say(self, text: str, kind: str | None) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))
        set_accent(self.message, kind)

    def focus_filter(self) -> None:
        self.filter.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter.selectAll()


class AgentLogDock(QDockWidget):
    """The Agent log as a dock, tabbed with the Records; shown only for an ``.adf``."""

    def __init__(
        self, window: QMainWindow, bridge: EngineBridge | None, beside: QDockWidget | None
    ) -> None:
        super().__init__("Agent log", window)
        self.setObjectName("agentLogDock")
        self.view = AgentLogView(bridge, self)
        self.setWidget(self.view)
        self._beside = beside
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self)
        if beside is not None:
            window.tabifyDockWidget(beside, self)
            beside.raise_()
        self.toggleViewAction().setStatusTip("Show the .adf agent's own pre_llm_hook log")
        self.set_workspace(None)

    def set_workspace(self, workspace: object) -> None:
        self.view.set_workspace(workspace)
        self.toggleViewAction().setEnabled(isinstance(workspace, AdfWorkspace))
        if not isinstance(workspace, AdfWorkspace):
            self.hide()
            return
        if self.isHidden():
            self.show()  # tabbed behind the records, which stay in front
            if self._beside is not None and self._beside.isVisible():
                self._beside.raise_()
