"""What runs inside a freshly forked worker: load the hook, call it once, send the result, exit.

A worker is created for one invocation and never returns to the fork server. Its output goes to
the pipes it was handed; its result goes to the result channel as one frame; then it ends every
process it started and exits without running any cleanup that belongs to the fork server.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import inspect
import json
import linecache
import os
import select
import signal
import socket
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, NoReturn

from studio.core.json.deep import MAX_DEPTH, deep_json
from studio.core.source_ref import SourceOutsideWorkspace, parse_source_ref, resolve_source_path
from studio.engine import process_control
from studio.engine.collector import collector_paused
from studio.engine.worker_protocol import (
    WorkerSpec,
    decode_message,
    encode_message,
    frame_header,
)

if TYPE_CHECKING:
    from studio.engine.hook_preparation import Prepared

INPUT_FD = 3
RESULT_FD = 4


class HookFailure(Exception):
    """A failure the worker reports with its own kind (not a plain exception of the hook)."""

    def __init__(self, kind: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details


def _read_all(fd: int) -> bytes | bytearray:
    """Everything until the end of ``fd``. An input larger than the pipe grows one buffer: each
    chunk's memory then serves the next read, where chunks kept for a join would each take
    fresh pages, a fault apiece in a process just forked."""
    first = os.read(fd, 1 << 20)
    chunk = os.read(fd, 1 << 20) if first else b""
    if not chunk:
        return first
    data = bytearray(first)
    while chunk:
        data += chunk
        chunk = os.read(fd, 1 << 20)
    return data


# Text is written in parts of this many characters: encoded whole, a large result would take
# as many fresh pages as it has bytes, each a fault in a process just forked; a part's buffer,
# freed before the next is made, serves them all.
_TEXT_PART = 1 << 20


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _byte_length(piece: bytes | str) -> int:
    """How many bytes ``piece`` takes on the channel."""
    if isinstance(piece, bytes):
        return len(piece)
    if piece.isascii():
        return len(piece)
    return sum(len(_encoded(piece[i : i + _TEXT_PART])) for i in range(0, len(piece), _TEXT_PART))


def _write_all(fd: int, pieces: list[bytes | str]) -> None:
    """Write ``pieces`` one after the other, without joining them first; text as UTF-8 (a lone
    surrogate as its own three bytes), a part at a time. Each write takes at most one part of
    text, with the pieces around it: a frame of one part is one write, which the engine reads
    in one piece."""
    views: list[memoryview] = []
    holds_text = False
    for piece in pieces:
        if isinstance(piece, bytes):
            views += [memoryview(piece)] if piece else []
            continue
        for i in range(0, len(piece), _TEXT_PART):
            if holds_text:
                _write_views(fd, views)
                views = []
            views.append(memoryview(_encoded(piece[i : i + _TEXT_PART])))
            holds_text = True
    _write_views(fd, views)


def _write_views(fd: int, views: list[memoryview]) -> None:
    while views:
        written = os.writev(fd, views)
        while views and written >= len(views[0]):
            written -= len(views[0])
            views.pop(0)
        if written:
            views[0] = views[0][written:]


class _Worker:
    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.workspace = Path(spec.workspace)
        self.nested_failures: list[str] = []
        self.extra: dict[str, Any] = {}

    # ---- loading -------------------------------------------------------------------------
    def load(self, path: Path, label: str) -> ModuleType:
        if not path.is_file():
            raise HookFailure("source_missing", f"{label}: no such file in the workspace")
        name = "hook_" + "".join(c if c.isalnum() else "_" for c in path.stem)
        # compile and exec directly: the import system's first use costs more than the hook.
        module = ModuleType(name)
        module.__file__ = str(path)
        if self.spec.api == "adf":
            module.adf = _Adf(self)  # type: ignore[attr-defined]
        sys.modules[name] = module
        try:
            code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except SyntaxError as exc:
            where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
            raise HookFailure(
                "load_failed",
                f"{label} has a syntax error at {where}: {exc.msg}",
                frames=[
                    {
                        "file": self.relative(path),
                        "line": exc.lineno or 0,
                        "function": "<module>",
                        "code": (exc.text or "").strip() or None,
                    }
                ],
            ) from None
        except BaseException as exc:
            raise HookFailure(
                "load_failed",
                f"loading {label} raised {type(exc).__name__}: {exc}",
                frames=self.frames(exc.__traceback__),
                exception=type(exc).__name__,
            ) from None
        return module

    def function(self, module: ModuleType, name: str, label: str) -> Any:
        fn = getattr(module, name, None)
        if not callable(fn):
            found = sorted(
                n
                for n, v in vars(module).items()
                if inspect.isfunction(v)
                and v.__module__ == module.__name__
                and not n.startswith("_")
            )
            listing = ", ".join(found) if found else "none"
            what = "is not a function" if fn is not None else "is not defined"
            raise HookFailure(
                "function_missing",
                f"`{name}` {what} in {label} (top-level functions: {listing})",
                available=found,
            )
        return fn

    # ---- calling --------------------------------------------------------------------------
    def call(self, fn: Any, argument: Any) -> Any:
        value = fn(argument)
        if inspect.isawaitable(value):
            import asyncio  # see _call_isolated_loop

            value = asyncio.run(_awaited(value))
        return value

    def relative(self, filename: str | Path) -> str:
        try:
            return str(
                Path(os.path.realpath(filename)).relative_to(os.path.realpath(self.workspace))
            )
        except ValueError:
            return str(filename)

    def frames(self, tb: TracebackType | None) -> list[dict[str, Any]]:
        """The frames of a traceback that are in the user's own files."""
        root = os.path.realpath(self.workspace) + os.sep
        frames = []
        for summary in traceback.extract_tb(tb):
            real = os.path.realpath(summary.filename)
            if real.startswith(root):
                code = summary.line or linecache.getline(summary.filename, summary.lineno or 0)
                frames.append(
                    {
                        "file": self.relative(real),
                        "line": summary.lineno or 0,
                        "function": summary.name,
                        "code": code.strip() or None,
                    }
                )
        return frames

    def resolve(self) -> tuple[Path, str]:
        """The hook's file, and its name as the user knows it."""
        spec = self.spec
        try:
            path = resolve_source_path(
                self.workspace, parse_source_ref(spec.source or spec.source_path).path
            )
        except SourceOutsideWorkspace as exc:
            raise HookFailure("source_outside_workspace", str(exc)) from None
        return path, self.relative(path)

    def run(self, argument: Any, prepared: Prepared | None = None) -> Any:
        if prepared is None:
            path, label = self.resolve()
            module = self.load(path, label)
        elif prepared.failure is not None:
            raise prepared.failure
        else:
            assert prepared.module is not None
            module, label = prepared.module, prepared.label
        fn = self.function(module, self.spec.function, label)
        return self.call(fn, argument)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


