"""The pre-LLM hook being edited, kept in step with the agent file: Save (off the GUI thread,
after the source's functions are known), the three-way merge of a hook changed outside the
studio, the question asked when both changed it, and removing the hook."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QMessageBox, QStatusBar, QWidget

from studio.core.findings import errors
from studio.core.pre_llm.targets import DraftInvalid, HookDraft, draft_to_config
from studio.core.source_ref import parse_source_ref
from studio.core.workspace.adf_file import AdfFileError
from studio.core.workspace.agent_document import (
    AgentDocument,
    AgentDocumentError,
    ExternalChange,
    HookConflict,
)
from studio.core.workspace.folder import Workspace, WorkspaceFileError
from studio.core.workspace.hook_merge import (
    HookMerge,
    MergeKind,
    hook_in,
    merge_hook,
    other_keys_changed,
    same_hook,
)
from studio.engine.runtimes import runtime_for
from studio.ui.app import APP_NAME
from studio.ui.engine_bridge import EngineBridge, Job
from studio.ui.function_listings import FunctionListings
from studio.ui.hook_editor import HookEditor
from studio.ui.hook_recovery import HookRecovery, draft_to_text

if TYPE_CHECKING:
    # Imported when first asked: it is not needed to show the window.
    from studio.ui.hook_conflict_dialog import HookConflictDialog


class SavingHost(Protocol):
    """What saving needs of the window: the open workspace and its agent document."""

    @property
    def workspace(self) -> Workspace | None: ...

    @property
    def document(self) -> AgentDocument | None: ...

    def adopt(self, fresh: AgentDocument) -> None:
        """The file as it is now becomes what the hook's edits are saved into."""
        ...

    def load_document(self) -> None: ...

    def show_notice(self) -> None:
        """Why nothing may be saved, or that the agent looks open elsewhere."""
        ...

    def source_target(self, path: str) -> Path | None:
        """Where the file of a hook's source path is."""
        ...

    def update_title(self) -> None: ...

    def update_save_action(self) -> None:
        """A save began or ended: Save is enabled again or not."""
        ...


