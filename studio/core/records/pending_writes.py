"""Record writes that happen after a run's result is delivered, in the order the runs ended.

One thread writes them, one after another. Every read of the store waits until the writes
submitted before it are done, so what a run's caller reads next includes that run; closing the
store writes whatever is still pending first. No write is dropped: a failed one is reported on
its future.

The writes can be held back for a moment (:meth:`PendingWrites.hold`): a window showing a large
run's result would otherwise share Python's interpreter with the write of that very run, and
every call its views make into Python would wait behind it. A held write waits until the holds
in force when it was handed over are released (:meth:`PendingWrites.release`), or at most
:data:`MAX_HOLD_S` after it was handed over. Each hold is released by itself: a run shown after
another takes a hold of its own, which neither keeps back the earlier run's write nor is let go
with the earlier run's hold.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

MAX_HOLD_S = 2.0
"""The longest a write waits for :meth:`PendingWrites.release` once handed over."""

_Pending = tuple[Callable[[], Any], Future[Any], float, frozenset[int]]
"""A write, its future, when it was handed over and the holds it waits for."""


class PendingWrites:
    """A queue of writes served by one thread, started on the first write and ended by
    :meth:`close`."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._queue: deque[_Pending] = deque()
        self._changed = threading.Condition()
        self._busy = False
        self._closing = False
        self._holds: set[int] = set()
        self._numbers = itertools.count(1)
        self._thread: threading.Thread | None = None

    def submit(self, write: Callable[[], Any]) -> Future[Any]:
        """Run ``write`` on the writing thread; its future holds what it returned or raised."""
        future: Future[Any] = Future()
        with self._changed:
            if self._closing:
                raise RuntimeError("the record store is closed")
            self._queue.append((write, future, time.monotonic(), frozenset(self._holds)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                self._thread.start()
            self._changed.notify_all()
        return future

    def hold(self) -> int:
        """Hold the writes handed over from now on until :meth:`release` of the number returned
        (each waits :data:`MAX_HOLD_S` at most)."""
        with self._changed:
            number = next(self._numbers)
            self._holds.add(number)
            return number

    def release(self, hold: int) -> None:
        """End the hold numbered ``hold``: the writes that waited for it alone go, in order."""
        with self._changed:
            self._holds.discard(hold)
            self._changed.notify_all()

    def let_go(self) -> None:
        """Let every write handed over so far go, whatever holds it; later ones are held as
        before."""
        with self._changed:
            self._queue = deque((w, f, t, frozenset()) for w, f, t, _ in self._queue)
            self._changed.notify_all()

    def _held_for(self) -> float | None:
        """Seconds the first write is still to wait, or None when it may start now."""
        if self._closing or not self._queue:
            return None
        _, _, handed_at, held_by = self._queue[0]
        if not held_by & self._holds:
            return None
        left = handed_at + MAX_HOLD_S - time.monotonic()
        return left if left > 0 else None

    def wait(self) -> None:
        """Return once every write submitted so far is done. From the writing thread itself (a
        write that reads the store) it returns at once."""
        if threading.current_thread() is self._thread:
            return
        with self._changed:
            self._changed.wait_for(lambda: not self._queue and not self._busy)

    def close(self) -> None:
        """Finish every pending write, then end the writing thread."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _serve(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._queue or self._closing)
                while (left := self._held_for()) is not None:
                    self._changed.wait(left)
                if not self._queue:
                    return
                write, future, _, _ = self._queue.popleft()
                self._busy = True
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(write())
                    except BaseException as exc:
                        future.set_exception(exc)
            finally:
                with self._changed:
                    self._busy = False
                    self._changed.notify_all()
