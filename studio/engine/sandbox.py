"""Linux namespaces around hook processes, entered with nothing but the kernel and libc.

Two layers. The fork server of a workspace enters its own user, mount, IPC and (unless the
workspace allows the network) network namespace once, at start: there every mount is read-only,
the studio's state folder is an empty read-only directory (only the hook sources inside it, if
any, shown again), ``/dev`` holds only the harmless devices, and the network is a loopback of its
own. Then every call gets a fresh PID, mount, IPC and UTS namespace of its own, made while its
spare waits: a ``/proc`` that shows the hook's processes only, a private ``/tmp`` and
``/dev/shm``, and no capabilities. The namespace's first process (its init), which the fork
server forks straight into the new namespaces, only waits; the hook runs as its child, and when
the hook ends, the init ends and the kernel ends everything else the hook started.

Where the kernel refuses (no unprivileged user namespaces, a container that masks ``/proc``),
:func:`enter_workspace` says why and the studio runs hooks with process isolation alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import signal
import socket
import struct
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import NoReturn

from studio.engine import namespace_fork, process_control

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_SECUREBITS = 28
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
# noroot, no-setuid-fixup and no-ambient-raise, each locked, and keep-caps locked off: a program
# the hook runs gains no capability, even as uid 0 of the namespace.
_SECURE_BITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80
_CAPABILITY_VERSION_3 = 0x20080522

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1

_REFUSALS = {
    errno.ENOSPC: "the limit user.max_user_namespaces is reached or set to 0",
    errno.EPERM: "unprivileged user namespaces are disabled here, or a security policy forbids "
    "them",
    errno.EINVAL: "this kernel has no user namespaces",
    errno.ENOSYS: "namespaces need Linux",
}

UNFINISHED = 70
"""The exit status of a call's process whose sandbox the kernel would not finish."""

DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_STATVFS_FLAGS = (
    (os.ST_NOSUID, MS_NOSUID),
    (os.ST_NODEV, MS_NODEV),
    (os.ST_NOEXEC, MS_NOEXEC),
    (os.ST_NOATIME, MS_NOATIME),
    (os.ST_NODIRATIME, MS_NODIRATIME),
    (os.ST_RELATIME, MS_RELATIME),
)

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


class SandboxRefused(OSError):
    """The kernel (or the platform) does not let the studio build the sandbox."""


@dataclass(frozen=True)
class SandboxPlan:
    """What one workspace's hooks may see: everything read-only, but not the ``hidden`` folders
    (its state folder, the user's home), in which only the ``shown`` paths stay visible (its
    sources, the interpreters and the studio's own package)."""

    sources: str
    hidden: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    network: bool = False
    enabled: bool = True

    @property
    def kept(self) -> tuple[str, ...]:
        return (self.sources, *self.shown)

    def showing(self, *paths: str) -> SandboxPlan:
        return replace(self, shown=(*self.shown, *paths))

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> SandboxPlan:
        value = json.loads(text)
        value["hidden"] = tuple(value.get("hidden") or ())
        value["shown"] = tuple(value.get("shown") or ())
        return cls(**value)


@dataclass
class SandboxState:
    """What the fork server got: the sandbox, or the reason hooks run without it."""

    active: bool
    reason: str = ""
    network: bool = False
    writable: list[str] = field(default_factory=list)
    """Mounts the kernel would not make read-only, each with its reason."""

    def notice(self, asked: bool) -> str:
        """What the user must be told about the hooks' sandbox; empty when all is as asked."""
        if not self.active:
            return f"hooks run without the sandbox: {self.reason}" if asked else ""
        if self.writable:
            return "hooks run in the sandbox, but these stay writable: " + "; ".join(self.writable)
        return ""

    def to_json(self) -> dict[str, object]:
        return {"active": self.active, "reason": self.reason, "writable": self.writable}

    @classmethod
    def from_json(cls, value: object) -> SandboxState:
        if not isinstance(value, dict):
            return cls(False, "its launcher ended before saying so")
        return cls(
            bool(value.get("active")),
            str(value.get("reason") or ""),
            writable=[str(w) for w in value.get("writable") or []],
        )


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise SandboxRefused(code, f"{what}: {os.strerror(code)}")


def _unshare(flags: int, what: str) -> None:
    if _libc is None:
        raise SandboxRefused(errno.ENOSYS, "namespaces need Linux")
    _check(_libc.unshare(flags), what)


def _mount(
    source: str | None, target: str, kind: str | None, flags: int, data: str | None = None
) -> None:
    assert _libc is not None
    result = _libc.mount(
        source.encode() if source is not None else None,
        target.encode(),
        kind.encode() if kind is not None else None,
        ctypes.c_ulong(flags),
        data.encode() if data is not None else None,
    )
    _check(result, f"mount {target}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _mount_points() -> list[str]:
    """Every mount point of this mount namespace, parents first."""
    points = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            raw = line.split()[4]
            points.append(_unescape(raw).decode("utf-8", "surrogateescape"))
    return points


def _unescape(raw: bytes) -> bytes:
    """mountinfo writes space, tab, newline and backslash as three octal digits."""
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i] == 0x5C and raw[i + 1 : i + 4].isdigit() and i + 4 <= len(raw):
            out.append(int(raw[i + 1 : i + 4], 8))
            i += 4
        else:
            out.append(raw[i])
            i += 1
    return bytes(out)


