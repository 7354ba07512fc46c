"""A fork server that is killed takes every process it made with it: its spares and the
helpers above each spare's namespace."""

from __future__ import annotations

import os
import signal

import pytest

from tests.support.processes import alive, children, live_descendants, running_with, wait_for
from tests.support.runners import LiveRunner
from tests.support.workspaces import without_sandbox


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
def test_killing_the_fork_server_ends_all_it_made(workspace, sandboxed):
    if not sandboxed:
        without_sandbox(workspace.root)
    live = LiveRunner(workspace)
    try:
        assert live.run().status == "ok"
        (server,) = running_with(set(children(os.getpid())), "fork_server")
        made = live_descendants(server)
        assert made, "the fork server keeps spares ready"
        os.kill(server, signal.SIGKILL)
        wait_for(lambda: not any(alive(pid) for pid in made))
    finally:
        live.close()