class _Adf:
    """The ``adf`` global of a pre-LLM hook's module: the nested-lambda bridge."""

    def __init__(self, worker: _Worker) -> None:
        self._worker = worker

    def sys_lambda(self, source: str | None = None, args: Any = None, **unexpected: Any) -> Any:
        from studio.engine.hook_api import SysLambdaError

        worker = self._worker
        if unexpected:
            raise TypeError(f"adf.sys_lambda() got unexpected arguments: {', '.join(unexpected)}")
        # The run's report lists the call as it lists a TypeScript hook's (RunOutcome.calls).
        started = time.perf_counter()
        entry: dict[str, Any] = {"method": "sys_lambda", "gate": "allowed", "depth": 0}
        worker.extra.setdefault("calls", []).append(entry)
        try:
            entry["args"] = json.loads(json.dumps({"source": source, "args": args}, default=str))
        except ValueError:
            entry["args"] = {"source": str(source)}

        def failed(code: str, message: str, gate: str = "allowed") -> SysLambdaError:
            worker.nested_failures.append(message)
            entry.update(gate=gate, error={"code": code, "message": message})
            entry["duration_ms"] = (time.perf_counter() - started) * 1000
            return SysLambdaError(message)

        if not worker.spec.options.get("sys_lambda"):
            raise failed(
                "DISABLED",
                "adf.sys_lambda is not enabled for this agent; set code_execution.sys_lambda to "
                "true in agent.json to allow nested lambdas",
                "code_execution.sys_lambda",
            )
        if not isinstance(source, str) or not source.strip():
            raise failed("INVALID_INPUT", "adf.sys_lambda needs source='path[:function]'", "input")
        ref = parse_source_ref(source.strip())
        try:
            copied = json.loads(json.dumps(args, allow_nan=False))
            path = resolve_source_path(worker.workspace, ref.path)
            label = worker.relative(path)
            module = worker.load(path, label)
            fn = worker.function(module, ref.function, label)
            value = _call_isolated_loop(fn, copied)
            reply = json.loads(json.dumps(value, allow_nan=False))
        except BaseException as exc:
            raise failed("FN_ERROR", _nested_message(source, exc)) from exc
        entry.update(answered_by=f"{ref.path}:{ref.function}", reply=reply)
        entry["duration_ms"] = (time.perf_counter() - started) * 1000
        return reply


