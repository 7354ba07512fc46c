"""The ``node`` hook runtime: ADF pre-LLM hooks written in TypeScript or JavaScript.

One Node host process per workspace, started with the same cleaned environment as the Python
fork server, takes calls over its stdin and answers on its stdout in length-prefixed frames
(``node/host.mjs``). A pre-LLM hook runs in a fresh ``vm`` context with the reference's sandbox
rules (``spec/js-runtime.md`` §1) on one of a few long-lived ``worker_threads`` Workers: the
reference starts a Worker for every call, which costs tens of milliseconds, while a context made
ahead costs the call nothing. Each Worker's own realm is frozen and kept out of a hook's reach,
and a Worker is retired after any call that may have spoilt it, so nothing survives between
calls. A step or chain hook, a real ES module whose caches live in its Worker's realm, gets a
Worker of its own for the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import struct
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from studio.core.contract import HookCall, HookReply, RunStopped
from studio.core.file_reads import read_text
from studio.core.json.deep import deep_json
from studio.core.json.js_values import js_value_hook
from studio.core.pre_llm.host_calls import calls_from_log
from studio.core.run_outcome import HostCall
from studio.core.source_ref import (
    SourceOutsideWorkspace,
    SourceRef,
    format_source_ref,
    resolve_source_path,
)
from studio.core.turn_error import Frame, HookRef, TurnError, turn_error
from studio.engine import process_control
from studio.engine.environment import worker_environment
from studio.engine.hook_runtime import HookRuntime
from studio.engine.node_binary import NodeUnavailable, find_node
from studio.engine.node_functions import functions_in_js_file
from studio.engine.python_functions import FunctionList
from studio.engine.returned_json import read_returned
from studio.engine.sandbox import SandboxPlan, SandboxState
from studio.engine.worker_host import PACKAGE_ROOT, wait_gone
from studio.engine.worker_outcome import STDERR_TAIL_CHARS, size_text
from studio.engine.worker_protocol import WorkerLimits

HOST_SCRIPT = Path(__file__).with_name("node") / "host.mjs"
_LENGTHS = struct.Struct(">IQ")
# A frame up to this size is written whole in one go: the host then wakes once for it.
_ONE_WRITE_BYTES = 64 << 10
# Past the host's own hard stop (N + 2000 ms), the studio stops waiting and ends the host.
_HOST_GRACE_S = 5.0
_CANCEL_ACK_S = 1.0
_STOP_S = 2.0

ADF_OUTPUT_NOTE = (
    "console output is shown by the studio only: ADF's hook runner discards what a hook prints"
)
# What host.mjs writes to its stderr when it ends itself (see endHost there).
HOST_ENDED_ITSELF = "the host ends itself"
RUN_AGAIN_NOTE = (
    "the Node host ended itself during this call, to stop another call's memory that it could "
    "not stop otherwise; this call was run again on a new host"
)


async def _end(process: asyncio.subprocess.Process) -> None:
    """Kill the host and wait until every process of it is gone: in the sandbox the Node
    process is two below the one started, and ends a moment after it."""
    below = process_control.descendants(process.pid)
    process_control.kill_tree(process.pid)
    await process.wait()
    await wait_gone(below, _STOP_S)


def _read_line(fd: int) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data


class HostLost(RuntimeError):
    """The Node host process ended, or its frames could not be read."""


# The studio's answer to a question a host asks mid-call (a nested ``sys_lambda``): the
# answer frame's header fields and body.
Asker = Callable[["NodeHost", dict[str, Any], bytes], Awaitable[tuple[dict[str, Any], bytes]]]


class NodeHost:
    """The long-lived Node process of one workspace, and the calls in flight on it."""

    def __init__(
        self,
        root: Path,
        env: dict[str, str],
        asked: Asker | None = None,
        sandbox: SandboxPlan | None = None,
    ) -> None:
        self.root = root
        self.env = env
        self._asked = asked
        self.sandbox = sandbox
        self.sandbox_notice = ""
        """Why this host runs without the sandbox it was asked for, when it does."""
        self._questions: set[asyncio.Task[None]] = set()
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[str, asyncio.Future[tuple[dict[str, Any], bytes]]] = {}
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()
        self._stderr: bytearray = bytearray()
        self.node: str | None = None
        """The path of the Node this host was started with."""

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def start(self) -> None:
        async with self._lock:
            if self.running:
                return
            await self._stop()
            node = find_node()
            self.node = node.path
            self._stderr = bytearray()
            command = [node.path, "--no-warnings", str(HOST_SCRIPT)]
            plan = self.sandbox
            if plan is None or not plan.enabled:
                self._process = await self._spawn(command)
            else:
                # A Node chosen from the user's home stays visible with its own files.
                node_root = os.path.dirname(os.path.dirname(os.path.realpath(node.path)))
                plan = plan.showing(node_root)
                self._process, state = await self._spawn_sandboxed(plan, command)
                if state.get("broken"):
                    await self._process.wait()
                    self._process = await self._spawn(command)
                self.sandbox_notice = SandboxState.from_json(state).notice(asked=True)
            self._reader = asyncio.get_running_loop().create_task(self._read(self._process))

    async def _spawn(
        self, command: list[str], pass_fds: tuple[int, ...] = ()
    ) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
            cwd=self.root,
            start_new_session=True,
            pass_fds=pass_fds,
        )

    async def _spawn_sandboxed(
        self, plan: SandboxPlan, command: list[str]
    ) -> tuple[asyncio.subprocess.Process, dict[str, Any]]:
        """The host inside the workspace's sandbox, and what the sandbox's launcher said."""
        said_r, said_w = os.pipe()
        launcher = (
            f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
            "from studio.engine.sandboxed_exec import main; raise SystemExit(main(sys.argv))"
        )
        try:
            process = await self._spawn(
                [sys.executable, "-I", "-c", launcher, str(said_w), plan.to_json(), *command],
                pass_fds=(said_w,),
            )
        finally:
            os.close(said_w)
        reading = asyncio.ensure_future(asyncio.to_thread(_read_line, said_r))
        try:
            said = await asyncio.shield(reading)
        except BaseException:
            # Cancelled while the launcher starts (a first call cancelled at once): the host is
            # not ours yet, so it is ended here; its end lets the read finish.
            await _end(process)
            with contextlib.suppress(BaseException):
                await reading
            raise
        finally:
            if reading.done():
                os.close(said_r)
        try:
            state = json.loads(said)
        except ValueError:
            state = {"active": False, "reason": "its launcher ended before saying so"}
        return process, state if isinstance(state, dict) else {}

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None and process.stderr is not None
        stderr_task = asyncio.ensure_future(self._read_stderr(process.stderr))
        try:
            while True:
                head_size, body_size = _LENGTHS.unpack(
                    await process.stdout.readexactly(_LENGTHS.size)
                )
                header = json.loads(await process.stdout.readexactly(head_size))
                body = await process.stdout.readexactly(body_size)
                if "ask" in header:
                    self._question(header, body)
                    continue
                future = self._pending.pop(str(header.get("id")), None)
                if future is not None and not future.done():
                    future.set_result((header, body))
        except (asyncio.IncompleteReadError, ValueError, OSError, struct.error):
            pass
        finally:
            # Not process.kill(): Popen polls first, and that poll may reap the process before
            # asyncio's watcher does, which then reports exit code 255 instead of the signal.
            if process.returncode is None:
                await _end(process)
            await process.wait()
            stderr_task.cancel()
            with contextlib.suppress(BaseException):
                await stderr_task
            lost = HostLost(self._lost_message(process))
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(lost)
            self._pending.clear()

    def _question(self, header: dict[str, Any], body: bytes) -> None:
        """Answer the host's question in a task of its own: the reader keeps reading, since the
        answer may need calls on this same host."""

        async def answer() -> None:
            try:
                if self._asked is None:
                    raise RuntimeError("this host takes no questions")
                fields, data = await self._asked(self, header, body)
            except Exception as exc:  # the host waits for an answer whatever went wrong
                fields, data = {"ok": False, "message": f"the studio failed: {exc}"}, b""
            with contextlib.suppress(HostLost, OSError, ConnectionError):
                self._send({**fields, "op": "answer", "ask": header["ask"]}, data)

        task = asyncio.get_running_loop().create_task(answer())
        self._questions.add(task)
        task.add_done_callback(self._questions.discard)

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(1 << 16):
            self._stderr += chunk
            del self._stderr[: max(0, len(self._stderr) - STDERR_TAIL_CHARS)]

    def _lost_message(self, process: asyncio.subprocess.Process) -> str:
        code = process.returncode
        how = f"was killed by signal {-code}" if code and code < 0 else f"exited with code {code}"
        return f"the Node host process {how}"

    @property
    def stderr_tail(self) -> str:
        return self._stderr.decode("utf-8", errors="replace")

    def _send(self, header: dict[str, Any], body: bytes = b"") -> None:
        process = self._process
        if process is None or process.stdin is None or not self.running:
            raise HostLost("the Node host process is not running")
        head = json.dumps(header, separators=(",", ":")).encode()
        lengths = _LENGTHS.pack(len(head), len(body))
        if len(body) <= _ONE_WRITE_BYTES:
            process.stdin.write(b"".join((lengths, head, body)))
            return
        process.stdin.write(lengths + head)
        process.stdin.write(body)

    def warm(self, memory_bytes: int) -> None:
        """Ask the host to get ready for a first call with this memory limit."""
        self._send({"op": "warm", "memory_bytes": memory_bytes})

    async def call(
        self, header: dict[str, Any], body: bytes, *, wait_s: float, start: bool = True
    ) -> tuple[dict[str, Any], bytes]:
        """One call on this host; ``start`` starts the host when it is not running, else
        a host that ended is :class:`HostLost`."""
        if not self.running:
            if not start:
                raise HostLost("the Node host process has ended")
            await self.start()
        call_id = f"c{next(self._ids)}"
        future: asyncio.Future[tuple[dict[str, Any], bytes]] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[call_id] = future
        try:
            self._send({**header, "op": "call", "id": call_id}, body)
            assert self._process is not None and self._process.stdin is not None
            await self._process.stdin.drain()
            return await asyncio.wait_for(asyncio.shield(future), wait_s)
        except TimeoutError:
            # The host did not stop the call at its own guard: end the host, and with it the call.
            await self.close()
            raise HostLost("the Node host did not stop the call in time and was ended") from None
        except asyncio.CancelledError:
            with contextlib.suppress(HostLost, OSError, ConnectionError):
                self._send({"op": "cancel", "id": call_id})
                try:
                    await asyncio.wait_for(asyncio.shield(future), _CANCEL_ACK_S)
                except TimeoutError:
                    await self.close()
            raise
        except (OSError, ConnectionError) as exc:
            raise HostLost(f"the Node host process is gone: {exc}") from None
        finally:
            self._pending.pop(call_id, None)

    async def _stop(self) -> None:
        # A question still being answered would start calls on this host: end those first.
        questions = [t for t in self._questions if t is not asyncio.current_task()]
        for task in questions:
            task.cancel()
        await asyncio.gather(*questions, return_exceptions=True)
        process, reader = self._process, self._reader
        self._process, self._reader = None, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError, ConnectionError):
                process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), _STOP_S)
        except TimeoutError:
            await _end(process)
        if process.returncode is None:
            await _end(process)
        if reader is not None:
            with contextlib.suppress(BaseException):
                await reader

    async def close(self) -> None:
        async with self._lock:
            await self._stop()

    async def close_when_idle(self) -> None:
        """End the host once the calls it has begun have answered."""
        if self._pending:
            await asyncio.wait(list(self._pending.values()))
        await self.close()


class NodeRuntime(HookRuntime):
    name = "node"
    extensions = (".ts", ".mts", ".js", ".mjs")
    refused: ClassVar[dict[str, str]] = {
        ".tsx": "'.tsx' files are not supported, as in ADF: it strips types and has no JSX "
        "transform; move the hook to a '.ts' file without JSX"
    }

    def _begin(self) -> None:
        settings = self.settings
        self._host = NodeHost(
            Path(os.path.realpath(self.root)),
            worker_environment(dict(settings.env), tuple(settings.pass_env)),
            self._sys_lambda,
            self.sandbox,
        )
        self._python: HookRuntime | None = None
        self._old_hosts: set[NodeHost] = set()

    @classmethod
    def functions(cls, path: Path, *, module: bool = False) -> FunctionList:
        return functions_in_js_file(path, module=module)

    async def start(self) -> None:
        # A missing or unusable Node is reported by the first call that needs it.
        with contextlib.suppress(NodeUnavailable, OSError, HostLost):
            await self._host.start()
            self._host.warm(WorkerLimits.of(self.settings.limits).memory_bytes)

    async def close(self) -> None:
        for host in [*self._old_hosts, self._host]:
            await host.close()
        if self._python is not None:
            await self._python.close()
            self._python = None

    def _current_host(self) -> NodeHost:
        """Another Node chosen (settings or environment) takes effect for the next call: it gets
        a new host, and the old one ends once the calls already begun on it have answered."""
        host = self._host
        if host.running and host.node != find_node().path:
            self._host = NodeHost(host.root, host.env, self._sys_lambda, host.sandbox)
            self._old_hosts.add(host)
            retired = asyncio.ensure_future(host.close_when_idle())
            retired.add_done_callback(lambda _: self._old_hosts.discard(host))
        return self._host

    @property
    def sandbox_notice(self) -> str:
        return self._host.sandbox_notice

    @property
    def host_pid(self) -> int | None:
        return self._host.pid if self._host.running else None

    async def call(self, call: HookCall, ref: SourceRef, limits: WorkerLimits) -> HookReply:
        return await self._call_on(None, call, ref, limits)

    async def _call_on(
        self, asking: NodeHost | None, call: HookCall, ref: SourceRef, limits: WorkerLimits
    ) -> HookReply:
        """Run ``call`` on the current host, or for a nested call on the host that asked for it
        (its caller's log is there), never starting that one again once it has ended."""
        hook = call.hook
        try:
            source = read_text(self.root / ref.path)
        except (OSError, UnicodeDecodeError) as exc:
            raise RunStopped(
                turn_error("load_failed", f"cannot read '{ref.path}': {exc}", hook=hook)
            ) from None
        data = self.argument_bytes(call)
        timeout_ms = round(call.timeout_ms)
        header = {
            "path": ref.path,
            "fn": _function(call, ref),
            "source": source,
            "timeout_ms": timeout_ms,
            "memory_bytes": limits.memory_bytes,
            "output_bytes": limits.output_bytes,
            "result_bytes": limits.result_bytes,
        }
        if call.api == "adf":
            # What a nested sys_lambda call needs to run its callee under the same limits.
            header["adf"] = {
                **call.options.get("adf", {}),
                "limits": {
                    "timeout_ms": timeout_ms,
                    "memory_bytes": limits.memory_bytes,
                    "output_bytes": limits.output_bytes,
                    "result_bytes": limits.result_bytes,
                },
            }
        else:
            # Step preparation and chain hooks are module exports, run without ADF's sandbox.
            header["mode"] = "module"
            header["api"] = call.api or "chain"
            # A contract that judges the value as returned (no snapshot of the step path's).
            header["raw_result"] = bool(call.options.get("raw_result"))
        started = time.perf_counter()
        host = self._host
        again = False
        try:
            host = asking or self._current_host()
            try:
                answer, body = await host.call(
                    header,
                    data,
                    wait_s=timeout_ms / 1000 + 2 + _HOST_GRACE_S,
                    start=asking is None,
                )
            except HostLost:
                # The host ends itself only to stop another call's runaway native memory: a
                # call it took down with it is run once more, on a new host.
                if asking is not None or HOST_ENDED_ITSELF not in host.stderr_tail:
                    raise
                again = True
                host = self._current_host()
                answer, body = await host.call(
                    header, data, wait_s=timeout_ms / 1000 + 2 + _HOST_GRACE_S
                )
        except NodeUnavailable as exc:
            raise RunStopped(turn_error("engine_failed", str(exc), hook=hook)) from None
        except HostLost as exc:
            return HookReply(
                error=turn_error(
                    "worker_crashed",
                    f"{exc} while running `{hook.function}`; the next run starts a new one",
                    hook=hook,
                    loop=call.loop,
                    duration_ms=round((time.perf_counter() - started) * 1000, 3),
                    stderr_tail=host.stderr_tail,
                ),
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        except OSError as exc:
            raise RunStopped(
                turn_error("engine_failed", f"the studio could not start Node: {exc}", hook=hook)
            ) from None
        reply = _reply(
            answer,
            body,
            hook=hook,
            loop=call.loop,
            api=call.api,
            call=call,
            in_pieces=self.in_pieces,
        )
        if again:
            reply.warnings.append({"path": "", "message": RUN_AGAIN_NOTE})
        if call.options.get("nested") and reply.error and answer.get("status") == "ok":
            # A nested function's result that is not JSON text reaches its caller as text.
            text = body.decode("utf-8", errors="replace")
            reply = replace(reply, error=None, value=text)
        return reply

    async def _sys_lambda(
        self, asking: NodeHost, header: dict[str, Any], body: bytes
    ) -> tuple[dict[str, Any], bytes]:
        """Run the callee of a hook's ``adf.sys_lambda``: a TypeScript or JavaScript function in
        a fresh sandboxed call on this host, a Python one in a worker of the Python runtime."""
        adf = dict(header.get("adf") or {})
        path, fn = str(header.get("path", "")), str(header.get("fn", "main"))
        given = adf.pop("limits", None) or {}
        limits = WorkerLimits(
            memory_bytes=int(given.get("memory_bytes", WorkerLimits.memory_bytes)),
            output_bytes=int(given.get("output_bytes", WorkerLimits.output_bytes)),
            result_bytes=int(given.get("result_bytes", WorkerLimits.result_bytes)),
        )
        try:
            if not resolve_source_path(self.root, path).is_file():
                return {"ok": False, "message": f'source file "{path}" was not found'}, b""
        except SourceOutsideWorkspace as exc:
            return {"ok": False, "message": str(exc)}, b""
        source = format_source_ref(path, fn) if fn != "main" else f"{path}:main"
        hook = HookRef(source=path, function=fn, contract="pre_llm")
        runtime: HookRuntime
        options: dict[str, Any]
        if self.runs(path):
            runtime, options = self, {"adf": adf, "nested": True}
        elif path.endswith(".py"):
            runtime = self._python_runtime()
            options = {"sys_lambda": bool(adf.get("python_sys_lambda"))}
        else:
            return {"ok": False, "message": f'"{path}" is not a function the studio can run'}, b""
        call = HookCall(
            source=source,
            hook=hook,
            encoded=body,
            timeout_ms=float(given.get("timeout_ms", 30_000)),
            api="adf",
            options=options,
        )
        try:
            if runtime is self:
                reply = await self._call_on(asking, call, SourceRef(path, fn), limits)
            else:
                reply = await runtime.call(call, SourceRef(path, fn), limits)
        except RunStopped as exc:
            return {"ok": False, "message": exc.error.message}, b""
        output = reply.stdout + reply.stderr
        # A Python callee's own adf calls, for the caller's log; a JavaScript one's are there.
        calls = [
            c.model_dump(mode="json") if isinstance(c, HostCall) else c
            for c in (reply.extra.get("calls") or [] if runtime is not self else [])
        ]
        if reply.error is not None:
            answer = {"ok": False, "message": reply.error.message, "output": output}
            return {**answer, "calls": calls}, b""
        return {"ok": True, "output": output, "calls": calls}, json.dumps(reply.value).encode()

    def _python_runtime(self) -> HookRuntime:
        from studio.engine.python_runtime import PythonRuntime

        if self._python is None:
            self._python = PythonRuntime(
                self.root, self.settings, in_pieces=self.in_pieces, sandbox=self.sandbox
            )
        return self._python


def _function(call: HookCall, ref: SourceRef) -> str:
    """The export to call: the one the source names, else the contract's default for a module
    export (``prepareStep``), else ``main``."""
    explicit = call.source.strip() != ref.path
    default = call.options.get("default_export")
    return ref.function if explicit or not isinstance(default, str) else default


def _reply(
    answer: dict[str, Any],
    body: bytes,
    *,
    hook: HookRef,
    loop: str | None,
    api: str | None,
    call: HookCall | None = None,
    in_pieces: bool = False,
) -> HookReply:
    reply = HookReply(
        stdout=answer.get("stdout", ""),
        stderr=answer.get("stderr", ""),
        stdout_truncated=bool(answer.get("stdout_truncated")),
        stderr_truncated=bool(answer.get("stderr_truncated")),
        duration_ms=float(answer.get("duration_ms", 0.0)),
    )
    reply.warnings = list(answer.get("warnings") or [])
    reply.extra = dict(answer.get("extra") or {})
    if api == "adf":
        logged = answer.get("calls") or {}
        reply.extra["calls"] = calls_from_log(logged.get("log"))
        if logged.get("dropped"):
            listed = len(reply.extra["calls"])
            reply.warnings.append(
                {
                    "path": "",
                    "message": f"the hook made {listed + int(logged['dropped'])} adf calls; "
                    f"the first {listed} are listed, the rest were answered but not kept",
                }
            )
    if api == "adf" and (reply.stdout or reply.stderr):
        reply.warnings.append({"path": "", "message": ADF_OUTPUT_NOTE})
    if answer.get("status") == "ok":
        # A step hook's values are read with a hook of their own; any other as it came back.
        read = (
            read_returned(body, echo=call.echo, echo_members=call.echo_members, in_pieces=in_pieces)
            if call is not None and api != "step"
            else None
        )
        if read is not None:
            reply.echoed, reply.value = read
            return reply
        try:
            with deep_json():
                reply.value = json.loads(
                    body,
                    parse_constant=_no_constant,
                    object_hook=js_value_hook if api == "step" else None,
                )
        except ValueError as exc:
            head = body[:200].decode("utf-8", errors="replace")
            refused = answer.get("refused")
            message = (
                f"`{hook.function}` returned a value that JSON.stringify refuses ({refused}); "
                f"as in ADF, String(value) was taken instead, {json.dumps(head)}, which is not JSON"
                if refused
                else f"`{hook.function}` returned text that is not JSON: {exc}"
            )
            reply.error = _error("invalid_result", message, reply, hook, loop, {"text_head": head})
        return reply
    details = dict(answer.get("details") or {})
    frames = [Frame(**f) for f in details.pop("frames", None) or []]
    kind = str(answer.get("kind", "exception"))
    message = str(answer.get("message", "the hook failed"))
    if kind == "output_limit":
        stream, limit = details.get("stream", "output"), int(details.get("limit_bytes", 0))
        message = (
            f"`{hook.function}` wrote more than {size_text(limit)} to its {stream}; "
            "the worker was stopped"
        )
    elif kind == "memory_limit":
        message = f"`{hook.function}` {message}"
    elif kind == "worker_crashed" or message.startswith("the worker"):
        message = f"`{hook.function}`: {message}"
    reply.error = _error(kind, message, reply, hook, loop, details, frames)
    return reply


def _error(
    kind: str,
    message: str,
    reply: HookReply,
    hook: HookRef,
    loop: str | None,
    details: dict[str, Any],
    frames: list[Frame] | None = None,
) -> TurnError:
    return turn_error(
        kind,
        message,
        hook=hook,
        loop=loop,
        duration_ms=round(reply.duration_ms, 3),
        traceback=frames or [],
        stderr_tail=reply.stderr[-STDERR_TAIL_CHARS:],
        details={k: v for k, v in details.items() if v is not None and v != ""},
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
