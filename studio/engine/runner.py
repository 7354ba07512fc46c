"""The runner: takes a sample, a loop and a hook, runs the hook in a fresh worker, applies the
hook's contract to what comes back, and produces a RunOutcome (which it also records)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import time
from typing import Any

from studio.core.chain.run import (
    ChainHookRef,
    UserHookReply,
    parse_chain_config,
    parse_chain_sample,
    run_chain,
)
from studio.core.findings import Finding, errors
from studio.core.identity_cache import IdentityCache
from studio.core.json.pieces import dumps_in_pieces
from studio.core.pre_llm.config import MAIN, check_agent_config
from studio.core.pre_llm.decision_record import pre_llm_decision
from studio.core.pre_llm.request import presented_not_enabled, validate_request
from studio.core.run_outcome import RunOutcome
from studio.core.source_ref import (
    SourceOutsideWorkspace,
    SourceRef,
    parse_source_ref,
    resolve_source_path,
)
from studio.core.step.decision import (
    RESOURCE_READ_REASONS,
    decide_step,
    preparation_failure,
    resource_read_failure,
    step_timeout_ms,
)
from studio.core.step.sample import parse_step_sample, step_context, step_worker_payload
from studio.core.turn_error import Contract, HookRef, TurnError, turn_error
from studio.core.workspace.folder import Sample, StudioSettings, Workspace, WorkspaceFileError
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

    def __init__(
        self, workspace: Workspace, *, store: Any = None, cooperative: bool = False
    ) -> None:
        """``cooperative``: large JSON is read and written in pieces, so that a thread sharing
        this process (the window's) is never held up for long; a little slower overall."""
        self.workspace = workspace
        self.store = store
        self.cooperative = cooperative
        self._host: WorkerHost | None = None
        self._host_key: tuple[Any, ...] | None = None
        self._inputs: IdentityCache[bytes] = IdentityCache(8)

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
        self,
        sample_name: str,
        *,
        loop: str | None = None,
        hook: str | None = None,
        hook_config: dict[str, Any] | None = None,
    ) -> RunHandle:
        """Begin a run; the handle cancels it and gives its outcome. ``hook_config`` stands in
        for agent.json's ``pre_llm_hook`` (an edit not saved yet); ``hook`` for its source."""
        handle = RunHandle()
        handle.task = asyncio.ensure_future(self._run(handle, sample_name, loop, hook, hook_config))
        return handle

    async def run(
        self,
        sample_name: str,
        *,
        loop: str | None = None,
        hook: str | None = None,
        hook_config: dict[str, Any] | None = None,
    ) -> RunOutcome:
        return await self.start(
            sample_name, loop=loop, hook=hook, hook_config=hook_config
        ).outcome()

    async def _run(
        self,
        handle: RunHandle,
        sample_name: str,
        loop: str | None,
        hook: str | None,
        hook_config: dict[str, Any] | None = None,
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
                outcome = await self._run_sample(sample, loop, hook, hook_config)
            except RunFailed as failed:
                outcome = RunOutcome(
                    contract=sample.contract,
                    status="turn_error",
                    sample=sample.name,
                    loop=failed.error.loop or loop,
                    hook=failed.error.hook,
                    turn_error=failed.error,
                    input=sample.document,
                )
        outcome = outcome.model_copy(update={"duration_ms": (time.perf_counter() - started) * 1000})
        if self.store is not None:
            # Off the loop: a write now and then waits for SQLite to checkpoint its log.
            problem = await asyncio.to_thread(self._record, outcome)
            if problem:
                warning = {"path": "", "message": f"this run was not recorded: {problem}"}
                outcome = outcome.model_copy(update={"warnings": [*outcome.warnings, warning]})
        return outcome

    def _record(self, outcome: RunOutcome) -> str | None:
        from studio.core.records.store import RecordStoreError

        try:
            self.store.add(outcome)
        except RecordStoreError as exc:
            return str(exc)
        return None

    async def _run_sample(
        self,
        sample: Sample,
        loop: str | None,
        hook: str | None,
        hook_config: dict[str, Any] | None = None,
    ) -> RunOutcome:
        if sample.contract == "pre_llm":
            return await self._run_pre_llm(sample, loop, hook, hook_config)
        if sample.contract == "step":
            return await self._run_step(sample, hook)
        return await self._run_chain(sample, hook)

    # ---- shared ----------------------------------------------------------------------------
    def _resolve(
        self, source: str, contract: Contract, loop: str | None
    ) -> tuple[SourceRef, HookRef]:
        ref = parse_source_ref(source.strip())
        hook = HookRef(source=ref.path, function=ref.function, contract=contract)
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
        encoded: bytes | None = None,
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
            data = encoded if encoded is not None else _encode(argument, self.cooperative)
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
            in_pieces=self.cooperative,
            hook=hook,
            loop=loop,
            timeout_ms=timeout_ms,
            output_limit=limits.output_bytes,
            result_limit=limits.result_bytes,
        )

    # ---- step preparation -------------------------------------------------------------------
    async def _run_step(self, sample: Sample, source: str | None) -> RunOutcome:
        settings = self._settings()
        parsed = parse_step_sample(sample.document)
        if isinstance(parsed, list):
            raise _sample_findings_error(sample, parsed)
        chosen = source or (settings.step.source if settings.step else None)
        if not chosen:
            raise RunFailed(
                turn_error(
                    "config_invalid",
                    "no step-preparation hook: set step.source in hookstudio.json or pass --hook",
                    path="/step/source",
                )
            )
        ref, hook = self._resolve(chosen, "step", None)
        base = {"contract": "step", "sample": sample.name, "input": step_context(parsed)}
        reading = await self._call(
            ref=ref,
            hook=hook,
            loop=None,
            argument=step_worker_payload(parsed),
            timeout_ms=step_timeout_ms(parsed.deadline_ms),
            settings=settings,
        )
        output = _worker_output(reading, hook)
        if reading.error is not None:
            return RunOutcome(
                status="turn_error", turn_error=_step_worker_error(reading.error), **base, **output
            )
        decision = decide_step(parsed, reading.value, reading.extra.get("reads") or [])
        if decision.error is not None:
            error = decision.error.model_copy(
                update={"hook": hook, "duration_ms": round(reading.duration_ms, 3)}
            )
            return RunOutcome(
                status="turn_error", turn_error=error, result=decision.amendment, **base, **output
            )
        assert decision.inspection is not None and decision.effective is not None
        return RunOutcome(
            status="ok",
            result=decision.amendment,
            inspection=decision.inspection.to_json(),
            effective=decision.effective.to_json(),
            warnings=[f.to_json() for f in decision.findings if f.severity == "warning"],
            **base,
            **output,
        )

    # ---- model hook chains ------------------------------------------------------------------
    async def _run_chain(self, sample: Sample, source: str | None) -> RunOutcome:
        settings = self._settings()
        parsed = parse_chain_sample(sample.document)
        if isinstance(parsed, list):
            raise _sample_findings_error(sample, parsed)
        if source is not None:
            chain_value: Any = {"pre": [{"source": source}], "post": []}
        else:
            chain_value = settings.chain if settings.chain is not None else {}
        config = parse_chain_config(chain_value, base=("chain",))
        if isinstance(config, list):
            first = errors(config)[0]
            raise RunFailed(
                turn_error(
                    "config_invalid",
                    f"hookstudio.json {first.pointer}: {first.message}",
                    path=first.pointer,
                    details={"findings": [f.to_json() for f in errors(config)]},
                )
            )
        outputs: list[tuple[str, str]] = []

        async def call_user_hook(
            entry: ChainHookRef, context: dict[str, Any], position: int, chain: str
        ) -> UserHookReply:
            hook = entry.hook_ref(chain, position)  # type: ignore[arg-type]
            try:
                ref, _ = self._resolve(entry.source or "", "chain", None)
            except RunFailed as failed:
                error = failed.error.model_copy(update={"hook": hook})
                return UserHookReply(error=error)
            reading = await self._call(
                ref=ref,
                hook=hook,
                loop=None,
                argument=context,
                timeout_ms=entry.timeout_ms,
                settings=settings,
            )
            outputs.append((reading.stdout, reading.stderr))
            return UserHookReply(
                value=reading.value,
                error=reading.error,
                stdout=reading.stdout,
                stderr=reading.stderr,
                duration_ms=reading.duration_ms,
            )

        result = await run_chain(parsed, config, call_user_hook)
        if _current_handle.get().cancelled and result.turn_error is None:
            raise RunFailed(turn_error("cancelled", "the chain run was cancelled"))
        status = "turn_error" if result.turn_error is not None else "ok"
        return RunOutcome(
            contract="chain",
            status=status,
            sample=sample.name,
            input=sample.document.get("context"),
            result=None if status == "turn_error" else result.to_json(),
            inspection=result.decision(),
            turn_error=result.turn_error,
            chain=result.timeline,
            stdout="".join(out for out, _ in outputs),
            stderr="".join(err for _, err in outputs),
        )

    # ---- pre-LLM hook ----------------------------------------------------------------------
    def _pre_llm_input(self, request: dict[str, Any], loop: str) -> bytes:
        """The hook's input as bytes; a sample run again on the same loop is encoded once."""
        return self._inputs.get(
            request,
            lambda: _encode({"request": request, "loop": {"name": loop}}, self.cooperative),
            extra=loop,
        )

    async def _run_pre_llm(
        self,
        sample: Sample,
        loop: str | None,
        source: str | None,
        hook_config: dict[str, Any] | None = None,
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
        if hook_config is not None:
            document = {**document, "pre_llm_hook": hook_config}
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
                inspection=pre_llm_decision(
                    request, None, loop=loop, applied=False, in_pieces=self.cooperative
                ),
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
            argument=None,
            encoded=self._pre_llm_input(request, loop),
            timeout_ms=timeout_ms,
            settings=settings,
            options={"sys_lambda": sys_lambda},
        )
        output = _worker_output(reading, hook)
        error = reading.error
        if error is None:
            error = _invalid_request(reading, hook, loop)
        if error is not None:
            return RunOutcome(
                status="turn_error",
                turn_error=error,
                rejected=reading.value if error.kind == "invalid_result" else None,
                inspection=pre_llm_decision(
                    request, None, loop=loop, applied=True, in_pieces=self.cooperative
                ),
                **base,
                **output,
            )
        returned = reading.value
        return RunOutcome(
            status="ok",
            result=returned,
            inspection=pre_llm_decision(
                request,
                returned,
                loop=loop,
                applied=True,
                returned_hash=reading.value_sha256,
                in_pieces=self.cooperative,
            ),
            warnings=[f.to_json() for f in presented_not_enabled(request.get("tools"), returned)],
            **base,
            **output,
        )


