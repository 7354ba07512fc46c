"""The editor's model of a pre-LLM hook: its source, timeout and target rows (spec/adf.md §5).

Rows are what a user sees: All streams (including future loops), Main, a declared loop or a free
loop name. This module maps rows to the saved config and back, validates a draft with every
finding at once, and summarises the targets. It holds no Qt; the window puts a table on top.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from studio.core.findings import Finding, errors
from studio.core.hook_source_findings import SourceFile as SourceFile
from studio.core.hook_source_findings import SourceLookup, source_findings
from studio.core.js_text import js_trim
from studio.core.pre_llm.config import (
    KNOWN_HOOK_KEYS,
    MAIN,
    MAX_LOOPS,
    hook_config_from,
    loop_name_problem,
    timeout_problem,
    validate_hook_config,
)
from studio.core.row_order import move_row as move_row
from studio.core.row_order import remove_row as remove_row
from studio.core.source_ref import lexical_path_problem, parse_source_ref

ALL_STREAMS_LABEL = "All streams (including future loops)"
MAIN_LABEL = "Main"
FREE_NAME_LABEL = "Future or other loop…"
FUTURE_LOOP_LABEL = "any future loop"


class TargetKind(StrEnum):
    ALL = "all"
    MAIN = "main"
    LOOP = "loop"
    EMPTY = "empty"


@dataclass(frozen=True, slots=True)
class TargetRow:
    kind: TargetKind
    name: str = ""

    @classmethod
    def all_streams(cls) -> TargetRow:
        return cls(TargetKind.ALL)

    @classmethod
    def main(cls) -> TargetRow:
        return cls(TargetKind.MAIN)

    @classmethod
    def loop(cls, name: str) -> TargetRow:
        return cls(TargetKind.LOOP, name)

    @classmethod
    def empty(cls) -> TargetRow:
        return cls(TargetKind.EMPTY)

    def label(self) -> str:
        if self.kind is TargetKind.ALL:
            return ALL_STREAMS_LABEL
        if self.kind is TargetKind.MAIN:
            return MAIN_LABEL
        if self.kind is TargetKind.LOOP:
            return self.name
        return ""


Rows = tuple[TargetRow, ...]
NEW_HOOK_ROWS: Rows = (TargetRow.main(),)


def add_row(rows: Rows) -> Rows:
    """``+ Add target``: a new row with nothing chosen yet."""
    return (*rows, TargetRow.empty())


def choose(rows: Rows, index: int, row: TargetRow) -> Rows:
    """Set one row's target. All streams is exclusive: choosing it clears every other row, and
    choosing a specific target in another row gives up All streams."""
    if row.kind is TargetKind.ALL:
        return (row,)
    changed = list(rows)
    changed[index] = row
    if row.kind is not TargetKind.EMPTY:
        changed = [r for i, r in enumerate(changed) if i == index or r.kind is not TargetKind.ALL]
    return tuple(changed)


def summary(rows: Sequence[TargetRow]) -> str:
    """One line for the hook's targets: "All streams", "Main", "1 target", "3 targets"."""
    if any(r.kind is TargetKind.ALL for r in rows):
        return "All streams"
    chosen = [r for r in rows if r.kind is not TargetKind.EMPTY]
    if not chosen:
        return "No target"
    if len(chosen) == 1 and chosen[0].kind is TargetKind.MAIN:
        return "Main"
    return f"{len(chosen)} target" + ("" if len(chosen) == 1 else "s")


def rows_applies_to(rows: Sequence[TargetRow], loop: str) -> bool:
    """Whether rows as they stand would run the hook on ``loop`` ("main" or an inner loop)."""
    for row in rows:
        if row.kind is TargetKind.ALL:
            return True
        if row.kind is TargetKind.MAIN and loop == MAIN:
            return True
        if row.kind is TargetKind.LOOP and row.name == loop and loop != MAIN:
            return True
    return False