def _locked_flags(path: str) -> int:
    """The flags a remount must keep (the kernel refuses to drop them in a user namespace)."""
    flags = os.statvfs(path).f_flag
    return sum(ms for st, ms in _STATVFS_FLAGS if flags & st)


def _make_read_only(points: Iterable[str]) -> list[str]:
    """Remount each mount point read-only; the ones the kernel refuses are returned."""
    refused = []
    for point in points:
        try:
            flags = _locked_flags(point)
            _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        except OSError as exc:
            refused.append(f"{point}: {exc.strerror or exc}")
    return refused


def _cover(folder: str, shown: Iterable[str], flags: int, mode: str) -> None:
    """Cover ``folder`` with an empty directory, keeping ``shown`` (paths below it) visible."""
    kept = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in shown]
    try:
        _mount("hook-studio", folder, "tmpfs", flags, f"mode={mode}")
        for path, fd in kept:
            os.makedirs(path, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
    finally:
        for _, fd in kept:
            os.close(fd)


def _minimal_dev() -> None:
    """A ``/dev`` with only the devices a program needs and none that reach hardware."""
    kept = []
    for name in DEVICES:
        with contextlib.suppress(OSError):
            kept.append((name, os.open(f"/dev/{name}", os.O_PATH)))
    try:
        _mount("hook-studio", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755")
        for name, fd in kept:
            target = f"/dev/{name}"
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
            _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND)
        for i, name in enumerate(("stdin", "stdout", "stderr")):
            os.symlink(f"/proc/self/fd/{i}", f"/dev/{name}")
        os.symlink("/proc/self/fd", "/dev/fd")
        os.mkdir("/dev/shm", 0o1777)
    finally:
        for _, fd in kept:
            os.close(fd)


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")


def _below(folder: str, paths: Iterable[str]) -> list[str]:
    """The paths strictly inside ``folder``, outermost only (a path inside another is shown
    with it)."""
    outermost: list[str] = []
    for path in sorted({p for p in paths if _inside(p, folder)}, key=len):
        if not any(_inside(path, kept) for kept in outermost):
            outermost.append(path)
    return [p for p in outermost if os.path.isdir(p)]


def enter_workspace(plan: SandboxPlan) -> SandboxState:
    """Called once by the fork server, before anything else. Never raises: where the kernel
    refuses, the state says why and nothing has changed."""
    if not plan.enabled:
        return SandboxState(False, "the sandbox is turned off in hookstudio.json")
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC
    if not plan.network:
        flags |= CLONE_NEWNET
    try:
        _unshare(flags, "a user namespace")
    except SandboxRefused as exc:
        why = _REFUSALS.get(exc.errno or 0, exc.strerror)
        return SandboxState(False, f"the kernel refused a user namespace ({why})")
    # From here on a failure leaves a half-built sandbox: the fork server then refuses to run
    # hooks rather than running them in it.
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _empty_bounding_set()
    hidden = sorted(
        {os.path.realpath(folder) for folder in plan.hidden if os.path.isdir(folder)}, key=len
    )
    kept = [os.path.realpath(path) for path in plan.kept]
    # Outer folders first: a folder inside another is out of sight already, unless a kept path
    # shows it again; a folder that is itself kept stays.
    for folder in hidden:
        if folder in kept:
            continue
        if any(_inside(folder, h) for h in hidden) and not any(_inside(folder, k) for k in kept):
            continue
        _cover(folder, _below(folder, kept), MS_NOSUID | MS_NODEV | MS_NOEXEC, "0555")
    _minimal_dev()
    refused = _make_read_only(
        point for point in _mount_points() if not point.startswith(("/proc", "/dev/"))
    )
    if not plan.network:
        _loopback_up()
    # Every call's /tmp is its own.
    os.environ["TMPDIR"] = "/tmp"
    return SandboxState(True, network=plan.network, writable=refused)


def _empty_bounding_set() -> None:
    """No program run below this process can gain a capability by ``exec``. The set is inherited
    by every fork: emptied once in the fork server (which never runs a program), it is empty in
    each call without some forty system calls per call. The effective capabilities the server
    needs to build each call's mounts are not in it."""
    assert _libc is not None
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break


def _drop_privileges() -> None:
    assert _libc is not None
    _check(_libc.prctl(_PR_SET_SECUREBITS, _SECURE_BITS, 0, 0, 0), "securebits")
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("Ii", _CAPABILITY_VERSION_3, 0)
    data = bytes(24)
    _check(_libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)), "capset")
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


