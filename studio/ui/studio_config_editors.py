"""The editors of hookstudio.json's hook sections (the step hook, the invocation hook and the
chains) with what they share: the file as last read, loading, saving, outside changes and the
question before leaving.

Each editor has its own undo stack: each saves its own section on its own, so each has its own
clean state (saving the chains must not mark unsaved step edits as saved), and a save keeps the
editor's undo history. The window puts the stacks in its undo group, so Edit › Undo follows the
editor on show.

Unsaved edits are kept for recovery as the other editors' are (a crash does not lose them) and
offered back when the workspace opens again.

A section changed outside the studio while its editor has unsaved edits is merged three ways
(:mod:`studio.core.workspace.hook_merge`), as the pre-LLM hook is: the side that changed it wins,
and when both did, differently, the user chooses in the same diff dialog.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QMessageBox, QWidget

from studio.core.chain.chain_draft import ChainDraft
from studio.core.chain.config import CHAIN_SECTION
from studio.core.chain.source_findings import chain_source_findings
from studio.core.findings import errors
from studio.core.hook_source_findings import SourceLookup
from studio.core.hook_source_section import HookSourceDraft, HookSourceSection
from studio.core.invocation.source_section import INVOCATION_HOOK
from studio.core.json.same import same_json
from studio.core.source_ref import lexical_path_problem
from studio.core.step.step_draft import STEP_HOOK
from studio.core.workspace.draft_recovery import (
    discard_recovery,
    load_recovery,
    save_recovery,
)
from studio.core.workspace.folder import STUDIO_FILE, Workspace
from studio.core.workspace.hook_merge import HookMerge, MergeKind, merge_hook
from studio.core.workspace.studio_config_edit import (
    ABSENT,
    SectionChangedOutside,
    SectionInvalid,
    StudioConfigError,
    StudioConfigText,
    save_section,
)
from studio.engine.python_functions import FunctionList
from studio.engine.runtimes import runnable_extensions
from studio.ui.chain_editor import ChainEditor
from studio.ui.hook_section_editor import HookSectionEditor

if TYPE_CHECKING:
    from studio.ui.hook_conflict_dialog import HookConflictDialog

APP_NAME = "Hook Studio"
HOOK_SECTIONS: tuple[HookSourceSection, ...] = (STEP_HOOK, INVOCATION_HOOK)
"""The sections that name one hook by its source, each edited by a :class:`HookSectionEditor`."""
TITLES = {**{s.key: s.noun for s in HOOK_SECTIONS}, CHAIN_SECTION: "chains"}
# What the conflict dialog calls each section (a singular noun: "... was changed").
CONFLICT_NAMES = {**{s.key: s.noun for s in HOOK_SECTIONS}, CHAIN_SECTION: "chain section"}
RECOVERY_KEYS = {key: f"{STUDIO_FILE}#{key}" for key in TITLES}


def _recovery_text(value: object) -> str:
    return json.dumps({"absent": True} if value is ABSENT else {"value": value})


def _recovered_value(text: str) -> tuple[bool, object]:
    """Whether the text kept for recovery reads, and the section value it holds (``ABSENT``:
    no section)."""
    try:
        kept = json.loads(text)
    except ValueError:
        return False, None
    if not isinstance(kept, dict) or not ({"absent", "value"} & kept.keys()):
        return False, None
    return True, ABSENT if kept.get("absent") is True else kept.get("value")


class StudioConfigEditors(QObject):
    modified_changed = Signal()
    message = Signal(str)
    section_saved = Signal(str)

    def __init__(
        self,
        lookup: SourceLookup,
        language_problem: Callable[[str], str | None],
        listing: Callable[[Path], FunctionList | None],
        parent: QWidget,
    ) -> None:
        """``lookup``: what is at a source path (step and chain hooks are judged by a module's
        exports); ``listing``: a source file's exports once listed off the GUI thread."""
        super().__init__(parent)
        self._window = parent
        self._lookup = lookup
        self._language_problem = language_problem
        self._listing = listing
        self.hook_editors = {
            section.key: HookSectionEditor(section, QUndoStack(self)) for section in HOOK_SECTIONS
        }
        self.step_editor = self.hook_editors[STEP_HOOK.key]
        self.invocation_editor = self.hook_editors[INVOCATION_HOOK.key]
        self.chain_stack = QUndoStack(self)
        self.chain_editor = ChainEditor(self.chain_stack)
        self.workspace: Workspace | None = None
        self._base: dict[str, object] = {key: ABSENT for key in self.editors}
        self._unreadable: str | None = None
        self._conflicts: dict[str, HookConflictDialog] = {}
        # The outside version of a section whose question was cancelled: not asked again.
        self._declined: dict[str, object] = {}
        for key, editor in self.editors.items():
            editor.save_requested.connect(partial(self.save, key))
        for stack in self.stacks:
            stack.cleanChanged.connect(self.modified_changed)
        self._recovery_timers: dict[str, QTimer] = {}
        for key, editor in self.editors.items():
            timer = QTimer(self)
            timer.setSingleShot(True)
            timer.setInterval(800)
            timer.timeout.connect(partial(self._keep_recovery, key))
            editor.draft_changed.connect(timer.start)
            self._recovery_timers[key] = timer

    @property
    def stacks(self) -> tuple[QUndoStack, ...]:
        return tuple(editor.undo_stack for editor in self.editors.values())

    @property
    def editors(self) -> dict[str, HookSectionEditor | ChainEditor]:
        return {**self.hook_editors, CHAIN_SECTION: self.chain_editor}

    def stack_of(self, widget: QWidget | None) -> QUndoStack | None:
        for editor in self.editors.values():
            if widget is editor:
                return editor.undo_stack
        return None

    def name_of(self, widget: QWidget | None) -> str | None:
        """What Save saves when ``widget`` is on show ("Step Hook", "Invocation Hook",
        "Chains"); None for a widget that is none of these editors."""
        for key, editor in self.editors.items():
            if widget is editor:
                return TITLES[key].title()
        return None

    @property
    def modified(self) -> bool:
        return not all(stack.isClean() for stack in self.stacks)

    # ---- workspace --------------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace) -> None:
        self.workspace = workspace
        for timer in self._recovery_timers.values():
            timer.stop()
        self._refresh_context()
        self._load(tuple(self.editors))
        if self._unreadable is None:
            for key in self.editors:
                self._offer_recovery(key)

    def _refresh_context(self) -> None:
        if self.workspace is None:
            return
        sources = self.workspace.hook_sources(runnable_extensions())
        lookup, language = self._lookup, self._language_problem
        for editor in self.hook_editors.values():
            editor.set_context(
                sources,
                partial(editor.section.source_findings, lookup=lookup, language_problem=language),
                self._functions,
            )
        self.chain_editor.set_context(
            sources,
            lambda section: chain_source_findings(section, lookup, language_problem=language),
            self._functions,
        )

    def _functions(self, path: str) -> Sequence[str] | None:
        """The functions of a source file, once the window has listed them off the GUI thread."""
        if self.workspace is None or lexical_path_problem(path):
            return None
        listing = self._listing(self.workspace.source_root / path)
        return listing.names() if listing is not None else None

    def _read(self) -> StudioConfigText | None:
        assert self.workspace is not None
        try:
            text = StudioConfigText.read(self.workspace.settings_path)
        except StudioConfigError as exc:
            self._unreadable = f"{exc}. Fix the file to edit its hooks here."
            return None
        self._unreadable = None
        return text

    def _load(self, keys: Sequence[str]) -> None:
        text = self._read()
        for key in keys:
            editor = self.editors[key]
            editor.set_notice(self._unreadable)
            base = text.section(key) if text is not None else ABSENT
            self._base[key] = base
            self._declined.pop(key, None)
            if isinstance(editor, ChainEditor):
                draft, notes = ChainDraft.load(base)
                editor.load(draft)
                if notes and self._unreadable is None:
                    editor.set_notice("; ".join(notes))
            else:
                editor.load(HookSourceDraft.load(base))

    def recheck(self) -> None:
        """The findings again, after a listing of functions arrived or files changed."""
        for editor in self.editors.values():
            editor.recheck()

    def on_files_changed(self, changed: set[str]) -> None:
        if self.workspace is None:
            return
        self._refresh_context()
        settings = str(self.workspace.settings_path)
        if settings not in changed and str(self.workspace.root) not in changed:
            return
        text = self._read()
        for key, editor in self.editors.items():
            now = text.section(key) if text is not None else ABSENT
            if key in self._conflicts:
                continue  # the answer is checked against the file as it is then
            if editor.undo_stack.isClean():
                if now != self._base[key] or text is None:
                    self._load((key,))
            elif text is None:
                self.message.emit(
                    f"{STUDIO_FILE} changed on disk and cannot be read; your {TITLES[key]} "
                    "edits are kept and nothing is written to it"
                )
            elif now != self._base[key] and not self._was_declined(key, now):
                self._merge_outside_change(key, now)

    def _was_declined(self, key: str, theirs: object) -> bool:
        return key in self._declined and _same_value(theirs, self._declined[key])

    def _merge_outside_change(self, key: str, theirs: object) -> None:
        """The section changed outside while edited here: merged three ways with the draft."""
        editor, title = self.editors[key], TITLES[key]
        merge = merge_hook(self._base[key], editor.draft.value(), theirs)
        if merge.conflict:
            self._ask_about_conflict(key, merge, saving=False)
        elif merge.kind is MergeKind.THEIRS:
            self._show_from_disk(key, theirs, f"Take the {title} changed outside")
            self.message.emit(
                f"{STUDIO_FILE} changed on disk; showing its {title} (Undo goes back)"
            )
        elif merge.kind is MergeKind.SAME:
            self._mark_saved(key, theirs)
            self.message.emit(f"{STUDIO_FILE} changed on disk to the {title} as edited here")

    def _mark_saved(self, key: str, value: object) -> None:
        """The file holds the section exactly as edited here: it is the clean state."""
        self._base[key] = value
        self._declined.pop(key, None)
        self.editors[key].undo_stack.setClean()
        self._drop_recovery(key)

    def _show_from_disk(self, key: str, value: object, text: str) -> None:
        """Show the section the file holds now as one more undoable step (the edits before it
        can still be undone); it is what a save starts from, and the clean state."""
        editor = self.editors[key]
        if isinstance(editor, ChainEditor):
            editor.apply(ChainDraft.load(value)[0], text)
        else:
            editor.apply(HookSourceDraft.load(value), text)
        self._mark_saved(key, value)

    def _ask_about_conflict(self, key: str, merge: HookMerge, *, saving: bool) -> None:
        from studio.ui.hook_conflict_dialog import HookConflictDialog

        dialog = HookConflictDialog(
            STUDIO_FILE,
            merge,
            saving=saving,
            parent=self._window,
            what=CONFLICT_NAMES[key],
            absent=f"(no {key} section)",
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(partial(self._on_conflict_answered, key, merge, saving))
        self._conflicts[key] = dialog
        dialog.open()

    def _on_conflict_answered(self, key: str, merge: HookMerge, saving: bool, answer: int) -> None:
        from studio.ui.hook_conflict_dialog import HookConflictDialog

        self._conflicts.pop(key, None)
        title = TITLES[key]
        if self.workspace is None:
            return
        if answer not in (HookConflictDialog.KEEP_MINE, HookConflictDialog.TAKE_THEIRS):
            self._declined[key] = merge.theirs
            self.message.emit(
                f"Nothing chosen: your {title} edits stay unsaved, {STUDIO_FILE} keeps its version"
            )
            return
        text = self._read()
        if text is None:
            QMessageBox.warning(self._window, APP_NAME, f"Nothing changed: {self._unreadable}")
            return
        theirs = text.section(key)
        if not _same_value(theirs, merge.theirs):
            # Changed again while the question was open: the answer was about another version.
            if saving:
                self.save(key)
            elif not _same_value(theirs, self._base[key]):
                self._merge_outside_change(key, theirs)
            return
        if answer == HookConflictDialog.TAKE_THEIRS:
            self._show_from_disk(key, theirs, f"Take the {title} changed outside")
            self.message.emit(f"Showing the {title} from {STUDIO_FILE}; Undo brings yours back")
            return
        # The file's version is what a save now replaces; the clean state was the old one.
        self._base[key] = theirs
        self._declined.pop(key, None)
        self.editors[key].undo_stack.resetClean()
        if saving:
            self.save(key)
        else:
            self.message.emit(f"Your {title} edits are kept; Save writes them to {STUDIO_FILE}")

    # ---- saving -----------------------------------------------------------------------------
    def save_if_shown(self, widget: QWidget | None) -> bool:
        """Save the editor that is ``widget``; False when it is none of these editors."""
        for key, editor in self.editors.items():
            if widget is editor:
                self.save(key)
                return True
        return False

    def save(self, key: str, *, force: bool = False) -> bool:
        """Write one section; say why when it is not written."""
        if self.workspace is None:
            return False
        editor = self.editors[key]
        title = TITLES[key]
        if self._unreadable is not None:
            QMessageBox.warning(self._window, APP_NAME, self._unreadable)
            return False
        blocking = errors(editor.findings)
        if blocking:
            problems = "\n".join(f.message for f in blocking)
            QMessageBox.warning(
                self._window,
                APP_NAME,
                f"Not saved, because of these problems in the {title}:\n{problems}",
            )
            return False
        path = self.workspace.settings_path
        try:
            written = save_section(
                path, key, editor.draft.value(), base=self._base[key], force=force
            )
        except SectionChangedOutside as outside:
            merge = merge_hook(self._base[key], editor.draft.value(), outside.theirs)
            if merge.kind is MergeKind.SAME:
                # Changed outside exactly as here: nothing is left to write.
                self._mark_saved(key, outside.theirs)
                self.message.emit(f"{STUDIO_FILE} already holds the {title} as edited here")
                return True
            if merge.kind is MergeKind.THEIRS:
                # Nothing of ours differs from what was loaded: the outside change stays.
                self._show_from_disk(key, outside.theirs, f"Take the {title} changed outside")
                self.message.emit(f"{STUDIO_FILE} changed on disk; showing its {title}")
                return True
            if key not in self._conflicts:
                self._ask_about_conflict(key, merge, saving=True)
            return False  # the answer saves, or not
        except (SectionInvalid, StudioConfigError, OSError) as exc:
            QMessageBox.warning(
                self._window, APP_NAME, f"Not saved: the {title} could not be written:\n{exc}"
            )
            return False
        self._mark_saved(key, written.section(key))
        self.message.emit(f"Saved the {title} to {STUDIO_FILE}")
        self.section_saved.emit(key)
        return True

    def confirm_leave(self) -> bool:
        """Whether unsaved hook-section edits may be left now (after saving or discarding them,
        as the user answers)."""
        dirty = [key for key, editor in self.editors.items() if not editor.undo_stack.isClean()]
        if not dirty:
            return True
        names = " and the ".join(TITLES[key] for key in dirty)
        answer = QMessageBox.question(
            self._window,
            APP_NAME,
            f"The {names} in {STUDIO_FILE} have unsaved changes. Save them?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            return all(self.save(key) for key in dirty)
        if answer == QMessageBox.StandardButton.Discard:
            self._load(dirty)
            for key in dirty:
                self._drop_recovery(key)
            return True
        return False

    # ---- recovery ---------------------------------------------------------------------------
    def _keep_recovery(self, key: str) -> None:
        if self.workspace is None:
            return
        editor = self.editors[key]
        if editor.undo_stack.isClean():
            self._drop_recovery(key)
            return
        try:
            save_recovery(
                self.workspace.root, RECOVERY_KEYS[key], _recovery_text(editor.draft.value())
            )
        except OSError:
            self.message.emit(f"Unsaved {TITLES[key]} edits could not be kept for recovery")

    def _drop_recovery(self, key: str) -> None:
        self._recovery_timers[key].stop()
        if self.workspace is None:
            return
        try:
            discard_recovery(self.workspace.root, RECOVERY_KEYS[key])
        except OSError:
            self.message.emit(f"The {TITLES[key]} edits' recovery copy could not be removed")

    def _offer_recovery(self, key: str) -> None:
        assert self.workspace is not None
        kept = load_recovery(self.workspace.root, RECOVERY_KEYS[key])
        if kept is None:
            return
        readable, value = _recovered_value(kept.text)
        editor = self.editors[key]
        if not readable or _same_value(value, editor.draft.value()):
            self._drop_recovery(key)
            return
        answer = QMessageBox.question(
            self._window,
            APP_NAME,
            f"Edits of the {TITLES[key]} that were not saved when the studio last closed were "
            "kept. Restore them?",
        )
        if answer != QMessageBox.StandardButton.Yes:
            self._drop_recovery(key)
            return
        if isinstance(editor, ChainEditor):
            editor.apply(ChainDraft.load(value)[0], "Restore unsaved edits")
        else:
            source = value.get("source") if isinstance(value, dict) else None
            draft = HookSourceDraft(source if isinstance(source, str) else "", editor.draft.base)
            editor.apply(draft, "Restore unsaved edits")


def _same_value(a: object, b: object) -> bool:
    if a is ABSENT or b is ABSENT:
        return a is b
    return same_json(a, b)
