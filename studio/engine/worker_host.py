"""The engine's side of the workers: a fork server per workspace, one fresh worker per call.

``WorkerHost.run`` hands a spec and the input to a new worker, captures its stdout and stderr
(each up to a limit), reads its result frame, and ends it on timeout, cancel or too much output.
Whatever happens, the worker and everything it started are gone when ``run`` returns.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import itertools
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from studio.engine import process_control
from studio.engine.environment import worker_environment
from studio.engine.ready_spares import ReadySpares, close_received
from studio.engine.sandbox import SandboxPlan, SandboxState
from studio.engine.worker_protocol import (
    HEADER_SIZE,
    MAX_DATAGRAM,
    WorkerLimits,
    WorkerSpec,
    announced_length,
    decode_message,
    encode_message,
)

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_SOCKET_TYPE = getattr(socket, "SOCK_SEQPACKET", socket.SOCK_DGRAM)
_EXIT_GRACE_S = 5.0
_EOF_GRACE_S = 2.0
_START_TIMEOUT_S = 30.0
_ACKNOWLEDGE_S = 3.0
_STOPPED_CHECK_S = 0.05
_REPORT_GRACE_S = 0.5
_GROUP_END_S = 2.0
# A pipe holds 64 KiB unless asked for more: a 10 MB input would cross it in 160 turns of both
# processes. Widened (up to the kernel's pipe-max-size, 1 MiB by default) for large inputs only,
# since the kernel charges the room to the user.
_WIDE_PIPE = 1 << 20
_WIDEN_FROM = 1 << 18


class ForkServerUnavailable(RuntimeError):
    """The fork server could not be started or ended while a worker was running."""


class _SpawnFailed(ForkServerUnavailable):
    """The fork server is well but could not create the call's process."""


class _Unanswered(Exception):
    """The fork server did not acknowledge a call in time."""


class _SandboxBroken(ForkServerUnavailable):
    """The kernel let the fork server begin its sandbox and then refused a part of it."""


@dataclass
class WorkerResult:
    result: bytes = b""
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    exit_code: int | None = None
    exit_signal: str | None = None
    ended_by: str | None = None
    over_limit: str | None = None
    duration_ms: float = 0.0
    pid: int | None = None
    server_lost: bool = False
    start_error: str | None = None
    """Why no worker could be started for the call (the kernel refused a process, say)."""


class _Capture:
    """Reads one pipe without blocking the loop, keeping at most ``limit`` bytes."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        fd: int,
        limit: int,
        on_exceeded: Callable[[], None],
    ) -> None:
        self.loop = loop
        self.fd = fd
        self.limit = limit
        self.on_exceeded = on_exceeded
        self.chunks: list[bytes] = []
        self.size = 0
        self.truncated = False
        self.done: asyncio.Future[None] = loop.create_future()
        self.on_closed: Callable[[], None] | None = None
        os.set_blocking(fd, False)
        loop.add_reader(fd, self.read_available)

    def read_available(self) -> None:
        # A read that did not fill the buffer emptied the pipe: one more read finds its end
        # now, not on the loop's next turn.
        for _ in range(2):
            try:
                data = os.read(self.fd, _WIDE_PIPE)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.close()
                return
            if not self.truncated:
                self._keep(data)
            if len(data) == _WIDE_PIPE:
                return

    def _keep(self, data: bytes) -> None:
        room = self.limit - self.size
        if len(data) > room:
            self.chunks.append(data[:room])
            self.size = self.limit
            self.truncated = True
            self.on_exceeded()
        else:
            self.chunks.append(data)
            self.size += len(data)

    def close(self) -> None:
        if self.fd >= 0:
            self.loop.remove_reader(self.fd)
            os.close(self.fd)
            self.fd = -1
        if not self.done.done():
            self.done.set_result(None)
            if self.on_closed is not None:
                self.on_closed()

    @property
    def data(self) -> bytes:
        return b"".join(self.chunks)


class _Feeder:
    """Writes the input to the worker without blocking the loop; stops if the worker is gone."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, data: bytes) -> None:
        self.loop = loop
        self.fd = fd
        self.view = memoryview(data)
        os.set_blocking(fd, False)
        self._write()
        if self.fd >= 0:
            loop.add_writer(fd, self._write)

    def _write(self) -> None:
        try:
            while self.view:
                written = os.write(self.fd, self.view[: 1 << 20])
                self.view = self.view[written:]
        except BlockingIOError:
            return
        except OSError:
            pass
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            self.loop.remove_writer(self.fd)
            os.close(self.fd)
            self.fd = -1


