"""The processes a test leaves behind, read from /proc (Linux) without the engine's help, so a
fault in the engine's own process bookkeeping cannot hide a leak."""

from __future__ import annotations

import os


def live_descendants(pid: int) -> set[int]:
    """Every descendant of ``pid`` still running; a zombie counts as ended."""
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in _children(stack.pop()):
            if _alive(child):
                found.add(child)
                stack.append(child)
    return found


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.extend(int(p) for p in f.read().split())
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
