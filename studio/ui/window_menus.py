"""The window's menus, its Run toolbar and their actions: what each one is called, its shortcut
and tip, and which of the window's commands it triggers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtGui import QAction, QKeySequence, QUndoGroup
from PySide6.QtWidgets import QComboBox, QDockWidget, QLabel, QMainWindow, QMenu, QToolBar

from studio.ui.focus_areas import FocusAreas
from studio.ui.window_layout import keep_narrow


class MenuCommands(Protocol):
    """The window's commands that the menus and the toolbar trigger."""

    def choose_workspace(self) -> object: ...
    def choose_agent_file(self) -> object: ...
    def open_workspace(self, path: Path) -> bool: ...
    def save_shown(self) -> None: ...
    def close(self) -> bool: ...
    def import_request(self) -> object: ...
    def new_sample_from_history(self) -> object: ...
    def find_in_records(self) -> None: ...
    def edit_settings(self) -> object: ...
    def run_selected(self) -> object: ...
    def cancel_runs(self) -> None: ...
    def run_on_every_target(self) -> None: ...
    def run_tests(self) -> None: ...
    def step_editor_tab(self, step: int) -> None: ...
    def show_shortcuts(self) -> object: ...
    def show_about(self) -> object: ...


def make_action(
    parent: QMainWindow, text: str, shortcut: Any = None, handler: Any = None, tip: str = ""
) -> QAction:
    """An action whose tooltip names its shortcut."""
    action = QAction(text, parent)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    shown = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    action.setToolTip(f"{tip or text} ({shown})" if shown else tip or text)
    action.setStatusTip(tip or text)
    if handler is not None:
        action.triggered.connect(handler)
    return action


