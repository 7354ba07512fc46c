"""The engine on a thread of its own, seen from the GUI as signals.

Runs, record reads and every other piece of heavy work happen on the engine thread's asyncio
loop; the window only sends intentions (``start_run``, ``cancel_run``) and receives outcomes as
queued signals, so the GUI thread never waits on a worker or parses a large result.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from studio.core.run_outcome import RunOutcome
from studio.core.workspace.folder import Workspace
from studio.engine.runner import RunHandle, Runner


@dataclass
class RunTicket:
    """One requested run, as the window tracks it."""

    id: int
    sample: str
    loop: str | None
    hook: str | None
    started: float = field(default_factory=time.monotonic)
    group: int | None = None
    handle: RunHandle | None = None
    cancelled: bool = False


class EngineBridge(QObject):
    run_started = Signal(object)
    run_finished = Signal(object, object)
    work_finished = Signal(object, object, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="hook-studio-engine", daemon=True)
        self._thread.start()
        self._runner: Runner | None = None
        self._store: Any = None
        self._ids = itertools.count(1)
        self._active: dict[int, RunTicket] = {}
        self._swap_lock = asyncio.Lock()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def _submit(self, coro: Any) -> Future[Any]:
        if self._loop.is_closed() or not self._thread.is_alive():
            coro.close()
            future: Future[Any] = Future()
            future.set_exception(RuntimeError("the engine has shut down"))
            return future
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    # ---- workspace ----------------------------------------------------------------------------
    def open_workspace(self, workspace: Workspace, store: Any) -> None:
        old = self._runner
        # The engine shares this process with the window: large JSON goes in pieces.
        if store is not None:
            store.write_in_pieces = True
        self._runner = Runner(workspace, store=store, cooperative=True)
        self._store = store
        runner = self._runner

        async def swap() -> None:
            # One swap at a time: a runner must not be closed while it is still starting.
            async with self._swap_lock:
                if old is not None:
                    await old.close()
                await runner.warm_up()

        self._submit(swap())

    @property
    def runner(self) -> Runner | None:
        return self._runner

    # ---- runs ------------------------------------------------------------------------------
    def start_run(
        self,
        sample: str,
        loop: str | None = None,
        hook: str | None = None,
        group: int | None = None,
        hook_config: dict[str, Any] | None = None,
    ) -> RunTicket:
        ticket = RunTicket(next(self._ids), sample, loop, hook, group=group)
        self._active[ticket.id] = ticket
        runner = self._runner
        assert runner is not None, "open a workspace first"

        async def go() -> RunOutcome:
            ticket.handle = runner.start(sample, loop=loop, hook=hook, hook_config=hook_config)
            if ticket.cancelled:
                ticket.handle.cancel()
            return await ticket.handle.outcome()

        future = self._submit(go())
        future.add_done_callback(lambda f: self._on_run_done(ticket, f))
        self.run_started.emit(ticket)
        return ticket

    def cancel_run(self, ticket: RunTicket) -> None:
        def cancel() -> None:
            ticket.cancelled = True
            if ticket.handle is not None:
                ticket.handle.cancel()

        self._loop.call_soon_threadsafe(cancel)

    def cancel_all(self) -> None:
        for ticket in list(self._active.values()):
            self.cancel_run(ticket)

    @property
    def running(self) -> list[RunTicket]:
        return list(self._active.values())

    def _on_run_done(self, ticket: RunTicket, future: Future[RunOutcome]) -> None:
        self._active.pop(ticket.id, None)
        # A run's request and result can be a million objects, all plain JSON (no cycles, freed
        # by reference counting). Left to the cycle collector, each full pass over them holds
        # the interpreter lock for ~100 ms and the window with it; frozen, they are skipped.
        gc.freeze()
        try:
            outcome: Any = future.result()
        except BaseException as exc:
            outcome = exc
        self.run_finished.emit(ticket, outcome)

    # ---- other work off the GUI thread ---------------------------------------------------------
    def call(self, tag: object, function: Callable[..., Any], *args: Any) -> None:
        """Run ``function(*args)`` in a worker thread; ``work_finished(tag, result, error)``."""

        async def go() -> Any:
            return await asyncio.to_thread(function, *args)

        future = self._submit(go())

        def done(f: Future[Any]) -> None:
            try:
                self.work_finished.emit(tag, f.result(), None)
            except BaseException as exc:
                self.work_finished.emit(tag, None, exc)

        future.add_done_callback(done)

    # ---- shutdown ---------------------------------------------------------------------------
    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Close the runner (ending its workers and fork server) and stop the engine thread."""
        if self._loop.is_closed():
            return
        runner = self._runner
        self._runner = None

        async def close() -> None:
            async with self._swap_lock:
                if runner is not None:
                    await runner.close()
            current = asyncio.current_task()
            pending = [t for t in asyncio.all_tasks() if t is not current]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self._submit(close()).result(timeout_s)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout_s)
        if not self._thread.is_alive():
            self._loop.close()
        if self._store is not None:
            self._store.close()
            self._store = None
