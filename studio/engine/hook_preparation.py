"""A spare worker that loads its hook before the call arrives.

The fork server asks its spares to load the hooks of the latest calls it saw (same spec; one
per hook first, see ready_spares.RECENT_HOOKS). A spare loads its hook in its own process,
inside the call's sandbox, and says which files the load read: the hook's source and every
other file of the workspace it opened or imported, each as a :mod:`source_version`. A call
goes to such a spare only when its spec is the same and none of those files has changed since;
otherwise to a spare that loads the hook when the call comes. A spare still serves exactly one
call, so nothing a module did while loading reaches another call. What the load printed is
kept and written to the call's streams before the call runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import inspect
import os
import signal
import sys
from dataclasses import dataclass, field
from types import FrameType, ModuleType

from studio.engine import source_version
from studio.engine.worker_protocol import WorkerSpec
from studio.engine.worker_runtime import HookFailure, _Worker

PREPARE_S = 5.0
"""How long a load may take ahead of its call; a slower one is loaded with its call instead."""

MAX_FILES = 200
_FIRST_FREE_FD = 10


class TooSlow(Exception):
    """The hook's load took longer than :data:`PREPARE_S`, or read too many files."""


class EditedWhileLoading(Exception):
    """A file changed while the load read it: what ran may be neither version."""


@dataclass
class Prepared:
    worker: _Worker
    label: str
    module: ModuleType | None = None
    failure: HookFailure | None = None
    """Why the load failed: the call reports it, as a call that loads the hook would."""
    files: list[source_version.FileVersion] = field(default_factory=list)
    output: tuple[int, int] = (-1, -1)
    """Memory files holding what the load wrote to stdout and stderr."""

    def replay_output(self) -> None:
        """Write what the load printed to the call's stdout and stderr (now descriptors 1, 2)."""
        for kept, fd in zip(self.output, (1, 2), strict=True):
            if kept < 0:
                continue
            os.lseek(kept, 0, os.SEEK_SET)
            while chunk := os.read(kept, 1 << 16):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            os.close(kept)
        self.output = (-1, -1)


def prepare(spec: WorkerSpec) -> Prepared:
    """Load the hook of ``spec`` now. Raises :class:`TooSlow` (the process is then spent: part
    of the module ran) when the load takes too long or reads too many files."""
    worker = _Worker(spec)
    # Modules the fork server had loaded are not read by this load: only those it adds are
    # looked up (each a realpath, a few system calls, for some two hundred modules otherwise).
    last = next(reversed(sys.modules), None)
    sys.path.insert(0, spec.workspace)
    output = (_memory_file("stdout"), _memory_file("stderr"))
    os.dup2(output[0], 1)
    os.dup2(output[1], 2)
    root = os.path.realpath(spec.workspace) + os.sep
    # Each file's version when it was first opened, before the load read it.
    opened: dict[str, source_version.FileVersion | None] = {}
    watching = [True]

    def audit(event: str, args: tuple[object, ...]) -> None:
        if watching[0] and event == "open" and isinstance(args[0], str):
            watching[0] = False  # reading the version opens the file too
            try:
                real = os.path.realpath(args[0])
                if real.startswith(root) and real not in opened:
                    opened[real] = source_version.file_version(real)
            finally:
                watching[0] = True

    sys.addaudithook(audit)
    previous = signal.signal(signal.SIGALRM, _too_slow)
    # Again and again: a module that catches the first one is stopped by the next.
    signal.setitimer(signal.ITIMER_REAL, PREPARE_S, 0.1)
    prepared = Prepared(worker, "", output=output)
    try:
        path, prepared.label = worker.resolve()
        prepared.module = worker.load(path, prepared.label)
    except HookFailure as failure:
        prepared.failure = failure
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        watching[0] = False
    if _timed_out(prepared.failure):
        raise TooSlow
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    for module in _modules_since(last):
        name = getattr(module, "__file__", None)
        if isinstance(name, str):
            opened.setdefault(os.path.realpath(name), None)
    read = sorted(name for name in opened if name.startswith(root))
    if len(read) > MAX_FILES:
        raise TooSlow
    for name in read:
        version = source_version.file_version(name)
        if opened[name] is not None and opened[name] != version:
            raise EditedWhileLoading
        if version is not None:
            prepared.files.append(version)
    if prepared.module is not None and inspect.iscoroutinefunction(
        getattr(prepared.module, spec.function, None)
    ):
        # An async hook's call needs an event loop: its modules are loaded now, not with the call.
        import asyncio  # noqa: F401
    return prepared


def _modules_since(last: str | None) -> list[ModuleType]:
    """The modules imported after ``last`` (the newest before the load), read from the end of
    ``sys.modules``, which keeps the order they came in: a spare just forked copies each page of
    the fork server's it writes to, and counting a module's reference is a write."""
    added = []
    for key in reversed(sys.modules):
        if key == last:
            break
        added.append(sys.modules[key])
    return added


def _too_slow(signum: int, frame: FrameType | None) -> None:
    raise TooSlow


def _timed_out(failure: HookFailure | None) -> bool:
    return failure is not None and failure.details.get("exception") == TooSlow.__name__


def _memory_file(name: str) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    # Above the descriptors a worker wires up (0 to 4), so wiring them cannot clobber it.
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _FIRST_FREE_FD)
    os.close(fd)
    return moved
