"""The rows of the request diff as a two-column tree model: original on the left, transformed on
the right."""

from __future__ import annotations

import itertools
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from studio.ui.result_diff_rows import DiffRow
from studio.ui.result_style import tint

KIND_ROLE = Qt.ItemDataRole.UserRole + 20


class DiffModel(QAbstractItemModel):
    """The rows as a tree model; indexes carry row ids, so one that outlives a reset finds
    nothing rather than a freed object."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.headers = ("Original", "Transformed")
        self._ids = itertools.count(1)
        self._rows: dict[int, DiffRow] = {}
        self._root = DiffRow("same", "", "")
        self._bold = QFont()
        self._bold.setBold(True)

    def set_root(self, root: DiffRow, headers: tuple[str, str] | None = None) -> None:
        self.beginResetModel()
        self._rows = {}
        self._root = root
        if headers is not None:
            self.headers = headers
        self.endResetModel()

    def row_of(self, index: QModelIndex | QPersistentModelIndex) -> DiffRow:
        if not index.isValid():
            return self._root
        return self._rows.get(index.internalId(), self._root)

    def index_of(self, row: DiffRow) -> QModelIndex:
        if row is self._root or row.parent is None:
            return QModelIndex()
        return self._index(row, 0)

    def _index(self, row: DiffRow, column: int) -> QModelIndex:
        if not row.id or self._rows.get(row.id) is not row:
            row.id = next(self._ids)
            self._rows[row.id] = row
        return self.createIndex(row.row, column, row.id)

    def _known(self, index: Any) -> bool:
        return not index.isValid() or index.internalId() in self._rows

    def index(self, row: int, column: int, parent: Any = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not self._known(parent):
            return QModelIndex()
        node = self.row_of(parent)
        if 0 <= row < node.count and 0 <= column < 2:
            return self._index(node.child(row), column)
        return QModelIndex()

    def parent(self, index: Any = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid() or not self._known(index):
            return QModelIndex()
        up = self.row_of(index).parent
        if up is None or up is self._root:
            return QModelIndex()
        return self._index(up, 0)

    def rowCount(self, parent: Any = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and (parent.column() != 0 or not self._known(parent)):
            return 0
        return self.row_of(parent).count

    def hasChildren(self, parent: Any = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def columnCount(self, parent: Any = QModelIndex()) -> int:  # noqa: B008
        return 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        return None

    def flags(self, index: Any) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else _NO_FLAGS

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not self._known(index):
            return None
        row = self.row_of(index)
        left = index.column() == 0
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return row.left if left else row.right
        if role == KIND_ROLE:
            return row.kind
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if row.section else None
        if role == Qt.ItemDataRole.BackgroundRole and not row.section:
            if row.kind == "changed":
                return tint("changed", 40)
            if row.kind == "removed" and left:
                return tint("removed", 45)
            if row.kind == "added" and not left:
                return tint("added", 45)
        return None


_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_NO_FLAGS = Qt.ItemFlag.NoItemFlags
