"""The Tests view: every sample on every target (Main, each declared loop, a future loop), run
off the GUI thread through the bridge, each cell judged against the sample's expectations or
compared with the run before it. Enter or a double-click on a cell opens its run.

It runs the saved hook and samples, as ``hook-studio test`` does in CI."""

from __future__ import annotations

from collections import deque
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from studio.core.expectations.matrix import (
    WORDS,
    MatrixCell,
    MatrixRow,
    judged_cell,
    matrix_plan,
    previous_run,
)
from studio.core.expectations.targets import run_loop
from studio.core.registry import CONTRACTS
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import TurnError
from studio.core.workspace.folder import Workspace
from studio.ui.engine_bridge import EngineBridge, RunJob
from studio.ui.test_matrix_model import HookTestMatrixModel

AT_ONCE = 4
"""Runs in flight together: each is a worker process of its own."""
SHOWN_STATES = ("pass", "fail", "changed", "same", "new", "error")


def _judge(row: MatrixRow, target: str, outcome: RunOutcome, store: Any) -> MatrixCell:
    """Off the GUI thread: the records are read for the run before this one."""
    contract = CONTRACTS.get(outcome.contract)
    previous, has_result = (None, False)
    if not row.expects_on(target):
        previous, has_result = previous_run(store, outcome)
    return judged_cell(row, target, outcome, contract, previous, has_result)


