"""A file's version as its ``stat`` tells it, for caches that reuse what they parsed from it."""

from __future__ import annotations

import os
import time

FileStamp = tuple[int, int, int]

# File times advance in clock ticks (milliseconds); within this much of a write, a second write
# of the same size may leave the same stamp.
RECENT_WRITE_NS = 200_000_000


def settled_stamp(info: os.stat_result) -> FileStamp | None:
    """(modification time, size, inode), or None while the last write is too recent to tell it
    from the next one (a modification time in the future counts as recent)."""
    if time.time_ns() - info.st_mtime_ns < RECENT_WRITE_NS:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)
