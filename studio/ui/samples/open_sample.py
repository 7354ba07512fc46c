"""One sample open in the editor, and how a sample's text goes into its editor: a slice per turn
of the event loop, with painting off until the last one, so each slice is laid out as it arrives
and the GUI thread is never held for the whole text."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QTextCursor, QTextDocument

from studio.core.workspace.folder import SAMPLES_DIR
from studio.core.workspace.sample_check import SampleCheck
from studio.core.workspace.sample_files import LoadedSample, Stamp, is_large
from studio.ui.json_highlighter import JsonHighlighter, JsonTheme
from studio.ui.samples.json_text_edit import JsonTextEdit

# Text goes into a document in slices of this many characters, the event loop running between.
FILL_SLICE = 256 * 1024


@dataclass(eq=False)
class OpenSample:
    """A sample shown in the editor, or kept because it has unsaved edits."""

    name: str
    path: Path
    view: JsonTextEdit | None = None  # its own editor, kept with its undo history
    highlighter: JsonHighlighter | None = None
    large: bool = False
    crlf: bool = False
    stamp: Stamp | None = None
    digest: str = ""
    check: SampleCheck | None = None
    checked_revision: int = -1
    shown_document: Any = None  # what the structured view shows: the last text that was JSON
    shown_contract: str | None = None
    notice: str | None = None  # "changed" | "deleted": the file changed while edits are unsaved
    failed: str | None = None  # why it could not be opened
    saving: bool = False
    loading: bool = False  # its text is still going into the editor

    @property
    def document(self) -> QTextDocument | None:
        """The text, once it is all in the editor."""
        return None if self.view is None or self.loading else self.view.document()

    @property
    def modified(self) -> bool:
        document = self.document
        return document is not None and document.isModified()

    @property
    def where(self) -> str:
        return f"{SAMPLES_DIR}/{self.name}.json"

    def start_loading(self, view: JsonTextEdit, loaded: LoadedSample, theme: JsonTheme) -> None:
        """``view`` is its editor from now on, empty until ``loaded``'s text is in."""
        view.setReadOnly(True)
        view.reserve_lines(loaded.lines)
        document = view.document()
        document.setUndoRedoEnabled(False)
        self.view = view
        self.loading = True
        self.large = is_large(loaded.text, loaded.lines)
        self.highlighter = None if self.large else JsonHighlighter(document, theme)

    def stop_loading(self, view: JsonTextEdit) -> None:
        """The text stopped going into ``view``, which is dropped."""
        self.loading = False
        if self.view is view:
            self.view = None
            self.highlighter = None

    def finish_loading(self, loaded: LoadedSample) -> None:
        """All of ``loaded``'s text is in the editor: it is the file as it is on disk."""
        assert self.view is not None
        document = self.view.document()
        document.setUndoRedoEnabled(True)
        document.setModified(False)
        self.loading = False
        self.crlf = loaded.crlf
        self.stamp = loaded.stamp
        self.digest = loaded.digest
        self.notice = None

    def let_go(self) -> list[Any]:
        """Forget the editor and the parsed values; the values, to be let go of."""
        values = [self.check, self.shown_document]
        self.view = None
        self.highlighter = None
        self.check = self.shown_document = None
        return values

    def take_check(self, check: SampleCheck, revision: int) -> list[Any]:
        """Keep ``check`` as the latest; what it replaces is returned, to be let go of."""
        old = [self.check]
        self.check = check
        self.checked_revision = revision
        if check.valid_json:
            # A large document's value comes only while its structure is on screen; without it
            # the structure is read again when it is next shown.
            old.append(self.shown_document)
            self.shown_document = check.document
            self.shown_contract = check.contract
        return old


@dataclass
class Fill:
    """A loaded sample's text going into its new editor."""

    opened: OpenSample
    loaded: LoadedSample
    view: JsonTextEdit
    keep_view: tuple[int, int] | None = None  # the cursor and scroll position to restore
    at: int = 0

    def restore_place(self) -> None:
        """The cursor where it was before a reload (else at the start), and the scroll bar."""
        document = self.view.document()
        cursor = QTextCursor(document)
        if self.keep_view is not None:
            cursor.setPosition(min(self.keep_view[0], max(0, document.characterCount() - 1)))
        self.view.setTextCursor(cursor)
        if self.keep_view is not None:
            self.view.verticalScrollBar().setValue(self.keep_view[1])


class TextFill(QObject):
    """Moves the text of one :class:`Fill` at a time into its editor."""

    finished = Signal(object)  # the Fill, all of its text in the editor

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.current: Fill | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)

    @staticmethod
    def takes_turns(fill: Fill) -> bool:
        """Whether the text is too long to go in at once."""
        return len(fill.loaded.text) > FILL_SLICE

    def start(self, fill: Fill) -> None:
        self.current = fill
        if not self.takes_turns(fill):
            self._step()
            return
        # Painting each slice as it arrives would cost more than the slices themselves.
        fill.view.setUpdatesEnabled(False)
        self._timer.start()

    def cancel(self) -> Fill | None:
        """Stop; the fill that was under way, if any."""
        self._timer.stop()
        fill, self.current = self.current, None
        return fill

    def _step(self) -> None:
        fill = self.current
        if fill is None:
            return
        text = fill.loaded.text
        end = min(len(text), fill.at + FILL_SLICE)
        cursor = QTextCursor(fill.view.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text[fill.at : end])
        fill.at = end
        if end >= len(text):
            self.current = None
            fill.view.setUpdatesEnabled(True)
            self.finished.emit(fill)
        else:
            self._timer.start()
