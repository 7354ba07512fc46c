"""The fork server: a small, clean Python process that forks one fresh worker per invocation.

It is started by the engine with a cleaned environment, in the workspace, and imports the worker
machinery once, so that a worker costs a fork instead of an interpreter start. It never runs user
code itself: every hook runs in a child created for that one call, which never comes back.

Run as ``python -I -m studio.engine.fork_server FD`` where FD is a datagram socket to the engine.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import gc
import os
import selectors
import signal
import socket
import sys
from typing import Any, NoReturn

from studio.engine import hook_preparation, process_control, sandbox, source_version, worker_runtime
from studio.engine.ready_spares import latest_hooks
from studio.engine.worker_protocol import MAX_DATAGRAM, WorkerSpec, decode_message, encode_message

# Imported once here so that every worker starts with them already loaded. Not asyncio: with
# the modules it brings (threading, logging, subprocess, concurrent.futures), it would make every
# fork cost about half a millisecond more of processor time (more pages to copy, and the
# handlers those modules run in each new process), for the few hooks that are async; a spare
# that loads an async hook ahead imports it then.
PRELOADED = (
    "json",
    "fcntl",
    "studio.core.json.values",
    "studio.core.json.canonical",
)


def preload() -> None:
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)


_SOCKET_TYPE = getattr(socket, "SOCK_SEQPACKET", socket.SOCK_DGRAM)
# A sandboxed spare takes a few runs' time to make on a busy machine (its namespaces above
# all): with five, runs one after another or two at once nearly always find one ready. Each
# costs about 5 MB of its own memory.
SPARES = 5


# Spares that load no hook ahead: a call for another hook, or for one just edited, takes one.
PLAIN_SPARES = 1

# The inputs of this many calls, the latest, tell how much memory a new spare readies while it
# waits (see worker_runtime.wait_for_call): about as much as the largest of them takes to read
# and answer, none where all were small. A workspace of small requests keeps its spares small.
RECENT_CALLS = 8
WARM_PER_INPUT_BYTE = 8
WARM_FROM = 64 << 10
"""Calls with inputs below this many bytes take few page faults; their spares ready nothing."""

# How many offered spares that died before the engine said it took them are remembered, so
# that a call the engine gave one of them still gets its exit status.
_GONE_KEPT = 16

# How many ended calls' exit statuses are kept for the engine to ask for. It asks only when a
# call left no complete answer, right after the kernel told it the worker is gone, so a status
# is dropped only after this many other calls ended in between.
_ENDED_KEPT = 256


class _Spare:
    def __init__(self, pid: int, channel: socket.socket, hook: dict[str, Any] | None) -> None:
        self.pid = pid
        self.channel = channel
        self.hook = hook
        """The spec whose hook this spare loaded ahead of its call; None for a plain spare."""
        self.files: list[source_version.FileVersion] = []
        self.ready = False
        self.watched = True
        """Whether the server's selector still waits for the spare's word."""
        self.offered = False
        """Whether the engine holds the spare's channel: then only the engine gives it a call,
        and only the engine ends it (but for the server's own end)."""

    def close(self) -> None:
        self.channel.close()


def _wait_as_spare(channel: socket.socket, hook: dict[str, Any] | None, warm: int) -> NoReturn:
    """A spare worker: isolated, with ``hook`` loaded if given, and idle until its one
    invocation arrives (``warm`` bytes of memory readied should it wait long)."""
    prepared = None
    try:
        worker_runtime.become_spare([channel.fileno()])
        if hook is not None:
            try:
                prepared = hook_preparation.prepare(WorkerSpec.from_json(hook))
            except hook_preparation.TooSlow:
                channel.send(encode_message({"ready": False, "too_slow": True}))
                os._exit(0)
            except hook_preparation.EditedWhileLoading:
                channel.send(encode_message({"ready": False}))
                os._exit(0)
        files = prepared.files if prepared is not None else None
        channel.send(encode_message({"ready": True, "files": files}))
        worker_runtime.wait_for_call(channel, warm)
        data, fds, _, _ = socket.recv_fds(channel, MAX_DATAGRAM, 8)
        channel.close()
        if not data or len(fds) != 4:
            os._exit(0)
        call = decode_message(data)
        if prepared is not None and call != hook:
            os._exit(0)
        spec = WorkerSpec.from_json(call)
    except BaseException:
        os._exit(0)
    worker_runtime.enter_worker(spec, fds, prepared)


def _worker_now(spec: WorkerSpec, fds: list[int]) -> NoReturn:
    """A worker forked on demand, when no spare is left."""
    try:
        worker_runtime.become_spare(fds, rehearse=False)
    except BaseException:
        os._exit(71)
    worker_runtime.enter_worker(spec, fds)


class _SandboxMaker:
    """The process that forks every call sandbox of a sandboxed server, each init given to the
    server as its own child (which reaps it as it would one it forked).

    It is forked once, before the server starts serving, and does nothing between two forks but
    wait for the next request: a fork makes every page of the forking process shared with the
    child, and each page the forking process writes afterwards is copied. The server writes a
    great many between two forks (events, spares, records of who is who); this process writes a
    few, and the server, which no longer forks, copies none."""

    def __init__(self, call: sandbox.CallSandbox, *keep_out: socket.socket) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, _SOCKET_TYPE)
        server = os.getpid()
        pid = os.fork()
        if pid == 0:
            # The server's end of its control socket, held here, would keep the engine from
            # seeing the server end.
            for held in (ours, *keep_out):
                held.close()
            _make_on_request(theirs, call, server)
        theirs.close()
        self.pid = pid
        self.channel = ours

    def make(self, request: dict[str, Any], fds: list[int]) -> tuple[int, int]:
        """Fork a call sandbox whose process runs ``request`` (see :func:`_run_requested`) with
        ``fds``: its init's pid and the read end of its status pipe."""
        socket.send_fds(self.channel, [encode_message(request)], fds)
        data, got, _, _ = socket.recv_fds(self.channel, 64, 1)
        if not data or len(got) != 1:
            for fd in got:
                os.close(fd)
            raise OSError("the fork server's sandbox maker made no call sandbox")
        return int(data), got[0]


