"""Python's cycle collector held off from the studio's start until its window is first painted.

The start makes many objects and frees almost none, so each collection would only walk them:
about a tenth of the time to the first paint. The hold is one holder of
:func:`studio.engine.collector.collector_paused`, so a pause of the engine's that overlaps it
keeps the collector off until both have ended."""

from __future__ import annotations

from contextlib import ExitStack

from studio.engine.collector import collector_paused

_held = ExitStack()


def pause_until_painted() -> None:
    _held.enter_context(collector_paused())


def resume_once_painted() -> None:
    """The window is painted: the collector is as it was before the start (unless another
    holder still pauses it). Nothing happens when it was not paused for the start."""
    _held.close()
