"""One sample open in the editor, and how a sample's text goes into its editor: a slice per turn
of the event loop, the first painted at once (the top of a large sample is on screen within a
few hundredths of a second), the others laid out below it, so the GUI thread is never held for
long."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QPoint, QTimer, Signal
from PySide6.QtGui import QTextCursor, QTextDocument

from studio.core.workspace.folder import SAMPLES_DIR
from studio.core.workspace.sample_check import SampleCheck
from studio.core.workspace.sample_files import SampleText, Stamp, is_large
from studio.ui.json_highlighter import JsonHighlighter, JsonTheme
from studio.ui.samples.json_text_edit import JsonTextEdit

# A text longer than this goes into its editor in slices, the event loop running between.
FILL_SLICE = 256 * 1024
# The first slice: more than a screenful, small enough to be on screen within a few milliseconds.
FIRST_SLICE = 16 * 1024
# Each later slice is sized from the time the one before took, to take about this long: a
# shared, busy machine lays text out at very different speeds from one moment to the next.
SLICE_SECONDS = 0.012
MOST_SLICE = 512 * 1024


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
    # Its file has a line too long to lay out quickly, of this many characters: it is shown
    # indented instead (0: shown as written).
    laid_out_from: int = 0
    as_written: bool = False  # the user asked for the file's own layout, however slow
    layout_seen: bool = False  # the user closed the bar that says it is shown indented

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

    def start_loading(self, view: JsonTextEdit, loaded: SampleText, theme: JsonTheme) -> None:
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

    def finish_loading(self, loaded: SampleText) -> None:
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
    loaded: SampleText
    view: JsonTextEdit
    keep_view: tuple[int, int] | None = None  # the cursor and scroll position to restore
    at: int = 0
    next_slice: int = FIRST_SLICE
    painting_held: bool = False  # once its top was painted, until the user scrolls
    check: SampleCheck | None = None  # the check of the text, once it is all in

    def restore_place(self) -> None:
        """The cursor at the start (or, after a reload, where it was, with the scroll bar). When
        the user scrolled while the text went in (it is on screen from its first slice), the view
        stays where they took it, with the cursor on its first line."""
        view = self.view
        document = view.document()
        scrolled = view.verticalScrollBar().value() != 0  # text going in below never moves it
        cursor = QTextCursor(document)
        if scrolled:
            cursor = view.cursorForPosition(QPoint(0, 0))
            cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock)
        elif self.keep_view is not None:
            cursor.setPosition(min(self.keep_view[0], max(0, document.characterCount() - 1)))
        view.setTextCursor(cursor)
        if self.keep_view is not None and not scrolled:
            view.verticalScrollBar().setValue(self.keep_view[1])


def slice_end(text: str, start: int, size: int) -> int:
    """Where the slice of about ``size`` characters from ``start`` ends: after a line's end, so
    that no line is laid out again for each slice added to it (a minified request is one line
    of megabytes, which then goes in whole)."""
    end = start + size
    if end >= len(text):
        return len(text)
    last = text.rfind("\n", start, end)
    if last < 0:
        last = text.find("\n", end)
        if last < 0:
            return len(text)
    return last + 1


class TextFill(QObject):
    """Moves the text of one :class:`Fill` at a time into its editor."""

    finished = Signal(object)  # the Fill, all of its text in the editor
    progressed = Signal(object)  # the Fill, another slice of its text in the editor

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
        fill.view.painted_text = False
        if not self.takes_turns(fill):
            fill.next_slice = len(fill.loaded.text)
        self._step()

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
        end = slice_end(text, fill.at, fill.next_slice)
        began = time.perf_counter()
        cursor = QTextCursor(fill.view.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text[fill.at : end])
        took = time.perf_counter() - began
        size = end - fill.at
        fill.at = end
        # At most twice the last slice, so one quick moment cannot make a slice that holds the
        # thread for long.
        wanted = int(size * SLICE_SECONDS / max(took, 1e-4))
        fill.next_slice = max(FIRST_SLICE, min(MOST_SLICE, 2 * size, wanted))
        if end >= len(text):
            self.current = None
            if fill.painting_held:
                fill.view.hold_painting(False)
            self.finished.emit(fill)
        else:
            if fill.view.painted_text and not fill.painting_held:
                # Its top is on screen; the rest goes in below it, and painting the view again
                # for each slice would cost about as much as the slices.
                fill.painting_held = True
                fill.view.hold_painting(True)
            self.progressed.emit(fill)
            self._timer.start()
