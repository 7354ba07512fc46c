"""A small cache keyed by an object's identity, for work on values read once and used often
(a sample's request, hashed or encoded once however many times it runs)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class IdentityCache(Generic[T]):
    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: dict[tuple[int, Hashable], tuple[Any, T]] = {}

    def get(self, obj: Any, compute: Callable[[], T], extra: Hashable = None) -> T:
        key = (id(obj), extra)
        cached = self._entries.get(key)
        if cached is not None and cached[0] is obj:
            return cached[1]
        value = compute()
        if len(self._entries) >= self._size:
            self._entries.pop(next(iter(self._entries)))
        # The entry holds the object, so its id cannot be reused while it is cached.
        self._entries[key] = (obj, value)
        return value
