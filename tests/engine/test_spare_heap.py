"""A spare left waiting for its call readies its heap: the call's first use of a few megabytes of
memory then takes no page faults, where a process just forked takes one per page. A spare whose
call comes at once goes straight to it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

from studio.engine import worker_runtime
from tests.support.paths import REPOSITORY

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


def test_a_call_already_waiting_is_taken_at_once():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with ours, theirs:
        theirs.send(b"{}")
        started = time.monotonic()
        worker_runtime.wait_for_call(ours)
        # Well under the idle time after which a spare warms its heap.
        assert time.monotonic() - started < worker_runtime.IDLE_BEFORE_WARMING
        assert ours.recv(16) == b"{}"
