"""New sample from history…: rows of one loop of an ``.adf`` agent's history turned into a
pre-LLM sample (spec/provider-requests.md §4). The user picks the loop and a range of rows and
writes the system prompt, which ADF never stores; the sample, what could not be rebuilt and the
request checks' findings are shown before anything is written, and Create writes it only when it
passes those checks, asking before it replaces another sample."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from PySide6.QtCore import (
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.provider.history_sample import (
    HistorySample,
    build_history_sample,
    row_kinds,
    row_preview,
    save_history_sample,
)
from studio.core.workspace.adf_file import AdfFile, AdfFileError, LoopRow
from studio.core.workspace.adf_workspace import AdfWorkspace
from studio.core.workspace.agent_log import log_time
from studio.core.workspace.folder import SAMPLES_DIR
from studio.core.workspace.sample_files import (
    clean_sample_name,
    free_sample_name,
    sample_name_problem,
)
from studio.ui.engine_bridge import EngineBridge, Job
from studio.ui.json_highlighter import VisibleHighlighter, json_theme
from studio.ui.result_style import note
from studio.ui.rows_table_model import RowsTableModel
from studio.ui.sample_fields import read_only_pane, sample_name_field, show_status

AnyIndex = QModelIndex | QPersistentModelIndex
HEADERS = ("Seq", "Role", "Kind", "Content", "Time")
SEQ, ROLE, KIND, CONTENT, TIME = range(len(HEADERS))
SYSTEM_NOTE = (
    "ADF builds the system prompt when it calls the model (from the instructions, the agent's "
    "files and tools) and never stores it: write the one the model saw. It starts as the "
    "config's instructions."
)


class HistoryRowsModel(RowsTableModel):
    """The rows of one loop's history, read-only, in the runtime's order."""

    headers = HEADERS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[LoopRow] = []
        self._cells: dict[int, tuple[str, ...]] = {}

    @property
    def rows(self) -> list[LoopRow]:
        return self._rows

    def set_rows(self, rows: list[LoopRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self._cells = {}
        self.endResetModel()

    def _cells_of(self, position: int) -> tuple[str, ...]:
        """A row's shown texts, made once: views ask for them on every paint."""
        cells = self._cells.get(position)
        if cells is None:
            row = self._rows[position]
            cells = (
                f"S{row.seq}",
                row.role,
                row_kinds(row),
                row_preview(row),
                log_time(row.created_at),
            )
            self._cells[position] = cells
        return cells

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells_of(index.row())[column] if 0 <= column < len(HEADERS) else None
        if role == Qt.ItemDataRole.ToolTipRole and column == CONTENT:
            return row_preview(self._rows[index.row()], 1000)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == SEQ:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


@dataclass(frozen=True)
class _Read:
    loops: list[str]
    config: dict[str, Any]
    loop: str
    rows: list[LoopRow]


def _read(adf: AdfFile, loop: str | None) -> _Read:
    loops = adf.loops()
    chosen = loop if loop is not None else (loops[0] if loops else "main")
    return _Read(loops, adf.config(), chosen, adf.history(chosen) if loops else [])


