"""Room for JSON nested as deep as the reference runtimes take it.

The runtimes parse and validate documents nested a few thousand levels deep (spec: adf.md,
"Depth"); Python's JSON encoder and decoder recurse once per level and stop at the interpreter's
recursion limit (1,000), so a hook's deep but valid result would fail in the studio first.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager

from studio.core.held_setting import HeldSetting

# A few thousand levels, as the runtimes; each level costs the C encoder and decoder well under
# a kilobyte of stack, so this stays far inside a thread's 8 MB.
MAX_DEPTH = 5_000
_ROOM = MAX_DEPTH + 200


def _raise_limit() -> int:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, _ROOM))
    return before


_ROOM_HELD = HeldSetting(_raise_limit, sys.setrecursionlimit)


def deep_json() -> AbstractContextManager[None]:
    """Raise the recursion limit to ``MAX_DEPTH`` levels and more while the block runs."""
    return _ROOM_HELD.held()
