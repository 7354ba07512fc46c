"""A table whose rows the user adds, removes and reorders from the keyboard: the requests it
sends, which the editor owning the rows carries out through its undo stack."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTableView


class OrderedRowsView(QTableView):
    add_requested = Signal()
    remove_requested = Signal(int)
    move_requested = Signal(int, int)

    def _remove_current(self) -> None:
        if self.currentIndex().isValid():
            self.remove_requested.emit(self.currentIndex().row())

    def move_current(self, step: int) -> None:
        """Asks to move the current row ``step`` places down (up when negative), within the
        table."""
        index = self.currentIndex()
        model = self.model()
        if not index.isValid() or model is None:
            return
        target = index.row() + step
        if 0 <= target < model.rowCount():
            self.move_requested.emit(index.row(), target)
