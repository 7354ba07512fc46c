"""The cycle collector held off while the engine reads a large result.

Reading a worker's result of several megabytes makes a great many containers, none of them
garbage. Left on, the collector passes over the half-built value again and again, and the
objects it promotes along the way soon set off a pass over the whole heap. Paused, the new
objects meet the collector once, afterwards, as young objects.
"""

from __future__ import annotations

import gc
from contextlib import AbstractContextManager

from studio.core.held_setting import HeldSetting


def _disable() -> bool:
    enabled = gc.isenabled()
    gc.disable()
    return enabled


def _restore(was_enabled: bool) -> None:
    if was_enabled:
        gc.enable()


_PAUSE = HeldSetting(_disable, _restore)


def collector_paused() -> AbstractContextManager[None]:
    """No cycle collection while the block runs (in any thread: the collector is the
    process's); the collector's own setting is restored when the last holder leaves."""
    return _PAUSE.held()
