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


def language_problem(path: str, node_problem: str | None) -> str | None:
    """Why the studio cannot run ``path``: no runtime for its kind of file, or, for a
    TypeScript or JavaScript file, ``node_problem`` (why the chosen Node is not usable; None
    when it is). None when it can run it."""
    unrunnable = unrunnable_problem(path)
    if unrunnable is not None:
        return unrunnable
    if node_problem and runtime_for(path) is NodeRuntime:
        return f"the studio runs {path} with Node, and {node_problem}"
    return None


def node_problem() -> str | None:
    """Why the Node the studio would use cannot run hooks, or None when it can. It may start
    the program to ask its version: call it off the GUI thread."""
    from studio.engine.node_binary import NodeUnavailable, find_node

    try:
        find_node()
    except NodeUnavailable as exc:
        return str(exc)
    return None
