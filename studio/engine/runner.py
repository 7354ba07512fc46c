"""The runner: runs a sample of any contract. It reads the sample once, lets the sample's
contract parse it and run it, and lends the contract one capability: call this hook in a fresh
worker, through the runtime of the source's language. It records every outcome."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from studio.core.contract import (
    Contract,
    HookCall,
    HookReply,
    RunJob,
    RunStopped,
    SourceUnavailable,
    sample_error,
)
from studio.core.file_reads import not_a_file
from studio.core.identity_cache import IdentityCache
from studio.core.registry import CONTRACTS
from studio.core.run_outcome import RunOutcome
from studio.core.sample_findings import naming_the_sample
from studio.core.source_ref import SourceOutsideWorkspace, parse_source_ref, resolve_source_path
from studio.core.turn_error import turn_error
from studio.core.workspace.folder import Sample, StudioSettings, Workspace, WorkspaceFileError
from studio.engine.hook_runtime import HookRuntime
from studio.engine.runtimes import RUNTIMES, runtime_for, unrunnable_problem
from studio.engine.sandbox import SandboxPlan
from studio.engine.worker_host import PACKAGE_ROOT
from studio.engine.worker_protocol import WorkerLimits


class RunHandle:
    """A run in progress: cancel it at any moment; its outcome says it was cancelled."""

    def __init__(self) -> None:
        self.task: asyncio.Future[RunOutcome] | None = None
        self.worker: asyncio.Future[Any] | None = None
        self.cancelled = False
        self.record: concurrent.futures.Future[str | None] | None = None
        """The run's record write, which goes on after the outcome is delivered (on the record
        store's thread: its end wakes this loop only for a caller of :meth:`recorded`)."""
        self.write_soon: Callable[[], None] | None = None
        """Asks the record store not to wait for later runs' records before writing this one."""

    def cancel(self) -> None:
        self.cancelled = True
        if self.worker is not None and not self.worker.done():
            self.worker.cancel()

    def hook_started(self) -> None:
        """From now until :meth:`hook_ended`, a cancel cancels the run's task where it waits
        for the hook (the run goes on with its outcome saying so)."""
        self.worker = asyncio.current_task()

    def hook_ended(self) -> None:
        self.worker = None

    async def outcome(self) -> RunOutcome:
        assert self.task is not None
        return await self.task

    async def recorded(self) -> str | None:
        """Once the run's record is written: why it could not be, or None (also when the
        runner keeps no records)."""
        from studio.core.records.store import RecordStoreError

        await self.outcome()
        if self.record is None:
            return None
        if self.write_soon is not None:
            self.write_soon()
        try:
            await asyncio.wrap_future(self.record)
        except RecordStoreError as exc:
            return str(exc)
        return None