def _widen(fd: int) -> None:
    """Give pipe ``fd`` room for ``_WIDE_PIPE`` bytes if the kernel allows it."""
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _WIDE_PIPE)


def exit_watch(pid: int) -> tuple[asyncio.Future[None], Callable[[], None]] | None:
    """A future set when process ``pid`` has exited, from a pidfd; None where there is none."""
    loop = asyncio.get_running_loop()
    gone: asyncio.Future[None] = loop.create_future()
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        # Exited and reaped already.
        gone.set_result(None)
        return gone, lambda: None
    except (AttributeError, OSError):
        return None

    def on_exit() -> None:
        if not gone.done():
            gone.set_result(None)

    loop.add_reader(fd, on_exit)

    def close() -> None:
        loop.remove_reader(fd)
        os.close(fd)

    return gone, close


async def wait_gone(pids: list[int], timeout_s: float) -> None:
    """Wait until each of ``pids`` has exited (sent SIGKILL, a process still takes a moment to
    go), for at most ``timeout_s``."""
    watches = [watch for watch in map(exit_watch, pids) if watch is not None]
    try:
        if watches:
            await asyncio.wait([gone for gone, _ in watches], timeout=timeout_s)
    finally:
        for _, close in watches:
            close()


_OK_PREFIX = b'{"status":"ok"'


def _holds_ok_frame(chunks: list[bytes]) -> bool:
    """Whether the result channel holds one whole frame whose envelope says ok."""
    if not chunks:
        return False
    head = chunks[0][: HEADER_SIZE + len(_OK_PREFIX)]
    length = announced_length(head)
    return (
        length is not None
        and head[HEADER_SIZE:] == _OK_PREFIX
        and sum(map(len, chunks)) == HEADER_SIZE + length
    )


def _answer(result: _Capture, outputs: tuple[_Capture, ...], on_answer: Callable[[], None]) -> None:
    """Call ``on_answer`` once the result channel and both output streams are closed with a
    complete ok frame on the first; never otherwise. Called by the read that closes the last of
    them, so that the run's own task is woken on the loop's next turn, not through a chain of
    futures that each take one more. The worker closes them one right after the other: when
    one is found closed, the others are read at once rather than on later turns."""
    captures = (result, *outputs)
    reading = False

    def check() -> None:
        nonlocal reading
        if reading:
            return
        reading = True
        try:
            for capture in captures:
                if not capture.done.done():
                    capture.read_available()
        finally:
            reading = False
        if all(capture.done.done() for capture in captures) and _holds_ok_frame(result.chunks):
            on_answer()

    for capture in captures:
        capture.on_closed = check
    check()


def _with_spec(message: dict[str, Any], spec: bytes) -> bytes:
    """``message`` with the member ``spec`` whose JSON text is ``spec``, as one control message."""
    data = encode_message(message)[:-1] + b',"spec":' + spec + b"}"
    if len(data) > MAX_DATAGRAM:
        raise ValueError(f"control message of {len(data)} bytes is too large")
    return data


@dataclass
class _Pending:
    invocation: str
    spawned: asyncio.Future[int]
    exited: asyncio.Future[dict[str, Any]]
    pid: int | None = None
    kill_when_spawned: bool = False
    exit_asked: bool = False
    """Whether the fork server was asked for the worker's exit event (it sends none unasked)."""


