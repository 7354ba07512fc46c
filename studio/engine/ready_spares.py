"""Spares the fork server has handed to the engine, so that a call goes straight to one.

A spare that is ready is offered to the engine with its end of the spare's channel, its pid, the
call spec whose hook it loaded ahead (none for a plain spare) and the versions of the files that
load read. The engine then sends a call to the spare itself, without waking the fork server on
the call's path, and tells the server afterwards which spare it took. The choice is the one the
server makes for calls it hands over: a spare that loaded this very hook while none of its files
has changed since, otherwise the oldest plain one. A spare that loaded a hook none of the latest
calls called (see :data:`RECENT_HOOKS`), or a version edited since, is ended; the server reaps it
and makes a new one.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from typing import TypeVar, cast

from studio.engine import process_control, source_version

RECENT_HOOKS = 4
"""Spares load ahead the hooks of this many of the latest calls' distinct hooks: a chain, an
invocation or a step with several hooks calls each of them in turn, and each call then finds a
spare that loaded its own."""

Hook = TypeVar("Hook")


def latest_hooks(hooks: list[Hook], called: Hook) -> list[Hook]:
    """``hooks`` (distinct, the latest called last) once ``called`` was called."""
    if hooks and hooks[-1] == called:
        return hooks
    return [*(hook for hook in hooks if hook != called), called][-RECENT_HOOKS:]


@dataclass
class ReadySpare:
    pid: int
    channel: socket.socket
    hook: bytes | None
    """The encoded call spec whose hook this spare loaded; None for a plain spare."""
    files: list[source_version.FileVersion]

    def close(self) -> None:
        self.channel.close()


class ReadySpares:
    """The engine's ready spares of one fork server, oldest first."""

    def __init__(self) -> None:
        self._spares: list[ReadySpare] = []
        self._hooks: list[bytes] = []
        """The encoded specs of the latest calls' distinct hooks, the latest last."""

    def pids(self) -> list[int]:
        return [spare.pid for spare in self._spares]

    def add(self, pid: int, fd: int, hook: bytes | None, files: list[list[object]]) -> None:
        versions = [cast(source_version.FileVersion, tuple(version)) for version in files]
        channel = socket.socket(fileno=fd)
        # A call is one datagram into an empty queue; never worth blocking the loop for.
        channel.setblocking(False)
        self._spares.append(ReadySpare(pid, channel, hook, versions))

    def forget(self, pid: int) -> None:
        """The spare is gone (the server reaped it): drop its channel."""
        for spare in [s for s in self._spares if s.pid == pid]:
            self._spares.remove(spare)
            spare.close()

    def clear(self) -> None:
        spares, self._spares = self._spares, []
        for spare in spares:
            spare.close()

    def _end(self, spare: ReadySpare) -> None:
        self._spares.remove(spare)
        process_control.kill_tree(spare.pid)
        spare.close()

    def take(self, call: bytes) -> ReadySpare | None:
        """The spare for ``call`` (an encoded spec), no longer held here; None when none fits.
        Spares that loaded a hook none of the latest calls called go, as the fork server ends
        its own."""
        self._hooks = latest_hooks(self._hooks, call)
        for spare in [s for s in self._spares if s.hook is not None and s.hook not in self._hooks]:
            self._end(spare)
        for spare in [s for s in self._spares if s.hook == call]:
            if source_version.unchanged(spare.files):
                self._spares.remove(spare)
                return spare
            self._end(spare)  # it loaded a version edited since
        for spare in self._spares:
            if spare.hook is None:
                self._spares.remove(spare)
                return spare
        return None

    def hand_over(self, call: bytes, fds: list[int], *, sandboxed: bool) -> int | None:
        """Send ``call`` and its descriptors straight to a ready spare; the pid that runs it, or
        None when no spare can take it (the fork server is then asked). ``sandboxed``: hooks
        run in PID namespaces of their own, where no spare is theirs to stop."""
        while (spare := self.take(call)) is not None:
            try:
                if not sandboxed and process_control.stopped_or_ending(spare.pid):
                    # Stopped or killed by a hook run without the sandbox: it would never
                    # answer, or die with the call.
                    process_control.kill_tree(spare.pid)
                    continue
                try:
                    socket.send_fds(spare.channel, [call], fds)
                except OSError:
                    process_control.kill_tree(spare.pid)
                    continue
                return spare.pid
            finally:
                # The spare's own end keeps the datagram: it reads it, then closes.
                spare.close()
        return None


def close_received(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
