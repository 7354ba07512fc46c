"""The Records table's model: the runs a ``Selection`` holds, handed to the view a piece at a
time as it scrolls (``canFetchMore``/``fetchMore``), with every cell worked out when it is
painted. A new selection whose first rows are the ones already shown (every run arriving after
the newest page) replaces the rows behind them without a reset.

Sorting is asked of the owner (``sort_requested``): with many rows the sort runs off the GUI
thread and comes back as a new selection.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont

from studio.core.records.store import RecordSummary
from studio.ui.contract_views import contract_label
from studio.ui.records_cells import (
    CONTRACT,
    DURATION,
    HEADER_TIPS,
    HEADERS,
    HOOK,
    LOOP,
    OUTCOME,
    RUN_ID_ROLE,
    SAMPLE,
    SORT_ROLE,
    TIME,
    RunDays,
    duration_label,
    outcome_label,
    record_tooltip,
)
from studio.ui.records_rows import RowFilter, Selection

AnyIndex = QModelIndex | QPersistentModelIndex

FETCH_STEP = 200
"""Rows handed to the view at a time: a few screens."""

_ERROR_COLOR = QColor(214, 48, 49)
_MUTED_COLOR = QColor(128, 128, 128)
_NO_FILTER = RowFilter()


def _italic() -> QFont:
    font = QFont()
    font.setItalic(True)
    return font


class RecordsModel(QAbstractTableModel):
    """Read-only rows over a ``Selection``; the first ``FETCH_STEP`` are shown at once."""

    sort_requested = Signal(int, object)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._selection = Selection([], [], TIME, True, _NO_FILTER)
        self._rows: list[RecordSummary] = []
        self._fetched = 0
        self._resetting = False
        self._sort_column = TIME
        self._sort_order = Qt.SortOrder.DescendingOrder
        self._days = RunDays()
        self._italic: QFont | None = None

    # ---- state -------------------------------------------------------------------------------
    @property
    def rows(self) -> list[RecordSummary]:
        """Every row of the selection, fetched or not."""
        return self._rows

    @property
    def selection(self) -> Selection:
        return self._selection

    @property
    def fetched(self) -> int:
        return self._fetched

    @property
    def sort_column(self) -> int:
        return self._sort_column

    @property
    def sort_order(self) -> Qt.SortOrder:
        return self._sort_order

    @property
    def descending(self) -> bool:
        return self._sort_order == Qt.SortOrder.DescendingOrder

    def set_selection(self, selection: Selection) -> bool:
        """Show ``selection``. Returns False when the rows shown stay as they are (the new
        rows only add behind them), True after a reset."""
        rows = selection.rows
        if self._days.today != date.today():
            self._days = RunDays()
        shown = self._rows[: self._fetched]
        same_start = len(rows) >= len(shown) and all(
            a.run_id == b.run_id for a, b in zip(shown, rows, strict=False)
        )
        if same_start and shown:
            self._selection, self._rows = selection, rows
            # Same runs, but a payload may have been cleared since.
            changed = [i for i, (a, b) in enumerate(zip(shown, rows, strict=False)) if a != b]
            if changed:
                self.dataChanged.emit(
                    self.index(min(changed), 0), self.index(max(changed), len(HEADERS) - 1)
                )
            self._fetch(FETCH_STEP - self._fetched)
            return False
        self.beginResetModel()
        self._selection, self._rows = selection, rows
        self._fetched = min(len(rows), FETCH_STEP)
        # Whoever listens to modelReset may ask for more rows from inside it; rows inserted
        # before the reset has been announced to every listener would reach some of them first.
        self._resetting = True
        try:
            self.endResetModel()
        finally:
            self._resetting = False
        return True

    def clear(self) -> None:
        self.set_selection(Selection([], [], self._sort_column, self.descending, _NO_FILTER))

    def row_of(self, run_id: str | None) -> int | None:
        """The row of ``run_id`` among every row of the selection (fetched or not)."""
        return None if run_id is None else self._selection.by_id.get(run_id)

    def fetch_to(self, row: int) -> None:
        """Hand the view every row up to ``row``."""
        if row >= self._fetched and row < len(self._rows):
            self._fetch(row + 1 - self._fetched)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        # QTableView.sortByColumn asks twice for the same sort.
        if (column, order) == (self._sort_column, self._sort_order):
            return
        self._sort_column, self._sort_order = column, order
        self.sort_requested.emit(column, order)

    # ---- fetching ----------------------------------------------------------------------------
    def canFetchMore(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and not self._resetting and self._fetched < len(self._rows)

    def fetchMore(self, parent: AnyIndex = QModelIndex()) -> None:  # noqa: B008
        if not parent.isValid() and not self._resetting:
            self._fetch(FETCH_STEP)

    def _fetch(self, count: int) -> None:
        count = min(count, len(self._rows) - self._fetched)
        if count <= 0:
            return
        self.beginInsertRows(QModelIndex(), self._fetched, self._fetched + count - 1)
        self._fetched += count
        self.endInsertRows()

    # ---- Qt model ----------------------------------------------------------------------------
    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._fetched

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(HEADERS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS[section]
        if role == Qt.ItemDataRole.InitialSortOrderRole:
            # A first click on Time shows the newest runs first; other columns start ascending.
            return Qt.SortOrder.DescendingOrder if section == TIME else Qt.SortOrder.AscendingOrder
        return None

    def cell(self, summary: RecordSummary, column: int) -> str:
        """The text of ``column`` for ``summary``, as the table shows it."""
        if column == TIME:
            return self._days.cell(summary.started_at)
        if column == CONTRACT:
            return contract_label(summary.contract)
        if column == HOOK:
            return summary.hook_label or "—"
        if column == LOOP:
            return summary.loop or "—"
        if column == SAMPLE:
            return summary.sample or "—"
        if column == OUTCOME:
            return outcome_label(summary.status, summary.error_kind)
        return duration_label(summary.duration_ms)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= self._fetched:
            return None
        summary = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell(summary, column)
        if role == RUN_ID_ROLE:
            return summary.run_id
        if role == SORT_ROLE:
            return self._sort_value(summary, column)
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._foreground(summary, column)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column == DURATION:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return None
        if role == Qt.ItemDataRole.FontRole and not summary.has_payload:
            if self._italic is None:
                self._italic = _italic()
            return self._italic
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(summary, column)
        return None

    def _sort_value(self, summary: RecordSummary, column: int) -> Any:
        if column == TIME:
            return summary.started_at
        if column == DURATION:
            return summary.duration_ms
        return self.cell(summary, column).casefold()

    def _foreground(self, summary: RecordSummary, column: int) -> QBrush | None:
        if column == OUTCOME and summary.status == "turn_error":
            return QBrush(_ERROR_COLOR)
        if column == OUTCOME and summary.status == "not_applied":
            return QBrush(_MUTED_COLOR)
        if column in (HOOK, LOOP, SAMPLE) and self.cell(summary, column) == "—":
            return QBrush(_MUTED_COLOR)
        return None

    @staticmethod
    def _tooltip(summary: RecordSummary, column: int) -> str | None:
        return record_tooltip(summary, column)
