"""The engine on a thread of its own, seen from the GUI as jobs.

Runs, record reads and every other piece of heavy work happen on the engine thread's asyncio
loop (blocking functions in its worker threads). The window asks for work and gets a job back:
``submit(fn, *args)`` gives a :class:`Job`, ``start_run(...)`` a :class:`RunJob`. A job is a
QObject of the GUI thread whose signals say what happened to that one piece of work
(``started``, then ``finished(value)`` or ``failed(error)``), so the GUI thread never waits on a
worker, and nobody filters answers meant for someone else.

A job's signals always arrive through the GUI thread's event loop, even when the work was done
before ``submit`` returned: whoever asked has connected by then.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
import traceback
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot

from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import TurnError, turn_error
from studio.core.workspace.folder import Workspace
from studio.engine.runner import RunHandle, Runner

STUDIO_TRACEBACK = "studio_traceback"
"""The detail of an ``engine_failed`` turn error that holds the studio's own traceback."""


def engine_failure(exc: BaseException) -> TurnError:
    """The turn error of a run the studio itself could not carry out."""
    message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = "".join(traceback.format_exception(exc)).rstrip()
    return turn_error("engine_failed", message, details={STUDIO_TRACEBACK: text})


class _Delivery(QObject):
    """What every job shares: the answer crosses from the engine thread to the job's own
    thread as a queued call, and the bridge keeps the job alive until it has been told."""

    _began = Signal()
    _settled = Signal(object, object)

    def __init__(self, release: Callable[[_Delivery], None]) -> None:
        super().__init__()
        self._release = release
        self.done = False
        self.cancelled = False
        # Queued even when emitted on this thread: the answer never reaches a listener from
        # inside the call that created the job.
        self._began.connect(self._on_began, Qt.ConnectionType.QueuedConnection)
        self._settled.connect(self._on_settled, Qt.ConnectionType.QueuedConnection)

    @Slot()
    def _on_began(self) -> None:
        if not self.done and not self.cancelled:
            self._announce_start()

    @Slot(object, object)
    def _on_settled(self, value: Any, error: Any) -> None:
        if self.done:
            return
        self.done = True
        self._release(self)
        self._announce_end(value, error)

    def _announce_start(self) -> None:
        raise NotImplementedError

    def _announce_end(self, value: Any, error: Any) -> None:
        raise NotImplementedError


class Job(_Delivery):
    """One function run off the GUI thread.

    ``started`` when a worker thread takes it up; then ``finished(value)`` with what it
    returned, or ``failed(exception)`` with what it raised (the caller's own function, so the
    caller words its errors). After :meth:`cancel`, the job says nothing more."""

    started = Signal()
    finished = Signal(object)
    failed = Signal(object)

    def __init__(self, release: Callable[[_Delivery], None]) -> None:
        super().__init__(release)
        self.value: Any = None
        self.error: BaseException | None = None
        self._future: Future[Any] | None = None

    def cancel(self) -> None:
        """Stop listening; work not yet begun is not begun."""
        if self.done or self.cancelled:
            return
        self.cancelled = True
        if self._future is not None:
            self._future.cancel()

    def _announce_start(self) -> None:
        self.started.emit()

    def _announce_end(self, value: Any, error: Any) -> None:
        if self.cancelled:
            return
        if error is None:
            self.value = value
            self.finished.emit(value)
        else:
            self.error = error
            self.failed.emit(error)


