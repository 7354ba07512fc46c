"""A spare left waiting for its call readies its heap: the call's first use of a few megabytes of
memory then takes no page faults, where a process just forked takes one per page. A spare whose
call comes at once goes straight to it."""

from __future__ import annotations

import subprocess
import sys

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