def applies_view(
    rows: Sequence[TargetRow], declared_loops: Iterable[str]
) -> list[tuple[str, bool]]:
    """Main, each declared loop and any future loop, with whether the hook runs there."""
    view = [(MAIN_LABEL, rows_applies_to(rows, MAIN))]
    view += [(name, rows_applies_to(rows, name)) for name in declared_loops if name != MAIN]
    future = any(r.kind is TargetKind.ALL for r in rows)
    view.append((FUTURE_LOOP_LABEL, future))
    return view


def rows_from_config(config: Mapping[str, Any]) -> Rows:
    """The rows an existing config opens as; an ``all`` config stays All streams, never a list."""
    scope = config.get("scope")
    if scope is None or scope == "all":  # the runtime reads a null scope as omitted
        return (TargetRow.all_streams(),)
    if scope == "main":
        return (TargetRow.main(),)
    loops = config.get("loops")
    names = [n for n in loops if isinstance(n, str)] if isinstance(loops, list) else []
    main = (TargetRow.main(),) if config.get("include_main") is True else ()
    return main + tuple(TargetRow.loop(n) for n in names)


def targets_to_config(rows: Sequence[TargetRow]) -> dict[str, Any]:
    """The scope keys that rows are saved as (only valid rows have a meaning)."""
    if any(r.kind is TargetKind.ALL for r in rows):
        return {"scope": "all"}
    loops = [r.name for r in rows if r.kind is TargetKind.LOOP]
    has_main = any(r.kind is TargetKind.MAIN for r in rows)
    if not loops:
        return {"scope": "main"}
    if has_main:
        return {"scope": "loops", "loops": loops, "include_main": True}
    return {"scope": "loops", "loops": loops}


_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class HookDraft:
    """What the user is editing. ``timeout`` is the text as typed; empty means no timeout."""

    source: str = ""
    timeout: str = ""
    rows: Rows = NEW_HOOK_ROWS
    original: Mapping[str, Any] = field(default_factory=dict)

    def with_rows(self, rows: Rows) -> HookDraft:
        return replace(self, rows=rows)


def draft_from_config(config: Mapping[str, Any]) -> HookDraft:
    source = config.get("source")
    timeout = config.get("timeout_ms")
    return HookDraft(
        source=js_trim(source) if isinstance(source, str) else "",
        timeout=_timeout_text(timeout),
        rows=rows_from_config(config),
        original=dict(config),
    )


def _timeout_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value)


def parse_timeout(text: str) -> tuple[int | None, str | None]:
    """The timeout in milliseconds from the text field, and the problem with it, if any."""
    text = js_trim(text)
    if not text:
        return None, None
    if _JSON_NUMBER.fullmatch(text) is None:
        return None, (
            f"Timeout '{text}' is not a number; give whole milliseconds from 1000 to 300000"
        )
    value = json.loads(text)
    problem = timeout_problem(value)
    if problem:
        return None, "Timeout " + problem.removeprefix("timeout_ms ")
    return int(value), None


# ADF loads hook sources of these kinds only; the studio runs Python hooks as well.
ADF_SOURCE_EXTENSIONS = (".js", ".ts")


