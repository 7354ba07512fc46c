"""The samples of a workspace: a list, a JSON editor with live checks, and a structured view.

The list (:mod:`.sample_list`) is a model over the workspace's sample files; here it is kept in
step with the folder, and samples are created from a contract's template, duplicated, renamed
and deleted. The sample picked in it is opened by :class:`~.open_samples.OpenSamples` and shown
by :class:`~.sample_view.SampleView`: a JSON syntax error is marked at its line and column, and
every finding of the sample's contract is listed with its JSON path; activating one moves the
cursor to the value. A second tab shows the sample as a tree: for a pre-LLM sample messages with
their roles and blocks, tools, options; for step and chain samples, what those contracts hold.

Unsaved edits (with their undo history) stay while the user looks at another sample; the list
marks those samples.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QMessageBox, QSplitter, QVBoxLayout, QWidget

from studio.core.file_reads import read_bytes
from studio.core.registry import CONTRACTS
from studio.core.workspace.folder import SAMPLES_DIR, Workspace
from studio.core.workspace.sample_files import (
    clean_sample_name,
    create_sample_file,
    free_sample_name,
    rename_sample_file,
    sample_name_problem,
    template_text,
)
from studio.ui.engine_bridge import EngineBridge
from studio.ui.samples.json_text_edit import JsonTextEdit
from studio.ui.samples.open_samples import OpenSamples
from studio.ui.samples.sample_list import SampleListPanel
from studio.ui.samples.sample_view import SampleView


class SampleEditor(QWidget):
    """Lists, creates, edits, checks and saves the samples of a workspace."""

    sample_selected = Signal(str)
    samples_changed = Signal()
    sample_saved = Signal(str)
    sample_opened = Signal(str)  # the sample's text is in the editor (after a load or reload)
    checked = Signal()  # the problems list shows the check of the current text

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace: Workspace | None = None
        self._announcing = False

        self.view = SampleView()
        self.samples = OpenSamples(bridge, self.view, self)
        self.sample_list = SampleListPanel(self._rename_from_list, [self.view.save_action])
        # Ctrl+N creates a sample wherever the focus is in the editor, not only in the list.
        self.addAction(self.sample_list.new_action)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.sample_list)
        self.splitter.addWidget(self.view)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([170, 800])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.splitter)

        self.samples.sample_opened.connect(self.sample_opened)
        self.samples.sample_saved.connect(self.sample_saved)
        self.samples.checked.connect(self.checked)
        self.samples.modified_changed.connect(self._update_markers)
        self.sample_list.picked.connect(self._on_picked)
        self.sample_list.activated.connect(self.view.focus_text)
        self.sample_list.new_requested.connect(self._on_new)
        self.sample_list.duplicate_requested.connect(self._on_duplicate)
        self.sample_list.delete_requested.connect(self._on_delete)
        self.samples.show_nothing("Choose a sample, or create one with New.")

    @property
    def editor(self) -> JsonTextEdit:
        """The text editor on screen: the current sample's, or an empty one."""
        return self.view.editor

    # ---- the interface ----------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace) -> None:
        """Show ``workspace``'s samples; unsaved edits of the previous workspace are dropped."""
        self.samples.close_all()
        self.workspace = workspace
        self.sample_list.set_can_create(True)
        self.sample_list.set_names([])
        self._refresh_list()
        self.samples.show_nothing("Choose a sample, or create one with New.")

    def select_sample(self, name: str) -> None:
        """Open ``name`` (no signal: the caller chose it). Ignored while this editor is itself
        announcing a change of the samples, so an echo cannot switch away from the new one."""
        if self._announcing or self.workspace is None or not name:
            return
        self.sample_list.select(name)
        self._open(name)

    def current_sample(self) -> str | None:
        return self.samples.current_sample()

    def is_modified(self) -> bool:
        """Whether any sample has unsaved edits (the one shown or one kept in the background)."""
        return bool(self.modified_samples())

    def modified_samples(self) -> list[str]:
        return self.samples.modified_samples()

    def save(self) -> bool:
        """Save the shown sample; see :meth:`OpenSamples.save`."""
        return self.samples.save()

    def jump_to(self, where: str) -> None:
        """Move the cursor to the value at JSON pointer ``where`` in the sample's text."""
        self.samples.jump_to(where)

    def on_files_changed(self, paths: set[str]) -> None:
        """Files changed outside the studio: the list follows the folder; the sample shown is
        reloaded when it has no unsaved edits, else a notice offers to reload it."""
        if self.workspace is None:
            return
        self._refresh_list()
        folder = self.workspace.root / SAMPLES_DIR
        touched = {os.path.realpath(p) for p in paths}
        everything = str(folder) in touched or str(self.workspace.root) in touched
        self.samples.follow_disk(touched, everything)

    # ---- list --------------------------------------------------------------------------------
    def _refresh_list(self) -> None:
        """The list follows the folder; a sample with unsaved edits stays even when its file is
        gone, so the edits can still be saved."""
        if self.workspace is None:
            return
        names = {s.name for s in self.workspace.samples()} | set(self.modified_samples())
        self.sample_list.set_names(sorted(names))
        self._update_markers()
        current = self.current_sample()
        if current is not None:
            self.sample_list.select(current)
        self.sample_list.update_actions()

    def _update_markers(self) -> None:
        self.sample_list.model.set_modified(self.modified_samples())

    def _on_picked(self, name: str) -> None:
        if name != self.current_sample():
            self._open(name)
            self.sample_selected.emit(name)

    def _open(self, name: str) -> None:
        if self.workspace is not None:
            self.samples.open(name, self._sample_path(name))

    def _announce(self, selected: str | None) -> None:
        """Tell the window the samples changed and which one is selected now; ignore the
        ``select_sample`` echoes that come back while doing so."""
        self._announcing = True
        try:
            self.samples_changed.emit()
        finally:
            self._announcing = False
        if selected:
            self.sample_selected.emit(selected)

    def _sample_path(self, name: str) -> Path:
        assert self.workspace is not None
        return self.workspace.root / SAMPLES_DIR / f"{name}.json"

    # ---- create, duplicate, rename, delete ---------------------------------------------------
    def new_sample(self, contract: str, name: str | None = None) -> str | None:
        """Create a sample from ``contract``'s template; its name, or None when it failed."""
        if self.workspace is None:
            return None
        template = CONTRACTS[contract]
        name = clean_sample_name(name) if name else self._free_name(template.new_sample_stem)
        return self._create(name, template_text(template).encode("utf-8"), "Created")

    def duplicate_sample(self, name: str | None = None) -> str | None:
        """Copy the saved file of ``name`` (the selected sample by default) to a new name."""
        name = name or self.sample_list.selected_name()
        if self.workspace is None or not name:
            return None
        try:
            data = read_bytes(self._sample_path(name))
        except OSError as exc:
            self.view.say(f"{name} cannot be duplicated: {exc.strerror or exc}", error=True)
            return None
        copy = self._free_name(f"{name}-copy")
        note = ""
        if name in self.modified_samples():
            note = f" (the saved version; the unsaved edits stay in {name})"
        return self._create(copy, data, "Duplicated", note)

    def _free_name(self, base: str) -> str:
        return free_sample_name(self._sample_path(base).parent, base, self.sample_list.model.names)

    def _create(self, name: str, data: bytes, verb: str, note: str = "") -> str | None:
        problem = sample_name_problem(name)
        if problem:
            self.view.say(problem, error=True)
            return None
        path = self._sample_path(name)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            create_sample_file(path, data)
        except FileExistsError:
            self.view.say(f"A sample named {name} exists already", error=True)
            return None
        except OSError as exc:
            self.view.say(f"{name} cannot be created: {exc.strerror or exc}", error=True)
            return None
        self._refresh_list()
        self.sample_list.select(name)
        self._open(name)
        self.view.say(f"{verb} {SAMPLES_DIR}/{name}.json{note}")
        self._announce(name)
        return name

    def rename_sample(self, old: str, new: str) -> bool:
        """Rename ``old`` to ``new``; refuses a bad name and never replaces another sample."""
        if not self._rename_file(old, new):
            return False
        self._after_rename(old, clean_sample_name(new))
        return True

    def _rename_from_list(self, old: str, new: str) -> bool:
        """A rename typed in the list: the rows change once the list's editor has closed."""
        if not self._rename_file(old, new):
            return False
        QTimer.singleShot(0, self, lambda: self._after_rename(old, clean_sample_name(new)))
        return True

    def _rename_file(self, old: str, new: str) -> bool:
        if self.workspace is None:
            return False
        new = clean_sample_name(new)
        if new == old:
            return False
        problem = sample_name_problem(new)
        if problem:
            self.view.say(f"Not renamed: {problem}", error=True)
            return False
        same = new.lower() == old.lower()  # only the case changes
        taken = any(n.lower() == new.lower() for n in self.sample_list.model.names)
        if not same and (taken or self._sample_path(new).exists()):
            self.view.say(f"Not renamed: a sample named {new} exists already", error=True)
            return False
        try:
            rename_sample_file(self._sample_path(old), self._sample_path(new))
        except FileExistsError:
            self.view.say(f"Not renamed: a sample named {new} exists already", error=True)
            return False
        except OSError as exc:
            self.view.say(f"Not renamed: {exc.strerror or exc}", error=True)
            return False
        return True

    def _after_rename(self, old: str, new: str) -> None:
        self.samples.rename(old, new, self._sample_path(new))
        self._refresh_list()
        self.sample_list.select(new)
        if self.current_sample() != new:
            self._open(new)
        self.samples.show_title()
        self.view.say(f"Renamed {old} to {new}")
        self._announce(new)

    def delete_sample(self, name: str | None = None, confirm: bool = True) -> bool:
        name = name or self.sample_list.selected_name()
        if self.workspace is None or not name:
            return False
        if confirm:
            unsaved = (
                " It has unsaved edits, which are lost too."
                if name in self.modified_samples()
                else ""
            )
            answer = QMessageBox.question(
                self,
                "Delete sample",
                f"Delete {SAMPLES_DIR}/{name}.json?{unsaved}\nThis cannot be undone.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return False
        row = self.sample_list.model.row_of(name)
        try:
            self._sample_path(name).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.view.say(f"{name} cannot be deleted: {exc.strerror or exc}", error=True)
            return False
        self.samples.forget(name)
        self._refresh_list()
        names = self.sample_list.model.names
        neighbour = names[min(row, len(names) - 1)] if names and row >= 0 else None
        if neighbour:
            self.sample_list.select(neighbour)
            self._open(neighbour)
        else:
            self.samples.show_nothing("No samples yet: create one with New.")
        self.view.say(f"Deleted {SAMPLES_DIR}/{name}.json")
        self._announce(neighbour)
        return True

    def _on_new(self, contract: str) -> None:
        if self.new_sample(contract):
            self.sample_list.start_rename()  # let the user name it right away

    def _on_duplicate(self) -> None:
        if self.duplicate_sample():
            self.sample_list.start_rename()

    def _on_delete(self) -> None:
        self.delete_sample()
