"""Syntax colours for hook sources in the source view: keywords, strings, comments and numbers
of Python and of TypeScript/JavaScript.

A line is coloured from its text and the state the previous line ended in (inside a block
comment, a template literal or a triple-quoted string), as a ``QSyntaxHighlighter`` does.
Colours come from the same palette-aware theme as JSON (:func:`json_theme`).
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from PySide6.QtGui import QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from studio.ui.json_highlighter import LITERAL, NUMBER, PUNCTUATION, STRING, JsonTheme

KEYWORD, COMMENT = "keyword", "comment"
PYTHON, SCRIPT = "python", "script"

# Block states carried from one line to the next.
NORMAL, IN_COMMENT, IN_TEMPLATE, IN_TRIPLE_SINGLE, IN_TRIPLE_DOUBLE = 0, 1, 2, 3, 4

# One word list is easier to read and to check against the language than one word per line.
SCRIPT_KEYWORDS = frozenset(
    """abstract as async await break case catch class const continue debugger declare default
    delete do else enum export extends false finally for from function get if implements import
    in instanceof interface keyof let namespace new null of private protected public readonly
    return satisfies set static super switch this throw true try type typeof undefined var void
    while with yield""".split()  # noqa: SIM905
)
PYTHON_KEYWORDS = frozenset([*keyword.kwlist, *keyword.softkwlist]) - {"_"}

_NUMBER = r"0[xXoObB][0-9a-fA-F_]+n?|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[nj]?"
_SCRIPT_TOKEN = re.compile(
    r"""
    (?P<line_comment>//.*)
    | (?P<block_comment>/\*)
    | (?P<string>'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?)
    | (?P<template>`)
    | (?P<word>[A-Za-z_$][\w$]*)
    | (?P<number>"""
    + _NUMBER
    + r""")
    """,
    re.VERBOSE,
)
_PYTHON_TOKEN = re.compile(
    r"""
    (?P<line_comment>\#.*)
    | (?P<triple>(?i:[rbfu]{0,2})(?:'''|\"\"\"))
    | (?P<string>(?i:[rbfu]{0,2})(?:'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?))
    | (?P<word>[A-Za-z_]\w*)
    | (?P<number>"""
    + _NUMBER
    + r""")
    """,
    re.VERBOSE,
)
_TEMPLATE_END = re.compile(r"(?:[^`\\]|\\.)*`")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")

Token = tuple[int, int, str]


def language_of(path: str | Path) -> str | None:
    suffix = Path(path).suffix.lower()
    if suffix in (".py", ".pyi"):
        return PYTHON
    if suffix in (".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx"):
        return SCRIPT
    return None


def code_tokens(line: str, language: str, state: int = NORMAL) -> tuple[list[Token], int]:
    """``(start, length, kind)`` of each coloured token of one line, in UTF-16 units as Qt
    counts them, and the state the line ends in."""
    tokens: list[Token] = []
    if language == SCRIPT:
        state = _script_tokens(line, state, tokens)
    elif language == PYTHON:
        state = _python_tokens(line, state, tokens)
    if tokens and not line.isascii() and _ASTRAL.search(line):
        tokens = [_utf16(line, start, length, kind) for start, length, kind in tokens]
    return tokens, state


def _script_tokens(line: str, state: int, tokens: list[Token]) -> int:
    pos = 0
    while pos < len(line):
        if state == IN_COMMENT:
            end = line.find("*/", pos)
            stop = len(line) if end < 0 else end + 2
            tokens.append((pos, stop - pos, COMMENT))
            pos, state = stop, IN_COMMENT if end < 0 else NORMAL
            continue
        if state == IN_TEMPLATE:
            m = _TEMPLATE_END.match(line, pos)
            stop = m.end() if m else len(line)
            tokens.append((pos, stop - pos, STRING))
            pos, state = stop, NORMAL if m else IN_TEMPLATE
            continue
        m = _SCRIPT_TOKEN.search(line, pos)
        if m is None:
            break
        kind = m.lastgroup
        if kind == "block_comment":
            pos, state = m.start(), IN_COMMENT
            continue
        if kind == "template":
            tokens.append((m.start(), 1, STRING))
            pos, state = m.end(), IN_TEMPLATE
            continue
        _add(tokens, m, kind, SCRIPT_KEYWORDS)
        pos = m.end()
    return state


def _python_tokens(line: str, state: int, tokens: list[Token]) -> int:
    pos = 0
    while pos < len(line):
        if state in (IN_TRIPLE_SINGLE, IN_TRIPLE_DOUBLE):
            quote = "'''" if state == IN_TRIPLE_SINGLE else '"""'
            end = _find_unescaped(line, quote, pos)
            stop = len(line) if end < 0 else end + 3
            tokens.append((pos, stop - pos, STRING))
            pos, state = stop, state if end < 0 else NORMAL
            continue
        m = _PYTHON_TOKEN.search(line, pos)
        if m is None:
            break
        if m.lastgroup == "triple":
            tokens.append((m.start(), m.end() - m.start(), STRING))
            pos = m.end()
            state = IN_TRIPLE_SINGLE if m.group().endswith("'''") else IN_TRIPLE_DOUBLE
            continue
        _add(tokens, m, m.lastgroup, PYTHON_KEYWORDS)
        pos = m.end()
    return state


def _find_unescaped(line: str, quote: str, pos: int) -> int:
    while (at := line.find(quote, pos)) >= 0:
        backslashes = len(line[:at]) - len(line[:at].rstrip("\\"))
        if backslashes % 2 == 0:
            return at
        pos = at + 1
    return -1


def _add(tokens: list[Token], m: re.Match[str], kind: str | None, keywords: frozenset[str]) -> None:
    start, length = m.start(), m.end() - m.start()
    if kind == "line_comment":
        tokens.append((start, length, COMMENT))
    elif kind == "string":
        tokens.append((start, length, STRING))
    elif kind == "number":
        tokens.append((start, length, NUMBER))
    elif kind == "word" and m.group() in keywords:
        tokens.append((start, length, KEYWORD))


def _utf16(line: str, start: int, length: int, kind: str) -> Token:
    before = len(_ASTRAL.findall(line, 0, start))
    inside = len(_ASTRAL.findall(line, start, start + length))
    return start + before, length + inside, kind


def code_formats(theme: JsonTheme) -> dict[str, QTextCharFormat]:
    keyword = QTextCharFormat(theme.formats[LITERAL])
    keyword.setFontWeight(QFont.Weight.DemiBold)
    comment = QTextCharFormat(theme.formats[PUNCTUATION])
    comment.setFontItalic(True)
    return {
        KEYWORD: keyword,
        STRING: theme.formats[STRING],
        NUMBER: theme.formats[NUMBER],
        COMMENT: comment,
    }


class CodeHighlighter(QSyntaxHighlighter):
    """Colours a Python or TypeScript/JavaScript document; no colours for other languages."""

    def __init__(self, document: QTextDocument, theme: JsonTheme) -> None:
        super().__init__(document)
        self._formats = code_formats(theme)
        self.language: str | None = None

    def set_language(self, language: str | None) -> None:
        if language != self.language:
            self.language = language
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        if self.language is None:
            self.setCurrentBlockState(NORMAL)
            return
        previous = self.previousBlockState()
        tokens, state = code_tokens(text, self.language, previous if previous > 0 else NORMAL)
        for start, length, kind in tokens:
            self.setFormat(start, length, self._formats[kind])
        self.setCurrentBlockState(state)