def _call_isolated_loop(fn: Any, argument: Any) -> Any:
    value = fn(argument)
    if not inspect.isawaitable(value):
        return value
    # Imported by the calls that need them only: loaded in the fork server, asyncio (with the
    # threading, logging and subprocess modules it brings) makes every fork of it dearer, in
    # pages to copy and in the handlers those modules run in each new process.
    import asyncio
    import threading

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(value))
    # Called from an async hook: the nested coroutine gets a loop of its own on another thread.
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(_awaited(value))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _nested_message(source: str, exc: BaseException) -> str:
    if isinstance(exc, HookFailure):
        return f"nested lambda {source}: {exc.message}"
    if isinstance(exc, SourceOutsideWorkspace):
        return f"nested lambda {source}: {exc}"
    if isinstance(exc, TypeError | ValueError) and "JSON" in str(exc):
        return f"nested lambda {source} passed or returned a value that is not JSON: {exc}"
    return f"nested lambda {source} raised {type(exc).__name__}: {exc}"


def _argument(spec: WorkerSpec, payload: Any) -> Any:
    if spec.api == "step":
        from studio.engine.hook_api import step_context_for_worker

        return step_context_for_worker(payload, spec.options.get("context", "step"))
    return payload


def _finish(envelope_head: dict[str, Any], value_json: str | None) -> list[bytes | str]:
    """The envelope as JSON text, the value last, in pieces: a large value is not copied."""
    head = json.dumps(envelope_head, separators=(",", ":"), default=str).encode()
    if value_json is None:
        return [head]
    return [head[:-1], b',"value":', value_json, b"}"]


def _serialise_result(value: Any) -> str:
    """The value's JSON text, as the channel carries it once encoded (see :func:`_write_all`).
    The collector is paused: the encoder makes a list of items for each object it writes, and
    the collections they set off, a few hundred in a large result, could free nothing."""
    try:
        # The hook's own key order travels: the contract's first finding depends on it.
        with deep_json(), collector_paused():
            return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        raise HookFailure(
            "invalid_result",
            f"the hook returned a value nested deeper than {MAX_DEPTH:,} levels, "
            "more than the runtimes take",
        ) from None
    except (TypeError, ValueError, OverflowError):
        from studio.core.findings import dotted
        from studio.core.json.values import json_problem

        problem = json_problem(value)
        path, phrase = problem if problem else ((), "is not JSON")
        raise HookFailure(
            "invalid_result",
            f"the hook returned a value that is not JSON: {dotted(path, 'result')} {phrase}",
            path=list(path),
        ) from None


def _read_input() -> Any:
    """The argument, parsed with the collector paused: a large request is a great many new
    containers, each pass over them wasted (none of them is garbage yet). Frozen afterwards,
    so that collections while the hook runs leave them alone too."""
    gc.disable()
    try:
        with deep_json():
            payload = json.loads(_read_all(INPUT_FD))
        os.close(INPUT_FD)
        gc.freeze()
    finally:
        gc.enable()
    return payload


