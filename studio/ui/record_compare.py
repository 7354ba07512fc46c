"""Two stored runs side by side: their decision records field by field in one tree, the fields
that differ highlighted (and, on request, the only ones shown)."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.records.store import StoredRecord
from studio.ui.record_detail import container_text, scalar_text
from studio.ui.record_table import outcome_label, time_label

DIFF_ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 2

_ABSENT = object()
_ABSENT_TEXT = "(absent)"
# Translucent, so that the highlight reads on light and dark palettes alike.
_CHANGED = QColor(255, 170, 0, 80)
_CHANGED_PARENT = QColor(255, 170, 0, 30)
_MUTED = QColor(128, 128, 128)


def _same(a: Any, b: Any) -> bool:
    if a is _ABSENT or b is _ABSENT:
        return a is b
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _text(value: Any) -> str:
    if value is _ABSENT:
        return _ABSENT_TEXT
    if isinstance(value, dict | list):
        return container_text(value)
    return scalar_text(value)


def _record_title(record: StoredRecord) -> str:
    summary = record.summary
    return (
        f"{time_label(summary.started_at)} · {summary.hook_label or summary.contract} · "
        f"{outcome_label(summary.status, summary.error_kind)}"
    )


class RecordCompare(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._title = QLabel()
        self._title.setObjectName("compareTitle")
        self._title.setWordWrap(True)
        self._only_differences = QCheckBox("Only differences")
        self._only_differences.setObjectName("compareOnlyDifferences")
        self._only_differences.toggled.connect(self._on_only_differences_toggled)
        self.tree = QTreeWidget()
        self.tree.setObjectName("compareTree")
        self.tree.setHeaderLabels(["Field", "A", "B"])
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        self.tree.setColumnWidth(0, 200)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self._title, 1)
        top.addWidget(self._only_differences)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        self._differences: list[str] = []
        self._run_ids: tuple[str, str] | None = None

    @property
    def run_ids(self) -> tuple[str, str] | None:
        return self._run_ids

    def differing_fields(self) -> list[str]:
        """The dotted paths of the fields whose values differ (``inspection.tools.after``)."""
        return list(self._differences)

    def show_pair(self, a: StoredRecord, b: StoredRecord) -> None:
        self._run_ids = (a.run_id, b.run_id)
        self._differences = []
        self.tree.setUpdatesEnabled(False)
        self.tree.clear()
        header = self.tree.headerItem()
        header.setToolTip(1, _record_title(a))
        header.setToolTip(2, _record_title(b))
        root = self.tree.invisibleRootItem()
        for key in self._keys(a.decision, b.decision):
            self._add(root, key, (key,), a.decision.get(key, _ABSENT), b.decision.get(key, _ABSENT))
        self._apply_filter()
        self.tree.setUpdatesEnabled(True)
        count = len(self._differences)
        self._title.setText(
            f"<b>A</b> {_record_title(a)}<br><b>B</b> {_record_title(b)}<br>"
            f"{count} field{'s' if count != 1 else ''} differ"
            if count
            else f"<b>A</b> {_record_title(a)}<br><b>B</b> {_record_title(b)}<br>"
            "The decision records are the same"
        )

    @staticmethod
    def _keys(a: Any, b: Any) -> list[str]:
        keys = list(a) if isinstance(a, dict) else []
        keys += [k for k in (b if isinstance(b, dict) else {}) if k not in keys]
        return keys

    def _add(
        self, parent: QTreeWidgetItem, key: str, path: tuple[str, ...], a: Any, b: Any
    ) -> bool:
        item = QTreeWidgetItem([key, _text(a), _text(b)])
        item.setData(0, PATH_ROLE, ".".join(path))
        item.setToolTip(1, _text(a))
        item.setToolTip(2, _text(b))
        parent.addChild(item)
        differs = False
        if isinstance(a, dict) and isinstance(b, dict):
            for child in self._keys(a, b):
                differs |= self._add(
                    item, child, (*path, child), a.get(child, _ABSENT), b.get(child, _ABSENT)
                )
            container = True
        elif isinstance(a, list) and isinstance(b, list):
            for i in range(max(len(a), len(b))):
                differs |= self._add(
                    item,
                    str(i),
                    (*path, str(i)),
                    a[i] if i < len(a) else _ABSENT,
                    b[i] if i < len(b) else _ABSENT,
                )
            container = True
        else:
            differs = not _same(a, b)
            container = False
            if differs:
                self._differences.append(".".join(path))
        item.setData(0, DIFF_ROLE, differs)
        for column, value in ((1, a), (2, b)):
            if value is _ABSENT or value is None or isinstance(value, dict | list):
                item.setForeground(column, QBrush(_MUTED))
        if differs:
            brush = QBrush(_CHANGED_PARENT if container else _CHANGED)
            font = item.font(0)
            font.setBold(True)
            for column in range(3):
                item.setBackground(column, brush)
                item.setFont(column, font)
            item.setExpanded(container)
        return differs

    def _apply_filter(self) -> None:
        only = self._only_differences.isChecked()

        def walk(item: QTreeWidgetItem) -> None:
            for i in range(item.childCount()):
                child = item.child(i)
                child.setHidden(only and not child.data(0, DIFF_ROLE))
                walk(child)

        walk(self.tree.invisibleRootItem())

    def _on_only_differences_toggled(self, _checked: bool) -> None:
        self._apply_filter()
