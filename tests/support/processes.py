"""The processes a test leaves behind, read from /proc (Linux) without the engine's help, so a
fault in the engine's own process bookkeeping cannot hide a leak."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable


def live_descendants(pid: int) -> set[int]:
    """Every descendant of ``pid`` still running; a zombie counts as ended."""
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children(stack.pop()):
            if alive(child):
                found.add(child)
                stack.append(child)
    return found


def children(pid: int) -> list[int]:
    """The direct children of ``pid``."""
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


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs; a zombie counts as ended."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def named(pids: set[int], name: str) -> set[int]:
    """The processes among ``pids`` whose name (``comm``) is ``name``."""
    found = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == name:
                    found.add(pid)
        except OSError:
            continue
    return found


def running_with(pids: set[int], argument: str) -> set[int]:
    """The processes among ``pids`` whose command line has ``argument`` in one of its words
    (a program started with ``python -c`` is told apart by its code)."""
    found = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                words = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(argument in word for word in words):
            found.add(pid)
    return found


def wait_for(condition: Callable[[], object], timeout: float = 60) -> None:
    """Poll ``condition`` until it holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        tick.wait(0.02)


def anywhere_naming(text: str) -> set[int]:
    """Every running process on the machine whose command line has ``text`` in one of its words,
    whoever its parent is now: a process orphaned by the test's own is no longer its
    descendant."""
    pids = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}
    return {pid for pid in running_with(pids, text) if alive(pid)}