class RunJob(_Delivery):
    """One run of a hook on a sample, as the window tracks it.

    ``started`` once the engine has begun it; then ``finished(outcome)`` with its
    ``RunOutcome`` (a hook's failure, a timeout or a cancel are outcomes too), or
    ``failed(turn_error)`` with an ``engine_failed`` turn error when the studio itself could
    not carry it out. :meth:`cancel` stops the hook; the outcome then says it was cancelled."""

    started = Signal()
    finished = Signal(object)
    failed = Signal(object)

    def __init__(
        self,
        release: Callable[[_Delivery], None],
        stop: Callable[[RunJob], None],
        sample: str,
        loop: str | None,
        hook: str | None,
        group: int | None,
    ) -> None:
        super().__init__(release)
        self._stop = stop
        self.sample = sample
        self.loop = loop
        self.hook = hook
        self.group = group
        self.started_at = time.monotonic()
        self.handle: RunHandle | None = None
        self.write_hold: int | None = None
        """The hold on the record writes taken for this run (see ``hold_writes``), if any."""
        self.outcome: RunOutcome | None = None
        self.error: TurnError | None = None

    def cancel(self) -> None:
        if not self.done:
            self.cancelled = True
            self._stop(self)

    def failed_outcome(self, error: TurnError, contract: str) -> RunOutcome:
        """The outcome that stands for this run where ``failed`` came instead of one, so it is
        shown and recorded like every other run."""
        return RunOutcome(
            contract=contract,
            status="turn_error",
            sample=self.sample,
            loop=self.loop,
            turn_error=error,
        )

    def _announce_start(self) -> None:
        self.started.emit()

    def _announce_end(self, value: Any, error: Any) -> None:
        if error is None:
            self.outcome = value
            self.finished.emit(value)
        else:
            self.error = error
            self.failed.emit(error)


