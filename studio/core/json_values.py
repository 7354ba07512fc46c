"""Predicates over decoded JSON values that agree with JavaScript's view of them.

JSON booleans are never numbers here, although Python's ``bool`` is a subclass of ``int``.
"""

from __future__ import annotations

import math
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1


def is_number(value: Any) -> bool:
    """A JSON number (int or float, never a bool), finite or not."""
    t = type(value)
    return (
        t is int or t is float or (isinstance(value, int | float) and not isinstance(value, bool))
    )


def is_finite_number(value: Any) -> bool:
    return is_number(value) and math.isfinite(value)


def is_whole_number(value: Any) -> bool:
    """An integer as ``Number.isInteger`` sees it: ``1000.0`` counts, ``true`` does not."""
    if type(value) is int:
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer()
    return isinstance(value, int)


def is_safe_integer(value: Any) -> bool:
    """JavaScript's ``Number.isSafeInteger``."""
    return is_whole_number(value) and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def is_object(value: Any) -> bool:
    return isinstance(value, dict)


def is_array(value: Any) -> bool:
    return isinstance(value, list)


def type_name(value: Any) -> str:
    """The JSON name of a value's type, for messages: ``got a boolean``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return "a non-finite number"
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a Python {type(value).__name__}, which is not JSON"