def _make_on_request(channel: socket.socket, call: sandbox.CallSandbox, server: int) -> NoReturn:
    process_control.die_with_parent(server)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(channel, MAX_DATAGRAM, 8)
        except InterruptedError:
            continue
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)
        refused = False
        try:
            made = sandbox.fork_call(call, for_parent=True)
        except OSError:
            made, refused = None, True
        if made is not None:
            answer, status = b"%d" % made.pid, [made.status]
        elif not refused:
            try:
                request = decode_message(data)
            except BaseException:
                os._exit(0)
            _run_requested(request, fds)
        else:  # the kernel refused: the server is told so, and makes no spare
            answer, status = b"", []
        try:
            socket.send_fds(channel, [answer], status)
        except OSError:
            os._exit(0)
        for fd in [*fds, *status]:
            os.close(fd)


def _run_requested(request: dict[str, Any], fds: list[int]) -> NoReturn:
    """In a process the server asked for: be the spare, or the worker on demand."""
    try:
        if "spec" in request:
            spec = WorkerSpec.from_json(request["spec"])
        else:
            channel = socket.socket(fileno=fds[0])
    except BaseException:
        os._exit(0)
    if "spec" in request:
        _worker_now(spec, fds)
    _wait_as_spare(channel, request.get("hook"), request.get("warm", 0))


