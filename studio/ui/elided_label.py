"""A one-line label that never widens its window: a text longer than the room it has is drawn
with an ellipsis, and its tooltip shows the whole text."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QHelpEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolTip, QWidget

# The narrowest it gets, in average characters: enough to tell what the line is about.
MIN_CHARS = 12


class ElidedLabel(QLabel):
    """``text()`` is the whole text; only the drawing is shortened."""

    def __init__(
        self,
        text: str = "",
        parent: QWidget | None = None,
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle,
    ) -> None:
        super().__init__(text, parent)
        self._mode = mode
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        narrow = self.fontMetrics().averageCharWidth() * MIN_CHARS
        return QSize(min(hint.width(), narrow), hint.height())

    def shown_text(self) -> str:
        """The text as drawn in the label's present width."""
        width = self.contentsRect().width() - 2 * self.margin() - 2 * self.indent()
        return self.fontMetrics().elidedText(self.text(), self._mode, max(width, 0))

    @property
    def elided(self) -> bool:
        return self.shown_text() != self.text()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect().adjusted(self.margin(), self.margin(), -self.margin(), 0)
        self.style().drawItemText(
            painter,
            rect,
            int(self.alignment() | Qt.AlignmentFlag.AlignVCenter),
            self.palette(),
            self.isEnabled(),
            self.shown_text(),
            self.foregroundRole(),
        )

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and self.elided:
            assert isinstance(event, QHelpEvent)
            extra = self.toolTip()
            QToolTip.showText(
                event.globalPos(), self.text() + (f"\n{extra}" if extra else ""), self
            )
            return True
        return super().event(event)
