"""The functions each hook source defines, and whether Node can run hooks: both asked off the GUI
thread, since a TypeScript file is parsed by a Node process and asking about Node may start
one. The window's editors read them for their findings and the function picker."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from studio.engine.python_functions import FunctionList
from studio.engine.runtimes import language_problem, node_problem, runtime_for
from studio.ui.engine_bridge import EngineBridge

ListingKey = tuple[Path, bool]
"""A file, and whether it is read as a module (step and chain hooks) or as a script."""
Stamp = tuple[int, int]
"""A version of a file: its modification time and size."""


class FunctionListings(QObject):
    listed = Signal()
    """A listing asked for by :meth:`listing` is known now."""
    node_checked = Signal(object)
    """Why Node cannot run hooks (a str), or None: the answer to :meth:`check_node`."""

    def __init__(self, bridge: EngineBridge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._listings: dict[ListingKey, tuple[Stamp, FunctionList | None]] = {}
        self._jobs: dict[ListingKey, Stamp] = {}
        self.node_problem: str | None = None

    def clear(self) -> None:
        """Another workspace is open: what was listed, or is being listed, is not its."""
        self._listings.clear()
        self._jobs.clear()

    def listing(self, target: Path, module: bool = False) -> FunctionList | None:
        """The functions of a hook source (with ``module``, the exports of a step or chain
        hook), listed once per version of the file; None until they are known (or when no
        runtime lists this kind of file). Once a listing is ready, ``listed`` is emitted."""
        runtime = runtime_for(str(target))
        try:
            info = target.stat()
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size)
        key = (target, module)
        cached = self._listings.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        if runtime is None:
            self._listings[key] = (stamp, None)
            return None
        if self._jobs.get(key) != stamp:
            self._jobs[key] = stamp
            job = self._bridge.submit(partial(runtime.functions, target, module=module))
            job.finished.connect(partial(self.deliver, key, stamp))
            job.failed.connect(partial(self._on_listing_failed, key, stamp))
        return None

    def pending(self, key: ListingKey) -> Stamp | None:
        """The version of the file being listed, when a listing of it is under way."""
        return self._jobs.get(key)

    def _on_listing_failed(self, key: ListingKey, stamp: Stamp, _error: object) -> None:
        self.deliver(key, stamp, None)

    def deliver(self, key: ListingKey, stamp: Stamp, listing: object) -> None:
        """A listing made of the file at ``stamp``: kept, and ``listed`` emitted, unless a newer
        version of the file is being listed (or none was asked for)."""
        if self._jobs.get(key) != stamp:
            return
        del self._jobs[key]
        self._listings[key] = (stamp, listing if isinstance(listing, FunctionList) else None)
        self.listed.emit()

    def language_problem(self, path: str) -> str | None:
        """Why the studio cannot run the source ``path``, or None."""
        return language_problem(path, self.node_problem)

    def check_node(self) -> None:
        """Ask whether TypeScript and JavaScript hooks can run; ``node_checked`` answers."""
        job = self._bridge.submit(node_problem)
        job.finished.connect(self._on_node_checked)

    def _on_node_checked(self, problem: object) -> None:
        self.node_problem = problem if isinstance(problem, str) else None
        self.node_checked.emit(self.node_problem)
