"""A run's way from its caller to the worker and back: its result reaches the caller within a
turn or two of the event loop after the worker answers, and cancelling the caller of
``Runner.run`` ends the hook's worker at once."""

from __future__ import annotations

import asyncio
import os
import selectors
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest

from studio.core.workspace.folder import Workspace
from studio.engine.runner import Runner
from tests.support.hostile_hooks import STARTED
from tests.support.processes import live_descendants, named, wait_for

HOSTILE = Path(__file__).parents[1] / "support" / "hostile_hooks.py"


class CountingSelector(selectors.DefaultSelector):  # type: ignore[misc, valid-type]
    """Counts the event loop's turns: each one selects once."""

    turns = 0

    def select(self, timeout: float | None = None) -> list[Any]:
        self.turns += 1
        return super().select(timeout)


def test_a_run_reaches_its_caller_within_a_few_turns_of_the_loop(workspace: Workspace) -> None:
    selector = CountingSelector()
    loop = asyncio.SelectorEventLoop(selector)
    runner = Runner(workspace)

    async def turns_per_run() -> list[int]:
        await runner.warm_up()
        for _ in range(5):
            assert (await runner.run("basic")).status == "ok"
        counts = []
        for _ in range(30):
            before = selector.turns
            outcome = await runner.run("basic")
            assert outcome.status == "ok", outcome.turn_error
            counts.append(selector.turns - before)
        return counts

    try:
        counts = loop.run_until_complete(turns_per_run())
    finally:
        loop.run_until_complete(runner.close())
        loop.close()
    # One turn when the worker's answer arrives, one to resume the caller; the fork server's
    # words (a spare ready, a worker gone) take a turn now and then. A chain of tasks and
    # futures between the worker and the caller took ten or more.
    assert statistics.median(counts) <= 3, counts


def test_cancelling_the_caller_of_run_ends_the_hook_at_once(
    workspace: Workspace, runner: Any
) -> None:
    shutil.copy(HOSTILE, workspace.root / "lib" / "hostile.py")

    def hook_running() -> bool:
        return bool(named(live_descendants(os.getpid()), STARTED.decode()))

    async def cancel_while_running() -> None:
        run = asyncio.ensure_future(
            runner.runner.run("basic", hook="lib/hostile.py:start_then_hang")
        )
        while not hook_running():
            await asyncio.sleep(0.01)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    runner.call(asyncio.wait_for(cancel_while_running(), 20))
    # The hook sleeps 30 s; its worker is ended, not left to finish.
    wait_for(lambda: not hook_running())
    assert runner.run().status == "ok"
