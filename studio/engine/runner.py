"""The runner: takes a sample, a loop and a hook, runs the hook in a fresh worker, applies the
hook's contract to what comes back, and produces a RunOutcome (which it also records)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import time
from pathlib import Path
from typing import Any

from studio.core.findings import errors
from studio.core.pre_llm_config import MAIN, check_agent_config
from studio.core.pre_llm_decision import pre_llm_decision
from studio.core.pre_llm_request import presented_not_enabled, validate_request
from studio.core.run_outcome import RunOutcome
from studio.core.source_ref import (
    SourceOutsideWorkspace,
    SourceRef,
    parse_source_ref,
    resolve_source_path,
)
from studio.core.turn_error import Contract, HookRef, TurnError, turn_error
from studio.core.workspace import Sample, StudioSettings, Workspace, WorkspaceFileError
from studio.engine.worker_host import WorkerHost
from studio.engine.worker_outcome import WorkerReading, read_worker
from studio.engine.worker_protocol import WorkerLimits, WorkerSpec


class RunFailed(Exception):
    """A run ended before the hook could be called; carries the turn error that says why."""

    def __init__(self, error: TurnError) -> None:
        super().__init__(error.message)
        self.error = error


def _limits(settings: StudioSettings) -> WorkerLimits:
    return WorkerLimits(
        memory_bytes=settings.limits.memory_mb << 20,
        output_bytes=settings.limits.output_kb << 10,
        result_bytes=settings.limits.result_mb << 20,
    )


_current_handle: contextvars.ContextVar[RunHandle] = contextvars.ContextVar("run_handle")


class RunHandle:
    """A run in progress: cancel it at any moment; its outcome says it was cancelled."""

    def __init__(self) -> None:
        self.task: asyncio.Future[RunOutcome] | None = None
        self.worker: asyncio.Future[Any] | None = None
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.worker is not None and not self.worker.done():
            self.worker.cancel()

    async def outcome(self) -> RunOutcome:
        assert self.task is not None
        return await self.task


class Runner:
    """Runs the hooks of one workspace. One fork server serves every run; each run gets a
    fresh worker process of its own."""

    def __init__(self, workspace: Workspace, *, store: Any = None) -> None:
        self.workspace = workspace
        self.store = store
        self._host: WorkerHost | None = None
        self._host_key: tuple[Any, ...] | None = None

    async def close(self) -> None:
        if self._host is not None:
            await self._host.close()
            self._host = None

    async def _worker_host(self, settings: StudioSettings) -> WorkerHost:
        """The fork server for these settings; a change of environment starts a new one."""
        key = (tuple(sorted(settings.env.items())), tuple(settings.pass_env))
        if self._host is None or key != self._host_key:
            if self._host is not None:
                await self._host.close()
            self._host = WorkerHost(
                self.workspace.root, dict(settings.env), tuple(settings.pass_env)
            )
            self._host_key = key
        return self._host

    async def warm_up(self) -> None:
        """Start the fork server ahead of the first run."""
        await (await self._worker_host(self._settings())).start()

    def _settings(self) -> StudioSettings:
        try:
            return self.workspace.settings()
        except WorkspaceFileError as exc:
            raise RunFailed(
                turn_error(
                    "config_invalid",
                    str(exc),
                    path=exc.findings[0].pointer if exc.findings else None,
                    details={"file": exc.file},
                )
            ) from None

    def start(
        self, sample_name: str, *, loop: str | None = None, hook: str | None = None
    ) -> RunHandle:
        """Begin a run; the handle cancels it and gives its outcome."""
        handle = RunHandle()
        handle.task = asyncio.ensure_future(self._run(handle, sample_name, loop, hook))
        return handle

    async def run(
        self, sample_name: str, *, loop: str | None = None, hook: str | None = None
    ) -> RunOutcome:
        return await self.start(sample_name, loop=loop, hook=hook).outcome()

    async def _run(
        self, handle: RunHandle, sample_name: str, loop: str | None, hook: str | None
    ) -> RunOutcome:
        _current_handle.set(handle)
        started = time.perf_counter()
        try:
            sample = self.workspace.sample(sample_name)
        except WorkspaceFileError as exc:
            error = turn_error(
                "sample_invalid",
                str(exc),
                path=exc.findings[0].pointer if exc.findings else None,
                details={"file": exc.file},
            )
            outcome = RunOutcome(
                contract="pre_llm", status="turn_error", sample=sample_name, turn_error=error
            )
        else:
            try:
                outcome = await self._run_sample(sample, loop, hook)
            except RunFailed as failed:
                outcome = RunOutcome(
                    contract=sample.contract,
                    status="turn_error",
                    sample=sample.name,
                    loop=loop,
                    turn_error=failed.error,
                    input=sample.document,
                )
        outcome = outcome.model_copy(update={"duration_ms": (time.perf_counter() - started) * 1000})
        if self.store is not None:
            self.store.add(outcome)
        return outcome

    async def _run_sample(self, sample: Sample, loop: str | None, hook: str | None) -> RunOutcome:
        if sample.contract == "pre_llm":
            return await self._run_pre_llm(sample, loop, hook)
        raise RunFailed(
            turn_error("sample_invalid", f"samples of contract '{sample.contract}' cannot run yet")
        )

    # ---- shared ----------------------------------------------------------------------------
    def _resolve(
        self, source: str, contract: Contract, loop: str | None
    ) -> tuple[SourceRef, HookRef]:
        ref = parse_source_ref(source.strip())
        hook = HookRef(source=source.strip(), function=ref.function, contract=contract)
        try:
            path = resolve_source_path(self.workspace.root, ref.path)
        except SourceOutsideWorkspace as exc:
            raise RunFailed(
                turn_error("source_outside_workspace", str(exc), hook=hook, loop=loop)
            ) from None
        if not path.is_file():
            raise RunFailed(
                turn_error(
                    "source_missing",
                    f"the hook source '{ref.path}' does not exist in the workspace",
                    hook=hook,
                    loop=loop,
                )
            )
        return ref, hook

    async def _call(
        self,
        *,
        ref: SourceRef,
        hook: HookRef,
        loop: str | None,
        argument: Any,
        timeout_ms: float,
        settings: StudioSettings,
        options: dict[str, Any] | None = None,
    ) -> WorkerReading:
        limits = _limits(settings)
        spec = WorkerSpec(
            contract=hook.contract,
            source_path=ref.path,
            function=ref.function,
            workspace=str(self.workspace.root),
            source=f"{ref.path}:{ref.function}",
            options=options or {},
        )
        try:
            data = json.dumps(argument, allow_nan=False, ensure_ascii=False).encode()
        except (TypeError, ValueError) as exc:
            raise RunFailed(
                turn_error("sample_invalid", f"the sample cannot be sent as JSON: {exc}", hook=hook)
            ) from None
        host = await self._worker_host(settings)
        handle = _current_handle.get()
        if handle.cancelled:
            raise RunFailed(
                turn_error("cancelled", "the run was cancelled before the hook started", hook=hook)
            )
        call = asyncio.ensure_future(
            host.run(spec, data, timeout_s=timeout_ms / 1000, limits=limits)
        )
        handle.worker = call
        try:
            result = await call
        except asyncio.CancelledError:
            if not handle.cancelled:
                raise
            raise RunFailed(
                turn_error(
                    "cancelled",
                    f"the run of `{hook.function}` was cancelled",
                    hook=hook,
                    loop=loop,
                )
            ) from None
        except OSError as exc:
            raise RunFailed(
                turn_error(
                    "engine_failed", f"the studio could not start a worker: {exc}", hook=hook
                )
            ) from None
        return read_worker(
            result,
            hook=hook,
            loop=loop,
            timeout_ms=timeout_ms,
            output_limit=limits.output_bytes,
            result_limit=limits.result_bytes,
        )

    # ---- pre-LLM hook ----------------------------------------------------------------------
    async def _run_pre_llm(
        self, sample: Sample, loop: str | None, source: str | None
    ) -> RunOutcome:
        settings = self._settings()
        loop = loop or sample.document.get("loop") or MAIN
        request = sample.document.get("request")
        if not isinstance(request, dict):
            raise RunFailed(
                turn_error(
                    "sample_invalid",
                    f'samples/{sample.name}.json needs a "request" object',
                    path="/request",
                    loop=loop,
                )
            )
        try:
            document = self.workspace.agent_document()
        except WorkspaceFileError as exc:
            raise RunFailed(turn_error("config_invalid", str(exc), loop=loop)) from None
        check = check_agent_config(document)
        if not check.valid:
            first = errors(check.findings)[0]
            raise RunFailed(
                turn_error(
                    "config_invalid",
                    f"agent.json {first.pointer}: {first.message}",
                    path=first.pointer,
                    loop=loop,
                    details={"findings": [f.to_json() for f in errors(check.findings)]},
                )
            )
        applies = check.applies_to(loop) if source is None else True
        configured = check.hook.source if check.hook else None
        chosen = source or configured
        base = {"contract": "pre_llm", "sample": sample.name, "loop": loop, "input": request}
        if not applies or chosen is None:
            return RunOutcome(
                status="not_applied",
                result=request,
                inspection=pre_llm_decision(request, None, loop=loop, applied=False),
                **base,
            )
        ref, hook = self._resolve(chosen, "pre_llm", loop)
        code_execution = document.get("code_execution")
        sys_lambda = isinstance(code_execution, dict) and code_execution.get("sys_lambda") is True
        timeout_ms = check.effective_timeout_ms
        reading = await self._call(
            ref=ref,
            hook=hook,
            loop=loop,
            argument={"request": request, "loop": {"name": loop}},
            timeout_ms=timeout_ms,
            settings=settings,
            options={"sys_lambda": sys_lambda},
        )
        output = {
            "stdout": reading.stdout,
            "stderr": reading.stderr,
            "stdout_truncated": reading.stdout_truncated,
            "stderr_truncated": reading.stderr_truncated,
            "hook": hook,
        }
        error = reading.error
        if error is None:
            error = _invalid_request(reading, hook, loop)
        if error is not None:
            return RunOutcome(
                status="turn_error",
                turn_error=error,
                inspection=pre_llm_decision(request, None, loop=loop, applied=True),
                **base,
                **output,
            )
        returned = reading.value
        return RunOutcome(
            status="ok",
            result=returned,
            inspection=pre_llm_decision(request, returned, loop=loop, applied=True),
            warnings=[f.to_json() for f in presented_not_enabled(request.get("tools"), returned)],
            **base,
            **output,
        )


def _invalid_request(reading: WorkerReading, hook: HookRef, loop: str) -> TurnError | None:
    found = errors(validate_request(reading.value))
    if not found:
        return None
    first = found[0]
    return turn_error(
        "invalid_result",
        f"`{hook.function}` returned {first.message}",
        path=first.pointer,
        hook=hook,
        loop=loop,
        duration_ms=round(reading.duration_ms, 3),
        details={"findings": [f.to_json() for f in found[:50]], "count": len(found)},
    )


def default_workspace_path() -> Path:
    return Path(__file__).resolve().parents[2] / "resources" / "sample-workspace"