def validate_draft(
    draft: HookDraft,
    language_problem: Callable[[str], str | None] | None = None,
    source_file: SourceLookup | None = None,
) -> list[Finding]:
    """Every problem with a draft at once, each with the field or row it belongs to.
    ``language_problem`` says why no studio runtime runs a source path (None when one does);
    ``source_file`` says what is at a source path (None when that cannot be known)."""
    found: list[Finding] = []
    source = js_trim(draft.source)
    if not source:
        found.append(Finding(("source",), "Lambda source is empty", "targets.source"))
    else:
        ref = parse_source_ref(source)
        path = ref.path
        problem = lexical_path_problem(path, bare_drive=False)
        if problem:
            found.append(Finding(("source",), problem[0].upper() + problem[1:], "targets.source"))
        else:
            if path.endswith(".py"):
                found.append(
                    Finding(
                        ("source",),
                        f"{path} runs in the studio only; ADF will not load it "
                        f"(ADF runs {' and '.join(ADF_SOURCE_EXTENSIONS)} hooks)",
                        "targets.adf_language",
                        "warning",
                    )
                )
            found.extend(
                source_findings(ref, ("source",), source_file, language_problem=language_problem)
            )

    rows = draft.rows
    if not rows:
        found.append(Finding(("targets",), "Add at least one target", "targets.none"))
    has_all = any(r.kind is TargetKind.ALL for r in rows)
    seen: set[str] = set()
    for index, row in enumerate(rows):
        at = ("targets", index)
        number = index + 1
        if row.kind is TargetKind.EMPTY or (row.kind is TargetKind.LOOP and not row.name):
            found.append(
                Finding(
                    at,
                    f"Target {number} is empty; choose a target or remove the row",
                    "targets.empty",
                )
            )
            continue
        if row.kind is TargetKind.ALL:
            if len(rows) > 1:
                found.append(
                    Finding(
                        at,
                        "All streams already covers every loop; "
                        "it cannot be combined with other targets",
                        "targets.all",
                    )
                )
            continue
        key = MAIN if row.kind is TargetKind.MAIN else row.name
        if row.kind is TargetKind.LOOP:
            problem = loop_name_problem(row.name)
            if problem:
                found.append(Finding(at, f"Target {number}: {problem}", "targets.name"))
                continue
        if key in seen:
            shown = MAIN_LABEL if row.kind is TargetKind.MAIN else f"Loop '{key}'"
            found.append(Finding(at, f"{shown} is targeted twice", "targets.duplicate"))
        seen.add(key)
    loop_count = sum(1 for r in rows if r.kind is TargetKind.LOOP)
    if not has_all and loop_count > MAX_LOOPS:
        found.append(
            Finding(
                ("targets",),
                f"{loop_count} loops are targeted; at most {MAX_LOOPS} are allowed",
                "targets.max",
            )
        )

    _, timeout_issue = parse_timeout(draft.timeout)
    if timeout_issue:
        found.append(Finding(("timeout_ms",), timeout_issue, "targets.timeout"))
    return found


class DraftInvalid(ValueError):
    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


def draft_to_config(draft: HookDraft) -> dict[str, Any]:
    """The ``pre_llm_hook`` object to save. Refuses an invalid draft, so a half-typed draft never
    reaches the file. Keys of the original config keep their order; keys the studio does not
    edit are kept as they were."""
    problems = errors(validate_draft(draft))
    if problems:
        raise DraftInvalid(problems)
    original = draft.original
    timeout, _ = parse_timeout(draft.timeout)
    wanted: dict[str, Any] = {"source": js_trim(draft.source), **targets_to_config(draft.rows)}
    if wanted["scope"] == "all" and original and "scope" not in original:
        del wanted["scope"]
    if timeout is not None:
        kept = original.get("timeout_ms")
        same = isinstance(kept, int | float) and not isinstance(kept, bool) and kept == timeout
        wanted["timeout_ms"] = kept if same else timeout

    config: dict[str, Any] = {}
    for key, value in original.items():
        if key in wanted:
            config[key] = wanted.pop(key)
        elif key not in KNOWN_HOOK_KEYS:
            config[key] = value
    for key in KNOWN_HOOK_KEYS:
        if key in wanted:
            config[key] = wanted[key]
    problems = errors(validate_hook_config(config))
    if problems:
        raise DraftInvalid(problems)
    return config


def config_meaning(config: Mapping[str, Any], loops: Iterable[str]) -> tuple[Any, ...]:
    """What a valid config does, for comparing two configs: source, timeout and where it runs."""
    hook = hook_config_from(config)
    return (hook.source, hook.timeout_ms, tuple(hook.applies_to(n) for n in (MAIN, *loops)))