class WindowMenus:
    """File, Edit, Run and View, then (:meth:`add_keyboard`) Records and Help, and the Run
    toolbar, made on ``window`` in that order (the shortcuts sheet lists them so)."""

    def __init__(
        self,
        window: QMainWindow,
        commands: MenuCommands,
        undo_group: QUndoGroup,
        new_sample_menu: QMenu,
        save_as_test: Callable[[], object],
        docks: Sequence[QDockWidget],
        rerun_on_save: bool,
        recent: Sequence[str],
    ) -> None:
        self._window = window
        self._commands = commands
        self._build_actions(undo_group, new_sample_menu, save_as_test, docks, rerun_on_save)
        self.fill_recent(recent)
        self._build_toolbar()

    def _action(
        self, text: str, shortcut: Any = None, handler: Any = None, tip: str = ""
    ) -> QAction:
        return make_action(self._window, text, shortcut, handler, tip)

    def _build_actions(
        self,
        undo_group: QUndoGroup,
        new_sample_menu: QMenu,
        save_as_test: Callable[[], object],
        docks: Sequence[QDockWidget],
        rerun_on_save: bool,
    ) -> None:
        commands = self._commands
        menu = self._window.menuBar()
        self.open_action = self._action(
            "&Open Folder…",
            QKeySequence.StandardKey.Open,
            commands.choose_workspace,
            "Open a workspace folder (agent.json, hook sources, samples)",
        )
        self.open_agent_action = self._action(
            "Open &Agent File…",
            "Ctrl+Shift+O",
            commands.choose_agent_file,
            "Open an ADF agent file (.adf)",
        )
        self.save_action = self._action(
            "&Save Hook", QKeySequence.StandardKey.Save, commands.save_shown, "Save the hook shown"
        )
        self.quit_action = self._action("&Quit", QKeySequence.StandardKey.Quit, commands.close)
        file_menu = menu.addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.open_agent_action)
        self.recent = file_menu.addMenu("Open &Recent")
        file_menu.addSeparator()
        file_menu.addAction(self.save_action)
        self.import_request_action = self._action(
            "&Import Request…",
            None,
            commands.import_request,
            "A captured provider body as a sample",
        )
        file_menu.addAction(self.import_request_action)
        new_sample_menu.addSeparator()
        new_sample_menu.addAction(self.import_request_action)
        self.history_sample_action = self._action(
            "New Sample from &History…",
            None,
            commands.new_sample_from_history,
            "A pre-LLM sample from rows of the .adf agent's history",
        )
        self.history_sample_action.setEnabled(False)
        file_menu.addAction(self.history_sample_action)
        new_sample_menu.addAction(self.history_sample_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        self.undo_action = undo_group.createUndoAction(self._window, "&Undo")
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = undo_group.createRedoAction(self._window, "&Redo")
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        self.find_action = self._action(
            "&Find…", QKeySequence.StandardKey.Find, commands.find_in_records, "Find in the records"
        )
        self.settings_action = self._action(
            "Se&ttings…", QKeySequence.StandardKey.Preferences, commands.edit_settings
        )
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        edit_menu = menu.addMenu("&Edit")
        for action in (self.undo_action, self.redo_action, self.find_action):
            edit_menu.addAction(action)
        edit_menu.addSeparator()
        edit_menu.addAction(self.settings_action)

        self.run_action = self._action(
            "&Run", "Ctrl+Return", commands.run_selected, "Run the hook on the sample"
        )
        self.cancel_action = self._action(
            "&Cancel", "Esc", commands.cancel_runs, "Stop the running hook"
        )
        self.cancel_action.setEnabled(False)
        self.run_all_action = self._action(
            "Run on &Every Target",
            "Ctrl+Shift+Return",
            commands.run_on_every_target,
            "Run on Main, each declared loop and a future loop",
        )
        self.rerun_action = self._action(
            "Rerun on &Save", None, None, "Rerun when the hook or the sample changes"
        )
        self.rerun_action.setCheckable(True)
        self.rerun_action.setChecked(rerun_on_save)
        run_menu = menu.addMenu("&Run")
        for action in self.run_actions():
            run_menu.addAction(action)
        self.run_tests_action = self._action(
            "Run All &Tests",
            "Ctrl+Shift+T",
            commands.run_tests,
            "Run every sample on every target, judged against its expectations",
        )
        self.save_test_action = self._action(
            "Save Run as Te&st",
            None,
            save_as_test,
            "Write what the run on show gave into its sample as expectations",
        )
        run_menu.addSeparator()
        run_menu.addAction(self.run_tests_action)
        run_menu.addAction(self.save_test_action)

        self.view_menu = menu.addMenu("&View")
        for dock in docks:
            self.view_menu.addAction(dock.toggleViewAction())

    def run_actions(self) -> tuple[QAction, ...]:
        return (self.run_action, self.cancel_action, self.run_all_action, self.rerun_action)

    def fill_recent(self, paths: Sequence[str]) -> None:
        self.recent.clear()
        for path in paths:
            action = self.recent.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self._commands.open_workspace(Path(p)))
        self.recent.setEnabled(bool(paths))

    def _build_toolbar(self) -> None:
        bar = QToolBar("Run")
        bar.setObjectName("runToolbar")
        self.toolbar = bar
        self._window.addToolBar(bar)
        bar.addWidget(QLabel(" Sample "))
        self.sample_box = QComboBox()
        self.sample_box.setObjectName("sampleBox")
        self.sample_box.setMinimumWidth(180)
        self.sample_box.setToolTip("The sample to run the hook on")
        bar.addWidget(self.sample_box)
        bar.addWidget(QLabel(" Loop "))
        self.loop_box = QComboBox()
        self.loop_box.setObjectName("loopBox")
        self.loop_box.setEditable(True)
        self.loop_box.setMinimumWidth(130)
        self.loop_box.setToolTip("The loop whose provider call is being prepared")
        bar.addWidget(self.loop_box)
        bar.addSeparator()
        for action in self.run_actions():
            bar.addAction(action)
        # Save stays in reach whatever the docks cover of the hook editor.
        bar.addSeparator()
        bar.addAction(self.save_action)
        keep_narrow(self.sample_box)

    def add_keyboard(self, focus_areas: FocusAreas, records_actions: Sequence[QAction]) -> None:
        """Moving between the areas and the editor tabs, the Records menu, and Help."""
        commands = self._commands
        self.next_area_action = self._action(
            "Next &Area",
            "F6",
            lambda: focus_areas.cycle(1),
            "Focus the next area: toolbar, editor, results, records",
        )
        self.previous_area_action = self._action(
            "&Previous Area", "Shift+F6", lambda: focus_areas.cycle(-1)
        )
        self.next_tab_action = self._action(
            "Next &Editor Tab", "Ctrl+Tab", lambda: commands.step_editor_tab(1)
        )
        self.previous_tab_action = self._action(
            "Previous E&ditor Tab", "Ctrl+Shift+Tab", lambda: commands.step_editor_tab(-1)
        )
        self.view_menu.addSeparator()
        for action in (
            self.next_area_action,
            self.previous_area_action,
            self.next_tab_action,
            self.previous_tab_action,
        ):
            self.view_menu.addAction(action)
        records_menu = self._window.menuBar().addMenu("Rec&ords")
        records_menu.addAction(self.find_action)
        records_menu.addSeparator()
        records_menu.addActions(records_actions)
        help_menu = self._window.menuBar().addMenu("&Help")
        self.shortcuts_action = self._action(
            "&Keyboard Shortcuts…", "F1", commands.show_shortcuts, "Every shortcut of the window"
        )
        self.shortcuts_action.setShortcuts([QKeySequence("F1"), QKeySequence("Ctrl+/")])
        self.about_action = self._action("&About Hook Studio", None, commands.show_about)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        help_menu.addAction(self.shortcuts_action)
        help_menu.addAction(self.about_action)
