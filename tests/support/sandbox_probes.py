"""Hooks that try every way out of the sandbox and report what they reached, in the system text.
Copied into a test workspace."""

import ctypes
import json
import os
import signal
import socket
import subprocess
import time


def _report(payload, found):
    return {**payload["request"], "system": json.dumps(found, sort_keys=True)}


def _attempt(action):
    try:
        result = action()
    except OSError as exc:
        return f"refused: {exc.strerror}"
    return f"done: {result}" if result is not None else "done"


def _visible_pids():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def processes(payload):
    return _report(
        payload,
        {"pid": os.getpid(), "ppid": os.getppid(), "visible": _visible_pids()},
    )


def _read(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def environments(payload):
    """Every environment this process can read: its own, and every /proc/<pid>/environ."""
    seen = {"own": dict(os.environ)}
    for pid in [*_visible_pids(), os.getppid()]:
        try:
            seen[str(pid)] = _read(f"/proc/{pid}/environ")
        except OSError as exc:
            seen[str(pid)] = f"refused: {exc.strerror}"
    return _report(payload, seen)


def writes(payload):
    def write(path):
        with open(path, "w") as f:
            f.write("written by a hook")

    state = ".hookstudio"
    found = {
        "workspace": _attempt(lambda: write("written.txt")),
        "source": _attempt(lambda: write("lib/policy.py")),
        "records": _attempt(lambda: write(os.path.join(state, "records.sqlite3"))),
        "delete_records": _attempt(lambda: os.unlink(os.path.join(state, "records.sqlite3"))),
        "state_listing": os.listdir(state) if os.path.isdir(state) else "absent",
        "tmp_before": sorted(os.listdir("/tmp")),
        "tmp": _attempt(lambda: write("/tmp/hook.txt")),
        "remount": _attempt(lambda: _mount_again()),
        "unmount_proc": _attempt(lambda: _umount("/proc")),
    }
    return _report(payload, found)


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _mount_again():
    if _libc().mount(None, b"/", None, 32 | 4096, None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def _umount(path):
    if _libc().umount2(path.encode(), 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def connect(payload):
    def go():
        port = int(payload["request"]["system"])
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return "connected"

    return _report(payload, {"loopback": _attempt(go)})


def kill_everything_visible(payload):
    """Signal the parent and every process in sight; write to their standard streams. Only in
    the sandbox (as its process 2): outside it, every process of the machine is in sight."""
    me = os.getpid()
    if me != 2:
        return _report(payload, {"refused to run": "not in a sandbox"})
    found = {}
    for pid in {*_visible_pids(), os.getppid()} - {me, 0}:
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            found[f"{pid}:{sig.name}"] = _attempt(lambda pid=pid, sig=sig: os.kill(pid, sig))
        for fd in (1, 2):
            found[f"{pid}:fd{fd}"] = _attempt(
                lambda pid=pid, fd=fd: _write_to(f"/proc/{pid}/fd/{fd}")
            )
    return _report(payload, found)


def _write_to(path):
    with open(path, "w") as f:
        f.write('{"status": "ok", "forged": true}\n')


def fork_bomb(payload):
    """Every process forks at each of nine rounds (512 processes), then all wait for the end."""
    for _ in range(9):
        try:
            os.fork()
        except OSError:
            break
    time.sleep(60)


def daemon_then_return(payload):
    """A daemon that leaves its session, then a normal return."""
    subprocess.Popen(
        ["sleep", "300"], start_new_session=True, stdout=subprocess.DEVNULL, close_fds=True
    )
    return payload["request"]


def home(payload):
    """What of the user's home the hook can read: its credentials, its listing."""
    home = payload["request"]["system"]

    def read(path):
        with open(path) as f:
            return f.read()

    return _report(
        payload,
        {
            "credentials": _attempt(lambda: read(os.path.join(home, ".aws", "credentials"))),
            "listing": sorted(os.listdir(home)) if os.path.isdir(home) else "absent",
        },
    )


def reach_init(payload):
    """Open the namespace's first process's streams (to append, never to truncate) at once."""

    def append(path):
        with open(path, "a") as f:
            f.write("")

    return _report(
        payload,
        {f"fd{fd}": _attempt(lambda fd=fd: append(f"/proc/1/fd/{fd}")) for fd in (0, 1, 2)},
    )


def privileges(payload):
    """This process's capability sets and its no_new_privs flag, as the kernel reports them."""
    fields = {}
    for line in _read("/proc/self/status").splitlines():
        name, _, value = line.partition(":")
        if name.startswith("Cap") or name == "NoNewPrivs":
            fields[name] = value.strip()
    return _report(payload, fields)
