"""JSON values as a test reads them: a pointer into a value, equality, and ``contains``.

Equality is JSON's, not Python's: ``true`` is not ``1`` and ``1`` is ``1.0``; objects are equal
whatever the order of their keys.
"""

from __future__ import annotations

import json
from typing import Any

from studio.core.json.locate import parse_pointer
from studio.core.json.values import is_number

MISSING: Any = object()
"""What a pointer leads to when nothing is there."""


def resolve(value: Any, pointer: str) -> Any:
    """The value at ``pointer`` (RFC 6901) in ``value``, or :data:`MISSING`."""
    current = value
    for part in parse_pointer(pointer):
        if isinstance(current, dict):
            if part not in current:
                return MISSING
            current = current[part]
        elif isinstance(current, list):
            if not part.isdigit() or (part != "0" and part.startswith("0")):
                return MISSING
            index = int(part)
            if index >= len(current):
                return MISSING
            current = current[index]
        else:
            return MISSING
    return current


def json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) or is_number(b):
        return is_number(a) and is_number(b) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict) and a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    return type(a) is type(b) and a == b


def json_contains(actual: Any, part: Any) -> bool:
    """A string holds ``part`` as a substring; an array holds an element equal to ``part``; an
    object holds every member of ``part`` (an object) with an equal value."""
    if isinstance(actual, str):
        return isinstance(part, str) and part in actual
    if isinstance(actual, list):
        return any(json_equal(item, part) for item in actual)
    if isinstance(actual, dict):
        return isinstance(part, dict) and all(
            key in actual and json_equal(actual[key], value) for key, value in part.items()
        )
    return False


def shown(value: Any, limit: int = 160) -> str:
    """A value in a message: its JSON text, cut at ``limit`` characters."""
    if value is MISSING:
        return "nothing (absent)"
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