class HistorySampleDialog(QDialog):
    """Signals: ``sample_created(name)`` once ``samples/NAME.json`` is written."""

    sample_created = Signal(str)

    def __init__(
        self,
        workspace: AdfWorkspace,
        bridge: EngineBridge | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("New Sample from History")
        self.workspace = workspace
        self.samples: Path = workspace.root / SAMPLES_DIR
        self.built: HistorySample | None = None
        self.config: dict[str, Any] = {}
        self.problem = ""
        self._bridge = bridge
        self._job: Job | None = None
        self._named_by_user = False
        self._system_set = False

        self.loop = QComboBox()
        self.loop.setObjectName("historyLoop")
        self.loop.setToolTip("The loop whose history to take (schema 28 agents have only main)")
        self.model = HistoryRowsModel(self)
        self.table = QTableView()
        self.table.setObjectName("historyRows")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setTabKeyNavigation(False)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setResizeContentsPrecision(200)  # a long history: size columns by its first rows
        for column in (SEQ, ROLE, KIND, TIME):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(CONTENT, QHeaderView.ResizeMode.Stretch)
        self.table.setToolTip(
            "The rows the request holds: click and Shift+click, or Shift+arrows; Ctrl+A for all"
        )
        self.system = QPlainTextEdit()
        self.system.setObjectName("historySystem")
        self.system.setPlaceholderText("The system prompt the model saw")
        self.system.setTabChangesFocus(True)
        self.status = QLabel()
        self.status.setObjectName("historyStatus")
        self.status.setWordWrap(True)
        self.sample = read_only_pane("historySample")
        self.highlighter = VisibleHighlighter(self.sample, json_theme(self.sample.palette()))
        self.report = read_only_pane("historyReport")
        self.name = sample_name_field("historyName")

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.create_button = self.buttons.addButton(
            "C&reate", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.create_button.setObjectName("historyCreate")
        self.create_button.setDefault(True)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        top = QFormLayout()
        top.addRow("&Loop", self.loop)
        left_layout.addLayout(top)
        rows_label = QLabel("&Rows (the range the request holds)")
        rows_label.setBuddy(self.table)
        left_layout.addWidget(rows_label)
        left_layout.addWidget(self.table, 3)
        system_label = QLabel("S&ystem prompt")
        system_label.setBuddy(self.system)
        left_layout.addWidget(system_label)
        left_layout.addWidget(self.system, 1)
        left_layout.addWidget(note(SYSTEM_NOTE))
        self.preview = QTabWidget()
        self.preview.setObjectName("historyPreview")
        self.preview.addTab(self.sample, "&Sample")
        self.preview.addTab(self.report, "Re&port")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.preview)
        split.setChildrenCollapsible(False)
        split.setSizes([560, 420])
        form = QFormLayout()
        form.addRow("&Name", self.name)
        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        layout.addLayout(form)
        layout.addWidget(self.buttons)
        self.resize(1000, 620)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self.refresh)
        self.system.textChanged.connect(self._timer.start)
        self.loop.activated.connect(self._on_loop_chosen)
        self.table.selectionModel().selectionChanged.connect(self._on_rows_chosen)
        self.name.textEdited.connect(self._on_name_edited)
        self.buttons.accepted.connect(self.create_sample)
        self.buttons.rejected.connect(self.reject)
        self._say("Reading the agent's history…", None)
        self._update_button()
        self._read_history(None)

    # ---- reading ------------------------------------------------------------------------------
    def _read_history(self, loop: str | None) -> None:
        """Read the loops, the config and one loop's rows, off the GUI thread when a bridge is
        given (a busy agent file waits up to its timeout). Only the latest read is shown."""
        if self._job is not None:
            self._job.cancel()
            self._job = None
        self.built = None
        self._update_button()
        adf = self.workspace.adf
        if self._bridge is None:
            try:
                read = _read(adf, loop)
            except AdfFileError as exc:
                self._on_read(None, exc)
            else:
                self._on_read(read, None)
            return
        # Bound methods, not lambdas: Qt drops these connections when the dialog is deleted,
        # so a read that ends after it closed touches nothing.
        self._job = self._bridge.submit(_read, adf, loop)
        self._job.finished.connect(self._on_read_done)
        self._job.failed.connect(self._on_read_failed)

    def _on_read_done(self, read: _Read) -> None:
        if self.sender() is self._job:
            self._job = None
            self._on_read(read, None)

    def _on_read_failed(self, error: BaseException) -> None:
        if self.sender() is self._job:
            self._job = None
            self._on_read(None, error)

    def _on_read(self, read: _Read | None, error: BaseException | None) -> None:
        if read is None:
            reason = error.reason if isinstance(error, AdfFileError) else str(error)
            self.model.set_rows([])
            self._show_nothing(f"{self.workspace.adf.path.name}: {reason}", "error")
            return
        self.config = read.config
        self.loop.blockSignals(True)
        self.loop.clear()
        self.loop.addItems(read.loops)
        self.loop.setCurrentText(read.loop)
        self.loop.blockSignals(False)
        self.loop.setEnabled(len(read.loops) > 1)
        if not self._system_set:
            self._system_set = True
            instructions = read.config.get("instructions")
            if isinstance(instructions, str):
                self.system.blockSignals(True)
                self.system.setPlainText(instructions)
                self.system.blockSignals(False)
        if not self._named_by_user:
            self.name.setText(free_sample_name(self.samples, f"history-{read.loop}", []))
        self.model.set_rows(read.rows)
        if not read.rows:
            self._show_nothing(f"Loop {read.loop} has no history.", "error")
            return
        self.table.selectAll()
        self.table.selectionModel().setCurrentIndex(
            self.model.index(len(read.rows) - 1, SEQ),
            QItemSelectionModel.SelectionFlag.NoUpdate,
        )
        self.table.scrollToBottom()

    def _on_loop_chosen(self, _index: int) -> None:
        self._read_history(self.loop.currentText())

    # ---- the range and the preview ------------------------------------------------------------
    def selected_rows(self) -> list[LoopRow]:
        """The rows from the first selected to the last selected, in the loop's order."""
        picked = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        if not picked:
            return []
        return self.model.rows[picked[0] : picked[-1] + 1]

    def select_range(self, first: int, last: int) -> None:
        """Select the rows at positions ``first`` to ``last`` (inclusive)."""
        selection = QItemSelection(
            self.model.index(first, 0), self.model.index(last, len(HEADERS) - 1)
        )
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.selectionModel().select(selection, flags)

    def _on_rows_chosen(self, *_: Any) -> None:
        # A long history takes a moment to build: a run of Shift+arrows builds once.
        self.built = None
        self._update_button()
        self._timer.start()

    def refresh(self) -> None:
        """Build the sample from the chosen rows and prompt, and show it and its report."""
        self._timer.stop()
        self.built = None
        rows = self.selected_rows()
        if not rows:
            if self.model.rows:
                self._show_nothing("Select the rows the request holds.", None)
            return
        loop = self.loop.currentText() or "main"
        self.built = built = build_history_sample(
            self.config,
            loop,
            rows,
            self.system.toPlainText(),
            origin=self.workspace.adf.path.name,
        )
        self.sample.setPlainText(built.text())
        self.highlighter.set_active(True)
        self.report.setPlainText("\n".join(built.report_lines()))
        words = f"{len(rows)} rows, S{rows[0].seq} to S{rows[-1].seq}"
        words += f"; {len(built.losses)} dropped or changed"
        if not self.system.toPlainText().strip():
            words += "; the system prompt is empty"
        if not built.valid:
            first = next(f for f in built.findings if f.severity == "error")
            row = built.row_of(first)
            at = f" at row S{row.seq}" if row else ""
            words += f". Not a valid request{at}: {first.message}"
        self._say(words, "ok" if built.valid else "error")
        self._update_button()

    def _show_nothing(self, text: str, kind: str | None) -> None:
        self.built = None
        self.sample.clear()
        self.report.clear()
        self._say(text, kind)
        self._update_button()

    def _say(self, text: str, kind: str | None) -> None:
        self.problem = show_status(self.status, text, kind)

    def _update_button(self) -> None:
        name_ok = sample_name_problem(clean_sample_name(self.name.text())) is None
        self.create_button.setEnabled(self.built is not None and self.built.valid and name_ok)
        self.create_button.setDefault(True)  # Return in any field creates

    def _on_name_edited(self, _text: str) -> None:
        self._named_by_user = True
        self._update_button()

    # ---- writing ------------------------------------------------------------------------------
    def create_sample(self) -> bool:
        """Write the sample (asking before replacing one of the same name); the dialog closes
        when it is written."""
        self.refresh()
        built = self.built
        name = clean_sample_name(self.name.text())
        if built is None or not built.valid:
            return False
        try:
            save_history_sample(self.samples, name, built)
        except FileExistsError:
            if not self._confirm_replace(name):
                self.name.setFocus()
                self.name.selectAll()
                return False
            return self._save(name, built, force=True)
        except (ValueError, OSError) as exc:
            self._say(f"Not created: {exc}", "error")
            return False
        return self._done(name)

    def _save(self, name: str, built: HistorySample, *, force: bool) -> bool:
        try:
            save_history_sample(self.samples, name, built, force=force)
        except (ValueError, OSError) as exc:
            self._say(f"Not created: {exc}", "error")
            return False
        return self._done(name)

    def _confirm_replace(self, name: str) -> bool:
        answer = QMessageBox.question(
            self,
            "Replace the sample?",
            f"{SAMPLES_DIR}/{name}.json exists already. Replace it with this sample?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _done(self, name: str) -> bool:
        self.sample_created.emit(name)
        self.accept()
        return True


def history_sample_enabled(workspace: object) -> TypeGuard[AdfWorkspace]:
    """Whether "New sample from history" applies: the workspace is an ``.adf`` agent."""
    return isinstance(workspace, AdfWorkspace)
