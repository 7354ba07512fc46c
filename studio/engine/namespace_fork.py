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
import platform
import signal
import sys

_SYS_CLONE3 = 435
# The classic clone, for where a system-call filter refuses clone3 (a container's, say). With
# no stack and no thread-id pointers the order of its other arguments does not matter.
_SYS_CLONE = {"x86_64": 56, "aarch64": 220, "riscv64": 220}.get(platform.machine())


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


if sys.platform.startswith("linux"):
    # A PyDLL call keeps the interpreter's lock, as os.fork keeps it across fork().
    _held = ctypes.PyDLL(None, use_errno=True)
    _syscall = _held.syscall
    _syscall.restype = ctypes.c_long
    _api = ctypes.pythonapi


def fork(flags: int) -> int:
    """Fork, the child in the namespaces of ``flags`` (``CLONE_NEW*``); 0 in the child, its pid
    in the parent. Raises OSError where the kernel refuses."""
    if not sys.platform.startswith("linux"):
        raise OSError(errno.ENOSYS, "namespaces need Linux")
    args = _CloneArgs(flags=flags, exit_signal=signal.SIGCHLD)
    _api.PyOS_BeforeFork()
    size = ctypes.c_size_t(ctypes.sizeof(args))
    pid = _syscall(ctypes.c_long(_SYS_CLONE3), ctypes.byref(args), size)
    if pid == -1 and ctypes.get_errno() == errno.ENOSYS and _SYS_CLONE is not None:
        classic = ctypes.c_ulong(flags | signal.SIGCHLD)
        pid = _syscall(ctypes.c_long(_SYS_CLONE), classic, None, None, None, None)
    if pid == 0:
        _api.PyOS_AfterFork_Child()
        return 0
    code = ctypes.get_errno()
    _api.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(code, os.strerror(code))
    return int(pid)
