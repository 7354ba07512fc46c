"""A fork server that is killed takes every process it made with it: its spares and the
helpers above each spare's namespace."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from tests.support.processes import alive, children, live_descendants, running_with, wait_for
from tests.support.runners import LiveRunner
from tests.support.workspaces import without_sandbox


@pytest.fixture(params=[True, False], ids=["sandbox", "no-sandbox"])
def server(workspace, request) -> Iterator[int]:
    """The pid of a workspace's fork server once a run is done and its spares are made."""
    if not request.param:
        without_sandbox(workspace.root)
    live = LiveRunner(workspace)
    try:
        assert live.run().status == "ok"
        (pid,) = running_with(set(children(os.getpid())), "fork_server")
        assert live_descendants(pid), "the fork server keeps spares ready"
        yield pid
    finally:
        live.close()


def test_killing_the_fork_server_ends_all_it_made(server):
    made = live_descendants(server)
    os.kill(server, signal.SIGKILL)
    wait_for(lambda: not any(alive(pid) for pid in made))


def _sockets(pid: int) -> set[str]:
    found: set[str] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found  # it ended meanwhile
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


def test_no_process_the_fork_server_made_holds_the_servers_own_sockets(server):
    # A spare holding the server's end of its own channel would never see that channel close,
    # and would wait forever if the server died before the spare took the death signal.
    def holders() -> list[int]:
        # A process just forked holds them all until it closes what it must not keep.
        held = _sockets(server)
        return [pid for pid in live_descendants(server) if _sockets(pid) & held]

    try:
        wait_for(lambda: not holders())
    except AssertionError:
        held = _sockets(server)
        detail = {pid: sorted(_sockets(pid) & held) for pid in holders()}
        raise AssertionError(f"still held: {detail}, server holds {sorted(held)}") from None
