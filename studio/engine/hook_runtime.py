"""The HookRuntime interface: one language's way to run a hook, chosen by the source's file
extension. A runtime says which files it runs, lists a file's callable top-level functions (for
the function picker), runs one call with its limits and deadline in a fresh worker, and turns
its own failures into turn errors. The runtimes are listed in :mod:`studio.engine.runtimes`;
adding one is a module and a line there."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from studio.core.contract import HookCall, HookReply
from studio.core.source_ref import SourceRef
from studio.core.workspace.folder import StudioSettings
from studio.engine.worker_protocol import WorkerLimits

if TYPE_CHECKING:
    from studio.engine.python_functions import FunctionList


class HookRuntime(ABC):
    """Runs the hooks of one workspace written in one language. One instance serves every call
    made with the same settings; each call still gets a fresh worker of its own."""

    name: ClassVar[str]
    extensions: ClassVar[tuple[str, ...]]
    refused: ClassVar[dict[str, str]] = {}
    """Extensions of this language that it will not run, with the reason in the user's words."""

    def __init__(self, root: Path, settings: StudioSettings, *, in_pieces: bool = False) -> None:
        self.root = root
        self.settings = settings
        self.in_pieces = in_pieces

    @classmethod
    def runs(cls, path: str) -> bool:
        return path.endswith(cls.extensions)

    @classmethod
    @abstractmethod
    def functions(cls, path: Path) -> FunctionList:
        """The callable top-level functions of a source file; never raises on a broken file."""

    @abstractmethod
    def serves(self, settings: StudioSettings) -> bool:
        """Whether this instance can run calls under ``settings`` (an environment change needs
        a new one)."""

    @abstractmethod
    async def start(self) -> None:
        """Get ready ahead of the first call."""

    @abstractmethod
    async def call(self, call: HookCall, ref: SourceRef, limits: WorkerLimits) -> HookReply:
        """Run ``call`` in a fresh worker to its end. Cancelling the awaiting task ends the
        worker at once. A failure of the runtime itself raises
        :class:`~studio.core.contract.RunStopped` with the turn error that says why."""

    @abstractmethod
    async def close(self) -> None:
        """Stop everything this runtime started."""