class EngineBridge(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="hook-studio-engine", daemon=True)
        self._thread.start()
        self._runner: Runner | None = None
        self._store: Any = None
        self._jobs: set[_Delivery] = set()
        self._swap_lock = asyncio.Lock()
        self._held: list[Callable[[], None]] | None = None

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def _schedule(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        if self._loop.is_closed() or not self._thread.is_alive():
            coro.close()
            future: Future[Any] = Future()
            future.set_exception(RuntimeError("the engine has shut down"))
            return future
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _keep(self, job: _Delivery) -> None:
        self._jobs.add(job)

    def _release(self, job: _Delivery) -> None:
        self._jobs.discard(job)

    # ---- workspace ----------------------------------------------------------------------------
    def open_workspace(self, workspace: Workspace, store: Any) -> None:
        old = self._runner
        # The engine shares this process with the window: large JSON goes in pieces.
        if store is not None:
            store.write_in_pieces = True
        self._runner = Runner(workspace, store=store, cooperative=True)
        self._store = store

        async def swap() -> None:
            # One swap at a time; closing a runner stops its warm-up, whatever stage it is in.
            async with self._swap_lock:
                if old is not None:
                    await old.close()

        self._schedule(swap())

    def warm_up(self) -> None:
        """Get the open workspace's runtimes ready ahead of its first run. Not part of
        :meth:`open_workspace`: starting them takes the interpreter from the GUI thread, so the
        window asks once it is on screen (a run needs no warm-up, only waits for its runtime)."""
        runner = self._runner
        if runner is None:
            return

        async def warm() -> None:
            async with self._swap_lock:
                pass  # after the runner before it is closed, so the two do not start at once
            # Not under the lock: a close or a swap must be able to stop the warm-up midway.
            if runner is self._runner:  # a workspace opened since has its own runner
                await runner.warm_up()

        self._schedule(warm())

    @property
    def runner(self) -> Runner | None:
        return self._runner

    # ---- runs ---------------------------------------------------------------------------------
    def start_run(
        self,
        sample: str,
        loop: str | None = None,
        hook: str | None = None,
        group: int | None = None,
        hook_config: dict[str, Any] | None = None,
        document: dict[str, Any] | None = None,
    ) -> RunJob:
        """Run ``hook`` (the configured one when None) on ``sample`` (``document`` in place of
        its file's content); ``group`` ties the runs of one request together (Run on every
        target)."""
        job = RunJob(self._release, self._stop_run, sample, loop, hook, group)
        self._keep(job)
        runner = self._runner
        assert runner is not None, "open a workspace first"

        async def go() -> RunOutcome:
            job.handle = runner.start(
                sample, loop=loop, hook=hook, hook_config=hook_config, document=document
            )
            if job.cancelled:
                job.handle.cancel()
            job._began.emit()
            return await job.handle.outcome()

        self._schedule(go()).add_done_callback(lambda f: self._on_run_done(job, f))
        return job

    def hold_writes(self) -> int | None:
        """Keep the records of the runs that end from now on from being written until
        :meth:`release_writes` of the number returned (a couple of seconds at most): the window
        shows a large result meanwhile, and the write would share the interpreter with it.
        None when there is no record store."""
        return None if self._store is None else self._store.hold_writes()

    def release_writes(self, hold: int | None) -> None:
        if self._store is not None and hold is not None:
            self._store.release_writes(hold)

    def _stop_run(self, job: RunJob) -> None:
        # The handle is made and used on the engine thread only.
        def stop() -> None:
            if job.handle is not None:
                job.handle.cancel()

        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing left to stop
            self._loop.call_soon_threadsafe(stop)

    def cancel_all(self) -> None:
        for job in self.running:
            job.cancel()

    @property
    def running(self) -> list[RunJob]:
        """The runs not finished yet, oldest first."""
        runs = [job for job in self._jobs if isinstance(job, RunJob) and not job.done]
        return sorted(runs, key=lambda job: job.started_at)

    def _on_run_done(self, job: RunJob, future: Future[RunOutcome]) -> None:
        # A run's request and result can be a million objects, all plain JSON (no cycles, freed
        # by reference counting). Left to the cycle collector, each full pass over them holds
        # the interpreter lock for ~100 ms and the window with it; frozen, they are skipped.
        gc.freeze()
        try:
            outcome = future.result()
        except BaseException as exc:
            job._settled.emit(None, engine_failure(exc))
        else:
            job._settled.emit(outcome, None)

    # ---- other work off the GUI thread --------------------------------------------------------
    def hold_work(self) -> None:
        """Keep the work submitted from now on (listings, checks, reads) from starting until
        :meth:`release_work`: while the window is drawn for the first time, a worker thread
        would take the interpreter from it."""
        if self._held is None:
            self._held = []

    def release_work(self) -> None:
        """Start the work held since :meth:`hold_work`, in the order it came."""
        held, self._held = self._held, None
        for start in held or ():
            start()

    def submit(self, function: Callable[..., Any], *args: Any) -> Job:
        """Run ``function(*args)`` in a worker thread of the engine (once released, if held:
        see :meth:`hold_work`)."""
        job = Job(self._release)
        self._keep(job)

        async def go() -> Any:
            job._began.emit()
            return await asyncio.to_thread(function, *args)

        def done(future: Future[Any]) -> None:
            if future.cancelled():  # by cancel() (then nothing is said) or by shutdown
                job._settled.emit(None, RuntimeError("the engine shut down before the work ended"))
                return
            error = future.exception()
            job._settled.emit(future.result() if error is None else None, error)

        def start() -> None:
            if job.cancelled:  # before it began: nothing to run, nothing to say
                job._settled.emit(None, RuntimeError("cancelled before it began"))
                return
            job._future = self._schedule(go())
            job._future.add_done_callback(done)

        if self._held is not None:
            self._held.append(start)
        else:
            start()
        return job

    # ---- shutdown -----------------------------------------------------------------------------
    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Close the runner (ending its workers and fork server) and stop the engine thread."""
        if self._loop.is_closed():
            return
        runner = self._runner
        self._runner = None
        # Work still held is started, and then cancelled with the rest below.
        self.release_work()

        async def close() -> None:
            async with self._swap_lock:
                if runner is not None:
                    await runner.close()
            current = asyncio.current_task()
            pending = [t for t in asyncio.all_tasks() if t is not current]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            # A cancelled task does not stop its thread: let work already begun (a listing's
            # Node process, a records read) end, so nothing outlives the window.
            await asyncio.get_running_loop().shutdown_default_executor()

        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self._schedule(close()).result(timeout_s)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout_s)
        if not self._thread.is_alive():
            self._loop.close()
        if self._store is not None:
            self._store.close()
            self._store = None
