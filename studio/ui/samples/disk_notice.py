"""The bar above a sample with unsaved edits whose file changed or went away on disk: it says so
and offers to reload the file or keep the edits."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from studio.ui.samples.notice_bar import NoticeBar


class DiskNotice(NoticeBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("sampleNotice", parent)
        self.reload_button = self.add_button(
            "Reload from disk", "Discard your edits and show the file as it is now"
        )
        self.keep_button = self.add_button(
            "Keep my edits", "Keep editing; saving replaces the file on disk"
        )

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