class HookTestMatrix(QWidget):
    """Signals: ``run_opened(outcome)`` when a cell's run is opened, ``runs_finished`` when a
    run of the matrix has ended (every cell judged)."""

    run_opened = Signal(object)
    runs_finished = Signal()

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.workspace: Workspace | None = None
        self.store: Any = None
        self._generation = 0
        self._queue: deque[tuple[int, int]] = deque()
        self._in_flight = 0
        self._judging = 0
        self.running = False

        self.run_button = QPushButton("Run All Tests")
        self.run_button.setObjectName("runTestsButton")
        self.run_button.setToolTip(
            "Run every sample on every target (the saved hook and samples, as hook-studio test)"
        )
        self.run_button.clicked.connect(self.run_all)
        self.summary = QLabel("Not run yet")
        self.summary.setObjectName("testSummary")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top = QHBoxLayout()
        top.addWidget(self.run_button)
        top.addWidget(self.summary, 1)

        self.model = HookTestMatrixModel()
        self.table = QTableView()
        self.table.setObjectName("testMatrix")
        self.table.setModel(self.model)
        self.table.setTabKeyNavigation(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setMinimumSectionSize(80)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.activated.connect(self._on_cell_activated)
        self.table.setToolTip("Enter or double-click opens a cell's run")
        self.table.selectionModel().currentChanged.connect(self._on_current_changed)
        self.detail = QLabel("")
        self.detail.setObjectName("testDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model.dataChanged.connect(self._on_cells_changed)
        self.model.modelReset.connect(lambda: self.detail.setText(""))

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail)

    def set_workspace(self, workspace: Workspace | None, store: Any) -> None:
        """A new workspace: what ran for the old one is dropped (its runs end unseen)."""
        self._generation += 1
        self.workspace = workspace
        self.store = store
        self._queue.clear()
        self._in_flight = self._judging = 0
        self._set_running(False)
        self.model.set_plan([], [])
        self.summary.setText("Not run yet" if workspace else "No workspace")

    # ---- running --------------------------------------------------------------------------
    def run_all(self) -> None:
        if self.workspace is None or self.running:
            return
        self._generation += 1
        generation = self._generation
        self._set_running(True)
        self.summary.setText("Reading the samples…")
        job = self.bridge.submit(matrix_plan, self.workspace)
        job.finished.connect(lambda plan: self._on_plan(generation, plan))
        job.failed.connect(lambda exc: self._on_plan_failed(generation, exc))

    def _set_running(self, running: bool) -> None:
        self.running = running
        self.run_button.setEnabled(not running and self.workspace is not None)

    def _on_plan_failed(self, generation: int, exc: BaseException) -> None:
        if generation != self._generation:
            return
        self._set_running(False)
        self.summary.setText(f"Cannot run the tests: {exc}")

    def _on_plan(self, generation: int, plan: tuple[list[str], list[MatrixRow]]) -> None:
        if generation != self._generation:
            return
        targets, rows = plan
        self.model.set_plan(targets, rows)
        if rows and targets:
            self.table.setCurrentIndex(self.model.index(0, 0))
        self._queue = deque(
            (r, c)
            for r, row in enumerate(rows)
            for c, target in enumerate(targets)
            if self.model.cell(r, c).state == "idle"
        )
        self._pump()

    def _pump(self) -> None:
        while self._queue and self._in_flight < AT_ONCE:
            r, c = self._queue.popleft()
            self._start(r, c)
        self._show_summary()
        if not self._queue and self._in_flight == 0 and self._judging == 0 and self.running:
            self._set_running(False)
            self._show_summary()
            self.runs_finished.emit()

    def _start(self, r: int, c: int) -> None:
        row, target = self.model.rows[r], self.model.targets[c]
        generation = self._generation
        self._in_flight += 1
        self.model.set_cell(r, c, MatrixCell("running"))
        job = self.bridge.start_run(row.name, run_loop(target, row.per_loop))
        job.finished.connect(lambda outcome: self._on_run_done(generation, r, c, outcome))
        job.failed.connect(lambda error: self._on_run_failed(generation, r, c, job, error))

    def _on_run_failed(
        self, generation: int, r: int, c: int, job: RunJob, error: TurnError
    ) -> None:
        contract = self.model.rows[r].tests.contract or "pre_llm"
        self._on_run_done(generation, r, c, job.failed_outcome(error, contract))

    def _on_run_done(self, generation: int, r: int, c: int, outcome: RunOutcome) -> None:
        if generation != self._generation:
            return
        self._in_flight -= 1
        self._judging += 1
        row, target = self.model.rows[r], self.model.targets[c]
        job = self.bridge.submit(_judge, row, target, outcome, self.store)
        job.finished.connect(lambda cell: self._on_judged(generation, r, c, cell))
        job.failed.connect(
            lambda exc: self._on_judged(generation, r, c, MatrixCell("error", str(exc), outcome))
        )
        self._pump()

    def _on_judged(self, generation: int, r: int, c: int, cell: MatrixCell) -> None:
        if generation != self._generation:
            return
        self._judging -= 1
        self.model.set_cell(r, c, cell)
        self._pump()

    def _show_summary(self) -> None:
        counts = self.model.counts()
        parts = [f"{counts[s]} {WORDS[s].split(' ', 1)[-1]}" for s in SHOWN_STATES if counts.get(s)]
        busy = counts.get("running", 0) + counts.get("idle", 0)
        text = ", ".join(parts) or "nothing ran"
        self.summary.setText(f"Running… {busy} to go · {text}" if self.running else text)

    # ---- the current cell -----------------------------------------------------------------
    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_detail(current)

    def _on_cells_changed(self, top_left: QModelIndex, _bottom_right: QModelIndex) -> None:
        if top_left == self.table.currentIndex():
            self._show_detail(top_left)

    def _show_detail(self, index: QModelIndex) -> None:
        """What the current cell says, below the table: the first failing assertion with what
        was expected and what came, or the problem."""
        text = index.data(Qt.ItemDataRole.ToolTipRole) if index.isValid() else ""
        self.detail.setText((text or "").replace("\n", " · "))

    # ---- opening a run --------------------------------------------------------------------
    def _on_cell_activated(self, index: QModelIndex) -> None:
        cell = self.model.cell(index.row(), index.column())
        if cell.outcome is not None:
            self.run_opened.emit(cell.outcome)


class HookTestsDock(QDockWidget):
    """The Tests view as a dock, a tab beside ``beside`` (the Records)."""

    def __init__(self, window: QMainWindow, bridge: EngineBridge, beside: QDockWidget) -> None:
        super().__init__("Tests", window)
        self.setObjectName("testsDock")
        self.matrix = HookTestMatrix(bridge)
        self.setWidget(self.matrix)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self)
        window.tabifyDockWidget(beside, self)
        beside.raise_()
