"""The HookRuntime interface: one language's way to run a hook, chosen by the source's file
extension. A runtime says which files it runs, lists a file's callable top-level functions (for
the function picker), runs one call with its limits and deadline in a fresh worker, and turns
its own failures into turn errors. The runtimes are listed in :mod:`studio.engine.runtimes`;
adding one is a module and a line there."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from studio.core.contract import HookCall, HookReply, RunStopped
from studio.core.json.pieces import json_bytes
from studio.core.source_ref import SourceRef
from studio.core.turn_error import turn_error
from studio.core.workspace.folder import StudioSettings
from studio.engine.sandbox import SandboxPlan
from studio.engine.worker_protocol import WorkerLimits

if TYPE_CHECKING:
    from studio.engine.python_functions import FunctionList


def _environment(settings: StudioSettings) -> tuple[Any, ...]:
    return (tuple(sorted(settings.env.items())), tuple(settings.pass_env))


class HookRuntime(ABC):
    """Runs the hooks of one workspace written in one language. One instance serves every call
    made with the same settings; each call still gets a fresh worker of its own."""

    name: ClassVar[str]
    extensions: ClassVar[tuple[str, ...]]
    refused: ClassVar[dict[str, str]] = {}
    """Extensions of this language that it will not run, with the reason in the user's words."""

    def __init__(
        self,
        root: Path,
        settings: StudioSettings,
        *,
        in_pieces: bool = False,
        sandbox: SandboxPlan | None = None,
    ) -> None:
        self.root = root
        self.settings = settings
        self.in_pieces = in_pieces
        self.sandbox = sandbox
        self._environment = _environment(settings)
        self._begin()

    @abstractmethod
    def _begin(self) -> None:
        """Make what the runtime's calls need (its host); nothing starts until :meth:`start`."""

    @classmethod
    def runs(cls, path: str) -> bool:
        return path.endswith(cls.extensions)

    @classmethod
    @abstractmethod
    def functions(cls, path: Path, *, module: bool = False) -> FunctionList:
        """The callable top-level functions of a source file; never raises on a broken file.
        ``module``: the names a step or chain hook may export (where the language tells them
        apart from what a pre-LLM hook may call)."""

    def serves(self, settings: StudioSettings, sandbox: SandboxPlan | None) -> bool:
        """Whether this instance can run calls under ``settings``: its workers were started
        with their environment and sandbox, so a change of either needs a new instance."""
        return _environment(settings) == self._environment and sandbox == self.sandbox

    @property
    def sandbox_notice(self) -> str:
        """Why this runtime's hooks run without the sandbox it was asked for; empty when they
        run in it (or it was turned off)."""
        return ""

    def argument_bytes(self, call: HookCall) -> bytes:
        """The hook's argument as the JSON bytes a worker reads."""
        try:
            return (
                call.encoded
                if call.encoded is not None
                else json_bytes(call.argument, self.in_pieces)
            )
        except (TypeError, ValueError) as exc:
            raise RunStopped(
                turn_error(
                    "sample_invalid", f"the sample cannot be sent as JSON: {exc}", hook=call.hook
                )
            ) from None

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