@dataclass
class WorkerHost:
    """Owns the fork server of one workspace and runs workers through it."""

    workspace: Path
    declared_env: Mapping[str, str] = field(default_factory=dict)
    passed_env: tuple[str, ...] = ()
    python: str = sys.executable
    sandbox: SandboxPlan | None = None

    def __post_init__(self) -> None:
        self.workspace = Path(os.path.realpath(self.workspace))
        self.sandbox_active = False
        self.sandbox_notice = ""
        """Why hooks run without the sandbox, when they do (the kernel refused it)."""
        self._sandbox_broken: str | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._pump: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[int] | None = None
        self._pending: dict[str, _Pending] = {}
        self._ids = itertools.count(1)
        self._unsent: collections.deque[bytes] = collections.deque()
        """Messages for the fork server that it could not take yet, oldest first."""
        self._start_lock: asyncio.Lock | None = None
        self._spares = ReadySpares()
        """Ready spares the fork server handed over: calls go to them without the server."""

    # ---- fork server lifecycle -----------------------------------------------------------
    @property
    def held_spares(self) -> list[int]:
        """The pids of the ready spares the fork server has handed to this host."""
        return self._spares.pids()

    @property
    def running(self) -> bool:
        # Not reaped here: the server's pid is the id of its process group (see _stop_server).
        return (
            self._process is not None
            and not process_control.has_exited(self._process.pid)
            and self._pump is not None
        )

    async def start(self) -> None:
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self.running:
                return
            await self._stop_server()
            plan = self.sandbox
            if plan is not None and plan.enabled:
                for folder in plan.hidden:
                    # Hidden only if it exists when the sandbox is built.
                    with contextlib.suppress(OSError):
                        os.makedirs(folder, exist_ok=True)
            try:
                await self._start_server(plan)
            except _SandboxBroken as broken:
                assert plan is not None
                await self._stop_server()
                await self._start_server(replace(plan, enabled=False))
                self.sandbox_notice = f"hooks run without the sandbox: {broken}"

    async def _start_server(self, plan: SandboxPlan | None) -> None:
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, _SOCKET_TYPE)
        ours.setblocking(False)
        arguments = ["fork_server", str(theirs.fileno())]
        if plan is not None:
            arguments.append(plan.to_json())
        launcher = (
            f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
            "from studio.engine.fork_server import main; "
            f"raise SystemExit(main({arguments!r}))"
        )
        env = worker_environment(self.declared_env, self.passed_env)
        try:
            self._process = subprocess.Popen(
                [self.python, "-I", "-c", launcher],
                pass_fds=[theirs.fileno()],
                env=env,
                cwd=self.workspace,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            ours.close()
            raise ForkServerUnavailable(f"cannot start the worker fork server: {exc}") from exc
        finally:
            theirs.close()
        self._control = ours
        self._ready = loop.create_future()
        self._pump = loop.create_task(self._read_events(ours))
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), _START_TIMEOUT_S)
        except asyncio.CancelledError:
            # A start given up (its workspace closed): the server has run nothing, and waiting
            # for it to notice the stop could take as long as the start it is still making.
            self._ready.cancel()
            process_control.kill_tree(self._process.pid)
            await self._stop_server()
            raise
        except _SandboxBroken:
            raise
        except (TimeoutError, ForkServerUnavailable) as exc:
            await self._stop_server()
            raise ForkServerUnavailable(f"the worker fork server did not start: {exc}") from exc

    async def _read_events(self, control: socket.socket) -> None:
        """Read the fork server's events (some carry a spare's channel) until it is gone."""
        loop = asyncio.get_running_loop()
        fd = control.fileno()
        lost: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            while not lost.done():
                try:
                    data, fds, _, _ = socket.recv_fds(
                        control, MAX_DATAGRAM, 1, socket.MSG_CMSG_CLOEXEC
                    )
                except BlockingIOError:
                    return
                except OSError:
                    data, fds = b"", []
                try:
                    if not data:
                        raise ValueError("the fork server closed its end")
                    self._on_event(decode_message(data), fds)
                except (ValueError, KeyError, TypeError):
                    close_received(fds)
                    lost.set_result(None)

        loop.add_reader(fd, readable)
        try:
            await lost
        finally:
            # _stop_server stops reading before it closes the socket (then this is -1).
            if control.fileno() >= 0:
                loop.remove_reader(fd)
            self._on_server_lost()

    def _on_event(self, event: dict[str, Any], fds: list[int]) -> None:
        kind = event.get("event")
        if kind == "spare" and len(fds) == 1:
            hook = event["hook"]
            self._spares.add(
                event["pid"], fds[0], None if hook is None else encode_message(hook), event["files"]
            )
            return
        close_received(fds)
        if kind == "spare_gone":
            self._spares.forget(event["pid"])
            return
        if kind == "ready":
            state = SandboxState.from_json(event.get("sandbox"))
            self.sandbox_active = state.active
            self.sandbox_notice = state.notice(self.sandbox is not None and self.sandbox.enabled)
            if self._ready and not self._ready.done():
                self._ready.set_result(event["pid"])
            return
        if kind == "sandbox_broken":
            if self._ready and not self._ready.done():
                self._ready.set_exception(_SandboxBroken(str(event.get("reason"))))
            return
        pending = self._pending.get(event.get("id", ""))
        if pending is None:
            return
        if kind == "spawned":
            pending.pid = event["pid"]
            if not pending.spawned.done():
                pending.spawned.set_result(event["pid"])
            if pending.kill_when_spawned:
                process_control.kill_tree(event["pid"])
        elif kind == "spawn_failed":
            error = _SpawnFailed(str(event.get("error")))
            for future in (pending.spawned, pending.exited):
                if not future.done():
                    future.set_exception(error)
        elif kind == "exited" and not pending.exited.done():
            pending.exited.set_result(event)

    def _on_server_lost(self) -> None:
        self._spares.clear()
        if self._process is not None:
            # Gone by itself, or no longer making sense: whatever it made goes with it now.
            process_control.kill_group(self._process.pid)
        lost = ForkServerUnavailable("the worker fork server ended")
        if self._ready and not self._ready.done():
            self._ready.set_exception(lost)
        for pending in self._pending.values():
            if pending.pid is not None:
                process_control.kill_tree(pending.pid)
            for future in (pending.spawned, pending.exited):
                if not future.done():
                    future.set_exception(lost)
                    future.exception()
        self._pump = None

    async def _stop_server(self) -> None:
        process, control, pump = self._process, self._control, self._pump
        self._process, self._control, self._pump = None, None, None
        self._spares.clear()
        if control is not None:
            if self._unsent:
                self._unsent.clear()
                asyncio.get_running_loop().remove_writer(control.fileno())
            if pump is not None:
                asyncio.get_running_loop().remove_reader(control.fileno())
            with contextlib.suppress(OSError):
                control.send(encode_message({"op": "stop"}))
            control.close()
        if pump is not None:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump
        if process is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.to_thread(process_control.wait_unreaped, process.pid), 2.0
                )
            # Everything the server made is in its process group until it has taken its death
            # signal: a process stopped before then (or the server itself, stuck) would outlive
            # the server. Killed as a group while the server is unreaped, so that its pid, the
            # group's id, cannot have gone to another process.
            process_control.kill_group(process.pid)
            await wait_gone(process_control.group_members(process.pid), _GROUP_END_S)
            await asyncio.to_thread(process.wait)

    async def close(self) -> None:
        for pending in list(self._pending.values()):
            if pending.pid is not None:
                process_control.kill_tree(pending.pid)
        if self._start_lock is None:
            await self._stop_server()
            return
        async with self._start_lock:
            await self._stop_server()

    # ---- one invocation ------------------------------------------------------------------
    async def run(
        self,
        spec: WorkerSpec,
        input_data: bytes,
        *,
        timeout_s: float,
        limits: WorkerLimits | None = None,
    ) -> WorkerResult:
        """Run one worker to its end. Cancelling the awaiting task ends the worker at once.

        A fork server that is stopped, or does not acknowledge the call in time, is the
        studio's failure, never the hook's: it is ended and replaced, and the call (which has
        not begun) goes to the new one, once."""
        limits = limits or WorkerLimits()
        for _ in range(2):
            # A server stopped by a hook run without the sandbox is not looked for before each
            # call: a call the engine gives a held spare does not need it, and one it asks the
            # server for finds it stopped when the acknowledgement is late (_acknowledged).
            if not self.running:
                try:
                    await self.start()
                except ForkServerUnavailable as exc:
                    return WorkerResult(start_error=str(exc))
            try:
                return await self._run_once(spec, input_data, timeout_s, limits)
            except _Unanswered:
                await self._replace_server()
        return WorkerResult(server_lost=True)

    async def _replace_server(self) -> None:
        if self._process is not None:
            process_control.kill_tree(self._process.pid)
        await self.close()

    async def _run_once(
        self, spec: WorkerSpec, input_data: bytes, timeout_s: float, limits: WorkerLimits
    ) -> WorkerResult:
        loop = asyncio.get_running_loop()
        invocation = f"w{next(self._ids)}"
        pending = _Pending(invocation, loop.create_future(), loop.create_future())
        self._pending[invocation] = pending
        outcome = WorkerResult()

        def end(reason: str) -> None:
            if outcome.ended_by is None:
                outcome.ended_by = reason
            if pending.pid is None:
                pending.kill_when_spawned = True
            else:
                process_control.kill_tree(pending.pid)

        def over(stream: str) -> Callable[[], None]:
            def exceeded() -> None:
                outcome.over_limit = outcome.over_limit or stream
                end("output_limit")

            return exceeded

        in_r, in_w = os.pipe2(os.O_CLOEXEC)
        res_r, res_w = os.pipe2(os.O_CLOEXEC)
        if len(input_data) >= _WIDEN_FROM:
            # A large request usually comes back large.
            _widen(in_w)
            _widen(res_w)
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        theirs = [in_r, res_w, out_w, err_w]
        call = {**spec.to_json(), "memory_bytes": limits.memory_bytes}
        started = time.perf_counter()
        # The input goes into the pipe first (all of a small one): the worker finds it there
        # instead of waiting for this loop's next turn after the hand-over.
        feeder = _Feeder(loop, in_w, input_data)
        try:
            await self._hand_over(invocation, pending, call, theirs, len(input_data))
        except BaseException:
            feeder.close()
            for fd in (res_r, out_r, err_r):
                os.close(fd)
            self._pending.pop(invocation, None)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        result = _Capture(loop, res_r, limits.result_bytes, over("result"))
        stdout = _Capture(loop, out_r, limits.output_bytes, over("stdout"))
        stderr = _Capture(loop, err_r, limits.output_bytes, over("stderr"))
        captures = (result, stdout, stderr)
        try:
            try:
                await self._acknowledged(pending)
                exit_event = await self._ended(pending, result, (stdout, stderr), timeout_s)
            except TimeoutError:
                end("timeout")
                exit_event = await self._await_exit(pending)
            except asyncio.CancelledError:
                end("cancelled")
                with contextlib.suppress(BaseException):
                    await self._await_exit(pending)
                raise
            except _SpawnFailed as exc:
                outcome.start_error = str(exc)
                exit_event = {}
            except ForkServerUnavailable:
                outcome.server_lost = True
                exit_event = {}
            outcome.duration_ms = (time.perf_counter() - started) * 1000
            outcome.pid = pending.pid
            outcome.exit_code = exit_event.get("code")
            outcome.exit_signal = exit_event.get("signal")
            waiting = [c.done for c in captures if not c.done.done()]
            late = (await asyncio.wait(waiting, timeout=_EOF_GRACE_S))[1] if waiting else ()
            if late and pending.pid is not None:
                # Something still holds a pipe open; the worker's group is ended regardless.
                process_control.kill_tree(pending.pid)
        finally:
            feeder.close()
            for capture in captures:
                capture.close()
            self._pending.pop(invocation, None)
        outcome.result = result.data
        outcome.stdout = stdout.data
        outcome.stderr = stderr.data
        outcome.stdout_truncated = stdout.truncated
        outcome.stderr_truncated = stderr.truncated
        return outcome

    async def _ended(
        self, pending: _Pending, result: _Capture, outputs: tuple[_Capture, ...], timeout_s: float
    ) -> dict[str, Any]:
        """Wait until the worker has answered or is gone; TimeoutError after ``timeout_s``. A
        complete ok frame with both output streams closed is the answer: the processes' exit
        (and the sandbox's teardown) then happens after the run, off its path. Otherwise the
        kernel says the worker is gone first (a pidfd), and the fork server's report, which
        carries the exit status, is asked for and awaited only when the worker did not leave a
        complete result, since only then does the status tell the story."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        woken: asyncio.Future[bool] = loop.create_future()

        def wake(answered: bool) -> None:
            if not woken.done():
                woken.set_result(answered)

        def on_done(_: asyncio.Future[Any]) -> None:
            wake(False)

        _answer(result, outputs, lambda: wake(True))
        watch = exit_watch(pending.spawned.result())
        if watch is not None:
            watch[0].add_done_callback(on_done)
        else:
            # Without a pidfd only the fork server's report says the worker is gone.
            self._ask_exit(pending)
        pending.exited.add_done_callback(on_done)
        timer = loop.call_at(deadline, wake, False)
        try:
            answered = await woken
        finally:
            timer.cancel()
            pending.exited.remove_done_callback(on_done)
            for capture in (result, *outputs):
                capture.on_closed = None
            if watch is not None:
                watch[1]()
        if answered:
            return {}
        if pending.exited.done():
            return pending.exited.result()
        if watch is None or not watch[0].done():
            raise TimeoutError
        async with asyncio.timeout_at(deadline):
            await result.done
        if _holds_ok_frame(result.chunks):
            return {}
        self._ask_exit(pending)
        # A call the engine gave a spare itself never waited for the server: a server frozen
        # since must not hold the run for ever, only cost it the status.
        try:
            async with asyncio.timeout_at(min(deadline, loop.time() + _EXIT_GRACE_S)):
                return await asyncio.shield(pending.exited)
        except TimeoutError:
            if loop.time() >= deadline:
                raise
            return {}

    async def _acknowledged(self, pending: _Pending) -> None:
        """Wait for the fork server to say which process runs the call; the hook's deadline
        starts after that. No word in time means the server is frozen or gone."""
        if pending.spawned.done():
            pending.spawned.result()
            return
        deadline = time.monotonic() + _ACKNOWLEDGE_S
        while True:
            try:
                await asyncio.wait_for(asyncio.shield(pending.spawned), _STOPPED_CHECK_S)
                return
            except TimeoutError:
                # A server stopped by a hook (one run without the sandbox) is seen at once.
                process = self._process
                if time.monotonic() >= deadline or (
                    process is not None and process_control.stopped(process.pid)
                ):
                    raise _Unanswered from None

    async def _await_exit(self, pending: _Pending) -> dict[str, Any]:
        """The exit status of an ended worker. The kernel says when it is gone (a pidfd); the
        fork server's report follows at once unless the server itself is stuck, which then
        costs the run no more than a short grace."""
        self._ask_exit(pending)
        watch = exit_watch(pending.pid) if pending.pid is not None else None
        waiting: set[asyncio.Future[Any]] = {pending.exited}
        if watch is not None:
            waiting.add(watch[0])
        try:
            await asyncio.wait(waiting, timeout=_EXIT_GRACE_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if watch is not None:
                watch[1]()
        if not pending.exited.done() and watch is not None and watch[0].done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(pending.exited), _REPORT_GRACE_S)
        if pending.exited.done() and pending.exited.exception() is None:
            return pending.exited.result()
        # The fork server has not reported the worker: end it again and stop waiting.
        if pending.pid is not None:
            process_control.kill_tree(pending.pid)
        return {}

    def _ask_exit(self, pending: _Pending) -> None:
        """Ask the fork server for the worker's exit event: the run needs its status, having no
        complete answer. Sent behind the call's own hand-over, so the server knows the call."""
        if not pending.exit_asked:
            pending.exit_asked = True
            self._tell_server(encode_message({"op": "status", "id": pending.invocation}))

    async def _hand_over(
        self,
        invocation: str,
        pending: _Pending,
        call: dict[str, Any],
        fds: list[int],
        size: int,
    ) -> None:
        """Give the call to a ready spare the engine holds, then tell the fork server which one
        (it reaps it, and keeps its exit status until asked); without one, ask the server to
        hand the call over. The server is told the size of the call's input either way: its
        next spares ready as much memory as calls of that size use."""
        if self._control is None:
            raise ForkServerUnavailable("the worker fork server is not running")
        encoded = encode_message(call)
        pid = self._spares.hand_over(encoded, fds, sandboxed=self.sandbox_active)
        if pid is None:
            spawn = {"op": "spawn", "id": invocation, "input": size}
            await self._send_with_fds(_with_spec(spawn, encoded), fds)
            return
        pending.pid = pid
        pending.spawned.set_result(pid)
        # Not awaited: the call is under way without the server, whose word on it (the exit
        # status) only matters when the worker leaves no result. A server that cannot take it
        # now (stopped by a hook run without the sandbox, say) gets it when it can.
        took = {"op": "took", "id": invocation, "pid": pid, "input": size}
        self._tell_server(_with_spec(took, encoded))

    def _tell_server(self, message: bytes) -> None:
        """Send ``message`` to the fork server now, or, behind those still waiting, once it
        can take them; never waits."""
        control = self._control
        if control is None:
            return
        self._unsent.append(message)
        if len(self._unsent) == 1 and not self._send_unsent(control):
            asyncio.get_running_loop().add_writer(control.fileno(), self._on_writable, control)

    def _send_unsent(self, control: socket.socket) -> bool:
        """Send what waits for the fork server; whether all of it went."""
        while self._unsent:
            try:
                control.send(self._unsent[0])
            except BlockingIOError:
                return False
            except OSError:
                # A server gone by now is found by the event pump, which fails its calls as lost.
                self._unsent.clear()
                return True
            self._unsent.popleft()
        return True

    def _on_writable(self, control: socket.socket) -> None:
        if self._send_unsent(control):
            asyncio.get_running_loop().remove_writer(control.fileno())

    async def _send_with_fds(self, message: bytes, fds: list[int]) -> None:
        """Send ``message`` with ``fds`` (which the caller closes after) to the fork server,
        after the messages still waiting for it. A server that cannot take it within
        ``_STOPPED_CHECK_S`` and is stopped gets no more time: it is frozen."""
        control = self._control
        if control is None:
            raise ForkServerUnavailable("the worker fork server is not running")
        loop = asyncio.get_running_loop()
        while True:
            if self._send_unsent(control):
                try:
                    socket.send_fds(control, [message], fds)
                    return
                except BlockingIOError:
                    pass
                except OSError as exc:
                    raise ForkServerUnavailable(f"the worker fork server is gone: {exc}") from exc
            writable = loop.create_future()
            loop.add_writer(control.fileno(), writable.set_result, None)
            try:
                await asyncio.wait_for(writable, _STOPPED_CHECK_S)
            except TimeoutError:
                process = self._process
                if process is not None and process_control.stopped(process.pid):
                    raise _Unanswered from None
            finally:
                if control.fileno() >= 0:
                    loop.remove_writer(control.fileno())
                    if self._unsent:
                        loop.add_writer(control.fileno(), self._on_writable, control)
