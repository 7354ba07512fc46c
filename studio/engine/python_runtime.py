"""The ``python`` hook runtime: a fork server per workspace, started once with a cleaned
environment, forks one worker for each call; the worker loads the hook, calls it once, sends the
result on a channel of its own and exits."""

from __future__ import annotations

import contextlib
from pathlib import Path

from studio.core.contract import HookCall, HookReply, RunStopped
from studio.core.source_ref import SourceRef
from studio.core.turn_error import turn_error
from studio.engine.hook_runtime import HookRuntime
from studio.engine.python_functions import FunctionList, functions_in_file
from studio.engine.worker_host import ForkServerUnavailable, WorkerHost
from studio.engine.worker_outcome import read_worker
from studio.engine.worker_protocol import WorkerLimits, WorkerSpec


class PythonRuntime(HookRuntime):
    name = "python"
    extensions = (".py",)

    def _begin(self) -> None:
        settings = self.settings
        self._host = WorkerHost(
            self.root, dict(settings.env), tuple(settings.pass_env), sandbox=self.sandbox
        )

    @property
    def sandbox_notice(self) -> str:
        return self._host.sandbox_notice

    @classmethod
    def functions(cls, path: Path, *, module: bool = False) -> FunctionList:
        return functions_in_file(path)

    async def start(self) -> None:
        # A fork server that cannot start is reported by the first call, as a turn error.
        with contextlib.suppress(ForkServerUnavailable):
            await self._host.start()

    async def close(self) -> None:
        await self._host.close()

    async def call(self, call: HookCall, ref: SourceRef, limits: WorkerLimits) -> HookReply:
        hook = call.hook
        data = self.argument_bytes(call)
        spec = WorkerSpec(
            source_path=ref.path,
            function=ref.function,
            workspace=str(self.root),
            source=f"{ref.path}:{ref.function}",
            options=call.options,
            api=call.api,
        )
        try:
            result = await self._host.run(
                spec, data, timeout_s=call.timeout_ms / 1000, limits=limits
            )
        except OSError as exc:
            raise RunStopped(
                turn_error(
                    "engine_failed", f"the studio could not start a worker: {exc}", hook=hook
                )
            ) from None
        return read_worker(
            result,
            in_pieces=self.in_pieces,
            echo=call.echo,
            echo_members=call.echo_members,
            hook=hook,
            loop=call.loop,
            timeout_ms=call.timeout_ms,
            output_limit=limits.output_bytes,
            result_limit=limits.result_bytes,
        )
