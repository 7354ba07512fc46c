"""Findings about a hook's source before anything runs: the file is there, the function is in
it, and the studio can run its language.

The same rules serve every hook the studio configures (the pre-LLM hook, the step-preparation
source, each chain hook): a caller says where the source sits in its config (the JSON path the
editor marks) and how to learn what is at a path (:data:`SourceLookup`). A missing file and a
missing function are errors, since the runtime would fail every call of the hook with them;
what only may go wrong is a warning.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from studio.core.findings import Finding, PathPart
from studio.core.source_ref import SourceRef, lexical_path_problem

if TYPE_CHECKING:
    from studio.core.workspace.folder import Workspace

SOURCE_MISSING = "source.missing"
SOURCE_BROKEN = "source.broken"
FUNCTION_MISSING = "source.function_missing"
FUNCTION_UNCHECKED = "source.function_unchecked"
RUNTIME = "source.runtime"

FUNCTION_RULES = (FUNCTION_MISSING, FUNCTION_UNCHECKED)
"""The rules about the function rather than the file: an editor marks the function's field."""

MAX_NAMES_SHOWN = 8


@dataclass(frozen=True, slots=True)
class SourceFile:
    """What is at a hook's source path, as far as it is known."""

    exists: bool
    functions: tuple[str, ...] | None = None
    """The functions the runtime can call; None while they are not known (being listed, or a
    language whose functions are not listed)."""
    problem: str | None = None
    """Why the file does not parse, and where; ``functions`` then lists what could be read."""
    missing: str | None = None
    """Why the runtime would not find the file, in the user's words (an ``.adf`` names its
    files exactly); None for the plain 'does not exist'."""
    unchecked: tuple[str, ...] = ()
    """Other top-level names, whose value may or may not be callable when the hook runs."""
    open_ended: bool = False
    """The file may bind names that no parse sees (a star import)."""


SourceLookup = Callable[[str], "SourceFile | None"]
"""What is at a source path; None when that cannot be known (no workspace)."""


class Listing(Protocol):
    """A function listing of a source file, as the hook runtimes make them."""

    @property
    def syntax_error(self) -> object | None: ...

    @property
    def unchecked(self) -> tuple[str, ...]: ...

    @property
    def open_ended(self) -> bool: ...

    @property
    def listed(self) -> bool: ...

    def names(self) -> list[str]: ...


def source_file_in(workspace: Workspace, path: str, listing: Listing | None) -> SourceFile:
    """What is at ``path`` in ``workspace`` (its sources folder, or the files of an ``.adf``
    agent), with ``listing`` when the file's functions are known."""
    missing = workspace.missing_source(path)
    if missing:
        return SourceFile(False, missing=missing)
    if lexical_path_problem(path, bare_drive=False) or not (workspace.source_root / path).is_file():
        return SourceFile(False)
    if listing is None or not listing.listed:
        return SourceFile(True)
    problem = listing.syntax_error
    return SourceFile(
        True,
        tuple(listing.names()),
        str(problem) if problem else None,
        unchecked=tuple(listing.unchecked),
        open_ended=listing.open_ended,
    )


def source_findings(
    ref: SourceRef,
    at: tuple[PathPart, ...],
    lookup: SourceLookup | None,
    *,
    language_problem: Callable[[str], str | None] | None = None,
    export: bool = False,
    function_at: tuple[PathPart, ...] | None = None,
) -> list[Finding]:
    """The findings about the hook source ``ref``, configured at ``at`` in its config.

    ``language_problem`` says why the studio cannot run a path (None when it can);
    ``export`` words a missing function as a module's export (step and chain hooks);
    ``function_at`` is where the function is named, when that is not ``at``.
    """
    path = ref.path
    if lexical_path_problem(path, bare_drive=False):
        return []  # the config's own rules say why such a path cannot be used
    found: list[Finding] = []
    if language_problem is not None and (unrunnable := language_problem(path)):
        found.append(
            Finding(
                at, f"{_capital(unrunnable)}: the studio cannot run this hook", RUNTIME, "warning"
            )
        )
    on_disk = lookup(path) if lookup is not None else None
    if on_disk is None:
        return found
    if not on_disk.exists:
        reason = _capital(on_disk.missing) if on_disk.missing else f"{path} does not exist"
        found.append(
            Finding(
                at,
                f"{reason}; every call of the hook fails until it exists",
                SOURCE_MISSING,
            )
        )
        return found
    if on_disk.problem:
        found.append(
            Finding(
                at,
                f"{path} does not parse: {on_disk.problem}; every call of the hook fails until "
                "it does",
                SOURCE_BROKEN,
                "warning",
            )
        )
    found.extend(_function_findings(ref, on_disk, function_at or at, export))
    return found


def _function_findings(
    ref: SourceRef, on_disk: SourceFile, at: tuple[PathPart, ...], export: bool
) -> list[Finding]:
    functions = on_disk.functions
    name = ref.function
    if functions is None or name in functions:
        return []
    what = "export" if export else "function"
    if name in on_disk.unchecked:
        return [
            Finding(
                at,
                f"`{name}` in {ref.path} is not a function the studio can see; it must hold "
                "one when the hook runs",
                FUNCTION_UNCHECKED,
                "warning",
            )
        ]
    if on_disk.problem or on_disk.open_ended:
        # The name may sit in the part that does not parse, or come from a star import: its
        # absence is only likely, so it does not block Save.
        where = "the part of it that parses" if on_disk.problem else "what the studio can see"
        return [
            Finding(
                at,
                f"{ref.path} has no {what} `{name}` in {where}",
                FUNCTION_UNCHECKED,
                "warning",
            )
        ]
    return [
        Finding(at, missing_function_message(ref.path, name, functions, what), FUNCTION_MISSING)
    ]


def missing_function_message(path: str, name: str, functions: Sequence[str], what: str) -> str:
    """``lib/policy.ts has no function `transfrom`; it has: transform (did you mean
    `transform`?)``."""
    if not functions:
        return f"{path} has no {what} `{name}`; it has no {what}s at all"
    shown = ", ".join(functions[:MAX_NAMES_SHOWN])
    if len(functions) > MAX_NAMES_SHOWN:
        shown += f", … ({len(functions)} in all)"
    close = difflib.get_close_matches(name, functions, n=1)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return f"{path} has no {what} `{name}`; it has: {shown}{hint}"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