class HookSaving(QObject):
    save_finished = Signal(bool)
    """How a save asked for ended: whether it wrote."""

    def __init__(
        self,
        host: SavingHost,
        bridge: EngineBridge,
        listings: FunctionListings,
        editor: HookEditor,
        undo_stack: QUndoStack,
        recovery: HookRecovery,
        status: QStatusBar,
        window: QWidget,
    ) -> None:
        super().__init__(window)
        self._host = host
        self._bridge = bridge
        self._listings = listings
        self._editor = editor
        self._undo_stack = undo_stack
        self._recovery = recovery
        self._status = status
        self._window = window
        self._job: Job | None = None
        self._conflict: HookConflictDialog | None = None

    @property
    def busy(self) -> bool:
        """Whether a save (or the listing it waits for) is under way."""
        return self._job is not None

    def forget(self) -> None:
        """Another workspace is open: the save under way is not shown as its."""
        self._job = None

    def agent_changed_on_disk(self) -> None:
        """The agent file may have been changed outside: its hook is merged with the one being
        edited, or the user is asked when both changed it."""
        if self._host.workspace is None:
            return
        if self._host.document is None:
            self._host.load_document()
            return
        if self._conflict is not None:
            return  # the answer is checked against the file as it is then
        label = self._host.workspace.agent_label
        try:
            if not self._host.document.changed_on_disk():
                return
            fresh = self._host.workspace.hook_document()
        except (AgentDocumentError, WorkspaceFileError, AdfFileError) as exc:
            self._status.showMessage(
                f"{label} changed on disk and cannot be read ({exc}); your hook edits are kept "
                "and nothing is written to it",
                10000,
            )
            return
        self._merge_outside_change(fresh)

    def _merge_outside_change(self, fresh: AgentDocument) -> None:
        """The agent file changed outside: every key but the hook is taken as the file has it
        now, and the hook is merged three ways with the one being edited."""
        assert self._host.document is not None and self._host.workspace is not None
        label = self._host.workspace.agent_label
        base = hook_in(self._host.document.document)
        merge = merge_hook(base, self._hook_being_edited(), hook_in(fresh.document))
        if merge.conflict:
            self._ask_about_conflict(merge, saving=False, then=None)
            return
        self._host.adopt(fresh)
        if merge.kind is MergeKind.THEIRS:
            self._editor.take_from_disk(
                fresh.hook_draft(), fresh.has_hook, "Take the hook changed outside"
            )
            message = f"{label} changed on disk; its new hook is shown (Undo goes back)"
        elif merge.kind is MergeKind.SAME:
            self._editor.take_from_disk(self._editor.draft, fresh.has_hook, "")
            message = f"{label} changed on disk to the very hook being edited"
        elif merge.kind is MergeKind.OURS:
            message = f"{label} changed on disk, not its hook; your unsaved hook edits are kept"
        else:
            message = f"{label} changed on disk and was reloaded; its hook did not change"
        self._status.showMessage(message, 8000)

    def _hook_being_edited(self) -> Any:
        """The editor's hook, as a merge sees it: the loaded one while nothing was edited, else
        the draft's config (a draft with problems as its fields, so that a diff shows them)."""
        assert self._host.document is not None
        draft = self._editor.draft
        if self._undo_stack.isClean() or draft == self._host.document.hook_draft():
            return hook_in(self._host.document.document)
        try:
            return draft_to_config(draft)
        except DraftInvalid:
            return json.loads(draft_to_text(draft))

    def _ask_about_conflict(
        self, merge: HookMerge, *, saving: bool, then: Callable[[], object] | None
    ) -> HookConflictDialog:
        from studio.ui.hook_conflict_dialog import HookConflictDialog

        assert self._host.workspace is not None
        dialog = HookConflictDialog(
            self._host.workspace.agent_label, merge, saving=saving, parent=self._window
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(partial(self._on_conflict_answered, merge, saving, then))
        self._conflict = dialog
        dialog.open()
        return dialog

    def _on_conflict_answered(
        self,
        merge: HookMerge,
        saving: bool,
        then: Callable[[], object] | None,
        answer: int,
    ) -> None:
        from studio.ui.hook_conflict_dialog import HookConflictDialog

        self._conflict = None
        if self._host.workspace is None or self._host.document is None:
            return
        label = self._host.workspace.agent_label
        if answer not in (HookConflictDialog.KEEP_MINE, HookConflictDialog.TAKE_THEIRS):
            self._status.showMessage(
                f"Nothing chosen: your hook edits stay unsaved, {label} keeps its version", 8000
            )
            if saving:
                self.save_finished.emit(False)
            return
        try:
            fresh = self._host.workspace.hook_document()
        except (AgentDocumentError, WorkspaceFileError, AdfFileError) as exc:
            QMessageBox.warning(
                self._window, APP_NAME, f"{label} cannot be read; nothing changed:\n{exc}"
            )
            if saving:
                self.save_finished.emit(False)
            return
        if not same_hook(hook_in(fresh.document), merge.theirs):
            # Changed again while the question was open: the answer was about another version.
            if saving:
                self._start_save(self._editor.draft, False, then)
            else:
                self.agent_changed_on_disk()
            return
        self._host.adopt(fresh)
        if answer == HookConflictDialog.KEEP_MINE:
            # The clean state was the old hook, which is no longer the file's.
            self._undo_stack.resetClean()
            self._host.update_title()
            if saving:
                self._start_save(self._editor.draft, False, then)
                return
            self._status.showMessage(f"Your hook is kept; Save writes it to {label}", 8000)
        else:
            self._editor.take_from_disk(
                fresh.hook_draft(), fresh.has_hook, "Take the hook changed outside"
            )
            self._status.showMessage(
                f"The hook from {label} is shown; Undo brings yours back", 8000
            )
            if saving:
                self.save_finished.emit(False)

    def save(self, *, then: Callable[[], object] | None = None) -> Job | None:
        """Save the hook by the workspace's one save path, off the GUI thread (an ``.adf`` held
        by another program waits out its busy timeout there). Returns the job, or None when
        nothing was started (read-only, findings, a save already running: said at once).
        ``save_finished(saved)`` says how it ended; ``then`` runs after a save that wrote."""
        if self._host.document is None or self._host.workspace is None or self._job is not None:
            return None
        label = self._host.workspace.agent_label
        refusal = self._host.workspace.read_only_reason
        if refusal:
            QMessageBox.warning(self._window, APP_NAME, f"{label} is read-only here:\n{refusal}")
            return None
        # The editor's findings also know the files on disk (a missing source or function).
        blocking = errors(self._editor.findings)
        if blocking:
            problems = "\n".join(f.message for f in blocking)
            QMessageBox.warning(
                self._window, APP_NAME, f"The hook has problems and was not saved:\n{problems}"
            )
            return None
        waiting = self._await_listing(then)
        if waiting is not None:
            return waiting
        return self._start_save(self._editor.draft, False, then)

    def _await_listing(self, then: Callable[[], object] | None) -> Job | None:
        """The job that lists the source's functions before the save goes on, when they are
        not known yet: until they are, a function the file lacks cannot be found, and Save
        must not pass it. None when nothing is to wait for."""
        assert self._host.workspace is not None
        source = self._editor.draft.source
        target = self._host.source_target(parse_source_ref(source).path if source else "")
        if target is None:
            return None
        key = (target, False)
        runtime = runtime_for(str(target))
        stamp = self._listings.pending(key)
        if runtime is None or stamp is None:
            return None
        job = self._bridge.submit(partial(runtime.functions, target))
        self._job = job
        self._host.update_save_action()
        self._status.showMessage(f"Checking {target.name} for its functions before saving…")
        job.finished.connect(partial(self._on_listed_for_save, job, key, stamp, then))
        job.failed.connect(lambda _exc: self._on_listed_for_save(job, key, stamp, then, None))
        return job

    def _on_listed_for_save(
        self,
        job: Job,
        key: tuple[Path, bool],
        stamp: tuple[int, int],
        then: Callable[[], object] | None,
        listing: object,
    ) -> None:
        if job is not self._job:
            return  # another workspace was opened meanwhile
        self._job = None
        self._host.update_save_action()
        self._listings.deliver(key, stamp, listing)
        if self.save(then=then) is None:
            self.save_finished.emit(False)

    def _start_save(self, draft: HookDraft, force: bool, then: Callable[[], object] | None) -> Job:
        assert self._host.document is not None and self._host.workspace is not None
        label = self._host.workspace.agent_label
        step = self._undo_stack.index()
        before = self._host.document.document
        job = self._bridge.submit(partial(self._host.document.save, draft, force=force))
        self._job = job
        self._host.update_save_action()
        self._status.showMessage(f"Saving {label}…")
        job.finished.connect(partial(self._on_saved, job, label, draft, step, before, then))
        job.failed.connect(partial(self._on_save_failed, job, label, draft, then))
        return job

    def _end_save(self, job: Job) -> bool:
        """Whether this job is the save on show (a workspace opened meanwhile drops it)."""
        if job is not self._job:
            return False
        self._job = None
        self._host.update_save_action()
        self._status.clearMessage()
        return True

    def _on_saved(
        self,
        job: Job,
        label: str,
        draft: HookDraft,
        step: int,
        before: dict[str, Any],
        then: Callable[[], object] | None,
        _text: object,
    ) -> None:
        if not self._end_save(job) or self._host.document is None or self._host.workspace is None:
            return
        message = f"Saved {label}"
        if other_keys_changed(before, self._host.document.document):
            message += "; what was changed in it outside the studio is kept"
        # Edits made while the save ran stay unsaved: only what was written is clean. The
        # undo history stays: a save is not an edit.
        if self._undo_stack.index() == step and self._editor.draft == draft:
            if self._saved_as_drafted(draft):
                self._editor.take_from_disk(draft, self._host.document.has_hook, "")
            else:
                # Nothing was edited and the file's hook changed meanwhile: that one stays.
                self._editor.take_from_disk(
                    self._host.document.hook_draft(),
                    self._host.document.has_hook,
                    "Take the hook changed outside",
                )
                message = f"{label} has a newer hook, changed outside; it is shown"
            self._recovery.saved()
        self._status.showMessage(message, 5000)
        self._host.update_title()
        self.save_finished.emit(True)
        if then is not None:
            then()

    def _saved_as_drafted(self, draft: HookDraft) -> bool:
        assert self._host.document is not None
        try:
            return same_hook(draft_to_config(draft), hook_in(self._host.document.document))
        except DraftInvalid:
            return False

    def _on_save_failed(
        self,
        job: Job,
        label: str,
        draft: HookDraft,
        then: Callable[[], object] | None,
        exc: BaseException,
    ) -> None:
        if not self._end_save(job):
            return
        if isinstance(exc, HookConflict) and self._host.workspace is not None:
            self._ask_about_conflict(exc.merge, saving=True, then=then)
            return  # save_finished follows the answer
        if isinstance(exc, DraftInvalid):
            QMessageBox.warning(
                self._window, APP_NAME, f"The hook has problems and was not saved:\n{exc}"
            )
        elif isinstance(exc, AdfFileError):
            self._refused(label, exc)
        else:
            QMessageBox.warning(self._window, APP_NAME, f"{label} could not be saved:\n{exc}")
        self.save_finished.emit(False)

    def _refused(self, label: str, exc: AdfFileError) -> None:
        """An agent file that did not take the save: nothing was written and the draft stays."""
        self._host.show_notice()
        QMessageBox.warning(
            self._window,
            APP_NAME,
            f"The hook was not saved to {label}; your edits are kept.\n\n{exc.reason}",
        )

    def remove_hook(self) -> None:
        if self._host.document is None or not self._host.document.has_hook:
            return
        label = self._host.workspace.agent_label if self._host.workspace else "the agent"
        answer = QMessageBox.question(
            self._window, APP_NAME, f"Remove the pre-LLM hook from {label}?"
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            self._host.document.remove_hook()
        except AdfFileError as exc:
            QMessageBox.warning(self._window, APP_NAME, f"The hook was not removed:\n{exc.reason}")
            return
        except HookConflict:
            QMessageBox.warning(
                self._window,
                APP_NAME,
                f"The hook was not removed: it was changed in {label} outside the studio. "
                "Look at the change first, then remove it if you still want to.",
            )
            self.agent_changed_on_disk()
            return
        except (ExternalChange, OSError, AgentDocumentError) as exc:
            QMessageBox.warning(self._window, APP_NAME, f"The hook was not removed:\n{exc}")
            return
        # What else changed in the file outside (its limits, say) is what the editor now shows.
        self._host.adopt(self._host.document)
        # The removal is a step of its own: Undo shows the hook again, unsaved.
        self._editor.take_from_disk(
            self._host.document.hook_draft(), self._host.document.has_hook, "Remove hook"
        )
        self._host.update_title()
