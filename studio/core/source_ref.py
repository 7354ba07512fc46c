"""Hook source references (``path[:function]``) and where they may point."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from studio.core.js_text import is_js_identifier

DEFAULT_FUNCTION = "main"

_DRIVE_ROOT = re.compile(r"[A-Za-z]:[/\\]")


@dataclass(frozen=True, slots=True)
class SourceRef:
    path: str
    function: str

    def __str__(self) -> str:
        return f"{self.path}:{self.function}"


def parse_source_ref(source: str) -> SourceRef:
    """Split at the last ``:`` only when what follows is an identifier; else the function is main.

    A colon in first position never splits: ``":main"`` is a path, as in the reference runtime.
    """
    head, sep, tail = source.rpartition(":")
    if sep and head and is_js_identifier(tail):
        return SourceRef(head, tail)
    return SourceRef(source, DEFAULT_FUNCTION)


def format_source_ref(path: str, function: str) -> str:
    return path if function == DEFAULT_FUNCTION else f"{path}:{function}"


class SourceOutsideWorkspace(ValueError):
    """A hook source path that resolves outside the workspace."""


def lexical_path_problem(path: str, bare_drive: bool = True) -> str | None:
    """Why a source path cannot be inside the workspace, judged from its text alone, or None.

    A drive root (``C:/``, ``C:\\``) is absolute. ``bare_drive`` also refuses a letter and a colon
    at the start (``c:hook.js``), as the chain and step configs do; the pre-LLM contract does not,
    since ADF reads ``c:hook.js`` as a plain file name (spec/adf.md §7) and so does the runner.
    """
    if not path:
        return "the source path is empty"
    if "\x00" in path:
        return "the source path contains a NUL character"
    drive = len(path) >= 2 and path[1] == ":" and path[0].isalpha()
    if path.startswith(("/", "\\")) or _DRIVE_ROOT.match(path) or (bare_drive and drive):
        return f"the source path '{path}' is absolute; it must be relative to the workspace"
    depth = 0
    # The parts as a POSIX path reads them: empty parts and "." name no folder.
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            depth -= 1
            if depth < 0:
                return f"the source path '{path}' leaves the workspace through '..'"
        elif part != ".":
            depth += 1
    return None


def resolve_source_path(workspace: Path, path: str) -> Path:
    """The real file a source path names, refusing any route out of the workspace.

    Symlinks are followed before the check, so a link inside the workspace that points outside
    it is refused like ``..`` is.
    """
    problem = lexical_path_problem(path, bare_drive=False)
    if problem:
        raise SourceOutsideWorkspace(problem)
    root = os.path.realpath(workspace)
    target = _linkless_target(root, path) or os.path.realpath(os.path.join(root, path))
    inside = root if root.endswith(os.sep) else root + os.sep
    if target != root and not target.startswith(inside):
        raise SourceOutsideWorkspace(
            f"the source path '{path}' resolves to '{target}', outside the workspace"
        )
    return Path(target)


def _linkless_target(root: str, path: str) -> str | None:
    """What ``realpath`` makes of ``path`` in the real folder ``root`` when every part of it
    exists and none is a symlink or ``..`` (the usual case: a walk of one ``lstat`` per part
    instead of ``realpath``'s); None otherwise."""
    if os.sep != "/":
        return None
    target = root.rstrip("/")
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            return None
        target = f"{target}/{part}"
        try:
            if stat.S_ISLNK(os.lstat(target).st_mode):
                return None
        except (OSError, ValueError):
            return None
    return target or "/"
