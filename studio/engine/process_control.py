"""Process isolation for workers: own session, limits, and ending every process a worker started.

On Linux a worker is a child subreaper, so whatever it starts stays its descendant even after a
double fork, and the fork server is one too, so a dead worker's orphans come back to it to be
ended. Elsewhere the process group is the boundary.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_IS_LINUX = sys.platform.startswith("linux")
_libc = ctypes.CDLL(None, use_errno=True) if _IS_LINUX else None


def _prctl(option: int, value: int) -> None:
    if _libc is not None:
        _libc.prctl(option, value, 0, 0, 0)


def max_fd() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 65536


def become_reaper() -> None:
    """Adopt the orphans of the processes below this one (the fork server)."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(parent: int) -> None:
    """Killed when ``parent`` ends, from the first moment after the fork rather than once the
    worker is set up. A parent that ended before the signal was asked for would never send it:
    then this process ends now. Until here it is in its parent's process group, which the engine
    kills as a whole, so that a process stopped before this point does not outlive its server."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent_pid() != parent:
        os._exit(0)


def parent_pid() -> int:
    """This process's parent as ``/proc`` numbers it: from inside a PID namespace of its own,
    ``getppid`` says 0 for a parent outside it, whether that is the original one or a reaper."""
    parent = os.getppid()
    if parent or not _IS_LINUX:
        return parent
    try:
        fd = os.open("/proc/self/stat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            return int(os.read(fd, 4096).rsplit(b")", 1)[1].split()[1])
        finally:
            os.close(fd)
    except (OSError, IndexError, ValueError):
        return parent


def become_worker() -> None:
    """A session of its own, death with the fork server, and adoption of its own orphans."""
    os.setsid()
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def limit_memory(memory_bytes: int) -> None:
    if memory_bytes > 0:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux); empty where the kernel does not say."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.extend(int(p) for p in f.read().split())
        except OSError:
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` now (Linux), nearest first."""
    found: list[int] = []
    queue = [pid]
    while queue:
        children = children_of(queue.pop(0))
        found.extend(children)
        queue.extend(children)
    return found


_STOPPING = sum(
    1 << (sig - 1) for sig in (signal.SIGSTOP, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)
)
_KILLED = 1 << (signal.SIGKILL - 1)
_PF_EXITING = 0x4


def _proc_file(pid: int, name: str) -> bytes:
    fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def _field(status: bytes, name: bytes) -> bytes:
    """The value of line ``name:`` of a ``/proc`` status file."""
    start = status.index(b"\n" + name + b":") + len(name) + 2
    end = status.find(b"\n", start)
    return status[start : end if end >= 0 else len(status)].strip()


def _state(pid: int) -> tuple[bytes, int] | None:
    """The state letter of ``pid`` and the signals pending for it; None when it is unknown."""
    try:
        status = _proc_file(pid, "status")
        state = _field(status, b"State")[:1]
        pending = int(_field(status, b"SigPnd"), 16) | int(_field(status, b"ShdPnd"), 16)
    except (OSError, IndexError, ValueError):
        return None
    return state, pending


def stopped(pid: int) -> bool:
    """Whether ``pid`` is stopped (SIGSTOP, or traced), or about to be: a stop signal sent to a
    sleeping process is pending until it next runs. False when it is gone or unknown."""
    found = _state(pid)
    return found is not None and (found[0] in (b"T", b"t") or bool(found[1] & _STOPPING))


def stopped_or_ending(pid: int) -> bool:
    """Whether ``pid`` is stopped, or killed but not yet gone, or gone. A killed process still
    takes what is sent to it until it has closed its descriptors: first with the kill pending,
    then while the kernel takes it apart (its exiting flag)."""
    found = _state(pid)
    if found is None:
        return True
    state, pending = found
    if state in (b"T", b"t", b"Z", b"X") or pending & (_STOPPING | _KILLED):
        return True
    try:
        flags = int(_proc_file(pid, "stat").rsplit(b")", 1)[1].split()[6])
    except (OSError, IndexError, ValueError):
        return True
    return bool(flags & _PF_EXITING)


def has_exited(pid: int) -> bool:
    """Whether child ``pid`` has ended, without reaping it: while it is unreaped its pid, and so
    the id of the process group it leads, cannot be taken by another process."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def wait_unreaped(pid: int) -> None:
    """Block until child ``pid`` has ended, leaving it unreaped (see :func:`has_exited`)."""
    while True:
        try:
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            return
        except InterruptedError:
            continue
        except ChildProcessError:
            return


def kill_group(leader: int) -> None:
    """SIGKILL every process of the group ``leader`` made, stopped ones included."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal.SIGKILL)


def group_members(leader: int) -> list[int]:
    """The processes in the group ``leader`` made (Linux); empty where the kernel does not say."""
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                group = int(f.read().rsplit(b")", 1)[1].split()[2])
        except (OSError, IndexError, ValueError):
            continue
        if group == leader:
            found.append(int(entry))
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL a worker's process group, and the worker itself if it has no group yet."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def end_descendants(deadline_s: float = 2.0) -> int:
    """Kill and reap every process this one started, however deep; returns how many."""
    try:
        # No child at all, running or not: nothing below (this process adopts its orphans).
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return 0
    me = os.getpid()
    ended = 0
    limit = time.monotonic() + deadline_s
    while time.monotonic() < limit:
        children = children_of(me)
        if not children:
            break
        for child in children:
            kill_tree(child)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(child, 0)
                ended += 1
    return ended
