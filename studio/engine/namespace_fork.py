"""``os.fork`` into fresh namespaces: the child of one system call starts in them, as the first
process (pid 1) of its own PID namespace when one is asked for.

``unshare`` cannot do that for a PID namespace: the caller stays where it is and only its next
child enters the new one, so a process would have to be made only to make that child and wait
for it. A fork of a big interpreter costs the processor (its page tables copied, each page it
then writes copied again, all of it taken apart when it ends): each process saved is worth it.

The child is made by ``clone3`` (``clone`` where a filter refuses ``clone3``), bracketed by the
interpreter's own before- and after-fork work as ``os.fork`` brackets ``fork``, with the
interpreter's lock held throughout. Unlike ``fork``, the C library does not learn the child's
thread id: the child must not signal its own threads by their ``pthread_t`` (the process that
runs a hook is forked by ``os.fork`` from this child, and knows its own).
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

CLONE_PARENT = 0x00008000
"""The child is its caller's parent's child, as if its parent had forked it."""

_SYS_CLONE3 = 435
# The classic clone, for where a system-call filter refuses clone3 (a container's, say). With
# no stack and no thread-id pointers the order of its other arguments does not matter.
_SYS_CLONE = {"x86_64": 56, "aarch64": 220, "riscv64": 220}.get(os.uname().machine)


class _CloneArgs(ctypes.Structure):
    """The first version of clone3's argument structure."""

    _fields_ = [
        (name, ctypes.c_uint64)
        for name in (
            "flags",
            "pidfd",
            "child_tid",
            "parent_tid",
            "exit_signal",
            "stack",
            "stack_size",
            "tls",
        )
    ]


class _Clone:
    """One set of flags, its arguments made once: a child writes to every page of its parent's
    that it touches (a copy of each), and each object made per call is more of them."""

    def __init__(self, flags: int) -> None:
        # A child given to the caller's parent signals it as the caller would (clone3 takes no
        # signal of its own then).
        exit_signal = 0 if flags & CLONE_PARENT else signal.SIGCHLD
        self.args = _CloneArgs(flags=flags, exit_signal=exit_signal)
        self.call: tuple[object, ...] = (
            ctypes.c_long(_SYS_CLONE3),
            ctypes.byref(self.args),
            ctypes.c_size_t(ctypes.sizeof(self.args)),
        )
        self.classic: tuple[object, ...] | None = (
            (
                ctypes.c_long(_SYS_CLONE),
                ctypes.c_ulong(flags | signal.SIGCHLD),
                None,
                None,
                None,
                None,
            )
            if _SYS_CLONE is not None
            else None
        )


_clones: dict[int, _Clone] = {}

if sys.platform.startswith("linux"):
    # A PyDLL call keeps the interpreter's lock, as os.fork keeps it across fork().
    _syscall: Callable[..., int] = ctypes.PyDLL(None, use_errno=True).syscall
    _syscall.restype = ctypes.c_long  # type: ignore[attr-defined]
    _before: Callable[[], Any] = ctypes.pythonapi.PyOS_BeforeFork
    _after_in_child: Callable[[], Any] = ctypes.pythonapi.PyOS_AfterFork_Child
    _after_in_parent: Callable[[], Any] = ctypes.pythonapi.PyOS_AfterFork_Parent


def fork(flags: int) -> int:
    """Fork, the child in the namespaces of ``flags`` (``CLONE_NEW*``); 0 in the child, its pid
    in the parent. Raises OSError where the kernel refuses."""
    if not sys.platform.startswith("linux"):
        raise OSError(errno.ENOSYS, "namespaces need Linux")
    clone = _clones.get(flags)
    if clone is None:
        clone = _clones[flags] = _Clone(flags)
    _before()
    pid = _syscall(*clone.call)
    if pid == 0:
        _after_in_child()
        return 0
    if pid == -1 and clone.classic is not None and ctypes.get_errno() == errno.ENOSYS:
        pid = _syscall(*clone.classic)
        if pid == 0:
            _after_in_child()
            return 0
    code = ctypes.get_errno()
    _after_in_parent()
    if pid < 0:
        raise OSError(code, os.strerror(code))
    return pid
