"""Room for JSON nested as deep as the reference runtimes take it.

The runtimes parse and validate documents nested a few thousand levels deep (spec: adf.md,
"Depth"); Python's JSON encoder and decoder recurse once per level and stop at the interpreter's
recursion limit (1,000), so a hook's deep but valid result would fail in the studio first.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# A few thousand levels, as the runtimes; each level costs the C encoder and decoder well under
# a kilobyte of stack, so this stays far inside a thread's 8 MB.
MAX_DEPTH = 5_000
_ROOM = MAX_DEPTH + 200

_lock = threading.Lock()
_holders = 0
_before = 0


@contextmanager
def deep_json() -> Iterator[None]:
    """Raise the recursion limit to ``MAX_DEPTH`` levels and more while the block runs."""
    global _holders, _before
    with _lock:
        if _holders == 0:
            _before = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_before, _ROOM))
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                sys.setrecursionlimit(_before)
