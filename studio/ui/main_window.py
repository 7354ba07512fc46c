"""The studio window: workspace on the left, the hook and samples in the middle, results on the
right, records below. It wires views to core objects and the engine; it owns no data itself.

Its parts are modules of their own: the menus and the Run toolbar (window_menus), the Help
windows (window_help), the open dialogs (open_dialogs), the hookstudio.json editors' tabs
(config_editor_tabs), the functions of hook sources (function_listings), runs and their results
(run_control), saving the hook and merging outside changes (hook_saving), the crash copy of
unsaved edits (hook_recovery), and the files watched for outside changes (workspace_watch)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QShowEvent, QUndoStack
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QWidget,
)

from studio.core.app_settings import AppSettings, WorkspaceChoices, save_settings
from studio.core.expectations.from_outcome import save_runs_as_tests
from studio.core.hook_source_findings import SourceLookup, source_file_in
from studio.core.model_warmup import build_deferred_models
from studio.core.pre_llm.config import MAIN, check_agent_config
from studio.core.pre_llm.targets import (
    DraftInvalid,
    SourceFile,
    draft_to_config,
)
from studio.core.records.record_sample import RecordSample
from studio.core.records.store import RecordStore, RecordStoreError
from studio.core.run_outcome import RunOutcome
from studio.core.source_ref import parse_source_ref
from studio.core.workspace.adf_file import AdfFileError
from studio.core.workspace.agent_document import (
    AgentDocument,
    AgentDocumentError,
)
from studio.core.workspace.folder import SAMPLES_DIR, Workspace, WorkspaceFileError
from studio.engine.node_binary import use_node_setting
from studio.engine.runtimes import runnable_extensions
from studio.ui.agent_log_view import AgentLogDock
from studio.ui.config_editor_tabs import ConfigEditorTabs
from studio.ui.engine_bridge import EngineBridge, Job, RunJob
from studio.ui.focus_areas import Area, FocusAreas
from studio.ui.function_listings import FunctionListings
from studio.ui.hook_editor import HookEditor
from studio.ui.hook_recovery import HookRecovery
from studio.ui.hook_saving import HookSaving
from studio.ui.open_dialogs import choose_agent_file, choose_folder
from studio.ui.records_view import RecordsView
from studio.ui.results_panel import ResultsPanel
from studio.ui.run_control import RunControl
from studio.ui.samples.editor import SampleEditor
from studio.ui.source_view import SourceView
from studio.ui.start_collector import resume_once_painted
from studio.ui.test_matrix import HookTestsDock
from studio.ui.window_help import open_about_box, open_shortcuts_sheet
from studio.ui.window_layout import (
    PREFERRED,
    central_sizes,
    first_size,
    lay_out_areas,
    no_tab_traps,
)
from studio.ui.window_menus import WindowMenus
from studio.ui.workspace_panel import WorkspacePanel
from studio.ui.workspace_watch import WorkspaceWatch

if TYPE_CHECKING:
    # The dialogs are imported when first opened: they are not needed to show the window.
    from studio.ui.history_sample_dialog import HistorySampleDialog
    from studio.ui.import_request_dialog import ImportRequestDialog
    from studio.ui.settings_dialog import SettingsDialog
    from studio.ui.shortcuts_sheet import ShortcutsSheet
    from studio.ui.studio_config_editors import StudioConfigEditors

APP_NAME = "Hook Studio"
EDITOR_TIPS = (
    "The pre-LLM hook of the agent config: its source, timeout and targets",
    "The sample the hook runs on",
    "The hook's source file",
    "The step-preparation hook (prepareStep) of hookstudio.json",
    "The invocation-preparation hook (prepareInvocation) of hookstudio.json",
    "The model hook chains (pre and post) of hookstudio.json",
)


class MainWindow(QMainWindow):
    workspace_opened = Signal(object)
    run_finished = Signal(object)
    save_finished = Signal(bool)
    listings_changed = Signal()
    """A source's function listing, or whether Node can run hooks, became known: findings
    made with :meth:`source_lookup` and :meth:`language_problem` may differ now."""

    def __init__(self, settings: AppSettings, settings_path: Path | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.settings_path = settings_path
        self.workspace: Workspace | None = None
        self.document: AgentDocument | None = None
        self.store: RecordStore | None = None
        self.bridge = EngineBridge(self)
        self.undo_stack = QUndoStack(self)
        self._functions_key: tuple[Any, ...] | None = None
        self.listings = FunctionListings(self.bridge, self)
        self.listings.listed.connect(self._on_listed)
        self.listings.node_checked.connect(self._on_node_checked)
        self._closed = False
        self._on_screen = False

        self.hook_editor = HookEditor(self.undo_stack)
        self.sample_editor = SampleEditor(self.bridge)
        self.results = ResultsPanel(self.bridge)
        self.records = RecordsView(self.bridge)
        self.source_view = SourceView(self.bridge)
        self.workspace_panel = WorkspacePanel()

        self.editors = QTabWidget()
        self.editors.setObjectName("editors")
        self.editors.addTab(self.hook_editor, "Pre-LLM")
        self.editors.addTab(self.sample_editor, "Sample")
        self.editors.addTab(self.source_view, "Source")
        self._add_config_editors()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.editors)
        self.splitter.addWidget(self.results)
        self.splitter.setChildrenCollapsible(False)
        self.setCentralWidget(self.splitter)

        self.workspace_dock = self._dock(
            "Workspace", self.workspace_panel, Qt.DockWidgetArea.LeftDockWidgetArea
        )
        self.records_dock = self._dock(
            "Records", self.records, Qt.DockWidgetArea.BottomDockWidgetArea
        )
        self.agent_log_dock = AgentLogDock(self, self.bridge, self.records_dock)
        self.tests_dock = HookTestsDock(self, self.bridge, self.records_dock)
        self.test_matrix = self.tests_dock.matrix

        self._build_menus()
        self._build_keyboard()
        self.runs = RunControl(
            self,
            self.bridge,
            self.results,
            self.records,
            self.sample_box,
            self.loop_box,
            self.cancel_action,
            self,
        )
        self.runs.run_finished.connect(self.run_finished)
        self.runs.message.connect(self.statusBar().showMessage)
        self.statusBar().addPermanentWidget(self.runs.running_label)

        # The save's own write is seen once the document knows it wrote it.
        self.workspace_watch = WorkspaceWatch(lambda: self.hook_saving.busy, self)
        self.workspace_watch.settled.connect(self._on_files_settled)
        self.watcher = self.workspace_watch.watcher
        self.recovery = HookRecovery(
            lambda: self.workspace, self.hook_editor, self.undo_stack, self
        )
        self.recovery.message.connect(self.statusBar().showMessage)
        self.hook_saving = HookSaving(
            self,
            self.bridge,
            self.listings,
            self.hook_editor,
            self.undo_stack,
            self.recovery,
            self.statusBar(),
            self,
        )
        self.hook_saving.save_finished.connect(self.save_finished)
        # ADF opening or closing the agent shows only as -wal/-shm appearing beside the file.
        self._notice_timer = QTimer(self)
        self._notice_timer.setInterval(2000)
        self._notice_timer.timeout.connect(self.show_notice)
        self._notice: tuple[str | None, str | None] | None = None

        self.undo_stack.cleanChanged.connect(self.update_title)
        self.hook_editor.draft_changed.connect(self._on_draft_changed)
        self.hook_editor.save_requested.connect(self.save)
        self.hook_editor.remove_requested.connect(self.remove_hook)
        self.hook_editor.targets_replaced.connect(self._on_targets_replaced)
        self.results.open_source.connect(self.open_source)
        self.results.save_as_test_requested.connect(self.save_as_test)
        self.test_matrix.run_opened.connect(self._on_test_run_opened)
        self.test_matrix.runs_finished.connect(self.records.refresh)
        self.results.jump_requested.connect(self._on_jump_requested)
        self.records.open_source.connect(self.open_source)
        self.records.rerun_requested.connect(self.runs.rerun_record)
        self.records.sample_created.connect(self._on_record_sample_created)
        self.workspace_panel.open_requested.connect(self._on_panel_open)
        self.source_view.source_saved.connect(self._on_source_saved)
        self.source_view.save_started.connect(self._on_source_save_started)
        self.source_view.save_finished.connect(self._on_source_save_finished)
        self.sample_editor.sample_selected.connect(self._on_sample_selected)
        self.sample_editor.samples_changed.connect(self._refresh_samples)
        self.sample_editor.sample_saved.connect(self._on_sample_saved)

        screen = self.screen()
        self.resize(first_size(screen.availableGeometry().size()) if screen else PREFERRED)
        self.splitter.setSizes(central_sizes(self.width()))
        lay_out_areas(self, self.records_dock, self.workspace_dock)
        self._restore_layout()
        self.update_title()
        no_tab_traps(self)

    # ---- keyboard ---------------------------------------------------------------------------
    def focusNextPrevChild(self, next: bool) -> bool:
        """Tab and Shift+Tab of every field of the window end here: go on in the areas' order."""
        target = self.focus_areas.next_field(next) if hasattr(self, "focus_areas") else None
        if target is None:
            return super().focusNextPrevChild(next)
        reason = Qt.FocusReason.TabFocusReason if next else Qt.FocusReason.BacktabFocusReason
        target.setFocus(reason)
        return True

    # ---- first paint ---------------------------------------------------------------------
    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and not self._on_screen:
            # After the whole first paint, not inside it.
            QTimer.singleShot(0, self, self._now_on_screen)
        return super().event(event)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._on_screen:
            self.bridge.hold_work()  # listings, checks and the records read: after the paint
        # Should no paint reach the window itself (children covering all of it), a moment
        # after it is shown will do.
        QTimer.singleShot(1000, self, self._now_on_screen)

    def _now_on_screen(self) -> None:
        """The runtimes warm up only once the window is painted: starting them competes with
        drawing it for the interpreter."""
        if self._on_screen or self._closed:
            return
        self._on_screen = True
        resume_once_painted()
        self.bridge.release_work()
        self.bridge.warm_up()
        self.bridge.submit(build_deferred_models)
        self._build_hidden_parts()

    def _build_hidden_parts(self) -> None:
        """What the first paint did not show, made now so that its first look does not wait."""
        self.results.run.build_pages()
        self.config_tabs.ensure()

    # ---- construction --------------------------------------------------------------------
    def _add_config_editors(self) -> None:
        """The Step, Invocation and Chains tabs; their editors are made once the window is
        painted, or when first asked for (:attr:`config_editors`)."""
        self.config_tabs = ConfigEditorTabs(
            self.editors,
            self.undo_stack,
            self.source_lookup(module=True),
            self.language_problem,
            partial(self.listings.listing, module=True),
            self,
        )
        # Short titles, so that the six fit the editors' pane on a 1024-pixel screen.
        for index, tip in enumerate(EDITOR_TIPS):
            self.editors.setTabToolTip(index, tip)
        self.undo_group = self.config_tabs.undo_group
        self.config_tabs.made.connect(self._on_config_editors_made)
        self.config_tabs.shown.connect(self._on_editor_shown)

    @property
    def config_editors(self) -> StudioConfigEditors:
        """The editors of hookstudio.json's hook sections, made on first use."""
        return self.config_tabs.ensure()

    @property
    def _config_editors(self) -> StudioConfigEditors | None:
        """The editors of hookstudio.json's hook sections, None until they are made."""
        return self.config_tabs.editors

    def _on_config_editors_made(self, made: StudioConfigEditors) -> None:
        made.modified_changed.connect(self.update_title)
        made.message.connect(lambda text: self.statusBar().showMessage(text, 6000))
        self.workspace_opened.connect(made.set_workspace)
        self.listings_changed.connect(made.recheck)
        if self.workspace is not None:
            made.set_workspace(self.workspace)

    def _on_editor_shown(self, name: str | None) -> None:
        self.save_action.setText(f"&Save {name or 'Hook'}")
        self.update_save_action()

    def save_shown(self) -> None:
        """Save (Ctrl+S) saves the editor on show: the step hook or the chains, else the hook."""
        editors = self._config_editors
        if editors is None or not editors.save_if_shown(self.editors.currentWidget()):
            self.save()

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{title.lower()}Dock")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_menus(self) -> None:
        menus = self.menus = WindowMenus(
            self,
            self,
            self.undo_group,
            self.sample_editor.sample_list.new_menu,
            self.results.request_save_as_test,
            (self.workspace_dock, self.records_dock, self.agent_log_dock, self.tests_dock),
            self.settings.rerun_on_save,
            self.settings.recent_workspaces,
        )
        self.workspace_opened.connect(self._on_workspace_kind)
        self.save_action = menus.save_action
        self.recent = menus.recent
        self.import_request_action = menus.import_request_action
        self.history_sample_action = menus.history_sample_action
        self.undo_action = menus.undo_action
        self.redo_action = menus.redo_action
        self.settings_action = menus.settings_action
        self.cancel_action = menus.cancel_action
        self.rerun_action = menus.rerun_action
        self.save_test_action = menus.save_test_action
        self.toolbar = menus.toolbar
        self.sample_box = menus.sample_box
        self.loop_box = menus.loop_box
        self.sample_box.currentTextChanged.connect(self._on_sample_box_changed)
        self.sample_box.currentTextChanged.connect(self._on_choice_changed)
        self.loop_box.currentTextChanged.connect(self._on_choice_changed)

    def _build_keyboard(self) -> None:
        """The main areas for Tab and F6, editor tabs by Ctrl+Tab, and the Help menu."""
        self.focus_areas = FocusAreas(
            self,
            [
                Area("toolbar", self.toolbar),
                Area("editors", self.editors, self.editors.currentWidget),
                Area("results", self.results),
                Area("records", self.records_dock),
                Area("agent log", self.agent_log_dock),
                Area("hook tests", self.tests_dock),
                Area("workspace", self.workspace_dock),
            ],
        )
        self.menus.add_keyboard(self.focus_areas, self.records.menu_actions())

    def step_editor_tab(self, step: int) -> None:
        count = self.editors.count()
        if count:
            self.editors.setCurrentIndex((self.editors.currentIndex() + step) % count)
            page = self.editors.currentWidget()
            field = self.focus_areas.first_field(page) if page is not None else None
            (field or self.editors.tabBar()).setFocus(Qt.FocusReason.TabFocusReason)

    def show_shortcuts(self) -> ShortcutsSheet:
        return open_shortcuts_sheet(self, self.editors, self.focus_areas)

    def show_about(self) -> QMessageBox:
        return open_about_box(self)

    # ---- workspace --------------------------------------------------------------------------
    def choose_workspace(self) -> QFileDialog:
        """Ask for a workspace folder; the choice opens it."""
        return choose_folder(self, self._open_start(), self.open_workspace)

    def choose_agent_file(self) -> QFileDialog:
        """Ask for an ADF agent file; the choice opens it."""
        return choose_agent_file(self, self._open_start(), self.open_workspace)

    def _open_start(self) -> Path:
        return self.workspace.location.parent if self.workspace else Path.home()

    def open_workspace(self, path: Path) -> bool:
        """Open a folder or an ``.adf`` file; when it cannot be opened, say why and keep the
        workspace that is open."""
        if not self._confirm_discard(then=partial(self.open_workspace, path)):
            return False
        try:
            workspace = Workspace.open(path)
        except FileNotFoundError as exc:
            QMessageBox.warning(self, APP_NAME, str(exc))
            return False
        except AdfFileError as exc:
            QMessageBox.warning(
                self, APP_NAME, f"{exc.path.name} cannot be opened:\n{exc.reason}\n\n({exc.path})"
            )
            return False
        try:
            store = RecordStore.open(workspace.root)
        except RecordStoreError as exc:
            QMessageBox.warning(
                self, APP_NAME, f"Runs of this workspace will not be recorded:\n{exc}"
            )
            store = None
        if self.store is not None:
            self.records.set_store(None)
        # Read before the views below choose a sample of their own in the new workspace.
        remembered = self.settings.workspace_choices.get(str(workspace.location))
        # The results of the workspace that was open are not this one's.
        self.results.clear()
        self.workspace = workspace
        self.store = store
        self.hook_saving.forget()
        self.listings.clear()
        self._sources()
        self.hook_editor.set_source_lookup(self._source_file)
        self.listings.check_node()
        self.bridge.open_workspace(workspace, store)
        if self._on_screen:
            self.bridge.warm_up()
        self.workspace_panel.set_workspace(workspace)
        self.source_view.set_workspace(workspace)
        self.sample_editor.set_workspace(workspace)
        self.records.set_store(store, workspace)
        self.test_matrix.set_workspace(workspace, store)
        self.load_document()
        self._refresh_samples()
        self._restore_choices(remembered)
        self._watch()
        if self.document is not None:
            self.recovery.offer()
        self.settings = self.settings.remember_workspace(str(workspace.location))
        self.menus.fill_recent(self.settings.recent_workspaces)
        self._save_settings()
        self.update_title()
        no_tab_traps(self)
        self.workspace_opened.emit(workspace)
        return True

    def _restore_choices(self, choices: WorkspaceChoices | None) -> None:
        """The sample and loop last chosen in this workspace. A sample that is gone leaves the
        one shown; a workspace never seen starts on Main."""
        sample = choices.sample if choices else None
        if sample and self.sample_box.findText(sample) >= 0:
            self.sample_box.setCurrentText(sample)
        self.loop_box.setCurrentText((choices.loop if choices else None) or MAIN)
        self._on_choice_changed()

    def _on_choice_changed(self, *_: object) -> None:
        if self.workspace is None:
            return
        choices = WorkspaceChoices(
            sample=self.sample_box.currentText() or None,
            loop=self.loop_box.currentText().strip() or None,
        )
        path = str(self.workspace.location)
        self.settings = self.settings.remember_choices(path, choices)

    def import_request(self) -> ImportRequestDialog | None:
        """The Import request dialog; the sample it writes is selected."""
        from studio.ui.import_request_dialog import ImportRequestDialog

        if self.workspace is None:
            self.statusBar().showMessage("Open a workspace to import a request into", 4000)
            return None
        dialog = ImportRequestDialog(self.workspace.root / SAMPLES_DIR, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.sample_imported.connect(self._on_sample_imported)
        dialog.open()
        return dialog

    def _on_sample_imported(self, name: str) -> None:
        self._show_new_sample(name, f"Imported {SAMPLES_DIR}/{name}.json")

    def _show_new_sample(self, name: str, message: str) -> None:
        """Selects a sample just written to the samples folder and opens it in its editor."""
        if self.workspace is None:
            return
        self.sample_editor.on_files_changed({str(self.workspace.root / SAMPLES_DIR)})
        self._refresh_samples()
        self.sample_box.setCurrentText(name)
        self.editors.setCurrentWidget(self.sample_editor)
        self.statusBar().showMessage(message, 4000)

    def new_sample_from_history(self) -> HistorySampleDialog | None:
        """The New sample from history dialog of an .adf agent; the sample it writes is
        selected."""
        from studio.ui.history_sample_dialog import HistorySampleDialog, history_sample_enabled

        if not history_sample_enabled(self.workspace):
            self.statusBar().showMessage("Open an .adf agent to use its history", 4000)
            return None
        dialog = HistorySampleDialog(self.workspace, self.bridge, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        samples = dialog.samples
        dialog.sample_created.connect(lambda name: self._on_history_sample_created(samples, name))
        dialog.open()
        return dialog

    def _on_history_sample_created(self, samples: Path, name: str) -> None:
        self.sample_editor.on_files_changed({str(samples)})
        self._refresh_samples()
        self.sample_box.setCurrentText(name)
        self.editors.setCurrentWidget(self.sample_editor)
        self.statusBar().showMessage(f"Created {samples.name}/{name}.json from the history", 4000)

    def _on_workspace_kind(self, workspace: Workspace) -> None:
        self.history_sample_action.setEnabled(workspace.kind == "adf")
        self.agent_log_dock.set_workspace(workspace)

    def declared_loops(self) -> list[str]:
        if self.workspace is None:
            return []
        try:
            return list(self.workspace.settings().loops)
        except WorkspaceFileError:
            return []

    def load_document(self) -> None:
        assert self.workspace is not None
        self.show_notice()
        try:
            self.document = self.workspace.hook_document()
        except (AgentDocumentError, WorkspaceFileError) as exc:
            self.document = None
            self.statusBar().showMessage(str(exc))
            QMessageBox.warning(
                self, APP_NAME, f"{self.workspace.agent_label} cannot be edited:\n{exc}"
            )
            return
        limit = check_agent_config(self.document.document).execution_limit_ms
        self.hook_editor.set_context(
            self.declared_loops(), limit, self.workspace.hook_sources(runnable_extensions())
        )
        document = self.document
        self.hook_editor.set_agent_config(
            lambda: document.document, "adf" if self.workspace.kind == "adf" else "folder"
        )
        self.hook_editor.load(self.document.hook_draft(), self.document.has_hook)
        self._refresh_loops()

    def show_notice(self) -> None:
        """The banner above the hook editor: why nothing may be saved, or that the agent looks
        open in ADF."""
        if self.workspace is None:
            self.hook_editor.set_notice(None)
            return
        if self.workspace.kind == "adf":
            self._notice_timer.start()
        else:
            self._notice_timer.stop()
        reason = self.workspace.read_only_reason
        notice = (self.workspace.notice(), reason)
        if notice == self._notice:
            return
        self._notice = notice
        self.hook_editor.set_notice(*notice)
        self.update_save_action()

    def _sources(self) -> Path | None:
        """The folder holding the workspace's hook sources as files, made current (an ``.adf``'s
        are copied out of the agent); None when the agent cannot be read."""
        if self.workspace is None:
            return None
        try:
            return self.workspace.sync_sources()
        except WorkspaceFileError as exc:
            self.statusBar().showMessage(str(exc), 6000)
            return None

    def source_target(self, path: str) -> Path | None:
        """Where the file of a hook's source path is, after :meth:`_sources`."""
        if self.workspace is None or not path:
            return None
        return self.workspace.source_root / path

    def _refresh_loops(self) -> None:
        current = self.loop_box.currentText() or MAIN
        self.loop_box.blockSignals(True)
        self.loop_box.clear()
        self.loop_box.addItems([MAIN, *self.declared_loops()])
        self.loop_box.setCurrentText(current)
        self.loop_box.blockSignals(False)

    def _refresh_samples(self) -> None:
        if self.workspace is None:
            return
        current = self.sample_box.currentText()
        names = [s.name for s in self.workspace.samples()]
        self.sample_box.blockSignals(True)
        self.sample_box.clear()
        self.sample_box.addItems(names)
        if current in names:
            self.sample_box.setCurrentText(current)
        self.sample_box.blockSignals(False)
        self.workspace_panel.refresh()
        if names and self.sample_box.currentText():
            self.sample_editor.select_sample(self.sample_box.currentText())

    def _watch(self) -> None:
        if self.workspace is not None:
            self.workspace_watch.watch(self.workspace)

    # ---- files changed outside --------------------------------------------------------------
    def _on_files_settled(self, changed: set[str]) -> None:
        if self.workspace is None:
            return
        self._sources()
        self.show_notice()
        # Editors that save by replacing the file drop it from the watch list; watch it again.
        self._watch()
        self.workspace_panel.refresh()
        self.hook_editor.recheck()
        source = self.hook_editor.draft.source
        path = parse_source_ref(source).path if source else ""
        self._show_functions_of(self.source_target(path))
        agent = str(self.workspace.agent_path)
        if agent in changed or str(self.workspace.root) in changed:
            self.hook_saving.agent_changed_on_disk()
        if str(self.workspace.settings_path) in changed:
            if self.document is None:
                self.load_document()
            else:
                # The declared loops may differ; the hook being edited stays as it is.
                self.adopt(self.document)
                self._refresh_loops()
        self._refresh_samples()
        self.sample_editor.on_files_changed(changed)
        if self._config_editors is not None:  # else they read the files when made
            self._config_editors.on_files_changed(changed)
        if self.rerun_action.isChecked() and self.runs.last_sample is not None:
            sources = {
                str(self.workspace.source_root / s)
                for s in self.workspace.hook_sources(runnable_extensions())
            }
            samples = {str(s.path) for s in self.workspace.samples()}
            if changed & (sources | samples):
                self.runs.rerun()

    def adopt(self, fresh: AgentDocument) -> None:
        """The file as it is now becomes what the hook's edits are saved into."""
        assert self.workspace is not None
        self.document = fresh
        limit = check_agent_config(fresh.document).execution_limit_ms
        self.hook_editor.set_context(
            self.declared_loops(), limit, self.workspace.hook_sources(runnable_extensions())
        )

    # ---- editing ----------------------------------------------------------------------------
    def _on_draft_changed(self, draft: Any) -> None:
        if self.workspace is None:
            return
        path = parse_source_ref(draft.source).path if draft.source else ""
        self._show_functions_of(self.source_target(path))
        self.update_title()
        self.recovery.keep_soon()

    def _show_functions_of(self, target: Path | None) -> None:
        """The function picker's choices; the file is read again only when it changed (most
        draft edits are keystrokes in other fields)."""
        try:
            info = target.stat() if target is not None and target.is_file() else None
        except OSError:
            info = None
        key = (target, info.st_mtime_ns, info.st_size) if info is not None else None
        if key == self._functions_key:
            return
        self._functions_key = key
        listing = self.listings.listing(target) if key is not None and target is not None else None
        self.hook_editor.set_functions(listing.names() if listing is not None else [])

    def _on_listed(self) -> None:
        """A listing is known: the picker and the findings are shown again."""
        self._functions_key = None
        self.hook_editor.recheck()
        self.listings_changed.emit()
        if self.workspace is not None:
            source = self.hook_editor.draft.source
            path = parse_source_ref(source).path if source else ""
            self._show_functions_of(self.source_target(path))

    def _source_file(self, path: str, module: bool = False) -> SourceFile | None:
        """What is at a hook's source path in the open workspace, for the editor's findings."""
        if self.workspace is None:
            return None
        target = self.workspace.source_root / path
        listing = self.listings.listing(target, module) if target.is_file() else None
        return source_file_in(self.workspace, path, listing)

    def source_lookup(self, *, module: bool) -> SourceLookup:
        """What is at a source path, for the findings of an editor (``module``: a step or
        chain hook, judged by its exports). Unknown functions are listed off the GUI thread;
        ``listings_changed`` says when to look again."""
        return partial(self._source_file, module=module)

    def language_problem(self, path: str) -> str | None:
        """Why the studio cannot run the source ``path``, or None."""
        return self.listings.language_problem(path)

    def _on_node_checked(self, problem: str | None) -> None:
        self.hook_editor.set_node_problem(problem)
        self.listings_changed.emit()

    def save(self, *, then: Callable[[], object] | None = None) -> Job | None:
        """Save the hook (see :meth:`HookSaving.save`); ``save_finished`` says how it ended."""
        return self.hook_saving.save(then=then)

    def remove_hook(self) -> None:
        self.hook_saving.remove_hook()

    def update_save_action(self) -> None:
        reason = self.workspace.read_only_reason if self.workspace else None
        editors = self._config_editors
        if editors is not None and editors.name_of(self.editors.currentWidget()):
            reason = None  # hookstudio.json is the studio's own file, writable beside any agent
        self.save_action.setEnabled(not reason and not self.hook_saving.busy)
        self.save_action.setStatusTip(f"Read-only: {reason}" if reason else "Save the hook")

    def _confirm_discard(self, *, then: Callable[[], object] | None = None) -> bool:
        """Whether unsaved work may be left now. An answer of Save starts the save and says
        False; ``then`` runs once the save has written."""
        if self.hook_saving.busy or self.source_view.saving:
            self.statusBar().showMessage("Wait for the save to end", 4000)
            return False
        if not self.source_view.confirm_leave(then=then):
            return False
        if self._config_editors is not None and not self._config_editors.confirm_leave():
            return False
        if self.undo_stack.isClean():
            return True
        answer = QMessageBox.question(
            self,
            APP_NAME,
            "The hook has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            self.save(then=then)
            return False
        if answer != QMessageBox.StandardButton.Discard:
            return False
        self.recovery.drop()
        return True

    def update_title(self, *_: Any) -> None:
        name = self.workspace.location.name if self.workspace else "no workspace"
        read_only = " (read-only)" if self.workspace and self.workspace.read_only_reason else ""
        self.setWindowTitle(f"{name}{read_only}[*] — {APP_NAME}")
        edited = self._config_editors is not None and self._config_editors.modified
        self.setWindowModified(not self.undo_stack.isClean() or edited)

    # ---- runs ---------------------------------------------------------------------------------
    def _on_sample_box_changed(self, name: str) -> None:
        if name:
            self.sample_editor.select_sample(name)

    def _on_sample_selected(self, name: str) -> None:
        if name and self.sample_box.currentText() != name:
            self.sample_box.setCurrentText(name)

    def _on_sample_saved(self, name: str) -> None:
        if self.rerun_action.isChecked() and self.runs.last_sample == name:
            self.runs.rerun()

    def run_selected(self) -> RunJob | None:
        return self.runs.run_selected()

    def rerun_record(self, found: RecordSample) -> RunJob | None:
        return self.runs.rerun_record(found)

    def _on_record_sample_created(self, name: str) -> None:
        self._show_new_sample(name, f"Created {SAMPLES_DIR}/{name}.json from a run's input")

    def run_on_every_target(self) -> None:
        self.runs.run_on_every_target()

    def cancel_runs(self) -> None:
        self.bridge.cancel_all()

    def hook_edited(self) -> bool:
        """Whether the hook editor holds edits that are not saved."""
        return not self.undo_stack.isClean() and self.document is not None

    def draft_config(self) -> dict[str, Any] | Literal[False] | None:
        """Run what is being edited: the draft hook config when it differs from the saved one
        (False when the draft has problems, which are shown instead), None for the saved one."""
        if not self.hook_edited():
            return None
        try:
            return draft_to_config(self.hook_editor.draft)
        except DraftInvalid:
            self.editors.setCurrentWidget(self.hook_editor)
            self.statusBar().showMessage(
                "The hook being edited has problems (see Findings); fix them to run it", 6000
            )
            return False

    def _on_targets_replaced(self, count: int) -> None:
        others = "the other target was" if count == 1 else f"the {count} other targets were"
        self.statusBar().showMessage(
            f"All streams covers every loop, now and later: {others} removed (Undo brings "
            "them back)",
            10000,
        )

    # ---- hook tests ---------------------------------------------------------------------------
    def run_tests(self) -> None:
        self.tests_dock.show()
        self.tests_dock.raise_()
        self.test_matrix.table.setFocus()
        self.test_matrix.run_all()

    def _on_test_run_opened(self, outcome: RunOutcome) -> None:
        self.results.show_outcome(outcome)

    def save_as_test(self, outcomes: list[RunOutcome]) -> Job | None:
        """Write the runs' results into their samples as expectations, off the GUI thread."""
        if self.workspace is None:
            return None
        job = self.bridge.submit(save_runs_as_tests, self.workspace, outcomes)
        job.finished.connect(self._on_tests_saved)
        job.failed.connect(
            lambda exc: self.statusBar().showMessage(f"Not saved as a test: {exc}", 10000)
        )
        return job

    def _on_tests_saved(self, written: list[str]) -> None:
        if self.workspace is not None:
            self.sample_editor.on_files_changed({str(self.workspace.root / SAMPLES_DIR)})
        self.statusBar().showMessage(
            f"Saved as a test in {', '.join(written)}: edit its expect in the Sample tab", 8000
        )

    # ---- navigation ---------------------------------------------------------------------------
    def open_source(self, file: str, line: int) -> None:
        if self.workspace is None:
            return
        self.source_view.show_source(file, line)
        self.editors.setCurrentWidget(self.source_view)

    def _on_source_save_started(self, path: str) -> None:
        self.statusBar().showMessage(f"Saving {path}…")

    def _on_source_save_finished(self, saved: bool) -> None:
        if not saved:
            self.statusBar().clearMessage()

    def _on_source_saved(self, path: str, warning: str) -> None:
        self._sources()
        self.workspace_panel.refresh()
        self.hook_editor.recheck()
        self.statusBar().showMessage(f"Saved {path}" + (f": {warning}" if warning else ""), 8000)

    def _on_jump_requested(self, pointer: str) -> None:
        self.results.jump_to(pointer)

    def _on_panel_open(self, kind: str, name: str) -> None:
        if kind == "sample":
            self.sample_box.setCurrentText(name)
            self.editors.setCurrentWidget(self.sample_editor)
        elif kind == "source":
            self.open_source(name, 1)
        elif kind == "config":
            self.editors.setCurrentWidget(self.hook_editor)

    def find_in_records(self) -> None:
        self.records_dock.show()
        self.records.focus_filter()

    # ---- settings ---------------------------------------------------------------------------
    def edit_settings(self) -> SettingsDialog:
        from studio.ui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.settings.node, self.bridge, parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._keep_node(dialog.node()))
        dialog.open()
        return dialog

    def _keep_node(self, node: str) -> None:
        # The next run starts a Node host on it; runs already going finish on the old one.
        self.settings = self.settings.model_copy(update={"node": node})
        use_node_setting(node)
        self._save_settings()
        self.listings.check_node()

    # ---- layout and closing ---------------------------------------------------------------
    def _restore_layout(self) -> None:
        if self.settings.window_geometry:
            self.restoreGeometry(QByteArray.fromBase64(self.settings.window_geometry.encode()))
        if self.settings.window_state:
            self.restoreState(QByteArray.fromBase64(self.settings.window_state.encode()))
        sizes = self.settings.splitter_sizes.get("main")
        if sizes:
            self.splitter.setSizes(sizes)

    def _save_settings(self) -> None:
        self.settings = self.settings.model_copy(
            update={
                "window_geometry": bytes(self.saveGeometry().toBase64().data()).decode(),
                "window_state": bytes(self.saveState().toBase64().data()).decode(),
                "splitter_sizes": {"main": self.splitter.sizes()},
                "rerun_on_save": self.rerun_action.isChecked(),
            }
        )
        if self.settings_path is not None:
            try:
                save_settings(self.settings_path, self.settings)
            except OSError:
                self.statusBar().showMessage("Settings could not be saved", 4000)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._confirm_discard(then=self.close):
            event.ignore()
            return
        self._save_settings()
        # Closed, it answers no more changes on disk: a change it would otherwise still tell
        # could ask a question of a window that is gone.
        self._closed = True
        resume_once_painted()  # closed before its first paint: the collector runs all the same
        self.workspace_watch.stop()
        self._notice_timer.stop()
        self.bridge.cancel_all()
        self.bridge.shutdown()
        self.store = None
        event.accept()
