"""Record writes that happen after a run's result is delivered, in the order the runs ended.

One thread writes them. Every read of the store waits until the writes submitted before it are
done, so what a run's caller reads next includes that run; closing the store writes whatever is
still pending first. No write is dropped: a failed one is reported on its future.

Runs that come back to back are written together: the thread waits :data:`GATHER_S` after the
first write it is handed for those that follow, and writes them all at once (one transaction,
one wake-up of the thread), which costs a fraction of writing each alone. Anyone waiting for the
writes (a read, a flush, a close, :meth:`PendingWrites.hurry`) ends that wait at once. A process
killed between runs loses at most the runs of the last :data:`GATHER_S` (and those held, below).

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
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

MAX_HOLD_S = 2.0
"""The longest a write waits for :meth:`PendingWrites.release` once handed over."""

GATHER_S = 0.05
"""How long the writing thread waits, after the first write it is handed, for the writes of the
runs that follow it."""

MAX_TOGETHER = 64
"""The most writes done together; a full batch goes without waiting further."""

Item = TypeVar("Item")

Written = tuple[Any, BaseException | None]
"""What one write returned, or what it raised."""


class _Pending(Generic[Item]):
    """A write, its future, when it was handed over and the holds it waits for."""

    __slots__ = ("future", "handed_at", "held_by", "item")

    def __init__(self, item: Item, handed_at: float, held_by: frozenset[int]) -> None:
        self.item = item
        self.future: Future[Any] = Future()
        self.handed_at = handed_at
        self.held_by = held_by


class PendingWrites(Generic[Item]):
    """A queue of writes served by one thread, started on the first write and ended by
    :meth:`close`. ``write_together`` writes the items it is given, in order, and says for each
    what it returned or raised."""

    def __init__(
        self, name: str, write_together: Callable[[Sequence[Item]], Sequence[Written]]
    ) -> None:
        self._name = name
        self._write_together = write_together
        self._queue: deque[_Pending[Item]] = deque()
        self._changed = threading.Condition()
        self._busy = False
        self._closing = False
        self._waiting_first = False
        self._hurried = 0
        self._holds: set[int] = set()
        self._numbers = itertools.count(1)
        self._thread: threading.Thread | None = None

    def submit(self, item: Item) -> Future[Any]:
        """Write ``item`` on the writing thread; its future holds what the write returned or
        raised."""
        with self._changed:
            if self._closing:
                raise RuntimeError("the record store is closed")
            pending = _Pending(item, time.monotonic(), frozenset(self._holds))
            self._queue.append(pending)
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                self._thread.start()
            # While the thread gathers, a write joining the batch need not wake it.
            if self._waiting_first or len(self._queue) >= MAX_TOGETHER:
                self._changed.notify_all()
        return pending.future

    def hurry(self) -> None:
        """Write what was handed over so far without waiting for more (held writes still wait
        for their holds)."""
        with self._changed:
            self._hurried = len(self._queue)
            self._changed.notify_all()

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
            for pending in self._queue:
                pending.held_by = frozenset()
            self._changed.notify_all()

    def wait(self) -> None:
        """Return once every write submitted so far is done. From the writing thread itself (a
        write that reads the store) it returns at once."""
        if threading.current_thread() is self._thread:
            return
        with self._changed:
            self._hurried = len(self._queue)
            self._changed.notify_all()
            self._changed.wait_for(lambda: not self._queue and not self._busy)

    def close(self) -> None:
        """Finish every pending write, then end the writing thread."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _held_for(self, now: float) -> float | None:
        """Seconds the first write is still to wait for its holds, or None when it may go."""
        first = self._queue[0]
        if self._closing or not first.held_by & self._holds:
            return None
        left = first.handed_at + MAX_HOLD_S - now
        return left if left > 0 else None

    def _gathering_for(self, now: float) -> float | None:
        """Seconds left to wait for more writes to join the first, or None to write now."""
        if self._closing or self._hurried or len(self._queue) >= MAX_TOGETHER:
            return None
        left = self._queue[0].handed_at + GATHER_S - now
        return left if left > 0 else None

    def _next_batch(self) -> list[_Pending[Item]] | None:
        """The writes to do now, in order (None once closed and done); called holding the
        condition."""
        while True:
            if not self._queue:
                if self._closing:
                    return None
                self._waiting_first = True
                self._changed.wait()
                self._waiting_first = False
                continue
            now = time.monotonic()
            left = self._held_for(now)
            if left is None:
                left = self._gathering_for(now)
            if left is not None:
                self._changed.wait(left)
                continue
            batch = [self._queue.popleft()]
            while self._queue and len(batch) < MAX_TOGETHER:
                # A later write that waits for a hold the first did not waits with the rest.
                if self._held_for(now) is not None:
                    break
                batch.append(self._queue.popleft())
            self._hurried = max(0, self._hurried - len(batch))
            self._busy = True
            return batch

    def _serve(self) -> None:
        while True:
            with self._changed:
                batch = self._next_batch()
                if batch is None:
                    return
            try:
                live = [p for p in batch if p.future.set_running_or_notify_cancel()]
                try:
                    written: Sequence[Written] = self._write_together([p.item for p in live])
                except BaseException as exc:
                    written = [(None, exc)] * len(live)
                for pending, (value, error) in zip(live, written, strict=True):
                    if error is None:
                        pending.future.set_result(value)
                    else:
                        pending.future.set_exception(error)
            finally:
                with self._changed:
                    self._busy = False
                    self._changed.notify_all()
