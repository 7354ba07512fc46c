"""The side panel: the agent config, the studio file, hook sources and samples of a workspace.

For an ``.adf`` agent it lists every file of the agent (``adf_files``); each hook source shows
whether it is authorized and how it is protected, as text beside its name and a tooltip."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from studio.core.workspace.folder import (
    AGENT_FILE,
    STUDIO_FILE,
    SourceFile,
    Workspace,
    WorkspaceFileError,
)
from studio.engine.runtimes import runnable_extensions
from studio.ui.source_view import source_state


def state_suffix(source: SourceFile, hook_source: bool) -> str:
    """The short marks after a file's name: ✓ when an authorized hook source, and its
    protection."""
    marks = " ✓" if hook_source and source.authorized else ""
    if source.protection == "read_only":
        marks += " (read-only)"
    elif source.protection == "no_delete":
        marks += " (no delete)"
    return marks


KIND_ROLE = Qt.ItemDataRole.UserRole
NAME_ROLE = Qt.ItemDataRole.UserRole + 1


class WorkspacePanel(QWidget):
    open_requested = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setObjectName("workspaceTree")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        self.workspace: Workspace | None = None
        self.tree.itemActivated.connect(self._on_activated)
        self.tree.itemDoubleClicked.connect(self._on_activated)

    def set_workspace(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.refresh()

    def refresh(self) -> None:
        if self.workspace is None:
            return
        tops = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        expanded = {item.text(0) for item in tops if item is not None and item.isExpanded()}
        self.tree.clear()
        workspace = self.workspace
        adf = workspace.kind == "adf"
        config = QTreeWidgetItem(["Configuration"])
        agent = workspace.agent_path
        for name, path in ((workspace.agent_label, agent), (STUDIO_FILE, workspace.settings_path)):
            item = QTreeWidgetItem([name if path.exists() else f"{name} (none)"])
            item.setData(0, KIND_ROLE, "config")
            item.setData(0, NAME_ROLE, AGENT_FILE if path == agent else name)
            item.setToolTip(0, str(path))
            config.addChild(item)
        sources = QTreeWidgetItem(["Agent files" if adf else "Hook sources"])
        runnable = runnable_extensions()
        # An agent's files are all listed ("" ends every path); a folder's hook sources only.
        try:
            files = workspace.source_files(("",) if adf else runnable)
        except WorkspaceFileError as exc:
            files = []
            sources.setToolTip(0, str(exc))
        for source in files:
            sources.addChild(self._source_item(source, source.path.endswith(runnable)))
        samples = QTreeWidgetItem(["Samples"])
        for sample in self.workspace.samples():
            item = QTreeWidgetItem([sample.name])
            item.setData(0, KIND_ROLE, "sample")
            item.setData(0, NAME_ROLE, sample.name)
            samples.addChild(item)
        for group in (config, sources, samples):
            self.tree.addTopLevelItem(group)
            group.setExpanded(not expanded or group.text(0) in expanded)

    def _source_item(self, source: SourceFile, hook_source: bool) -> QTreeWidgetItem:
        # Authorization matters only for code the agent runs. The marks are text in the
        # palette's own colour, so they read on light and dark themes alike.
        _label, tip = source_state(source, hook_source=hook_source)
        item = QTreeWidgetItem([source.path + state_suffix(source, hook_source)])
        item.setData(0, KIND_ROLE, "source")
        item.setData(0, NAME_ROLE, source.path)
        item.setToolTip(0, f"{source.path}: {tip}" if tip else source.path)
        return item

    def _on_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        kind = item.data(0, KIND_ROLE)
        if kind:
            self.open_requested.emit(kind, item.data(0, NAME_ROLE))
