"""A hook's returned JSON text read the way the Python workers' results are: text sent back
exactly as it went is not read at all, an object sent back with some of its members unchanged
takes those very members, and the rest of a large text is read in pieces.

One call of the C parser over a result of several megabytes holds Python's interpreter lock for
tens of milliseconds, the window's thread included; read in pieces, the lock is let go between
them. Whatever cannot be read this way (not UTF-8 JSON, NaN, a syntax error) is left to the
caller's own plain read, so its errors stay the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from studio.engine.shared_members import read_sharing

IN_PIECES_FROM = 256 << 10
"""A text this long is read in pieces when the runtime is asked to; a shorter one is read in
one call, which holds the interpreter lock for well under a millisecond."""
PIECES_DEPTH = 2
"""A request's members and the items of each: a piece is one message (or tool) at most, read in
well under a millisecond; walking deeper in Python would cost more than the parse itself."""


def read_returned(
    text: bytes,
    *,
    echo: bytes | memoryview | None,
    echo_members: Mapping[str, tuple[str, Any]] | None,
    in_pieces: bool,
) -> tuple[bool, Any] | None:
    """(True, None) when ``text`` is exactly ``echo``; (False, value) when read sharing
    ``echo_members`` or in pieces; None when it is to be read as plain JSON instead."""
    if echo is not None and len(text) == len(echo) and text == echo:
        return True, None
    shares = bool(echo_members) and text.startswith(b"{")
    if not shares and not (in_pieces and len(text) >= IN_PIECES_FROM):
        return None
    # A text that starts with '{' or '[' has no byte-order mark and no zero byte in its first
    # two: json.loads reads it as UTF-8, keeping a lone surrogate as one.
    if not text.startswith((b"{", b"[")):
        return None
    depth = PIECES_DEPTH if in_pieces else 0
    read = read_sharing(text, 0, (), echo_members or {}, depth=depth, cut=shares)
    return None if read is None else (False, read[0])
