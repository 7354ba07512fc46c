"""JSON syntax colours for a QPlainTextEdit: keys, strings, numbers, literals and punctuation.

JSON strings never span lines, so a line can be coloured on its own (:func:`json_tokens`). Two
ways to apply it share that tokenizer:

- :class:`JsonHighlighter`, a ``QSyntaxHighlighter``, for documents of ordinary size: Qt calls it
  for every line once and then for each edited line.
- :class:`VisibleHighlighter` for large documents, where colouring every line on load would hold
  the GUI thread for seconds: it colours only the lines on screen, when they come on screen, and
  remembers which revision of a line it coloured, so an edited line is coloured again.

Colours come from the widget's palette (:func:`json_theme`), so they read well on light and dark
backgrounds and follow a palette change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QObject, QPoint, QRect
from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
    QTextLayout,
)
from PySide6.QtWidgets import QPlainTextEdit

KEY, STRING, NUMBER, LITERAL, PUNCTUATION = "key", "string", "number", "literal", "punctuation"

_TOKEN = re.compile(
    r"""
    (?P<string>"[^"\\]*(?:\\.[^"\\]*)*"?)          # a string; unterminated at the line's end
    | (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    | (?P<literal>\b(?:true|false|null)\b)
    | (?P<punctuation>[{}\[\]:,])
    """,
    re.VERBOSE,
)
_COLON_NEXT = re.compile(r"\s*:")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def json_tokens(line: str) -> list[tuple[int, int, str]]:
    """``(start, length, kind)`` of each token of one line, in UTF-16 units as Qt counts them."""
    tokens: list[tuple[int, int, str]] = []
    for m in _TOKEN.finditer(line):
        kind = m.lastgroup
        assert kind is not None
        if kind == STRING and _COLON_NEXT.match(line, m.end()):
            kind = KEY
        tokens.append((m.start(), m.end() - m.start(), kind))
    if tokens and not line.isascii() and _ASTRAL.search(line):
        tokens = [_utf16(line, start, length, kind) for start, length, kind in tokens]
    return tokens


def _utf16(line: str, start: int, length: int, kind: str) -> tuple[int, int, str]:
    before = len(_ASTRAL.findall(line, 0, start))
    inside = len(_ASTRAL.findall(line, start, start + length))
    return start + before, length + inside, kind


# ---------------------------------------------------------------------------------------------
# Colours


@dataclass(frozen=True)
class JsonTheme:
    formats: dict[str, QTextCharFormat]
    error: QColor
    error_line: QColor
    warning: QColor
    jump: QColor
    dark: bool


def _blend(a: QColor, b: QColor, amount: float) -> QColor:
    """``a`` moved ``amount`` (0..1) of the way towards ``b``."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * amount),
        round(a.green() + (b.green() - a.green()) * amount),
        round(a.blue() + (b.blue() - a.blue()) * amount),
    )


def json_theme(palette: QPalette) -> JsonTheme:
    """Colours with enough contrast against the palette's base, light or dark."""
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    dark = base.lightness() < 128
    lightness, saturation = (180, 170) if dark else (88, 200)

    def hue(h: int, lighter: int = 0) -> QColor:
        return QColor.fromHsl(h, saturation, lightness + (lighter if dark else -lighter))

    colours = {
        KEY: hue(212, 10),
        STRING: hue(125, 0 if dark else 12),
        NUMBER: hue(28),
        LITERAL: hue(285, 10),
        PUNCTUATION: _blend(text, base, 0.45),
    }
    formats: dict[str, QTextCharFormat] = {}
    for kind, colour in colours.items():
        fmt = QTextCharFormat()
        fmt.setForeground(colour)
        if kind == KEY:
            fmt.setFontWeight(QFont.Weight.DemiBold)
        formats[kind] = fmt
    error = QColor.fromHsl(2, 200, 165 if dark else 110)
    warning = QColor.fromHsl(40, 220, 150 if dark else 95)
    return JsonTheme(
        formats=formats,
        error=error,
        error_line=_blend(base, error, 0.16),
        warning=warning,
        jump=_blend(base, palette.color(QPalette.ColorRole.Highlight), 0.3),
        dark=dark,
    )


# ---------------------------------------------------------------------------------------------
# Every line: QSyntaxHighlighter


class JsonHighlighter(QSyntaxHighlighter):
    """Colours the whole document, as Qt's highlighters do; for documents of ordinary size."""

    def __init__(self, document: QTextDocument, theme: JsonTheme) -> None:
        super().__init__(document)
        self._theme = theme

    def set_theme(self, theme: JsonTheme) -> None:
        self._theme = theme
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        formats = self._theme.formats
        for start, length, kind in json_tokens(text):
            self.setFormat(start, length, formats[kind])


# ---------------------------------------------------------------------------------------------
# Only the lines on screen


class VisibleHighlighter(QObject):
    """Colours the lines of ``editor`` that are on screen, as they come on screen.

    The cost of a repaint is the number of visible lines, never the size of the document. A line
    is coloured once per revision of its text (kept in the block's user state, which nothing else
    uses while this is active), so scrolling back costs nothing and an edited line is redone.
    """

    # Lines past the bottom edge coloured ahead, so a small scroll shows colour at once.
    AHEAD = 20
    # At most this many lines per pass, whatever the viewport's height.
    MOST = 600

    def __init__(self, editor: QPlainTextEdit, theme: JsonTheme) -> None:
        super().__init__(editor)
        self._editor = editor
        self._theme = theme
        self._active = False
        self._busy = False
        self._epoch = 1
        editor.updateRequest.connect(self._on_update_request)

    @property
    def active(self) -> bool:
        return self._active

    def set_active(self, active: bool) -> None:
        self._active = active
        if active:
            self._epoch = self._epoch % 15 + 1  # colour lines coloured by an earlier document anew
            self.apply()

    def set_theme(self, theme: JsonTheme) -> None:
        self._theme = theme
        self._epoch = self._epoch % 15 + 1
        self.apply()

    def _on_update_request(self, _rect: QRect, _dy: int) -> None:
        self.apply()

    def apply(self) -> int:
        """Colour the visible lines not coloured yet; how many it coloured."""
        if not self._active or self._busy:
            return 0
        self._busy = True
        try:
            return self._apply()
        finally:
            self._busy = False

    def _apply(self) -> int:
        editor = self._editor
        document = editor.document()
        height = editor.viewport().height()
        block = editor.cursorForPosition(QPoint(0, 0)).block()
        last = editor.cursorForPosition(QPoint(0, height)).block().blockNumber() + self.AHEAD
        formats = self._theme.formats
        done = 0
        seen = 0
        while block.isValid() and block.blockNumber() <= last and seen < self.MOST:
            seen += 1
            mark = block.revision() * 16 + self._epoch
            if block.userState() != mark:
                ranges = []
                for start, length, kind in json_tokens(block.text()):
                    item = QTextLayout.FormatRange()
                    item.start = start
                    item.length = length
                    item.format = formats[kind]
                    ranges.append(item)
                block.layout().setFormats(ranges)
                block.setUserState(mark)
                document.markContentsDirty(block.position(), block.length())
                done += 1
            block = block.next()
        return done
