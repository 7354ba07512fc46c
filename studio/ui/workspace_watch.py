"""Files of the open workspace changed outside the studio (by an editor, by git, by ADF): the
changes of a moment are gathered and told once they have settled."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from studio.core.workspace.folder import Workspace
from studio.engine.runtimes import runnable_extensions

SETTLE_MS = 150
"""Changes this close together are told as one: a save by replacement touches a file twice."""


class WorkspaceWatch(QObject):
    settled = Signal(object)
    """The paths (a set of str) changed since the last time, once no change came for a moment."""

    def __init__(self, wait: Callable[[], bool], parent: QObject | None = None) -> None:
        """``wait`` says whether to hold the changes back a moment longer (while a save of the
        studio's own runs, whose write is not a change from outside)."""
        super().__init__(parent)
        self._wait = wait
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._on_changed)
        self.watcher.directoryChanged.connect(self._on_changed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self._on_settled)
        self._changed: set[str] = set()

    def watch(self, workspace: Workspace) -> None:
        """Watch the workspace's folders, agent, settings, hook sources and samples (again: an
        editor that saves by replacing a file drops it from the watch)."""
        self._unwatch()
        root = workspace.root
        wanted = [root, root / "samples", root / "lib"]
        files = [workspace.agent_path, workspace.settings_path]
        sources = workspace.source_root
        files += [sources / s for s in workspace.hook_sources(runnable_extensions())]
        files += [s.path for s in workspace.samples()]
        existing = [str(p) for p in [*wanted, *files] if p.exists()]
        if existing:
            self.watcher.addPaths(existing)

    def stop(self) -> None:
        """Watch nothing, and tell nothing of the changes not told yet (the window closed)."""
        self._unwatch()
        self._timer.stop()
        self._changed = set()

    def _unwatch(self) -> None:
        paths = self.watcher.files() + self.watcher.directories()
        if paths:
            self.watcher.removePaths(paths)

    @property
    def pending(self) -> bool:
        """Whether changes wait for a moment without one before they are told."""
        return self._timer.isActive()

    def _on_changed(self, path: str) -> None:
        self._changed.add(path)
        self._timer.start()

    def _on_settled(self) -> None:
        if self._wait():
            self._timer.start()
            return
        changed, self._changed = self._changed, set()
        self.settled.emit(changed)
