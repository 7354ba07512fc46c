"""The Step, Invocation and Chains tabs of the window's editors: the editors of hookstudio.json's
hook sections, made once the window is painted or when their tab is first chosen, and the undo
stack that Edit › Undo follows as the tab on show changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoGroup, QUndoStack
from PySide6.QtWidgets import QTabWidget, QWidget

from studio.core.hook_source_findings import SourceLookup
from studio.engine.python_functions import FunctionList
from studio.ui.window_layout import no_tab_traps

if TYPE_CHECKING:
    from pathlib import Path

    from studio.ui.studio_config_editors import StudioConfigEditors

CONFIG_EDITOR_TITLES = ("Step", "Invocation", "Chains")


class ConfigEditorTabs(QObject):
    made = Signal(object)
    """The editors (:class:`StudioConfigEditors`) were just made and are in their tabs."""
    shown = Signal(object)
    """The editors' tab on show changed: the name of the hookstudio.json editor shown, or None
    for another editor."""

    def __init__(
        self,
        tabs: QTabWidget,
        undo_stack: QUndoStack,
        source_lookup: SourceLookup,
        language_problem: Callable[[str], str | None],
        listing: Callable[[Path], FunctionList | None],
        window: QWidget,
    ) -> None:
        """Adds the three tabs to ``tabs``, each holding a placeholder until its editor is made.
        Making the editors and reading their sections took a good part of the window's start,
        and none is on show at first. Each editor saves on its own, so each has its own undo
        stack; ``undo_group`` follows the tab on show (``undo_stack`` for the other tabs)."""
        super().__init__(window)
        self._tabs = tabs
        self._undo_stack = undo_stack
        self._source_lookup = source_lookup
        self._language_problem = language_problem
        self._listing = listing
        self._window = window
        self.editors: StudioConfigEditors | None = None
        self._placeholders = [QWidget() for _ in CONFIG_EDITOR_TITLES]
        for page, title in zip(self._placeholders, CONFIG_EDITOR_TITLES, strict=True):
            tabs.addTab(page, title)
        self.undo_group = QUndoGroup(window)
        self.undo_group.addStack(undo_stack)
        self.undo_group.setActiveStack(undo_stack)
        tabs.currentChanged.connect(self._on_tab_shown)

    def ensure(self) -> StudioConfigEditors:
        """The editors, made now unless they are."""
        made = self.editors
        return made if made is not None else self._make()

    def _make(self) -> StudioConfigEditors:
        from studio.ui.studio_config_editors import StudioConfigEditors

        made = self.editors = StudioConfigEditors(
            self._source_lookup, self._language_problem, self._listing, self._window
        )
        pages = (made.step_editor, made.invocation_editor, made.chain_editor)
        tabs = self._tabs
        shown = tabs.currentIndex()
        tabs.blockSignals(True)
        for placeholder, page, title in zip(
            self._placeholders, pages, CONFIG_EDITOR_TITLES, strict=True
        ):
            index = tabs.indexOf(placeholder)
            tip = tabs.tabToolTip(index)
            tabs.removeTab(index)
            tabs.insertTab(index, page, title)
            tabs.setTabToolTip(index, tip)
            placeholder.deleteLater()
            no_tab_traps(page)
        tabs.setCurrentIndex(shown)
        tabs.blockSignals(False)
        self._placeholders = []
        for stack in made.stacks:
            self.undo_group.addStack(stack)
        self.made.emit(made)
        return made

    def _on_tab_shown(self, _index: int) -> None:
        page = self._tabs.currentWidget()
        if page in self._placeholders:
            self.ensure()  # made now: its tab is on show
            page = self._tabs.currentWidget()
        editors = self.editors
        stack = editors.stack_of(page) if editors is not None else None
        self.undo_group.setActiveStack(stack or self._undo_stack)
        self.shown.emit(editors.name_of(page) if editors is not None else None)
