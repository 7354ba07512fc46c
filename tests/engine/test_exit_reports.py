"""A call that gave its whole answer costs the engine no report of its worker's exit: the fork
server sends a call's exit status only when the engine asks for it, which it does when the call
left no complete answer. Such a call still gets its status, whether the worker had ended by the
time the engine asked or not."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.core.workspace.folder import Workspace
from studio.engine.python_runtime import PythonRuntime
from studio.engine.worker_host import WorkerHost, WorkerResult
from tests.support.runners import LiveRunner
from tests.support.workspaces import without_sandbox

HOSTILE = Path(__file__).parents[1] / "support" / "hostile_hooks.py"


class Watched:
    """The exit events the engine's host receives, and the pid of each call's worker."""

    def __init__(self, host: WorkerHost) -> None:
        self.exit_events: list[dict[str, Any]] = []
        self.workers: list[int] = []
        on_event, run = host._on_event, host.run

        def seen(event: dict[str, Any], fds: list[int]) -> None:
            if event.get("event") == "exited":
                self.exit_events.append(event)
            on_event(event, fds)

        async def ran(*args: Any, **kwargs: Any) -> WorkerResult:
            result = await run(*args, **kwargs)
            if result.pid is not None:
                self.workers.append(result.pid)
            return result

        host._on_event = seen  # type: ignore[method-assign]
        host.run = ran  # type: ignore[method-assign]


@pytest.fixture(params=[True, False], ids=["sandbox", "no-sandbox"])
def live(request: pytest.FixtureRequest, workspace: Workspace) -> Iterator[LiveRunner]:
    shutil.copy(HOSTILE, workspace.root / "lib" / "hostile.py")
    if not request.param:
        without_sandbox(workspace.root)
    runner = LiveRunner(Workspace.open(workspace.root))
    yield runner
    runner.close()


def watch(live: LiveRunner) -> Watched:
    assert live.run().status == "ok"  # starts the fork server
    runtime = live.runner._runtimes[PythonRuntime]
    assert isinstance(runtime, PythonRuntime)
    return Watched(runtime._host)


def reaped(pid: int) -> bool:
    return not os.path.exists(f"/proc/{pid}")


def wait_reaped(live: LiveRunner, pids: list[int]) -> None:
    async def until_reaped() -> None:
        while not all(map(reaped, pids)):
            await asyncio.sleep(0.01)

    live.call(asyncio.wait_for(until_reaped(), 30))


def test_calls_that_answered_bring_no_exit_report(live):
    watched = watch(live)
    for _ in range(5):
        assert live.run().status == "ok"
    assert len(watched.workers) == 5
    # Every worker has ended and been reaped by the fork server, which reported none of them.
    wait_reaped(live, watched.workers)
    assert live.run().status == "ok"
    assert watched.exit_events == []


def test_a_call_without_an_answer_gets_its_exit_status_asked_for(live):
    watched = watch(live)
    crashed = live.run(hook="lib/hostile.py:hard_exit_one")
    assert crashed.status == "turn_error"
    assert crashed.turn_error.exit.code == 1
    killed = live.run(hook="lib/hostile.py:segfault")
    assert killed.turn_error.exit.signal == "SIGSEGV"
    assert live.run().status == "ok"
    wait_reaped(live, watched.workers)
    assert [event.get("code", event.get("signal")) for event in watched.exit_events] == [
        1,
        "SIGSEGV",
    ]