def run_worker(spec: WorkerSpec, prepared: Prepared | None = None) -> NoReturn:
    """The whole life of a worker after the fork, its hook already loaded when ``prepared``.
    Never returns."""
    worker = prepared.worker if prepared is not None else _Worker(spec)
    status = 0
    try:
        payload = _read_input()
        argument = _argument(spec, payload)
        try:
            value = worker.run(argument, prepared)
        finally:
            worker.extra.update(_extra(argument))
        if worker.nested_failures:
            raise HookFailure("nested_lambda_failed", worker.nested_failures[0])
        value_json = _serialise_result(value)
        envelope = _finish({"status": "ok", "extra": worker.extra}, value_json)
    except HookFailure as failure:
        envelope = _finish(
            {
                "status": "error",
                "kind": failure.kind,
                "message": failure.message,
                "details": failure.details,
                "extra": worker.extra,
            },
            None,
        )
    except SystemExit as exc:
        envelope = _finish(
            {
                "status": "error",
                "kind": "worker_crashed",
                "message": f"`{spec.function}` called sys.exit({exc.code!r}) before returning",
                "details": {"frames": worker.frames(exc.__traceback__)},
                "extra": worker.extra,
            },
            None,
        )
        status = 0
    except BaseException as exc:
        kind = "memory_limit" if isinstance(exc, MemoryError) else "exception"
        if worker.nested_failures:
            kind = "nested_lambda_failed"
        frames = worker.frames(exc.__traceback__)
        from studio.engine.hook_api import error_details

        contract_error = error_details(exc)
        envelope = _finish(
            {
                "status": "error",
                "kind": kind,
                "message": _exception_message(spec.function, exc, frames),
                "details": {
                    "frames": frames,
                    "exception": type(exc).__name__,
                    "nested": worker.nested_failures,
                    "contract_error": contract_error,
                },
                "extra": worker.extra,
            },
            None,
        )
    _send_and_exit(envelope, status)


def _extra(argument: Any) -> dict[str, Any]:
    reads = getattr(getattr(argument, "resources", None), "reads", None)
    return {"reads": reads()} if callable(reads) else {}


def _exception_message(function: str, exc: BaseException, frames: list[dict[str, Any]]) -> str:
    text = str(exc) if not isinstance(exc, RecursionError) else "maximum recursion depth exceeded"
    if isinstance(exc, MemoryError):
        text = text or "the worker's memory limit was reached"
    where = f" at {frames[-1]['file']}:{frames[-1]['line']}" if frames else ""
    return f"`{function}` raised {type(exc).__name__}{': ' + text if text else ''}{where}"


def _send_and_exit(envelope: list[bytes | str], status: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    process_control.end_descendants()
    try:
        header = frame_header(sum(map(_byte_length, envelope)))
    except MemoryError:
        os._exit(70)
    # The run is complete once the result and both streams are closed. The streams go first
    # (not with the process's memory, which the kernel takes apart later), right before the
    # result, so that the engine, woken by the first, finds the others done too.
    null = _null if _null >= 0 else os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        _write_all(RESULT_FD, [header, *envelope])
        os.close(RESULT_FD)
    except (OSError, MemoryError):  # no part of a large text is encoded before this point
        status = 70
    os._exit(status)


def _line_buffered(fd: int) -> Any:
    return open(fd, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)


_null = -1
"""The null device, opened ahead: the worker's streams are pointed at it as its result goes."""
_NULL_FD_FROM = 20


def become_spare(keep: list[int], *, rehearse: bool = True) -> None:
    """Everything that does not depend on the invocation, done before one arrives: isolation,
    standard streams, closing what the fork server had open, and (``rehearse``) a rehearsal
    that touches what every call touches, so those pages are copied from the fork server now,
    not during a call. A worker forked for a call already waiting has no time to gain: it
    copies them during its call, as the rehearsal would."""
    process_control.become_worker()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, process_control.max_fd())
    global _null
    null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    # Above the descriptors a call wires up, which would otherwise clobber it.
    _null = fcntl.fcntl(null, fcntl.F_DUPFD_CLOEXEC, _NULL_FD_FROM)
    os.close(null)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = _line_buffered(1)
    sys.stderr = _line_buffered(2)
    if rehearse:
        _rehearse()


def _rehearse() -> None:
    """A call of a trivial hook through the worker's own code, its result written to the null
    device: a process just forked copies each page of the fork server's objects it first
    writes to (a reference count is enough), and a call that found them untouched took some
    eighty such copies."""
    spec = WorkerSpec.from_json(
        decode_message(encode_message(WorkerSpec("rehearsal.py", "main", os.getcwd()).to_json()))
    )
    worker = _Worker(spec)
    with deep_json():
        payload = json.loads(
            b'{"request": {"system": "", "messages": [], "tools": []}, "loop": {}}'
        )
    code = compile("def main(payload):\n    return payload\n", "<rehearsal>", "exec")
    module = ModuleType("rehearsal")
    exec(code, module.__dict__)
    argument = _argument(spec, payload)
    value = worker.call(worker.function(module, spec.function, spec.source_path), argument)
    worker.extra.update(_extra(argument))
    envelope = _finish({"status": "ok", "extra": worker.extra}, _serialise_result(value))
    pieces = [frame_header(sum(map(_byte_length, envelope))), *envelope]
    if _null >= 0:
        _write_all(_null, pieces)
    os.path.realpath(os.getcwd())
    process_control.children_of(os.getpid())
    process_control.end_descendants()


