"""A process-wide setting changed while any holder needs it, and put back by the last to leave.

The interpreter's recursion limit and its cycle collector belong to the whole process: two
threads that each change and restore one would undo each other. A held setting counts its
holders instead.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class HeldSetting(Generic[T]):
    """``change()`` runs when the first holder enters and returns what was there before;
    ``restore(before)`` runs when the last holder leaves."""

    def __init__(self, change: Callable[[], T], restore: Callable[[T], None]) -> None:
        self._change = change
        self._restore = restore
        # The lock threading.Lock is, without importing threading: the hook workers' fork server
        # imports this module, and threading makes each of its forks dearer.
        self._lock = _thread.allocate_lock()
        self._holders = 0
        self._before: T | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            if self._holders == 0:
                self._before = self._change()
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0:
                    self._restore(self._before)  # type: ignore[arg-type]
