"""A layered run's decisions, in the order they were made: one row per layer (an invocation, then
each step of its child), and for the selected one what was asked beside what it produced, with
its record (or why it has none) below. The contract lists the layers (``Contract.layers``)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import (
    QGroupBox,
    QSplitter,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.contract import Layer
from studio.ui.result_json_tree import JsonTreeView
from studio.ui.result_style import heading, note, steps_table, tint

COLUMNS = ("Layer", "Decision", "After request", "Sealed request")


def _short(request_id: str | None) -> str:
    return "—" if not request_id else f"{request_id[:16]}…"


class LayersView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.headline = heading()
        self.headline.setObjectName("layersHeadline")
        self.table = steps_table("layersTable", COLUMNS)
        self.table.currentItemChanged.connect(self._on_current_changed)

        self.asked_box = QGroupBox()
        self.asked = JsonTreeView(detail=False)
        QVBoxLayout(self.asked_box).addWidget(self.asked)
        self.produced_box = QGroupBox()
        self.produced_box.setObjectName("producedBox")
        self.produced = JsonTreeView(detail=False)
        QVBoxLayout(self.produced_box).addWidget(self.produced)
        self.record_box = QGroupBox()
        self.record = JsonTreeView(detail=False)
        self.record_note = note()
        self.record_note.setObjectName("layerRecordNote")
        record_layout = QVBoxLayout(self.record_box)
        record_layout.addWidget(self.record_note)
        record_layout.addWidget(self.record)

        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(self.asked_box)
        sides.addWidget(self.produced_box)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(sides)
        split.addWidget(self.record_box)
        split.setSizes([110, 300, 160])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.headline)
        layout.addWidget(split, 1)
        self.layers: list[Layer] = []

    def show_layers(self, layers: list[Layer]) -> None:
        self.layers = list(layers)
        self.table.clear()
        accepted = sum(1 for layer in self.layers if not layer.failed)
        failed = [layer.name for layer in self.layers if layer.failed]
        words = f"{accepted} of {len(self.layers)} decisions accepted"
        self.headline.setText(words + (f"; {failed[0]} failed" if failed else ""))
        bold = QFont(self.table.font())
        bold.setBold(True)
        for layer in self.layers:
            before, sealed = layer.links
            item = QTreeWidgetItem([layer.name, layer.status, _short(before), _short(sealed)])
            item.setToolTip(2, before or "")
            item.setToolTip(3, sealed or "")
            if layer.failed:
                color = tint("error", 60)
                for col in range(len(COLUMNS)):
                    if color is not None:
                        item.setBackground(col, QBrush(color))
                    item.setFont(col, bold)
            self.table.addTopLevelItem(item)
        failing = [i for i, layer in enumerate(self.layers) if layer.failed]
        first = self.table.topLevelItem(failing[0] if failing else 0)
        if first is not None:
            self.table.setCurrentItem(first)

    def select(self, row: int) -> None:
        item = self.table.topLevelItem(row)
        if item is not None:
            self.table.setCurrentItem(item)

    def _on_current_changed(self, current: QTreeWidgetItem | None, _previous: Any) -> None:
        row = self.table.indexOfTopLevelItem(current) if current is not None else -1
        if not 0 <= row < len(self.layers):
            return
        layer = self.layers[row]
        self.asked_box.setTitle(f"{layer.name}: {layer.asked_title}")
        self.asked.set_value(layer.asked)
        self.asked.expand_all()
        self.produced_box.setTitle(layer.produced_title)
        self.produced.set_value(layer.produced)
        self.produced.expand_all()
        self.produced_box.setEnabled(layer.produced is not None)
        self.record_box.setTitle(layer.record_title)
        self.record.set_value(layer.record if layer.record is not None else {})
        self.record.expand_all()
        self.record.setVisible(layer.record is not None)
        self.record_note.setText(layer.record_note)
        self.record_note.setVisible(bool(layer.record_note))