# A spare left waiting this long readies part of the C heap, and as much of the arenas Python's
# own allocator serves small objects from, for its call (it then holds that much more memory
# while it waits). A process just forked takes a page fault at its first touch of each page of
# fresh memory: a 1 MB request's parse and the serialisation of the result took about 950 with
# neither readied, 900 with the C heap alone (the objects of a parsed request are small, and
# live in the arenas), under 100 with 4 MB of both; a spare idle anyway takes those ahead. The
# fork server says how much each spare readies, by the size of the latest calls (none when they
# were small). Spares used back to back (many small runs) are never idle so long: they pay
# nothing.
IDLE_BEFORE_WARMING = 0.1
WARM_HEAP = 4 << 20
WARM_ARENAS = 4 << 20
WARM_MOST = WARM_HEAP + WARM_ARENAS
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
# An arena goes back to the system once none of its objects is alive: one small object kept in
# each span of this many bytes keeps every arena (at least 256 KiB) that the readying touched.
_ARENA_HOLD_SPAN = 1 << 16
_BLOCK = 448
"""One of the allocator's largest blocks (those up to 512 bytes): a bytes object of 400 bytes."""
_arena_holds: list[bytes] = []


def wait_for_call(channel: socket.socket, warm: int = WARM_MOST) -> None:
    """Return once ``channel`` has something to read, ``warm`` bytes of memory readied (half
    heap, half arenas, at most :data:`WARM_MOST`) if it waited long."""
    if warm <= 0:
        return
    ready, _, _ = select.select([channel], [], [], IDLE_BEFORE_WARMING)
    if not ready:
        warm_heap(warm)


def warm_heap(size: int = WARM_MOST) -> None:
    size = min(size, WARM_MOST)
    heap = size * WARM_HEAP // WARM_MOST
    _warm_arenas(size - heap)
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError):  # not glibc
        return
    # Freed memory stays in the heap (it is not given back, nor taken from mmap, below this
    # size), so a buffer allocated and freed here leaves its pages, touched, for the call.
    mallopt(_M_TRIM_THRESHOLD, 2 * heap)
    mallopt(_M_MMAP_THRESHOLD, heap)
    mallopt(_M_TOP_PAD, min(1 << 20, heap))
    bytearray(max(heap - (64 << 10), 0))  # zero-filled: every page written once, then freed


def _warm_arenas(size: int) -> None:
    """Fill ``size`` bytes of small-object arenas and free them, but for one object per
    ``_ARENA_HOLD_SPAN``: the arenas stay, their pages touched, for the call's objects."""
    made = [bytes(400) for _ in range(size // _BLOCK)]
    spans: set[int] = set()
    for item in made:
        span = id(item) // _ARENA_HOLD_SPAN
        if span not in spans:
            spans.add(span)
            _arena_holds.append(item)


def enter_worker(spec: WorkerSpec, fds: list[int], prepared: Prepared | None = None) -> NoReturn:
    """Called in a spare worker once its invocation arrives: limits, descriptors, then run."""
    try:
        process_control.limit_memory(spec.memory_bytes)
        # Move the handed descriptors out of the way first, so wiring one cannot clobber another.
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in fds]
        for fd in fds:
            os.close(fd)
        input_fd, result_fd, out_fd, err_fd = moved
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.dup2(input_fd, INPUT_FD)
        os.dup2(result_fd, RESULT_FD)
        for fd in moved:
            os.close(fd)
        if prepared is not None:
            prepared.replay_output()
        else:
            sys.path.insert(0, spec.workspace)
    except BaseException:
        with contextlib.suppress(BaseException):
            os.write(2, traceback.format_exc().encode())
        os._exit(71)
    run_worker(spec, prepared)
