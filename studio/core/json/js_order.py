"""The order in which JavaScript lists an object's keys (``Object.keys``, ``for…in``).

Keys that are array indices (the canonical decimal text of an integer from 0 to 2^32 − 2) come
first, in numeric order; the others follow in the order they were inserted, which for a parsed
JSON object is the order of their first occurrence, as in a Python ``dict``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

MAX_ARRAY_INDEX = 2**32 - 2

K = TypeVar("K")


def array_index(key: object) -> int | None:
    """The index a key names, or None when JavaScript keeps it in insertion order."""
    if type(key) is not str or not key or len(key) > 10 or not key.isascii() or not key.isdigit():
        return None
    if key != "0" and key[0] == "0":
        return None
    number = int(key)
    return number if number <= MAX_ARRAY_INDEX else None


def js_key_order(keys: Iterable[K]) -> list[K]:
    """``keys`` (in insertion order) as JavaScript lists them."""
    indexed: list[tuple[int, K]] = []
    others: list[K] = []
    for key in keys:
        index = array_index(key)
        if index is None:
            others.append(key)
        else:
            indexed.append((index, key))
    if not indexed:
        return others
    indexed.sort(key=lambda pair: pair[0])
    return [key for _, key in indexed] + others
