"""A ready spare is handed to the engine, which gives it a call without the fork server on the
call's path: the call still gets a fresh process of its own, and a spare that died or was
stopped while the engine held it is never given a call."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from studio.core.workspace.folder import Workspace
from studio.engine.python_runtime import PythonRuntime
from tests.support.processes import alive, children, running_with
from tests.support.runners import LiveRunner
from tests.support.workspaces import without_sandbox

# Each process that loads the hook draws its own token; a module that served a call before
# would count more than one call.
HOOK = """\
import os
TOKEN = os.urandom(8).hex()
CALLS = []

def main(payload):
    CALLS.append(1)
    return {**payload["request"], "system": f"{TOKEN} {len(CALLS)}"}
"""


def live_runner(workspace: Workspace, *, sandbox: bool) -> LiveRunner:
    (workspace.root / "lib" / "token.py").write_text(HOOK)
    if not sandbox:
        without_sandbox(workspace.root)
    return LiveRunner(Workspace.open(workspace.root))


@pytest.fixture(params=[True, False], ids=["sandbox", "no-sandbox"])
def live(request: pytest.FixtureRequest, workspace: Workspace) -> Iterator[LiveRunner]:
    runner = live_runner(workspace, sandbox=request.param)
    yield runner
    runner.close()


@pytest.fixture
def sandboxed_live(workspace: Workspace) -> Iterator[LiveRunner]:
    runner = live_runner(workspace, sandbox=True)
    yield runner
    runner.close()


def sandboxed(live: LiveRunner) -> bool:
    runtime = live.runner._runtimes[PythonRuntime]
    assert isinstance(runtime, PythonRuntime)
    return not runtime.sandbox_notice and live.runner.workspace.settings().sandbox.enabled


def token_run(live: LiveRunner) -> tuple[str, str]:
    outcome = live.run(hook="lib/token.py:main")
    assert outcome.status == "ok", outcome.turn_error
    token, calls = outcome.result["system"].split()
    return token, calls


def fork_server() -> int:
    (server,) = running_with(set(children(os.getpid())), "fork_server")
    return server


def test_calls_given_by_the_engine_each_get_a_fresh_process(live):
    token_run(live)
    seen = set()
    for _ in range(3):
        live.hold_spares(1)
        token, calls = token_run(live)
        assert calls == "1"
        seen.add(token)
    assert len(seen) == 3


def test_a_call_reaches_a_held_spare_while_the_fork_server_is_frozen(sandboxed_live):
    # Only in the sandbox: without it, a stopped server is replaced before every call.
    live = sandboxed_live
    token_run(live)
    if not sandboxed(live):
        pytest.skip("the kernel refuses the sandbox here")
    live.hold_spares(2)
    server = fork_server()
    os.kill(server, signal.SIGSTOP)
    try:
        first, second = token_run(live), token_run(live)
    finally:
        os.kill(server, signal.SIGCONT)
    assert first[1] == second[1] == "1"
    assert first[0] != second[0]
    # The server learns which spares were taken once it runs again, and keeps serving.
    assert token_run(live)[1] == "1"
    assert fork_server() == server


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGSTOP])
def test_a_held_spare_that_was_killed_or_stopped_is_never_given_a_call(workspace, how):
    # Only a hook without the sandbox can reach a spare; as such a hook would, by signal.
    live = live_runner(workspace, sandbox=False)
    try:
        token_run(live)
        held = live.hold_spares(2)
        for pid in held:
            os.kill(pid, how)
        for _ in range(len(held) + 1):
            outcome = live.run(hook="lib/token.py:main")
            assert outcome.status == "ok", outcome.turn_error
            assert outcome.duration_ms < 5000
        assert not any(pid in live.held_spares() for pid in held)
    finally:
        live.close()
    assert not any(alive(pid) for pid in held)
