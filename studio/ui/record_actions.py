"""From a stored run back to work: rerun it (its sample, on its loop, with the hook as it is
now), open its input as a new sample, copy it as JSON. The records view offers these as
buttons, in the table's context menu and by keyboard; the stored run is read off the GUI
thread first.

Rerun asks the window to run ``rerun_requested(RecordSample)``: the sample the run was made on
when the record keeps it; when it does not (its payload cleared), the user is told so and may
run the sample file as it is now instead (a ``RecordSample`` without a document).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox, QWidget

from studio.core.records.record_sample import RecordSample, record_sample
from studio.core.records.store import RecordStore, StoredRecord
from studio.core.workspace.folder import SAMPLES_DIR, Workspace
from studio.ui.engine_bridge import Job
from studio.ui.json_copy import copy_json

RERUN_SHORTCUT = "Ctrl+R"
SAMPLE_SHORTCUT = "Ctrl+Shift+N"


@dataclass(frozen=True)
class LoadedRun:
    """A stored run read for an action: the record, and the sample it can be made again on."""

    record: StoredRecord
    sample: RecordSample


def load_run(store: RecordStore, run_id: str) -> LoadedRun | None:
    """Meant to run off the GUI thread."""
    record = store.get(run_id)
    return None if record is None else LoadedRun(record, record_sample(record))


def _action(
    owner: QWidget, text: str, shortcut: str | QKeySequence | QKeySequence.StandardKey, tip: str
) -> QAction:
    action = QAction(text, owner)
    action.setShortcut(QKeySequence(shortcut))
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    shown = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    action.setToolTip(f"{tip} ({shown})")
    action.setStatusTip(tip)
    owner.addAction(action)
    return action


class RecordActions(QObject):
    """The actions on the current run of the records view ``owner``."""

    rerun_requested = Signal(object)
    sample_created = Signal(str)

    def __init__(
        self,
        owner: QWidget,
        table: QWidget,
        current: Callable[[], str | None],
        context: Callable[[], tuple[RecordStore | None, Workspace | None]],
        submit: Callable[..., Job],
        say: Callable[[str, bool], None],
    ) -> None:
        super().__init__(owner)
        self._owner = owner
        self._current = current
        self._context = context
        self._submit = submit
        self._say = say
        self.dialog: QWidget | None = None
        self.rerun_action = _action(
            owner,
            "&Rerun",
            RERUN_SHORTCUT,
            "Run this run's sample again, on its loop, with the hook as it is now",
        )
        self.rerun_action.triggered.connect(self.rerun)
        self.sample_action = _action(
            owner,
            "Open Input as New &Sample…",
            SAMPLE_SHORTCUT,
            "Write what this run was given as a new sample file",
        )
        self.sample_action.setIconText("As Sample…")  # what its button says
        self.sample_action.triggered.connect(self.open_as_sample)
        self.copy_action = _action(
            table,
            "&Copy Run as JSON",
            QKeySequence.StandardKey.Copy,
            "Put this run's record and payload on the clipboard as JSON",
        )
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_action.triggered.connect(self.copy)

    @property
    def actions(self) -> list[QAction]:
        return [self.rerun_action, self.sample_action, self.copy_action]

    def update(self, has_run: bool) -> None:
        store, workspace = self._context()
        for action in self.actions:
            action.setEnabled(has_run and store is not None)
        if workspace is None:
            self.rerun_action.setEnabled(False)
            self.sample_action.setEnabled(False)

    # ---- the three actions ------------------------------------------------------------------
    def rerun(self) -> None:
        self._with_run(self._on_rerun_loaded)

    def open_as_sample(self) -> None:
        self._with_run(self._on_sample_loaded)

    def copy(self) -> None:
        self._with_run(self._on_copy_loaded)

    def _with_run(self, then: Callable[[LoadedRun], None]) -> None:
        store, _ = self._context()
        run_id = self._current()
        if store is None or run_id is None:
            return

        def loaded(value: Any, error: BaseException | None) -> None:
            if error is not None:
                self._say(f"The run could not be read: {error}", True)
            elif not isinstance(value, LoadedRun):
                self._say("This run is no longer stored.", True)
            else:
                then(value)

        self._submit(loaded, load_run, store, run_id)

    def _on_copy_loaded(self, run: LoadedRun) -> None:
        copy_json(run.record.to_json())
        self._say(f"Copied run {run.record.run_id} as JSON", False)

    def _on_rerun_loaded(self, run: LoadedRun) -> None:
        found = run.sample
        if found.document is not None:
            self.rerun_requested.emit(found)
            return
        name = found.sample
        _, workspace = self._context()
        title = "Rerun"
        if (
            name
            and workspace is not None
            and (workspace.root / SAMPLES_DIR / f"{name}.json").is_file()
        ):
            answer = QMessageBox.question(
                self._owner,
                title,
                f"This run cannot be made again on what it was given: {found.problem}.\n\n"
                f"Run the sample {name} as it is now instead, on "
                f"{'loop ' + found.loop if found.loop else 'its target'}, with the hook as it "
                "is now?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Yes,
            )
            if answer == QMessageBox.StandardButton.Yes:
                self.rerun_requested.emit(replace(found, document=None, exact=False))
            return
        where = f"the sample {name} no longer exists" if name else "it names no sample"
        QMessageBox.information(
            self._owner,
            title,
            f"This run cannot be rerun: {found.problem}, and {where}.\n\n"
            "Its decision record is still shown, and can be compared and exported.",
        )

    def _on_sample_loaded(self, run: LoadedRun) -> None:
        from studio.ui.record_sample_dialog import RecordSampleDialog

        found = run.sample
        _, workspace = self._context()
        if workspace is None:
            return
        if found.document is None:
            QMessageBox.information(
                self._owner,
                "Open Input as New Sample",
                f"This run's input cannot be opened as a sample: {found.problem}.",
            )
            return
        summary = run.record.summary
        dialog = RecordSampleDialog(
            workspace.root / SAMPLES_DIR, found, summary.run_id, summary.started_at, self._owner
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.sample_created.connect(self.sample_created)
        dialog.destroyed.connect(self._on_dialog_gone)
        self.dialog = dialog
        dialog.open()

    def _on_dialog_gone(self, *_: object) -> None:
        self.dialog = None
