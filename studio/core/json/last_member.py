"""Reading a JSON object and keeping the exact text of its last member's value.

A worker writes its result as a small envelope with the (possibly very large) value last. The
value's own text lets a caller compare it with text it already has, byte for byte, instead of
comparing or re-serialising the values.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.scanner import make_scanner
from typing import Any

# The scanner json.loads itself uses: reads one value at an index, says where it ends.
_scan: Callable[[str, int], tuple[Any, int]] = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def loads_with_last_member(data: bytes, key: str) -> tuple[Any, bytes | None]:
    """``json.loads(data)``, and the UTF-8 text of the value of member ``key`` when ``data`` is
    a compact JSON object (no whitespace between tokens) whose last member is ``key``; None
    otherwise. Raises what ``json.loads`` raises."""
    try:
        text = data.decode("utf-8", "surrogatepass")
        read = _compact_object(text)
    except (UnicodeDecodeError, StopIteration, ValueError):
        read = None
    if read is None:
        return json.loads(data), None
    value, last, start = read
    if last != key:
        return value, None
    head = len(text[:start].encode("utf-8", "surrogatepass"))
    return value, data[head:-1]


def _compact_object(text: str) -> tuple[dict[str, Any], str, int] | None:
    """The object ``text`` holds, its last member's key and where that member's value starts;
    None when ``text`` is not one compact, non-empty object."""
    if not text.startswith('{"'):
        return None
    value: dict[str, Any] = {}
    end = len(text)
    i = 1
    while True:
        if text[i : i + 1] != '"':
            return None
        key, i = _scan(text, i)
        if text[i : i + 1] != ":":
            return None
        start = i + 1
        # Later duplicates replace earlier ones in place, as json.loads does.
        value[key], i = _scan(text, start)
        mark = text[i : i + 1]
        if mark == "," and i + 1 < end:
            i += 1
            continue
        if mark == "}" and i + 1 == end:
            return value, key, start
        return None
