"""The bar above a sample whose file has a line too long for the editor to lay out quickly (a
minified request, say): it says the text is shown indented, what that changes, and offers the
file's own layout."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from studio.ui.samples.notice_bar import NoticeBar


class LayoutNotice(NoticeBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("sampleLayoutNotice", parent)
        self.as_written_button = self.add_button(
            "Show as written",
            "Show the file's own layout; the editor takes seconds to lay out a line this long",
        )
        self.ok_button = self.add_button("OK", "Keep it indented and close this bar")

    def show_notice(self, where: str, longest: int) -> None:
        """Say that ``where``, whose longest line has ``longest`` characters, is shown indented."""
        self.label.setText(
            f"{where} has a line of {longest:,} characters. It is shown indented (only spaces "
            "and line breaks differ); the file changes only if you save."
        )
        self.show()
