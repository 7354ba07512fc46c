"""A bar above the sample's text that tells the user something about it, with buttons to act
on it, on a background tinted with the colour of what it says."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette, QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

# Narrower than this, the buttons go under the text instead of beside it, which would leave the
# text a column too narrow to read.
BUTTONS_BELOW_WIDTH = 560


class NoticeBar(QFrame):
    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self._buttons = QHBoxLayout()
        self._buttons.addStretch(1)
        self._layout = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self._layout.setContentsMargins(8, 4, 4, 4)
        self._layout.addWidget(self.label, 1)
        self._layout.addLayout(self._buttons)
        self.hide()

    def add_button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        self._buttons.addWidget(button)
        return button

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        narrow = event.size().width() < BUTTONS_BELOW_WIDTH
        direction = QBoxLayout.Direction.TopToBottom if narrow else QBoxLayout.Direction.LeftToRight
        if self._layout.direction() != direction:
            self._layout.setDirection(direction)

    def set_colours(self, window: QColor, tint: QColor) -> None:
        """A background of ``window`` tinted with a fifth of ``tint``."""
        palette = self.palette()
        mixed = QColor(
            (window.red() * 4 + tint.red()) // 5,
            (window.green() * 4 + tint.green()) // 5,
            (window.blue() * 4 + tint.blue()) // 5,
        )
        palette.setColor(QPalette.ColorRole.Window, mixed)
        self.setPalette(palette)
