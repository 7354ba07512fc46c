"""The rows of the test matrix: samples down, targets across, one :class:`MatrixCell` each. A
cell says its state in words and in colour, never in colour alone."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from studio.core.expectations.matrix import MatrixCell, MatrixRow
from studio.core.expectations.targets import FUTURE_LOOP
from studio.ui.result_style import accent, tint

Index = QModelIndex | QPersistentModelIndex

CELL_ROLE = Qt.ItemDataRole.UserRole + 1
"""The :class:`MatrixCell` of an index."""

_KINDS = {
    "pass": "ok",
    "fail": "error",
    "error": "error",
    "changed": "changed",
    "new": "info",
    "running": "info",
}


def target_title(target: str) -> str:
    return "future loop" if target == FUTURE_LOOP else target


class HookTestMatrixModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.rows: list[MatrixRow] = []
        self._cells: list[list[MatrixCell]] = []

    def set_plan(self, targets: list[str], rows: list[MatrixRow]) -> None:
        self.beginResetModel()
        self.targets = list(targets)
        self.rows = list(rows)
        self._cells = [[row.first_cell(t) for t in self.targets] for row in self.rows]
        self.endResetModel()

    def cell(self, row: int, column: int) -> MatrixCell:
        return self._cells[row][column]

    def set_cell(self, row: int, column: int, cell: MatrixCell) -> None:
        self._cells[row][column] = cell
        index = self.index(row, column)
        self.dataChanged.emit(index, index)

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for cells in self._cells:
            for cell in cells:
                found[cell.state] = found.get(cell.state, 0) + 1
        return found

    # ---- QAbstractTableModel ---------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.targets)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        cell = self._cells[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell.text
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
            sample = self.rows[index.row()].name
            target = target_title(self.targets[index.column()])
            lines = [f"{sample} on {target}: {cell.text}"]
            if cell.detail:
                lines.append(cell.detail)
            if cell.outcome is not None:
                lines.append("Enter or double-click opens the run")
            return "\n".join(lines)
        kind = _KINDS.get(cell.state)
        if role == Qt.ItemDataRole.BackgroundRole and kind:
            return tint(kind, 60)
        if role == Qt.ItemDataRole.ForegroundRole and kind:
            return accent(kind)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == CELL_ROLE:
            return cell
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and not 0 <= section < len(self.targets):
            return None
        if not horizontal and not 0 <= section < len(self.rows):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return target_title(self.targets[section]) if horizontal else self.rows[section].name
        if role == Qt.ItemDataRole.ToolTipRole:
            if horizontal:
                target = self.targets[section]
                return (
                    "a loop declared later: a hook that names its loops does not run on it"
                    if target == FUTURE_LOOP
                    else f"the loop {target}"
                )
            row = self.rows[section]
            tested = "has expectations" if row.tests.expectations else "no expectations"
            return f"samples/{row.name}.json ({row.tests.contract or 'unknown contract'}, {tested})"
        return None