class ForkServer:
    def __init__(
        self,
        control: socket.socket,
        state: sandbox.SandboxState,
        maker: _SandboxMaker | None = None,
    ) -> None:
        self.control = control
        self.state = state
        # What makes each call's sandbox; None: calls get none.
        self.maker = maker
        self.maker_pid = maker.pid if maker is not None else None
        self.stopping = False
        self.status: dict[int, int] = {}
        """The status pipe of each call sandbox's init, by its pid (see sandbox.fork_call)."""
        self.workers: dict[int, str] = {}
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        self.wake_r = wake_r
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.selector = selectors.DefaultSelector()
        self.selector.register(control, selectors.EVENT_READ, self._on_command)
        self.selector.register(wake_r, selectors.EVENT_READ, self._on_signal)
        self.spares: list[_Spare] = []
        # The channels of spares that took a call, closed when they end: a channel closed while
        # its ready word is unread would reset the spare's side before it reads its call.
        self.handed: dict[int, _Spare] = {}
        self.hooks: list[dict[str, Any]] = []
        """The specs of the latest calls' hooks, the latest last: those spares load ahead of
        the next calls (see ready_spares.RECENT_HOOKS)."""
        self.too_slow: dict[str, Any] | None = None
        """A spec whose load took too long to be done ahead (until another one is called)."""
        self.gone: dict[int, dict[str, Any]] = {}
        """How offered spares that died ended, by pid, for a call the engine gave one first."""
        self.ended: dict[str, dict[str, Any]] = {}
        """The exit events of calls whose worker ended, by call id, until the engine asks."""
        self.asked: set[str] = set()
        """Calls whose exit the engine asked for before their worker ended."""
        self.inputs: collections.deque[int] = collections.deque(maxlen=RECENT_CALLS)
        """The sizes of the latest calls' inputs, in bytes."""

    def send(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.control.send(encode_message(message))

    def serve(self) -> None:
        self._replenish()
        self.send(
            {
                "event": "ready",
                "pid": os.getpid(),
                "sandbox": self.state.to_json(),
            }
        )
        try:
            while True:
                for key, _ in self.selector.select():
                    if key.data() is False or self.stopping:
                        return
        finally:
            self._shut_down()

    def _shut_down(self) -> None:
        """End the spare, any worker still running and whatever they left, then go."""
        for spare in self.spares:
            process_control.kill_tree(spare.pid)
            spare.close()
        self.spares.clear()
        for spare in self.handed.values():
            spare.close()
        self.handed.clear()
        for pid in list(self.workers):
            process_control.kill_tree(pid)
        self.workers.clear()
        self._end_orphans()

    def _on_command(self) -> bool:
        try:
            data, fds, _, _ = socket.recv_fds(self.control, MAX_DATAGRAM, 8)
        except (ConnectionError, OSError):
            return False
        if not data:
            for fd in fds:
                os.close(fd)
            return False
        message = decode_message(data)
        if message.get("op") == "spawn":
            self._spawn(message, fds)
        elif message.get("op") == "took":
            self._took(message)
        elif message.get("op") == "status":
            self._status(message["id"])
        elif message.get("op") == "stop":
            return False
        return True

    def _spawn(self, message: dict[str, Any], fds: list[int]) -> None:
        invocation = message["id"]
        try:
            WorkerSpec.from_json(message["spec"])  # a malformed call is refused here
            pid = self._hand_to_spare(message["spec"], fds)
            if pid is None:
                pid = self._make({"spec": message["spec"]}, fds)
            self._note_call(message)
        except Exception as exc:
            self.send({"event": "spawn_failed", "id": invocation, "error": str(exc)})
            return
        finally:
            for fd in fds:
                os.close(fd)
        self.workers[pid] = invocation
        self.send({"event": "spawned", "id": invocation, "pid": pid})

    def _took(self, message: dict[str, Any]) -> None:
        """The engine gave a call to an offered spare: it is that call's worker now."""
        invocation, pid = message["id"], message["pid"]
        spare = next((s for s in self.spares if s.pid == pid and s.offered), None)
        if spare is not None:
            self.spares.remove(spare)
            self.workers[pid] = invocation
        else:
            self._exited(invocation, pid, self.gone.pop(pid, {}))
        self._note_call(message)
        # The call is under way without this server: its replacement starts now, on the other
        # processor, and is ready sooner than if it waited for the call to end.
        self._replenish()

    def _warm_bytes(self) -> int:
        """How much memory a spare made now readies while it waits."""
        largest = max(self.inputs, default=0)
        if largest < WARM_FROM:
            return 0
        return min(largest * WARM_PER_INPUT_BYTE, worker_runtime.WARM_MOST)

    def _status(self, invocation: str) -> None:
        """The engine needs the exit status of a call (it left no complete answer): sent now if
        its worker has ended, otherwise as soon as it does. A call this server no longer knows
        of gets an exit event without one, so that the engine does not wait for it."""
        event = self.ended.pop(invocation, None)
        if event is not None:
            self.send(event)
        elif invocation in self.workers.values():
            self.asked.add(invocation)
        else:
            self.send({"event": "exited", "id": invocation})

    def _exited(self, invocation: str, pid: int, status: dict[str, Any]) -> None:
        """A call's worker ended. Most calls have given the engine their whole answer by now,
        and the engine has no use for the status: it is kept until asked for instead of being
        sent, which would wake the engine once more per call."""
        event = {"event": "exited", "id": invocation, "pid": pid, **status}
        if invocation in self.asked:
            self.asked.discard(invocation)
            self.send(event)
            return
        self.ended[invocation] = event
        while len(self.ended) > _ENDED_KEPT:
            del self.ended[next(iter(self.ended))]

    def _make(self, request: dict[str, Any], fds: list[int]) -> int:
        """A process that runs ``request`` (see :func:`_run_requested`) with ``fds``: in a
        sandbox of its own when calls get one. It closes every descriptor it inherited and does
        not need (the server's end of a spare's own channel, held there, would keep the spare
        waiting forever once the server is gone) before it waits for anything."""
        if self.maker is not None:
            pid, status = self.maker.make(request, fds)
            self.status[pid] = status
            return pid
        server = os.getpid()
        pid = os.fork()
        if pid:
            return pid
        process_control.die_with_parent(server)
        _run_requested(request, fds)

    def _replenish(self) -> None:
        """Keep spare workers forked ahead of their invocations. A spare is as fresh as a worker
        forked on demand: it comes from this server, which never runs user code, and serves
        exactly one call. A spare the server hands a call to is replaced when its worker ends,
        not while it starts, so the fork does not compete with a starting worker; one the engine
        took is replaced as soon as the engine says so, after the call was given."""
        warm = self._warm_bytes()
        while len(self.spares) < SPARES:
            plain = sum(1 for spare in self.spares if spare.hook is None)
            loads = self._next_hook() if plain >= PLAIN_SPARES else None
            ours, theirs = socket.socketpair(socket.AF_UNIX, _SOCKET_TYPE)
            try:
                pid = self._make({"hook": loads, "warm": warm}, [theirs.fileno()])
            except OSError:
                ours.close()
                return
            finally:
                theirs.close()
            spare = _Spare(pid, ours, loads)
            self.spares.append(spare)
            self.selector.register(
                ours, selectors.EVENT_READ, functools.partial(self._on_ready, spare)
            )

    def _on_ready(self, spare: _Spare) -> bool:
        """A spare said it is ready (and which files its hook's load read), or that the load
        took too long, or its channel closed (it died; the reaper forgets it)."""
        if not spare.watched:
            # Taken or ended by an event of the same wake-up: its word is not for this server.
            return True
        self._unwatch(spare)
        try:
            word = decode_message(spare.channel.recv(MAX_DATAGRAM))
        except (OSError, ValueError):
            return True
        spare.ready = word.get("ready") is True
        spare.files = [tuple(version) for version in word.get("files") or []]
        if word.get("too_slow") is True:
            self.too_slow = spare.hook
        if spare.ready:
            self._offer(spare)
        return True

    def _offer(self, spare: _Spare) -> None:
        """Hand a ready spare's channel to the engine, which then sends a call to the spare
        without this server on the call's path. A spare the engine cannot be told about stays
        the server's own, for calls that come through it."""
        try:
            word = encode_message(
                {"event": "spare", "pid": spare.pid, "hook": spare.hook, "files": spare.files}
            )
            socket.send_fds(self.control, [word], [spare.channel.fileno()])
        except (OSError, ValueError):
            return
        spare.offered = True
        # Its word is read, so closing this end leaves the engine's working.
        spare.close()

    def _note_call(self, message: dict[str, Any]) -> None:
        """A call (spawned or taken) says what the next ones are likely to be: its input's size
        sets how much memory spares made from now on ready, and the next calls are likely for
        the hooks of the latest ones, so spares load those ahead, and those that loaded a hook
        no longer among them go (the engine ends those it holds itself). Plain spares stay until
        calls take them."""
        size = message.get("input")
        if isinstance(size, int) and size >= 0:
            self.inputs.append(size)
        hooks = latest_hooks(self.hooks, message["spec"])
        if hooks == self.hooks:
            return
        self.hooks = hooks
        for spare in list(self.spares):
            if spare.hook is not None and not spare.offered and spare.hook not in hooks:
                self._end_spare(spare)

    def _next_hook(self) -> dict[str, Any] | None:
        """The hook the next spare loads: the latest called of those no spare has loaded
        (a chain calls several hooks in a row, each then finds its own), else the latest."""
        hooks = [spec for spec in self.hooks if spec != self.too_slow]
        for wanted in hooks[::-1]:
            if not any(spare.hook == wanted for spare in self.spares):
                return wanted
        return hooks[-1] if hooks else None

    def _end_spare(self, spare: _Spare) -> None:
        process_control.kill_tree(spare.pid)
        self._forget(spare)

    def _take_spare(self, spec: dict[str, Any]) -> _Spare | None:
        """A ready spare that loaded this very hook, if none of the files the load read has
        changed; otherwise the oldest plain spare, ready if one is. Spares offered to the
        engine are the engine's to give."""
        mine = [s for s in self.spares if not s.offered]
        for spare in [s for s in mine if s.ready and s.hook == spec]:
            if source_version.unchanged(spare.files):
                break
            self._end_spare(spare)  # it loaded a version edited since
        else:
            plain = [s for s in mine if s.hook is None]
            if not plain:
                return None
            spare = next((s for s in plain if s.ready), plain[0])
        self.spares.remove(spare)
        self._unwatch(spare)
        return spare

    def _unwatch(self, spare: _Spare) -> None:
        if spare.watched:
            spare.watched = False
            self.selector.unregister(spare.channel)

    def _hand_to_spare(self, spec: dict[str, Any], fds: list[int]) -> int | None:
        while (spare := self._take_spare(spec)) is not None:
            if process_control.stopped(spare.pid):
                # Stopped by someone else's hook (without the sandbox): it would never answer.
                process_control.kill_tree(spare.pid)
                spare.close()
                continue
            try:
                socket.send_fds(spare.channel, [encode_message(spec)], fds)
            except OSError:
                process_control.kill_tree(spare.pid)
                spare.close()
                continue
            self.handed[spare.pid] = spare
            return spare.pid
        return None

    def _forget(self, spare: _Spare) -> None:
        self._unwatch(spare)
        spare.close()
        self.spares.remove(spare)

    def _on_signal(self) -> bool:
        with contextlib.suppress(BlockingIOError):
            while os.read(self.wake_r, 512):
                pass
        self._reap()
        self._replenish()
        return True

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == self.maker_pid:
                # Only a server that makes no sandbox any more can serve no call: it ends, and
                # the engine starts another.
                self.stopping = True
            status = self._hook_status(pid, status)
            lost = [spare for spare in self.spares if spare.pid == pid]
            for spare in lost:
                self._forget(spare)
                if spare.offered:
                    # The engine may have given it a call already; it learns of that later.
                    self.gone[pid] = _ended(status)
                    while len(self.gone) > _GONE_KEPT:
                        del self.gone[next(iter(self.gone))]
                    self.send({"event": "spare_gone", "pid": pid})
            handed = self.handed.pop(pid, None)
            if handed is not None:
                handed.close()
            invocation = self.workers.pop(pid, None)
            if invocation is None:
                continue
            self._end_orphans()
            self._exited(invocation, pid, _ended(status))

    def _end_orphans(self) -> None:
        """Whatever a dead worker left behind was adopted here: end all that is not a worker."""
        me = os.getpid()
        for _ in range(100):
            spares = {spare.pid for spare in self.spares}
            strays = [
                p
                for p in process_control.children_of(me)
                if p not in self.workers and p not in spares and p != self.maker_pid
            ]
            if not strays:
                return
            for stray in strays:
                process_control.kill_tree(stray)
            for stray in strays:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(stray, 0)
                self._hook_status(stray, 0)

    def _hook_status(self, pid: int, status: int) -> int:
        """How the hook of ended process ``pid`` ended: its call sandbox's init says so."""
        pipe = self.status.pop(pid, None)
        return status if pipe is None else sandbox.hook_status(pipe, status)


def _ended(status: int) -> dict[str, Any]:
    """How a process ended, as an exit event says it."""
    if os.WIFSIGNALED(status):
        return {"signal": signal.Signals(os.WTERMSIG(status)).name}
    return {"code": os.waitstatus_to_exitcode(status)}


def _try_a_call_sandbox(plan: sandbox.SandboxPlan) -> None:
    """Build one call's sandbox and leave it, so that a kernel that refuses a part of it is found
    now, not by every spare failing in turn."""
    call = sandbox.fork_call(sandbox.CallSandbox.keeping(plan.kept))
    if call is None:
        os._exit(0)
    _, status = os.waitpid(call.pid, 0)
    if os.waitstatus_to_exitcode(sandbox.hook_status(call.status, status)) != 0:
        raise OSError("the kernel refused a PID namespace with its own /proc for a hook call")


def main(argv: list[str]) -> int:
    sys.dont_write_bytecode = True
    control = socket.socket(fileno=int(argv[1]))
    control.setblocking(True)
    plan = sandbox.SandboxPlan.from_json(argv[2]) if len(argv) > 2 else None
    try:
        state = (
            sandbox.enter_workspace(plan)
            if plan is not None
            else sandbox.SandboxState(False, "no sandbox was asked for")
        )
        if state.active and plan is not None:
            _try_a_call_sandbox(plan)
    except OSError as exc:
        # Half built: hooks must not run in it. The engine starts a server without one.
        control.send(encode_message({"event": "sandbox_broken", "reason": str(exc)}))
        return 3
    process_control.become_reaper()
    preload()
    # Objects made so far are never collected; a worker's collector then leaves their pages
    # shared instead of copying them on its first pass.
    gc.collect()
    gc.freeze()
    maker = (
        _SandboxMaker(sandbox.CallSandbox.keeping(plan.kept), control)
        if state.active and plan is not None
        else None
    )
    ForkServer(control, state, maker).serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
