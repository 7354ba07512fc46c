"""A runner a synchronous test can keep across many runs."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any

from studio.core.workspace.folder import Workspace
from studio.engine.runner import Runner


class LiveRunner:
    """A runner on its own event loop, so a test can keep one (and its fork server) across
    many runs."""

    def __init__(self, workspace: Workspace) -> None:
        self.loop = asyncio.new_event_loop()
        self.runner = Runner(workspace)

    def run(self, sample: str = "basic", **kwargs: Any) -> Any:
        return self.loop.run_until_complete(self.runner.run(sample, **kwargs))

    def call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return self.loop.run_until_complete(coro)

    def held_spares(self) -> list[int]:
        """The pids of the ready spares the Python runtime's fork server handed to the engine."""
        from studio.engine.python_runtime import PythonRuntime

        runtime = self.runner._runtimes.get(PythonRuntime)
        return runtime._host.held_spares if isinstance(runtime, PythonRuntime) else []

    def hold_spares(self, count: int) -> list[int]:
        """Run the event loop until the engine holds ``count`` ready spares (a minute at most);
        their pids, oldest first."""

        async def held() -> list[int]:
            while len(self.held_spares()) < count:
                await asyncio.sleep(0.01)
            return self.held_spares()

        pids: list[int] = self.call(asyncio.wait_for(held(), 60))
        return pids

    def own_descriptors(self) -> int:
        """This process's open descriptors, less the channels of the ready spares the engine
        was handed (at most SPARES), however many that is at the moment."""
        return len(os.listdir("/proc/self/fd")) - len(self.held_spares())

    def close(self) -> None:
        self.loop.run_until_complete(self.runner.close())
        self.loop.close()
