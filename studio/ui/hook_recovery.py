"""Unsaved edits of the pre-LLM hook kept beside the workspace, so that a crash does not lose
them; offered back when the workspace is opened again."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QMessageBox, QWidget

from studio.core.pre_llm.targets import HookDraft, TargetKind, TargetRow
from studio.core.workspace.draft_recovery import discard_recovery, load_recovery, save_recovery
from studio.core.workspace.folder import Workspace
from studio.ui.app import APP_NAME
from studio.ui.hook_editor import HookEditor

RECOVERY_KEY = "pre_llm_hook"
KEEP_AFTER_MS = 800
"""Edits are kept once the typing has paused this long."""


def draft_to_text(draft: HookDraft) -> str:
    rows = [{"kind": r.kind.value, "name": r.name} for r in draft.rows]
    return json.dumps({"source": draft.source, "timeout": draft.timeout, "rows": rows})


def draft_from_text(text: str, current: HookDraft) -> HookDraft | None:
    try:
        raw = json.loads(text)
        rows = tuple(TargetRow(TargetKind(r["kind"]), str(r["name"])) for r in raw["rows"])
        return HookDraft(str(raw["source"]), str(raw["timeout"]), rows, current.original)
    except (ValueError, KeyError, TypeError):
        return None


class HookRecovery(QObject):
    message = Signal(str, int)
    """A line for the status bar, and how long to show it (ms)."""

    def __init__(
        self,
        workspace: Callable[[], Workspace | None],
        editor: HookEditor,
        undo_stack: QUndoStack,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._workspace = workspace
        self._editor = editor
        self._undo_stack = undo_stack
        self._parent = parent
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(KEEP_AFTER_MS)
        self._timer.timeout.connect(self.keep)

    def keep_soon(self) -> None:
        """The draft changed: keep it once the edits pause."""
        self._timer.start()

    def keep(self) -> None:
        """Keep the unsaved hook edits (or, with none, remove what was kept)."""
        workspace = self._workspace()
        if workspace is None:
            return
        try:
            if self._undo_stack.isClean():
                discard_recovery(workspace.root, RECOVERY_KEY)
            else:
                save_recovery(workspace.root, RECOVERY_KEY, draft_to_text(self._editor.draft))
        except OSError:
            self.message.emit("Unsaved edits could not be kept for recovery", 4000)

    def offer(self) -> None:
        """Ask whether to restore the edits kept when the studio last closed, if any."""
        workspace = self._workspace()
        assert workspace is not None
        recovery = load_recovery(workspace.root, RECOVERY_KEY)
        if recovery is None:
            return
        draft = draft_from_text(recovery.text, self._editor.draft)
        if draft is None or draft == self._editor.draft:
            discard_recovery(workspace.root, RECOVERY_KEY)
            return
        answer = QMessageBox.question(
            self._parent,
            APP_NAME,
            "Hook edits that were not saved when the studio last closed were kept. Restore them?",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self._editor.apply(draft, "Restore unsaved edits")
        else:
            discard_recovery(workspace.root, RECOVERY_KEY)

    def saved(self) -> None:
        """What was kept is in the agent file now."""
        workspace = self._workspace()
        assert workspace is not None
        discard_recovery(workspace.root, RECOVERY_KEY)

    def drop(self) -> None:
        """The unsaved hook edits were discarded: their crash copy goes too, or the next open
        would offer them again."""
        self._timer.stop()
        workspace = self._workspace()
        if workspace is None:
            return
        try:
            discard_recovery(workspace.root, RECOVERY_KEY)
        except OSError:
            self.message.emit("The discarded edits' recovery copy could not be removed", 4000)
