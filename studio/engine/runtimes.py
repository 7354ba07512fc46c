"""Every hook runtime, and which one runs a given source file."""

from __future__ import annotations

from pathlib import Path

from studio.engine.hook_runtime import HookRuntime
from studio.engine.node_runtime import NodeRuntime
from studio.engine.python_runtime import PythonRuntime

RUNTIMES: tuple[type[HookRuntime], ...] = (PythonRuntime, NodeRuntime)


def runtime_for(path: str) -> type[HookRuntime] | None:
    """The runtime that runs the source file at ``path``, or None for a language none runs."""
    return next((runtime for runtime in RUNTIMES if runtime.runs(path)), None)


def runnable_extensions() -> tuple[str, ...]:
    return tuple(ext for runtime in RUNTIMES for ext in runtime.extensions)


def unrunnable_problem(path: str) -> str | None:
    """Why no runtime runs ``path``, in the user's words, or None when one does."""
    if runtime_for(path) is not None:
        return None
    suffix = Path(path).suffix
    for runtime in RUNTIMES:
        if suffix in runtime.refused:
            return runtime.refused[suffix]
    what = f"'{suffix}' files" if suffix else "a file without an extension"
    return f"the studio has no runtime for {what}; it runs {', '.join(runnable_extensions())}"