class Runner:
    """Runs the hooks of one workspace. One runtime instance per language serves every run;
    each hook call gets a fresh worker process of its own."""

    def __init__(
        self, workspace: Workspace, *, store: Any = None, cooperative: bool = False
    ) -> None:
        """``cooperative``: large JSON is read and written in pieces, so that a thread sharing
        this process (the window's) is never held up for long; a little slower overall."""
        self.workspace = workspace
        self.store = store
        self.cooperative = cooperative
        self._runtimes: dict[type[HookRuntime], HookRuntime] = {}
        # A sample that did not change is the same parsed document (the workspace keeps it while
        # the file is unchanged), so it is checked once however many times it runs.
        self._parsed: IdentityCache[Any] = IdentityCache(8)
        self._warming: asyncio.Task[None] | None = None
        self._closed = False
        self._plan: tuple[object, Any, SandboxPlan] | None = None
        """The last sandbox plan, with the agent document and sandbox settings it came from."""

    async def close(self) -> None:
        """End the runtimes, once the records of the runs so far are written. A warm-up still
        under way is stopped, not waited for: a runtime's start undoes itself at any stage."""
        self._closed = True
        warming, self._warming = self._warming, None
        if warming is not None and not warming.done():
            warming.cancel()
            await asyncio.wait([warming])
        runtimes, self._runtimes = list(self._runtimes.values()), {}
        for runtime in runtimes:
            await runtime.close()
        if self.store is not None:
            await asyncio.to_thread(self.store.flush)

    async def _runtime(self, kind: type[HookRuntime], settings: StudioSettings) -> HookRuntime:
        """The runtime instance for these settings; a change of environment or sandbox starts a
        new one."""
        if self._closed:
            # A runtime made now would outlive the runner: nothing would ever end its processes.
            raise RunStopped(turn_error("cancelled", "the workspace was closed"))
        plan = self._sandbox_plan(settings)
        runtime = self._runtimes.get(kind)
        if runtime is None or not runtime.serves(settings, plan):
            if runtime is not None:
                await runtime.close()
            runtime = kind(
                self.workspace.source_root, settings, in_pieces=self.cooperative, sandbox=plan
            )
            self._runtimes[kind] = runtime
        return runtime

    def _sandbox_plan(self, settings: StudioSettings) -> SandboxPlan:
        """The workspace's sources read-only, its state folder hidden, and the network only
        where hookstudio.json or the agent's own ``code_execution.network`` allows it."""
        try:
            agent = self.workspace.agent_document()
        except WorkspaceFileError:
            agent = {}
        # The workspace gives the same document while its file is unchanged: the plan of the
        # last call stands, without the home folder's path looked up again on every call.
        last = self._plan
        if last is not None and last[0] is agent and last[1] == settings.sandbox:
            return last[2]
        plan = self._new_sandbox_plan(settings, agent)
        self._plan = (agent, settings.sandbox, plan)
        return plan

    def _new_sandbox_plan(self, settings: StudioSettings, agent: object) -> SandboxPlan:
        code_execution = agent.get("code_execution") if isinstance(agent, dict) else None
        agent_network = isinstance(code_execution, dict) and code_execution.get("network") is True
        # The user's home holds credentials (~/.aws, ~/.ssh, ~/.netrc): hidden like the state,
        # but for the workspace, the interpreters and the studio, wherever they are.
        home = os.path.realpath(os.path.expanduser("~"))
        hidden = [str(self.workspace.state_dir), *([home] if home != "/" else [])]
        return SandboxPlan(
            sources=str(self.workspace.source_root),
            hidden=tuple(hidden),
            shown=(sys.prefix, sys.base_prefix, PACKAGE_ROOT),
            network=settings.sandbox.network or agent_network,
            enabled=settings.sandbox.enabled,
        )

    def sandbox_notices(self) -> list[str]:
        """Why hooks of this workspace run without the sandbox, one line per runtime."""
        # Both runtimes meet the same kernel, and usually say the same.
        return list(
            dict.fromkeys(r.sandbox_notice for r in self._runtimes.values() if r.sandbox_notice)
        )

    async def warm_up(self) -> None:
        """Get every runtime ready ahead of the first run; :meth:`close` may stop it midway."""
        if self._closed:
            return
        if self._warming is None or self._warming.done():
            self._warming = asyncio.ensure_future(self._start_runtimes())
        # Shielded: a caller that stops waiting does not stop the warm-up; close() does.
        await asyncio.shield(self._warming)

    async def _start_runtimes(self) -> None:
        settings = self._settings()
        for kind in RUNTIMES:
            await (await self._runtime(kind, settings)).start()

    def _settings(self) -> StudioSettings:
        try:
            return self.workspace.settings()
        except WorkspaceFileError as exc:
            raise RunStopped(
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
        document: dict[str, Any] | None = None,
    ) -> RunHandle:
        """Begin a run; the handle cancels it and gives its outcome. ``hook_config`` stands in
        for agent.json's ``pre_llm_hook`` (an edit not saved yet); ``hook`` for its source;
        ``document`` for the sample file's content (a stored run made again on what it was
        given)."""
        handle = RunHandle()
        handle.task = asyncio.ensure_future(
            self._run(handle, sample_name, loop, hook, hook_config, document)
        )
        return handle

    async def run(
        self,
        sample_name: str,
        *,
        loop: str | None = None,
        hook: str | None = None,
        hook_config: dict[str, Any] | None = None,
        document: dict[str, Any] | None = None,
    ) -> RunOutcome:
        # In the caller's task: a task of its own would cost the run two turns of the loop,
        # one to start and one to hand its outcome over. Cancelling the caller cancels the run.
        return await self._run(RunHandle(), sample_name, loop, hook, hook_config, document)

    async def _run(
        self,
        handle: RunHandle,
        sample_name: str,
        loop: str | None,
        hook: str | None,
        hook_config: dict[str, Any] | None = None,
        document: dict[str, Any] | None = None,
    ) -> RunOutcome:
        started = time.perf_counter()
        ran_on: dict[str, Any] | None = None
        try:
            sample = (
                self.workspace.sample(sample_name)
                if document is None
                else self.workspace.given_sample(sample_name, document)
            )
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
            ran_on = sample.document
            try:
                outcome = await self._run_sample(
                    CONTRACTS[sample.contract], sample, loop, hook, hook_config, handle
                )
            except RunStopped as stopped:
                outcome = RunOutcome(
                    contract=sample.contract,
                    status="turn_error",
                    sample=sample.name,
                    loop=stopped.error.loop or loop,
                    hook=stopped.error.hook,
                    turn_error=stopped.error,
                    input=sample.document,
                )
        outcome = outcome.model_copy(update={"duration_ms": (time.perf_counter() - started) * 1000})
        outcome = naming_the_sample(outcome)
        notices = [{"path": "", "message": notice} for notice in self.sandbox_notices()]
        if notices:
            outcome = outcome.model_copy(update={"warnings": [*outcome.warnings, *notices]})
        if self.store is not None:
            # Written by the store's own thread after the outcome is delivered; a database
            # replaced behind the studio's back is the exception: the run waits for its record
            # in the new one, whose notice belongs in this outcome.
            replaced = self.store.replaced()
            handle.record = self.store.add_later(outcome, ran_on)
            handle.write_soon = self.store.write_soon
            if replaced:
                self.store.write_soon()
                from studio.core.records.store import RecordStoreError

                try:
                    said = await asyncio.wrap_future(handle.record)
                except RecordStoreError as exc:
                    said = f"this run was not recorded: {exc}"
                if said:
                    warning = {"path": "", "message": said}
                    outcome = outcome.model_copy(update={"warnings": [*outcome.warnings, warning]})
        return outcome

    async def _run_sample(
        self,
        contract: Contract,
        sample: Sample,
        loop: str | None,
        hook: str | None,
        hook_config: dict[str, Any] | None,
        handle: RunHandle,
    ) -> RunOutcome:
        settings = self._settings()
        parsed = self._parsed.get(
            sample.document, lambda: contract.parse_sample(sample.document), extra=contract.name
        )
        if isinstance(parsed, list):
            raise RunStopped(sample_error(sample, parsed))
        job = RunJob(
            workspace=self.workspace,
            settings=settings,
            sample=sample,
            parsed=parsed,
            loop=loop,
            hook=hook,
            hook_config=hook_config,
            in_pieces=self.cooperative,
            is_cancelled=lambda: handle.cancelled,
        )
        return await contract.run(job, partial(self._call_hook, settings, handle))

    async def _call_hook(
        self, settings: StudioSettings, handle: RunHandle, call: HookCall
    ) -> HookReply:
        """Run one hook call in a fresh worker of its source's runtime."""
        hook, loop = call.hook, call.loop
        ref = parse_source_ref(call.source.strip())
        try:
            # An .adf keeps its sources in the database; the runtimes read copies of them. A
            # folder has nothing to copy: no hop to a thread (each hop is ~0.2 ms, and a hop
            # that comes before the pool's last thread has marked itself idle starts another).
            if self.workspace.copies_sources:
                await asyncio.to_thread(self.workspace.sync_sources)
            missing = self.workspace.missing_source(ref.path)
        except WorkspaceFileError as exc:
            missing = str(exc)
        if missing:
            raise SourceUnavailable(turn_error("source_missing", missing, hook=hook, loop=loop))
        try:
            path = resolve_source_path(self.workspace.source_root, ref.path)
        except SourceOutsideWorkspace as exc:
            raise SourceUnavailable(
                turn_error("source_outside_workspace", str(exc), hook=hook, loop=loop)
            ) from None
        problem = not_a_file(path)
        if problem is not None:
            raise SourceUnavailable(
                turn_error(
                    "source_missing",
                    f"the hook source '{ref.path}' {problem}",
                    hook=hook,
                    loop=loop,
                )
            )
        kind = runtime_for(ref.path)
        if kind is None:
            raise SourceUnavailable(
                turn_error(
                    "source_unsupported",
                    f"'{ref.path}': {unrunnable_problem(ref.path)}",
                    hook=hook,
                    loop=loop,
                )
            )
        runtime = await self._runtime(kind, settings)
        if handle.cancelled:
            raise RunStopped(
                turn_error("cancelled", "the run was cancelled before the hook started", hook=hook)
            )
        handle.hook_started()
        try:
            return await runtime.call(call, ref, WorkerLimits.of(settings.limits))
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not handle.cancelled or task is None:
                raise
            # The cancel was the handle's, and is answered here: the run goes on to its outcome.
            task.uncancel()
            raise RunStopped(
                turn_error(
                    "cancelled", f"the run of `{hook.function}` was cancelled", hook=hook, loop=loop
                )
            ) from None
        finally:
            handle.hook_ended()
