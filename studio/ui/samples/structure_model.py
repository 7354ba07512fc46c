"""The structured view of a sample: a read-only tree over core's outline entries, filled as its
branches are opened, and the panel that shows it and keeps the open branches open when the
sample changes."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from studio.core.json.outline import Entry

AnyIndex = QModelIndex | QPersistentModelIndex


class StructureModel(QStandardItemModel):
    """The structured view: a read-only tree whose branches are filled when opened, a batch of
    rows at a time, so a request with thousands of messages costs nothing until it is looked at."""

    POINTER_ROLE = Qt.ItemDataRole.UserRole + 1
    LAZY_ROLE = Qt.ItemDataRole.UserRole + 2
    BATCH = 200

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lazy: dict[int, Callable[[], list[Entry]] | list[Entry]] = {}
        self._keys = itertools.count(1)
        self.setHorizontalHeaderLabels(["Item", "Detail"])

    def set_entries(self, entries: list[Entry]) -> None:
        self.removeRows(0, self.rowCount())
        self._lazy.clear()
        self._append(self.invisibleRootItem(), entries)

    def _append(self, parent: QStandardItem, entries: list[Entry]) -> None:
        for entry in entries:
            label = QStandardItem(entry.label)
            detail = QStandardItem(entry.detail)
            for item in (label, detail):
                item.setEditable(False)
                item.setData(entry.pointer, self.POINTER_ROLE)
                item.setToolTip(entry.detail if len(entry.detail) > 40 else (entry.pointer or ""))
            if entry.children is not None:
                key = next(self._keys)
                label.setData(key, self.LAZY_ROLE)
                self._lazy[key] = entry.children
            parent.appendRow([label, detail])

    def _key(self, parent: AnyIndex) -> int | None:
        if not parent.isValid() or parent.column() != 0:
            return None
        key = self.itemFromIndex(parent).data(self.LAZY_ROLE)
        return key if key in self._lazy else None

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        return self._key(parent) is not None or super().hasChildren(parent)

    def canFetchMore(self, parent: AnyIndex) -> bool:
        return self._key(parent) is not None

    def fetchMore(self, parent: AnyIndex) -> None:
        key = self._key(parent)
        if key is None:
            return
        source = self._lazy[key]
        rows = source() if callable(source) else source
        batch, rest = rows[: self.BATCH], rows[self.BATCH :]
        if rest:
            self._lazy[key] = rest
        else:
            del self._lazy[key]
        self._append(self.itemFromIndex(parent), batch)


class StructureView(QWidget):
    """The tree of a sample's structure under a one-line note (why it is empty, or stale)."""

    pointer_activated = Signal(str)  # a row was activated: the JSON pointer of its value

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = StructureModel(self)
        self.tree = QTreeView()
        self.tree.setObjectName("sampleStructure")
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.tree.header().resizeSection(0, 200)
        self.tree.header().setStretchLastSection(True)
        self.note = QLabel()
        self.note.setObjectName("structureNote")
        self.note.setWordWrap(True)
        self.note.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.tree, 1)
        self.tree.activated.connect(self._on_activated)
        self.tree.doubleClicked.connect(self._on_activated)
        self.tree.expanded.connect(self._fit)

    def clear(self, note: str | None = None) -> None:
        """No rows; ``note`` says why (no note: hidden)."""
        self.model.set_entries([])
        self._set_note(note)

    def show_entries(self, entries: list[Entry], note: str | None = None) -> None:
        """Show ``entries``; the branches open before stay open where their values still are."""
        expanded = self._expanded_pointers()
        self.model.set_entries(entries)
        self._set_note(note)
        self._restore_expanded(QModelIndex(), expanded, depth=0)
        self._fit()

    def _set_note(self, note: str | None) -> None:
        if note is not None:
            self.note.setText(note)
        self.note.setVisible(note is not None)

    def _on_activated(self, index: QModelIndex) -> None:
        where = index.data(StructureModel.POINTER_ROLE)
        if where is not None:
            self.pointer_activated.emit(where)

    def _fit(self, *_: Any) -> None:
        width = max(self.tree.sizeHintForColumn(0), 160)
        self.tree.setColumnWidth(0, min(width + 12, max(240, self.tree.width() // 2)))

    def _expanded_pointers(self) -> set[str]:
        found: set[str] = set()
        model = self.model

        def walk(parent: QModelIndex) -> None:
            for row in range(model.rowCount(parent)):
                index = model.index(row, 0, parent)
                if self.tree.isExpanded(index):
                    where = index.data(StructureModel.POINTER_ROLE)
                    found.add(where if where is not None else f"#{index.data()}")
                    walk(index)

        walk(QModelIndex())
        return found

    def _restore_expanded(self, parent: QModelIndex, expanded: set[str], depth: int) -> None:
        if not expanded or depth > 6:
            return
        model = self.model
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            where = index.data(StructureModel.POINTER_ROLE)
            if (where if where is not None else f"#{index.data()}") in expanded:
                self.tree.expand(index)
                if model.canFetchMore(index):
                    model.fetchMore(index)
                self._restore_expanded(index, expanded, depth + 1)
