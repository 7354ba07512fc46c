"""JSON text of large values written in pieces.

One call of a C encoder holds Python's interpreter lock for the whole value: tens of
milliseconds for a request of several megabytes, during which no other thread (the window's,
say) runs. Writing the outer containers here and each small member with one call gives the same
text while letting other threads in between pieces.

Two levels are walked: a request's members, then each member's items, so that a piece is one
message or one tool, written in well under a millisecond. Walking deeper costs more in Python
than the writing itself (a 5 MB request's hash: about 100 ms at three levels, 45 at two, 40 in
one call) and takes the interpreter from the window as much as it lets it in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from studio.core.json.deep import deep_json
from studio.core.json.surrogates import escape_lone_surrogates

DEPTH = 2


def compact_json(value: Any) -> str:
    """Compact JSON text, as a hook's worker writes it: no ASCII escapes, no NaN."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


_standard = compact_json


def sorted_json(value: Any) -> str:
    """Compact JSON text with sorted keys: the form a request's hash is taken of."""
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, sort_keys=True
    )


def iter_json(
    value: Any,
    *,
    sort_keys: bool = False,
    depth: int = DEPTH,
    leaf: Callable[[Any], str] | None = None,
) -> Iterator[str]:
    """Compact JSON text of ``value`` in pieces; joined, it equals one ``json.dumps`` call with
    the same options (``leaf`` writes the members, by default ``json.dumps`` compact, strict)."""
    write = leaf or (sorted_json if sort_keys else _standard)
    if depth <= 0 or not isinstance(value, dict | list) or len(value) < 2:
        yield write(value)
        return
    if isinstance(value, list):
        yield "["
        for i, item in enumerate(value):
            if i:
                yield ","
            yield from iter_json(item, sort_keys=sort_keys, depth=depth - 1, leaf=leaf)
        yield "]"
        return
    keys = sorted(value) if sort_keys else list(value)
    if not all(type(k) is str for k in keys):
        yield write(value)
        return
    yield "{"
    for i, key in enumerate(keys):
        yield ("," if i else "") + json.dumps(key, ensure_ascii=False) + ":"
        yield from iter_json(value[key], sort_keys=sort_keys, depth=depth - 1, leaf=leaf)
    yield "}"


def dumps_in_pieces(value: Any, **options: Any) -> str:
    return "".join(iter_json(value, **options))


def sha256_sorted_json(value: Any) -> str:
    """SHA-256 of the compact JSON of ``value`` with sorted keys, written in pieces."""
    digest = hashlib.sha256()
    for piece in iter_json(value, sort_keys=True):
        digest.update(piece.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def json_bytes(value: Any, in_pieces: bool = False) -> bytes:
    """``value`` as compact JSON bytes, as a hook receives it; a lone surrogate travels as its
    escape (``\\ud800``), which Python and JavaScript both read back as that code unit, where
    its raw bytes would not be UTF-8 (Node reads them as U+FFFD). ``in_pieces`` writes a large
    value in pieces (see :func:`dumps_in_pieces`)."""
    with deep_json():
        text = (
            dumps_in_pieces(value)
            if in_pieces
            else json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        )
    try:
        return text.encode()
    except UnicodeEncodeError:
        return escape_lone_surrogates(text).encode()
