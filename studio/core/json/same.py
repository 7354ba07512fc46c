"""Whether two JSON values would be written as the same JSON text."""

from __future__ import annotations

from typing import Any


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON text would be: types count (1 is not 1.0 is not true) and so does key order.
    A loop, not recursion, so a config nested thousands of levels deep compares too."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if list(x) != list(y):
                return False
            pending.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=True))
        elif isinstance(x, float):
            if repr(x) != repr(y):  # 0.0 and -0.0 are written differently
                return False
        elif x != y:
            return False
    return True
