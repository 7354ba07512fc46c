"""The cycle collector held off while the engine reads a large result.

Reading a worker's result of several megabytes makes a great many containers, none of them
garbage. Left on, the collector passes over the half-built value again and again, and the
objects it promotes along the way soon set off a pass over the whole heap. Paused, the new
objects meet the collector once, afterwards, as young objects.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection while the block runs (in any thread: the collector is the
    process's); the collector's own setting is restored when the last holder leaves."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()
