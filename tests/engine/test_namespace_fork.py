"""Forking straight into fresh namespaces: the child is the first process of its own PID
namespace, with the interpreter working in it, where ``clone3`` is allowed and where a filter
refuses it. Each case runs in a forked process of its own, which enters a user namespace first
(as the fork server does), so the test process itself stays where it is."""

from __future__ import annotations

import errno
import json
import os
import struct

import pytest

from studio.engine import namespace_fork
from studio.engine.sandbox import CLONE_NEWPID, CLONE_NEWUSER, _unshare


def _in_a_user_namespace(probe) -> bytes:
    """What ``probe`` (run in a forked process, in a user namespace of its own) wrote."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            _unshare(CLONE_NEWUSER, "a user namespace")
            os.write(write, probe())
            os._exit(0)
        except BaseException:
            os._exit(1)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 4096):
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        pytest.skip("no unprivileged user namespace here")
    return b"".join(chunks)


def _child_in_a_pid_namespace() -> bytes:
    """The child's own pid, and what it computed with the interpreter, as its parent saw them."""
    read, write = os.pipe()
    child = namespace_fork.fork(CLONE_NEWPID)
    if child == 0:
        # Pid 1 of the new namespace, able to run Python and fork.
        grandchild = os.fork()
        if grandchild == 0:
            os._exit(7)
        _, status = os.waitpid(grandchild, 0)
        answer = json.dumps([os.getpid(), grandchild, os.waitstatus_to_exitcode(status)])
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    answer = os.read(read, 4096)
    os.close(read)
    _, status = os.waitpid(child, 0)
    return struct.pack("ii", child, os.waitstatus_to_exitcode(status)) + answer


def _parsed(seen: bytes) -> tuple[int, int, list[int]]:
    child, code = struct.unpack("ii", seen[:8])
    return child, code, json.loads(seen[8:])


def test_the_child_is_the_first_process_of_its_own_pid_namespace():
    child, code, (own_pid, grandchild, grandchild_code) = _parsed(
        _in_a_user_namespace(_child_in_a_pid_namespace)
    )
    assert child > 1 and code == 0
    assert (own_pid, grandchild, grandchild_code) == (1, 2, 7)


def test_where_clone3_is_refused_the_classic_clone_makes_the_child(monkeypatch):
    if namespace_fork._SYS_CLONE is None:
        pytest.skip("no classic clone number known for this machine")
    # A number no kernel assigns answers ENOSYS, as a filter that refuses clone3 does.
    monkeypatch.setattr(namespace_fork, "_SYS_CLONE3", 1023)
    monkeypatch.setattr(namespace_fork, "_clones", {})
    _, code, (own_pid, grandchild, grandchild_code) = _parsed(
        _in_a_user_namespace(_child_in_a_pid_namespace)
    )
    assert code == 0 and (own_pid, grandchild, grandchild_code) == (1, 2, 7)


def test_a_refused_namespace_is_an_error_in_the_parent_and_makes_no_child():
    def probe() -> bytes:
        # A PID namespace inside the one just asked for is refused (the kernel allows one
        # unshared PID namespace for the children of a process at a time).
        _unshare(CLONE_NEWPID, "a PID namespace")
        try:
            namespace_fork.fork(CLONE_NEWPID)
        except OSError as exc:
            return str(exc.errno).encode()
        return b"made"

    assert _in_a_user_namespace(probe) == str(errno.EINVAL).encode()