def _encode(value: Any, in_pieces: bool = False) -> bytes:
    text = (
        dumps_in_pieces(value)
        if in_pieces
        else json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    )
    return text.encode("utf-8", "surrogatepass")


def _worker_output(reading: WorkerReading, hook: HookRef) -> dict[str, Any]:
    """The RunOutcome fields that say what the worker printed and which hook it ran."""
    return {
        "stdout": reading.stdout,
        "stderr": reading.stderr,
        "stdout_truncated": reading.stdout_truncated,
        "stderr_truncated": reading.stderr_truncated,
        "hook": hook,
    }


def _sample_findings_error(sample: Sample, findings: list[Finding]) -> RunFailed:
    found = errors(findings)
    first = found[0]
    return RunFailed(
        turn_error(
            "sample_invalid",
            f"samples/{sample.name}.json {first.pointer or '/'}: {first.message}",
            path=first.pointer,
            details={"findings": [f.to_json() for f in found[:50]]},
        )
    )


def _step_worker_error(error: TurnError) -> TurnError:
    """A worker failure in preparation terms: the reference's error beside the user's story."""
    contract_error = error.details.get("contract_error") or {}
    common = error.model_dump(exclude={"kind", "reason", "message", "details", "label"})
    details = {k: v for k, v in error.details.items() if k != "contract_error"}
    if contract_error.get("error") == "ResourceReadError" and contract_error.get("reason") in (
        RESOURCE_READ_REASONS
    ):
        failure = resource_read_failure(
            contract_error["reason"], identity=contract_error.get("identity"), **common
        )
        return failure.model_copy(
            update={
                "message": f"{failure.message} ({error.message})",
                "details": {**failure.details, **details},
            }
        )
    reason = (
        contract_error.get("reason") if contract_error.get("error") == "PreparationError" else None
    )
    if reason not in ("callback", "timeout", "aborted"):
        reason = {"timeout": "timeout", "cancelled": "aborted"}.get(error.kind, "callback")
    failure = preparation_failure(reason, kind=error.kind, details=details, **common)
    return failure.model_copy(update={"message": f"{failure.message} {error.message}"})


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