@dataclass(frozen=True)
class CallSandbox:
    """What every call of a workspace gets, worked out once: each private folder with the kept
    paths below it that must stay visible there."""

    private: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def keeping(cls, kept: Iterable[str]) -> CallSandbox:
        real = [os.path.realpath(path) for path in kept]
        return cls(tuple((folder, tuple(_below(folder, real))) for folder in ("/tmp", "/dev/shm")))


@dataclass(frozen=True)
class CallInit:
    """A call's sandbox as its maker sees it: the namespace's first process, and the read end of
    the pipe on which that process writes the hook's wait status as it ends."""

    pid: int
    status: int


def fork_call(call: CallSandbox, *, for_parent: bool = False) -> CallInit | None:
    """Fork a call's sandbox: a fresh PID, mount, IPC and UTS namespace whose first process (its
    init, the maker's child, or its parent's with ``for_parent``) only waits, and the call's own
    process below it. Returns the init in the maker; None in the call's process, the second of
    the namespace, with its own /proc, /tmp and /dev/shm and no capabilities. Where the kernel
    refuses a part of it there, that process ends with status :data:`UNFINISHED`."""
    parent = os.getppid() if for_parent else os.getpid()
    flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS
    status_r, status_w = os.pipe2(os.O_NONBLOCK)
    try:
        init = namespace_fork.fork(flags | (namespace_fork.CLONE_PARENT if for_parent else 0))
    except OSError as exc:
        os.close(status_r)
        os.close(status_w)
        raise SandboxRefused(exc.errno, f"a PID namespace: {exc.strerror}") from None
    if init:
        os.close(status_w)
        return CallInit(init, status_r)
    try:
        os.close(status_r)
        _become_init(parent, status_w)
        # A fresh /proc shows only this namespace; read-only, so no sysctl can be written
        # through it.
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY)
        for folder, shown in call.private:
            _cover(folder, shown, MS_NOSUID | MS_NODEV, "1777")
        _drop_privileges()
    except BaseException:
        # Neither new process may go back to its maker's work: a sandbox the kernel would not
        # finish runs nothing.
        os._exit(UNFINISHED)
    return None


def _become_init(parent: int, status_w: int) -> None:
    """The namespace's first process: it forks the call's process, in which this returns, and
    itself never returns. It dies with its parent. No session of its own: it stays in its
    maker's process group (the fork server's, or the launcher's own), which is ended as a whole,
    so that one stopped before it took its death signal is ended all the same."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)
    process_control.die_with_parent(parent)
    assert _libc is not None
    # The hook sees this process as its /proc/1: nothing of it may be read or written from
    # there, neither its memory nor the descriptors it inherited (the fork server's stderr is
    # the studio's). It is out of the hook's reach before the hook exists, and keeps none of
    # those descriptors once the hook has them.
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    hook = os.fork()
    if hook == 0:
        _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
        os.close(status_w)
        return
    os.closerange(0, status_w)
    os.closerange(status_w + 1, process_control.max_fd())
    # Out of the hook's reach already; it holds no capability either, as the hook does not.
    _drop_privileges()
    _wait_as_init(hook, status_w)


def enter_call(kept: Iterable[str], close_in_helper: Iterable[int] = ()) -> None:
    """Called in a process of a sandboxed workspace that is to run a program (the Node host):
    returns in the program's own process, the second of a fresh PID namespace. The process that
    called it never returns: it hands the program's exit status up, so that whoever waits for it
    sees it end as the program did."""
    closing = list(close_in_helper)
    for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    assert _libc is not None
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    call = fork_call(CallSandbox.keeping(kept))
    if call is None:
        return
    for fd in closing:
        os.close(fd)
    _to_null(0, 1, 2)
    _hand_status_up(call)


def _to_null(*fds: int) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        os.dup2(null, fd)
    os.close(null)


def _wait_as_init(hook: int, status_w: int) -> NoReturn:
    """Reap whatever is orphaned in the namespace; when the hook ends, report and go (the
    kernel then ends every process left in the namespace)."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue
        if pid == hook:
            with contextlib.suppress(OSError):
                os.write(status_w, struct.pack("i", status))
            os._exit(0)


def _hand_status_up(call: CallInit) -> NoReturn:
    while True:
        try:
            _, status = os.waitpid(call.pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            status = signal.SIGKILL  # as if killed: it is gone without a word
            break
    _end_as_hook(hook_status(call.status, status))


def hook_status(status_r: int, init_status: int) -> int:
    """The hook's wait status, from its init's pipe (closed here); the init's own when it
    left no word (it was killed from outside)."""
    try:
        data = os.read(status_r, 4)
    except OSError:
        data = b""
    finally:
        os.close(status_r)
    return struct.unpack("i", data)[0] if len(data) == 4 else init_status


def _end_as_hook(status: int) -> NoReturn:
    if os.WIFSIGNALED(status):
        _end_as(signal.Signals(os.WTERMSIG(status)))
    os._exit(os.waitstatus_to_exitcode(status))


def _end_as(sig: signal.Signals) -> NoReturn:
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)
