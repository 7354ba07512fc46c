"""Starting runs from the window (Run, Run on Every Target, a record's Rerun) and showing how they
end: the running indicator in the status bar, the result or the comparison of targets, and the
records written once the result on show has been painted."""

from __future__ import annotations

import time
from functools import partial
from typing import Any, Literal, Protocol

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QLabel

from studio.core.pre_llm.config import HOOK_KEY, MAIN
from studio.core.records.record_sample import RecordSample
from studio.core.registry import CONTRACTS, DEFAULT_CONTRACT
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import TurnError
from studio.core.workspace.folder import Workspace, WorkspaceFileError
from studio.ui.engine_bridge import EngineBridge, RunJob
from studio.ui.records_view import RecordsView
from studio.ui.results_panel import ResultsPanel

FUTURE_LOOP = "future-loop"
RECORDS_AFTER_SHOWN_MS = 50
"""A shown run's record is written this long after its result is in the views: after the
paint that shows it, which the write would otherwise slow down."""

DraftConfig = dict[str, Any] | Literal[False] | None
"""The hook config a run uses in place of the saved one; False when the draft has problems."""


class RunHost(Protocol):
    """What runs need of the window: its workspace and the hook being edited."""

    @property
    def workspace(self) -> Workspace | None: ...

    def declared_loops(self) -> list[str]: ...

    def hook_edited(self) -> bool:
        """Whether the hook editor holds edits that are not saved."""
        ...

    def draft_config(self) -> DraftConfig:
        """The draft hook config when it differs from the saved one (False when it has
        problems, which are then shown), None for the saved one."""
        ...


