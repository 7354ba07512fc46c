"""A spare left waiting for its call readies its heap: the call's first use of a few megabytes of
memory then takes no page faults, where a process just forked takes one per page. A spare whose
call comes at once goes straight to it, and spares ready memory only while the latest calls
were large enough to need it."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from studio.core.workspace.folder import Workspace
from studio.engine import worker_runtime
from studio.engine.fork_server import RECENT_CALLS, SPARES
from studio.engine.worker_runtime import IDLE_BEFORE_WARMING, WARM_MOST
from tests.support.paths import REPOSITORY
from tests.support.processes import children, wait_for
from tests.support.runners import LiveRunner
from tests.support.workspaces import make_workspace, without_sandbox, write_json

BUFFER = 3 << 20  # a 1 MB request's buffers are of this order
PAGES = BUFFER // 4096


_MEASURE = """
import resource, sys
from studio.engine import worker_runtime
if sys.argv[1] == "warmed":
    worker_runtime.warm_heap()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
buffer = bytearray(int(sys.argv[2]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults_for_a_buffer(warmed: bool) -> int:
    """The minor page faults a fresh Python process (a spare is one, forked from a small
    server) takes to fill ``BUFFER`` bytes."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, "warmed" if warmed else "cold", str(BUFFER)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPOSITORY,
    )
    return int(done.stdout)


def test_a_warmed_heap_serves_the_calls_memory_without_page_faults():
    assert faults_for_a_buffer(warmed=False) > PAGES // 2
    assert faults_for_a_buffer(warmed=True) < PAGES // 20


_SMALL_OBJECTS = """
import json, resource, sys
from studio.engine import worker_runtime
document = "[" + ",".join(['{"role": "user", "content": "%s"}' % ("x" * 40)] * 6000) + "]"
if sys.argv[1] == "warmed":
    worker_runtime.warm_heap()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
request = json.loads(document)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
OBJECT_PAGES = 6000 * 300 // 4096  # a small dict and its text: about 300 bytes each


def faults_for_small_objects(warmed: bool) -> int:
    """The minor page faults a fresh Python process takes to parse a document of many small
    objects, as a request's messages are (they live in the interpreter's own arenas)."""
    done = subprocess.run(
        [sys.executable, "-c", _SMALL_OBJECTS, "warmed" if warmed else "cold"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPOSITORY,
    )
    return int(done.stdout)


def test_a_warmed_spare_parses_many_small_objects_without_page_faults():
    assert faults_for_small_objects(warmed=False) > OBJECT_PAGES // 2
    assert faults_for_small_objects(warmed=True) < OBJECT_PAGES // 10


_WAIT = """
import resource, socket, sys
from studio.engine import worker_runtime
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
if sys.argv[1] == "waiting":
    theirs.send(b"{}")
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
worker_runtime.wait_for_call(ours)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults_while_waiting(call_waiting: bool) -> int:
    """The minor page faults a fresh process takes in ``wait_for_call``: readying the heap
    touches each of its pages."""
    done = subprocess.run(
        [sys.executable, "-c", _WAIT, "waiting" if call_waiting else "idle"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPOSITORY,
    )
    return int(done.stdout)


def test_a_call_already_waiting_is_taken_without_readying_the_heap():
    warm_pages = worker_runtime.WARM_HEAP // 4096
    assert faults_while_waiting(call_waiting=False) > warm_pages // 2
    assert faults_while_waiting(call_waiting=True) < warm_pages // 20


def _memory_kib(pid: int) -> int:
    """The resident memory of a spare: its process and, in the sandbox, the call's process
    below its namespace's first one."""
    total = 0
    for process in (pid, *children(pid)):
        with open(f"/proc/{process}/status") as status:
            total += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return total


def _newest_spare(live: LiveRunner) -> int:
    """The spare made last, once the engine holds them all again: one made after the last run,
    not one still waiting from before it while the newer ones get ready."""
    return live.hold_spares(SPARES)[-1]


def _idle_spare_memory(live: LiveRunner) -> int:
    """The resident memory of the newest spare the engine holds, in KiB, once it has waited
    ten times as long as a spare waits before it readies its heap."""
    newest = _newest_spare(live)
    live.call(asyncio.sleep(10 * IDLE_BEFORE_WARMING))
    assert newest in live.held_spares()
    return _memory_kib(newest)


def _readied_memory(live: LiveRunner, idle: int) -> int:
    """How much more memory than ``idle`` KiB the newest spare holds once it has readied its
    heap (a minute at most)."""
    newest = _newest_spare(live)
    wait_for(lambda: _memory_kib(newest) - idle > 5 << 10)
    return _memory_kib(newest) - idle


def _turn_over_spares(live: LiveRunner, sample: str) -> None:
    """Runs of ``sample`` until every spare the engine holds was made after the first of them."""
    for _ in range(SPARES + 1):
        outcome = live.run(sample)
        assert outcome.status == "ok", outcome.turn_error


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "no-sandbox"])
def test_spares_ready_memory_only_while_calls_are_large(tmp_path, sandbox):
    workspace = make_workspace(tmp_path / "ws")
    request = {
        "system": "s",
        "messages": [{"role": "user", "content": "x" * 400} for _ in range(2500)],
        "tools": [],
        "options": {},
    }
    write_json(workspace.root / "samples" / "large.json", {"loop": "main", "request": request})
    if not sandbox:
        without_sandbox(workspace.root)
    live = LiveRunner(Workspace.open(workspace.root))
    try:
        _turn_over_spares(live, "basic")
        small = _idle_spare_memory(live)
        _turn_over_spares(live, "large")
        assert _readied_memory(live, small) < (WARM_MOST >> 10) + (1 << 10)
        for _ in range(RECENT_CALLS):
            live.run("basic")
        _turn_over_spares(live, "basic")
        assert _idle_spare_memory(live) - small < 2 << 10
    finally:
        live.close()
