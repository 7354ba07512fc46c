"""One chain's rows as a table model over the chain editor's draft, and the view that reorders
them by keyboard and by drag.

The rows belong to the draft: the model shows them and turns a drop into a call of
``move(source, destination)``, which goes through the undo stack and comes back through
:meth:`ChainRowsModel.set_rows`, announced as the insert, remove or move it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QByteArray,
    QMimeData,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QBrush, QColor, QDrag, QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QWidget

from studio.core.chain.chain_draft import ChainRow, Rows
from studio.core.chain.config import DEFAULT_HOOK_TIMEOUT_MS, ChainName
from studio.ui.ordered_rows_view import OrderedRowsView

AnyIndex = QModelIndex | QPersistentModelIndex
ROW_MIME = "application/x-hookstudio-chain-row"
HOOK_COLUMN, KIND_COLUMN, TIMEOUT_COLUMN = 0, 1, 2
MIN_ROWS_SHOWN = 3
KIND_LABELS = {"builtin": "built-in", "user": "yours", "other": "not a hook"}


def _single_move(old: Rows, new: Rows) -> tuple[int, int] | None:
    """``(source, destination)`` when ``new`` is ``old`` with one row moved."""
    if len(old) != len(new) or old == new:
        return None
    first = next(i for i in range(len(old)) if old[i] != new[i])
    last = next(i for i in reversed(range(len(old))) if old[i] != new[i])
    if old[first] == new[last] and old[first + 1 : last + 1] == new[first:last]:
        return first, last
    if old[last] == new[first] and old[first:last] == new[first + 1 : last + 1]:
        return last, first
    return None


class ChainRowsModel(QAbstractTableModel):
    HEADERS = ("Hook", "Kind", "Timeout ms")

    def __init__(self, chain: ChainName, move: Callable[[int, int], None]) -> None:
        super().__init__()
        self.chain = chain
        self._rows: Rows = ()
        self._problems: dict[int, str] = {}
        self._move = move

    @property
    def rows(self) -> Rows:
        return self._rows

    def set_rows(self, rows: Rows) -> None:
        old = self._rows
        if rows == old:
            return
        moved = _single_move(old, rows)
        if moved is not None:
            source, destination = moved
            # Qt counts the destination before the move: below the source it is one further.
            after = destination + 1 if destination > source else destination
            self.beginMoveRows(QModelIndex(), source, source, QModelIndex(), after)
            self._rows = rows
            self.endMoveRows()
            return
        if len(rows) == len(old):
            self._rows = rows
            for i, (a, b) in enumerate(zip(old, rows, strict=True)):
                if a != b:
                    self.dataChanged.emit(self.index(i, 0), self.index(i, TIMEOUT_COLUMN))
            return
        if len(rows) == len(old) + 1:
            at = next((i for i in range(len(old)) if old[i] != rows[i]), len(old))
            if rows[:at] + rows[at + 1 :] == old:
                self.beginInsertRows(QModelIndex(), at, at)
                self._rows = rows
                self.endInsertRows()
                return
        if len(rows) == len(old) - 1:
            at = next((i for i in range(len(rows)) if old[i] != rows[i]), len(rows))
            if old[:at] + old[at + 1 :] == rows:
                self.beginRemoveRows(QModelIndex(), at, at)
                self._rows = rows
                self.endRemoveRows()
                return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def set_problems(self, problems: dict[int, str]) -> None:
        if problems == self._problems:
            return
        self._problems = problems
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, TIMEOUT_COLUMN))

    # ---- Qt model ------------------------------------------------------------------------------
    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return str(section + 1)

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemIsDragEnabled
            | Qt.ItemFlag.ItemIsDropEnabled
        )

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row: ChainRow = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == HOOK_COLUMN:
                return row.label or "(choose a source)"
            if column == KIND_COLUMN:
                return KIND_LABELS[row.kind]
            if row.kind != "user":
                return "—"
            return row.timeout.strip() or str(DEFAULT_HOOK_TIMEOUT_MS)
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.row() in self._problems:
                return self._problems[index.row()]
            if column == TIMEOUT_COLUMN and row.kind == "user" and not row.timeout.strip():
                return "The default timeout"
            return row.label if column == HOOK_COLUMN else None
        if role == Qt.ItemDataRole.FontRole and column == TIMEOUT_COLUMN and not row.timeout:
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.BackgroundRole and index.row() in self._problems:
            return QBrush(QColor(220, 60, 60, 60))
        return None

    # ---- drag and drop: a row moves inside its own chain ---------------------------------------
    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def supportedDragActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [ROW_MIME]

    def mimeData(self, indexes: Any) -> QMimeData:
        data = QMimeData()
        rows = sorted({i.row() for i in indexes if i.isValid()})
        if rows:
            data.setData(ROW_MIME, QByteArray(f"{self.chain}:{rows[0]}".encode()))
        return data

    def dropMimeData(
        self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: AnyIndex
    ) -> bool:
        if action != Qt.DropAction.MoveAction or not data.hasFormat(ROW_MIME):
            return False
        chain, _, number = bytes(data.data(ROW_MIME).data()).decode().partition(":")
        if chain != self.chain or not number.isdigit() or int(number) >= len(self._rows):
            return False
        source = int(number)
        if row < 0:
            row = parent.row() if parent.isValid() else len(self._rows)
        # ``row`` is the gap the row is dropped into; once the row is taken out, the gaps below
        # it are one fewer.
        destination = row - 1 if row > source else row
        if destination != source:
            self._move(source, destination)
        return True


class ChainRowsView(OrderedRowsView):
    """The rows with keyboard reordering: Alt+Up/Down move, Delete removes, Insert adds. Tab
    leaves the table (arrows move inside it)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabKeyNavigation(False)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setDragEnabled(True)
        self.setAcceptDrops(True)
        self.setDropIndicatorShown(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        self.verticalHeader().setDefaultSectionSize(26)
        for keys, handler in (
            (QKeySequence(Qt.Key.Key_Insert), self.add_requested.emit),
            (QKeySequence(Qt.Key.Key_Delete), self._remove_current),
            (QKeySequence("Alt+Up"), lambda: self.move_current(-1)),
            (QKeySequence("Alt+Down"), lambda: self.move_current(1)),
        ):
            shortcut = QShortcut(keys, self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(handler)

    def setModel(self, model: Any) -> None:
        super().setModel(model)
        header = self.horizontalHeader()
        header.setSectionResizeMode(HOOK_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(KIND_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(TIMEOUT_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        for changed in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            changed.connect(self._fit_rows)
        self._fit_rows()

    def _fit_rows(self, *_: Any) -> None:
        """As tall as its rows (room for one more, at least three), so the chains sit one above
        the other without inner scrolling; the editor scrolls instead."""
        model = self.model()
        rows = max(MIN_ROWS_SHOWN, (model.rowCount() if model is not None else 0) + 1)
        height = self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()
        height += rows * self.verticalHeader().defaultSectionSize()
        self.setFixedHeight(height)

    def startDrag(self, supportedActions: Qt.DropAction) -> None:
        # The model moves the row itself when it is dropped; the view's own drag would then
        # delete the source row as well.
        model = self.model()
        index = self.currentIndex()
        if model is None or not index.isValid():
            return
        drag = QDrag(self)
        drag.setMimeData(model.mimeData([index]))
        drag.exec(Qt.DropAction.MoveAction)
