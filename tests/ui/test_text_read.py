"""A large document's text read a slice of lines per turn of the event loop: the same text as
the document's own, character for character, and nothing when the text changes meanwhile."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor, QTextDocument
from pytestqt.qtbot import QtBot

from studio.ui.samples.json_text_edit import text_of
from studio.ui.samples.text_read import READ_LINES, TextRead, joined_text


def long_document() -> tuple[QTextDocument, str]:
    # Lines with a no-break space, accents, CJK and a character Qt keeps as two units, more of
    # them than one turn reads, and no newline at the end.
    line = '  "k{}": "a\u00a0b é 東京 🙂 {}",'
    text = (
        "{\n" + "\n".join(line.format(k, k) for k in range(READ_LINES * 2 + 17)) + '\n  "z": 0\n}'
    )
    document = QTextDocument()
    document.setPlainText(text)
    return document, text


def test_the_pieces_read_make_the_documents_text(qtbot: QtBot):
    document, text = long_document()
    reader = TextRead()
    with qtbot.waitSignal(reader.done, timeout=10_000) as done:
        reader.start(document)
    revision, pieces = done.args
    assert revision == document.revision()
    assert len(pieces) == 3  # a slice of lines per turn
    assert joined_text(pieces) == text == text_of(document)


def test_an_edit_while_reading_stops_the_read(qtbot: QtBot):
    document, _ = long_document()
    first, second = TextRead(), TextRead()
    finished: list[int] = []
    first.done.connect(lambda revision, _pieces: finished.append(revision))
    first.start(document)  # its first slice is read at once, the others on later turns
    QTextCursor(document).insertText("x")
    # A read started after the edit takes as many turns; the first, had it gone on, would have
    # ended on the same turn, ahead of it.
    with qtbot.waitSignal(second.done, timeout=10_000) as done:
        second.start(document)
    assert done.args[0] == document.revision()
    assert finished == []