class RunControl(QObject):
    run_finished = Signal(object)
    """A run ended (:class:`RunOutcome`), once its result is in the views."""
    message = Signal(str, int)
    """A line for the status bar, and how long to show it (ms)."""

    def __init__(
        self,
        host: RunHost,
        bridge: EngineBridge,
        results: ResultsPanel,
        records: RecordsView,
        sample_box: QComboBox,
        loop_box: QComboBox,
        cancel_action: QAction,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._host = host
        self._bridge = bridge
        self._results = results
        self._records = records
        self._sample_box = sample_box
        self._loop_box = loop_box
        self._cancel_action = cancel_action
        self._last_run: tuple[str, str | None, dict[str, Any] | None] | None = None
        self._groups: dict[int, list[tuple[str, Any]]] = {}
        self._group_sizes: dict[int, int] = {}
        self._next_group = 1
        self._shown_holds: list[int] = []
        results.run.diff_shown.connect(self._release_records)
        self.running_label = QLabel()
        self.running_label.setObjectName("runningIndicator")
        self.tick = QTimer(self)
        self.tick.setInterval(100)
        self.tick.timeout.connect(self._on_tick)

    @property
    def last_sample(self) -> str | None:
        """The sample of the last run started by Run, which Rerun on Save runs again."""
        return self._last_run[0] if self._last_run is not None else None

    def run_selected(self) -> RunJob | None:
        sample = self._sample_box.currentText()
        if self._host.workspace is None or not sample:
            self.message.emit("Choose a sample to run the hook on", 4000)
            return None
        loop = self._loop_box.currentText().strip() or None
        config = self._edited_config_for(sample)
        if config is False:
            return None
        self._last_run = (sample, loop, config or None)
        return self.start_run(sample, loop, hook_config=config or None)

    def start_run(
        self,
        sample: str,
        loop: str | None = None,
        hook: str | None = None,
        *,
        group: int | None = None,
        hook_config: dict[str, Any] | None = None,
        document: dict[str, Any] | None = None,
    ) -> RunJob:
        """Run ``hook`` (the configured one when None) on ``sample`` (``document`` in place of
        its file's content) and show how it ends."""
        # Its result is shown: its record waits for that (_release_records).
        hold = self._bridge.hold_writes() if group is None else None
        job = self._bridge.start_run(
            sample, loop, hook, group=group, hook_config=hook_config, document=document
        )
        job.write_hold = hold
        job.finished.connect(partial(self._on_run_finished, job))
        job.failed.connect(partial(self._on_run_failed, job))
        self._on_run_started(job)
        return job

    def rerun_record(self, found: RecordSample) -> RunJob | None:
        """Run a stored run's sample again, on its loop, with the hook as it is now (the one
        being edited, as Run does): on what the run was given, or, without a document, on the
        sample file as it is now."""
        if self._host.workspace is None:
            return None
        contract = CONTRACTS.get(found.contract)
        edited = contract is not None and contract.agent_hook_key == HOOK_KEY
        config = self._host.draft_config() if edited else None
        if config is False:
            return None
        name = found.sample or "rerun"
        given = "as the run was given it" if found.document is not None else "as it is now"
        self.message.emit(f"Rerunning the sample {name} {given}", 4000)
        return self.start_run(name, found.loop, hook_config=config or None, document=found.document)

    def rerun(self) -> None:
        """The last run started by Run, again, unless runs are going."""
        if self._last_run is None or self._bridge.running:
            return
        sample, loop, config = self._last_run
        self.start_run(sample, loop, hook_config=config)

    def run_on_every_target(self) -> None:
        sample = self._sample_box.currentText()
        if self._host.workspace is None or not sample:
            return
        group = self._next_group
        self._next_group += 1
        loops = [MAIN, *self._host.declared_loops(), FUTURE_LOOP]
        self._groups[group] = []
        self._group_sizes[group] = len(loops)
        config = self._edited_config_for(sample)
        if config is False:
            return
        for loop in loops:
            self.start_run(sample, loop, group=group, hook_config=config or None)

    def _sample_contract(self, name: str) -> str | None:
        workspace = self._host.workspace
        if workspace is None:
            return None
        try:
            return workspace.sample(name).contract
        except WorkspaceFileError:
            return None

    def _runs_edited_hook(self, name: str) -> bool:
        """Whether a run of this sample runs the hook the hook editor edits."""
        contract = CONTRACTS.get(self._sample_contract(name) or "")
        return contract is not None and contract.agent_hook_key == HOOK_KEY

    def _edited_config_for(self, sample: str) -> DraftConfig:
        """The draft config when a run of ``sample`` runs the hook being edited. The sample is
        read to know that only when the hook has unsaved edits: a large one takes a while to
        parse, and the GUI thread would wait for it at each Run."""
        if not self._host.hook_edited():
            return None
        return self._host.draft_config() if self._runs_edited_hook(sample) else None

    def _on_run_started(self, job: RunJob) -> None:
        self._cancel_action.setEnabled(True)
        self.tick.start()
        if job.group is None:
            self._results.show_running(job)
        self._on_tick()

    def _on_tick(self) -> None:
        running = self._bridge.running
        if not running:
            self.running_label.setText("")
            self.tick.stop()
            self._cancel_action.setEnabled(False)
            return
        oldest = min(job.started_at for job in running)
        label = f"{len(running)} runs" if len(running) > 1 else f"{running[0].sample}"
        self.running_label.setText(f"● Running {label}… {time.monotonic() - oldest:.1f} s")
        self._results.update_running(time.monotonic() - oldest)

    def _on_run_failed(self, job: RunJob, error: TurnError) -> None:
        contract = self._sample_contract(job.sample) or DEFAULT_CONTRACT
        self._on_run_finished(job, job.failed_outcome(error, contract))

    def _on_run_finished(self, job: RunJob, outcome: RunOutcome) -> None:
        self._on_tick()
        if job.group is not None:
            results = self._groups.setdefault(job.group, [])
            results.append((job.loop or MAIN, outcome))
            if len(results) == self._group_sizes.get(job.group, 0):
                loops = [MAIN, *self._host.declared_loops(), FUTURE_LOOP]
                order = {loop: i for i, loop in enumerate(loops)}
                results.sort(key=lambda r: order.get(r[0], 99))
                self._results.show_comparison(results)
                del self._groups[job.group]
        else:
            self._results.show_outcome(outcome)
        if job.write_hold is not None:
            self._shown_holds.append(job.write_hold)
        if self._results.diff_ready:  # else once the diff is in (diff_shown)
            self._release_records()
        # On the next turn of the event loop: the window handles input and paints between
        # showing a large outcome and asking for the records again.
        QTimer.singleShot(0, self._records, self._records.refresh)
        self.run_finished.emit(outcome)

    def _release_records(self) -> None:
        """Write the records held since the runs on show began, once their result has been
        painted (a run started since keeps its own hold)."""
        holds, self._shown_holds = self._shown_holds, []
        for hold in holds:
            QTimer.singleShot(RECORDS_AFTER_SHOWN_MS, partial(self._bridge.release_writes, hold))
