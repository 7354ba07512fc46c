"""A JSON text laid out again, one member or element per line, changing nothing but the
whitespace between its tokens: strings, numbers and literals stay exactly as written (escapes,
``1.10``, ``1e400``, a key given twice), which parsing and writing the value again would not
keep.

An editor lays a line of megabytes out slowly (a minified request, as a provider's client sends
it): the same text indented is quick to show and to edit."""

from __future__ import annotations

import re

INDENT = "  "
# A line longer than this is worth laying out again before the editor shows it.
LONG_LINE = 100_000

_TOKEN = re.compile(
    r'(?P<string>"[^"\\\n]*(?:\\.[^"\\\n]*)*")'
    r"|(?P<open>[{\[])"
    r"|(?P<close>[}\]])"
    r"|(?P<comma>,)"
    r"|(?P<colon>:)"
    r"|(?P<space>[ \t\n\r]+)"
    r"|(?P<word>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?![0-9A-Za-z_.+-])"
    r"|true(?![0-9A-Za-z_])|false(?![0-9A-Za-z_])|null(?![0-9A-Za-z_]))"
)
_CLOSING = {"{": "}", "[": "]"}


def longest_line(text: str) -> int:
    """The length of ``text``'s longest line, in characters."""
    longest = 0
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            return max(longest, len(text) - start)
        longest = max(longest, end - start)
        start = end + 1


def reindent(text: str, unit: str = INDENT) -> str | None:
    """``text`` with each member and element on a line of its own, indented by ``unit`` per
    level, as ``json.dumps(..., indent=2)`` lays a value out. None when ``text`` is not one
    JSON value, token by token: then no layout is safe to change."""
    out: list[str] = []
    stack: list[str] = []
    # What may come next: a value (at the start, after "[", "," or ":"), or what follows one.
    want_value = True
    after_open = False
    line_due = False
    done = False
    at = 0
    size = len(text)
    match = _TOKEN.match
    while at < size:
        found = match(text, at)
        if found is None:
            return None
        at = found.end()
        kind = found.lastgroup
        if kind == "space":
            continue
        if done:
            return None
        token = found.group()
        if kind in ("string", "word", "open"):
            if not want_value:
                return None
            if line_due:
                out.append("\n" + unit * len(stack))
            out.append(token)
            if kind == "open":
                stack.append(_CLOSING[token])
                after_open = line_due = True
                continue
            want_value = after_open = line_due = False
        elif kind == "close":
            if not stack or stack[-1] != token or (want_value and not after_open):
                return None
            stack.pop()
            out.append(token if after_open else "\n" + unit * len(stack) + token)
            want_value = after_open = line_due = False
        elif kind == "comma":
            if want_value or not stack:
                return None
            out.append(",")
            want_value = line_due = True
            after_open = False
        else:  # colon
            if want_value or not stack or stack[-1] != "}":
                return None
            out.append(": ")
            want_value = True
            after_open = line_due = False
        done = not stack
    if not done:
        return None
    if text.endswith("\n"):
        out.append("\n")
    return "".join(out)
