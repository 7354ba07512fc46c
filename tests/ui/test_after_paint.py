"""Work posted with after_pending_paint runs once the repaint already asked for is done, after a
zero timer set at the same moment, and not at all once its owner is gone."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel

from studio.ui.after_paint import after_pending_paint


class PaintedLabel(QLabel):
    def __init__(self, log: list[str]) -> None:
        super().__init__("before")
        self.log = log

    def paintEvent(self, event) -> None:
        self.log.append(f"paint {self.text()}")
        super().paintEvent(event)


def test_the_call_comes_after_the_repaint_asked_for(qtbot):
    log: list[str] = []
    label = PaintedLabel(log)
    qtbot.addWidget(label)
    label.show()
    qtbot.waitUntil(lambda: "paint before" in log)
    label.setText("after")
    after_pending_paint(label, lambda: log.append("called"))
    QTimer.singleShot(0, lambda: log.append("zero timer"))
    qtbot.waitUntil(lambda: "called" in log)
    assert log.index("zero timer") < log.index("paint after") < log.index("called")


def test_no_call_once_the_owner_is_deleted(qtbot):
    log: list[str] = []
    gone = QLabel()
    after_pending_paint(gone, lambda: log.append("gone"))
    with qtbot.waitSignal(gone.destroyed):
        gone.deleteLater()
    kept = QLabel()
    qtbot.addWidget(kept)
    # Posted after it at the same priority: once this one is called, the first had its turn.
    after_pending_paint(kept, lambda: log.append("kept"))
    qtbot.waitUntil(lambda: "kept" in log)
    assert log == ["kept"]
