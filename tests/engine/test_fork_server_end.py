"""A fork server that is killed takes every process it made with it: its spares and the
helpers above each spare's namespace, stopped ones too."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

import pytest

from tests.support.processes import (
    alive,
    anywhere_naming,
    children,
    live_descendants,
    running_with,
    wait_for,
)
from tests.support.runners import LiveRunner
from tests.support.workspaces import without_sandbox


@pytest.fixture(params=[True, False], ids=["sandbox", "no-sandbox"])
def live(workspace, request) -> Iterator[LiveRunner]:
    """A runner whose fork server has run a call and made its spares."""
    if not request.param:
        without_sandbox(workspace.root)
    live = LiveRunner(workspace)
    try:
        assert live.run().status == "ok"
        yield live
    finally:
        live.close()


@pytest.fixture
def server(live) -> int:
    """The pid of the live runner's fork server."""
    (pid,) = running_with(set(children(os.getpid())), "fork_server")
    # The server makes a spare after the one the first run took, off that run's path: on a busy
    # machine none may be made yet when the run has ended.
    wait_for(lambda: live_descendants(pid))
    return pid


def _stop_all(server: int) -> set[int]:
    """SIGSTOP the server and every process below it, as a machine too busy to run them would
    leave them: a process stopped before it took its death signal cannot take it after."""
    stopped: set[int] = set()
    while unstopped := ({server} | live_descendants(server)) - stopped:
        for pid in unstopped:
            with contextlib.suppress(ProcessLookupError):  # ended meanwhile
                os.kill(pid, signal.SIGSTOP)
        stopped |= unstopped
    return stopped


def _group(pid: int) -> tuple[int, int]:
    """The process group and session of ``pid``."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[2]), int(fields[3])


def test_killing_the_fork_server_ends_all_it_made(server):
    made = live_descendants(server)
    os.kill(server, signal.SIGKILL)
    wait_for(lambda: not any(alive(pid) for pid in made))


def test_what_the_fork_server_made_stays_in_its_process_group_but_the_hooks_processes(server):
    # The studio ends the server's group as a whole; only a process that runs a hook (and took
    # its death signal before) leads a session of its own, so that the hook's processes can be
    # ended together.
    for pid in live_descendants(server):
        with contextlib.suppress(FileNotFoundError):  # ended meanwhile
            group, session = _group(pid)
            assert group == server or session == pid, f"{pid} is in group {group}"


def test_a_dead_fork_server_takes_even_its_stopped_processes_with_it(live, server):
    made = _stop_all(server)
    os.kill(server, signal.SIGKILL)
    wait_for(lambda: not alive(server))
    # The engine finds its server gone when it next looks, as a run does (this one may fail:
    # the spare it was given died with the server).
    live.run()
    wait_for(lambda: not any(alive(pid) for pid in made))


def test_closing_a_runner_whose_processes_are_all_stopped_ends_every_one(live, server, workspace):
    root = os.path.realpath(workspace.root)
    assert server in anywhere_naming(root)
    made = _stop_all(server)
    live.call(live.runner.close())
    # SIGKILLed, each takes a moment to go.
    wait_for(lambda: not any(alive(pid) for pid in made), timeout=10)
    assert not anywhere_naming(root)
