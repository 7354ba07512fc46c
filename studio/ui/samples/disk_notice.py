"""The bar above a sample with unsaved edits whose file changed or went away on disk: it says so
and offers to reload the file or keep the edits."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget


class DiskNotice(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sampleNotice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.reload_button = QToolButton()
        self.reload_button.setText("Reload from disk")
        self.reload_button.setToolTip("Discard your edits and show the file as it is now")
        self.keep_button = QToolButton()
        self.keep_button.setText("Keep my edits")
        self.keep_button.setToolTip("Keep editing; saving replaces the file on disk")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.reload_button)
        layout.addWidget(self.keep_button)
        self.hide()

    def show_notice(self, where: str, kind: str) -> None:
        """Say that the file ``where`` was ``"deleted"`` or ``"changed"`` outside the studio."""
        if kind == "deleted":
            self.label.setText(
                f"{where} was deleted outside the studio. Your edits are kept; "
                "Save writes the file again."
            )
            self.reload_button.hide()
            self.keep_button.setText("OK")
        else:
            self.label.setText(f"{where} changed outside the studio while you have unsaved edits.")
            self.reload_button.show()
            self.keep_button.setText("Keep my edits")
        self.show()

    def set_colours(self, window: QColor, warning: QColor) -> None:
        """A background of ``window`` tinted with a fifth of ``warning``."""
        palette = self.palette()
        mixed = QColor(
            (window.red() * 4 + warning.red()) // 5,
            (window.green() * 4 + warning.green()) // 5,
            (window.blue() * 4 + warning.blue()) // 5,
        )
        palette.setColor(QPalette.ColorRole.Window, mixed)
        self.setPalette(palette)
