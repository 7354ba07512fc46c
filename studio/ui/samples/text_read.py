"""A large document's text, read off its editor a few thousand lines per turn of the event loop:
read whole, the text of a sample of several megabytes holds the GUI thread for tens of
milliseconds, more on a busy machine, each time the user stops typing and it is checked."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QTextCursor, QTextDocument

# Lines read per turn: a few milliseconds' worth.
READ_LINES = 10_000


def joined_text(pieces: list[str]) -> str:
    """The text the pieces read make (Qt ends each line with a paragraph separator)."""
    return "".join(pieces).replace("\u2029", "\n")


class TextRead(QObject):
    """Reads one document at a time; ``done`` gives the document's revision and the pieces, to
    be joined (off the GUI thread) by :func:`joined_text`. An edit while it reads stops it (the
    edit brings a read of its own), or starts it again when asked."""

    done = Signal(int, object)  # the revision read, its pieces

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._document: QTextDocument | None = None
        self._revision = -1
        self._line = 0
        self._pieces: list[str] = []
        self._again_on_edit = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)

    def start(self, document: QTextDocument, again_on_edit: bool = False) -> None:
        self._again_on_edit = again_on_edit
        self._document = document
        self._revision = document.revision()
        self._line = 0
        self._pieces = []
        self._step()

    def cancel(self) -> None:
        self._timer.stop()
        self._document = None
        self._pieces = []

    def _step(self) -> None:
        document = self._document
        if document is None:
            return
        if document.revision() != self._revision:
            if self._again_on_edit:
                self.start(document, again_on_edit=True)
            else:
                self.cancel()
            return
        # From the start of a line to the start of another, so no piece ends inside a character
        # that Qt keeps as two units.
        first = document.findBlockByNumber(self._line)
        after = document.findBlockByNumber(self._line + READ_LINES)
        cursor = QTextCursor(document)
        cursor.setPosition(first.position())
        if after.isValid():
            cursor.setPosition(after.position(), QTextCursor.MoveMode.KeepAnchor)
        else:
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        self._pieces.append(cursor.selectedText())
        if after.isValid():
            self._line += READ_LINES
            self._timer.start()
            return
        pieces, self._pieces = self._pieces, []
        self._document = None
        self.done.emit(self._revision, pieces)
