"""Hooks that misbehave in every way a user's hook can. Copied into a test workspace."""

import contextlib
import ctypes
import json
import os
import subprocess
import sys
import time

STARTED = b"hook-started"


def say_started():
    """Names this process so that a test, outside any sandbox, sees the hook has begun."""
    ctypes.CDLL(None).prctl(15, ctypes.c_char_p(STARTED), 0, 0, 0)


def ok(payload):
    return payload["request"]


def infinite_loop(payload):
    while True:
        pass


def sleep_past_timeout(payload):
    time.sleep(30)


def print_100_mb(payload):
    line = "x" * 1023 + "\n"
    for _ in range(100 * 1024):
        sys.stdout.write(line)
    return payload["request"]


def garbage_on_result_channel(payload):
    for fd in range(3, 64):
        with contextlib.suppress(OSError):
            os.write(fd, b"garbage, not a result")
    return payload["request"]


def exit_zero(payload):
    sys.exit(0)


def hard_exit_one(payload):
    print("about to leave")
    os._exit(1)


def segfault(payload):
    ctypes.string_at(0)


def allocate_4_gb(payload):
    block = bytearray(4 << 30)
    return {"size": len(block)}


def _spawn_family():
    children = [subprocess.Popen(["sleep", "60"]) for _ in range(50)]
    # A grandchild that leaves its parent's session and outlives it (a classic daemon).
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.setsid()
        grandchild = os.fork()
        if grandchild == 0:
            time.sleep(60)
            os._exit(0)
        os.write(write, str(grandchild).encode())
        os._exit(0)
    os.waitpid(middle, 0)
    os.read(read, 64)
    return len(children) + 1


def children_then_return(payload):
    started = _spawn_family()
    return {**payload["request"], "system": f"started {started}"}


def children_then_hang(payload):
    _spawn_family()
    time.sleep(30)


def return_nan(payload):
    return {**payload["request"], "options": {"temperature": float("nan")}}


def return_set(payload):
    return {**payload["request"], "tools": {"fs_read"}}


def return_json_string(payload):
    return json.dumps(payload["request"])


def return_none(payload):
    return None


def deep_recursion(payload):
    def down(n):
        return down(n + 1) + 1

    return down(0)


def read_secret(payload):
    found = {
        "secret": os.environ.get("HOOKSTUDIO_TEST_SECRET", "absent"),
        "names": sorted(os.environ),
    }
    return {**payload["request"], "system": json.dumps(found)}


def start_then_hang(payload):
    say_started()
    time.sleep(30)


async def async_ok(payload):
    import asyncio

    await asyncio.sleep(0)
    return payload["request"]


def stop_the_fork_server(payload):
    import signal

    os.kill(os.getppid(), signal.SIGSTOP)
    return payload["request"]


def stop_the_spares(payload):
    import signal

    siblings = set()
    for task in os.listdir(f"/proc/{os.getppid()}/task"):
        with open(f"/proc/{os.getppid()}/task/{task}/children") as f:
            siblings.update(int(p) for p in f.read().split())
    for pid in siblings - {os.getpid()}:
        os.kill(pid, signal.SIGSTOP)
    return {**payload["request"], "system": f"stopped {len(siblings - {os.getpid()})}"}


def kill_the_fork_server(payload):
    import signal

    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(5)


def _forge(envelope):
    """Write a result frame of this hook's own making on the result channel, then leave."""
    import struct

    payload = json.dumps(envelope).encode()
    os.write(4, b"HSR1" + struct.pack(">Q", len(payload)) + payload)
    os.close(4)
    os._exit(0)


def forge_a_hash(payload):
    _forge({"status": "ok", "extra": {"sha256": "0" * 64}, "value": payload["request"]})


def forge_a_timeout(payload):
    _forge({"status": "error", "kind": "timeout", "message": "not my fault", "extra": {}})


def forge_a_call(payload):
    calls = [{"method": "sys_lambda", "gate": "allowed", "depth": "deep"}]
    _forge({"status": "ok", "extra": {"calls": calls}, "value": payload["request"]})


def forge_a_frame(payload):
    frames = [{"file": "lib/policy.py", "line": "one", "function": "x"}]
    _forge({"status": "error", "kind": "exception", "message": "m", "details": {"frames": frames}})


def delete_the_records(payload):
    import shutil

    shutil.rmtree(".hookstudio")
    return payload["request"]
