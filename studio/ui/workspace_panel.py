"""The side panel: the agent config, the studio file, hook sources and samples of a workspace."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from studio.core.workspace.folder import AGENT_FILE, STUDIO_FILE, Workspace
from studio.engine.runtimes import runnable_extensions

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
        root = self.workspace.root
        config = QTreeWidgetItem(["Configuration"])
        for name in (AGENT_FILE, STUDIO_FILE):
            item = QTreeWidgetItem([name if (root / name).exists() else f"{name} (none)"])
            item.setData(0, KIND_ROLE, "config")
            item.setData(0, NAME_ROLE, name)
            config.addChild(item)
        sources = QTreeWidgetItem(["Hook sources"])
        for path in self.workspace.hook_sources(runnable_extensions()):
            item = QTreeWidgetItem([path])
            item.setData(0, KIND_ROLE, "source")
            item.setData(0, NAME_ROLE, path)
            sources.addChild(item)
        samples = QTreeWidgetItem(["Samples"])
        for sample in self.workspace.samples():
            item = QTreeWidgetItem([sample.name])
            item.setData(0, KIND_ROLE, "sample")
            item.setData(0, NAME_ROLE, sample.name)
            samples.addChild(item)
        for group in (config, sources, samples):
            self.tree.addTopLevelItem(group)
            group.setExpanded(not expanded or group.text(0) in expanded)

    def _on_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        kind = item.data(0, KIND_ROLE)
        if kind:
            self.open_requested.emit(kind, item.data(0, NAME_ROLE))
