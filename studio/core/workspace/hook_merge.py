"""A three-way merge of the one key of a file that an editor edits: ``pre_llm_hook`` of an agent
config, or the ``step`` or ``chain`` section of hookstudio.json.

When the file changes outside the studio while the key is being edited, three versions of it
meet: *base*, the key's value as the editor last loaded or saved it; *ours*, the value being
edited; *theirs*, the value in the file now. Every other key of the file belongs to the file:
the outside edit of it is kept as written, and nothing here decides about it.

If only one side changed the hook, that side wins; if both changed it the same way, there is
nothing to decide; if both changed it differently, only the user can choose, and neither version
may be dropped before they do. A hook that is absent is a version too (:data:`ABSENT`): removed
on one side, added on the other.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from studio.core.json.same import same_json
from studio.core.pre_llm.config import HOOK_KEY


class _Absent:
    """The hook key is not in the config (distinct from a key holding ``null``)."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Final = _Absent()


def hook_in(config: Mapping[str, Any]) -> Any:
    """The hook value of a parsed config, or :data:`ABSENT`."""
    return config.get(HOOK_KEY, ABSENT)


def same_hook(a: Any, b: Any) -> bool:
    """Whether two hook versions would be written alike (types and key order count)."""
    if a is ABSENT or b is ABSENT:
        return a is b
    return same_json(a, b)


class MergeKind(StrEnum):
    UNCHANGED = "unchanged"  # neither side changed the hook
    OURS = "ours"  # only the edit changed it
    THEIRS = "theirs"  # only the file changed it
    SAME = "same"  # both changed it, to the same hook
    CONFLICT = "conflict"  # both changed it, differently


@dataclass(frozen=True, eq=False)
class HookMerge:
    base: Any
    ours: Any
    theirs: Any
    kind: MergeKind

    @property
    def conflict(self) -> bool:
        return self.kind is MergeKind.CONFLICT

    @property
    def result(self) -> Any:
        """The merged hook (:data:`ABSENT` for none). A conflict has no result of its own: the
        user chooses :attr:`ours` or :attr:`theirs`."""
        if self.kind is MergeKind.CONFLICT:
            raise ValueError("both sides changed the hook: choose ours or theirs")
        return self.ours if self.kind is MergeKind.OURS else self.theirs


def merge_hook(base: Any, ours: Any, theirs: Any) -> HookMerge:
    ours_changed = not same_hook(base, ours)
    theirs_changed = not same_hook(base, theirs)
    if not ours_changed and not theirs_changed:
        kind = MergeKind.UNCHANGED
    elif not theirs_changed:
        kind = MergeKind.OURS
    elif not ours_changed:
        kind = MergeKind.THEIRS
    elif same_hook(ours, theirs):
        kind = MergeKind.SAME
    else:
        kind = MergeKind.CONFLICT
    return HookMerge(base, ours, theirs, kind)


def other_keys_changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether two configs differ in anything but the hook."""
    return not same_json(
        {k: v for k, v in before.items() if k != HOOK_KEY},
        {k: v for k, v in after.items() if k != HOOK_KEY},
    )


NO_HOOK_TEXT = "(no pre_llm_hook)"


def hook_text(hook: Any, absent: str = NO_HOOK_TEXT) -> str:
    """A version as the user reads it: pretty JSON, one member a line; ``absent`` when the
    key is not in the file."""
    if hook is ABSENT:
        return absent + "\n"
    return json.dumps(hook, indent=2, ensure_ascii=False) + "\n"


def hook_diff(
    theirs: Any, ours: Any, theirs_label: str, ours_label: str, absent: str = NO_HOOK_TEXT
) -> str:
    """A unified diff from their version to ours, with every line of both in context (a hook
    is a few lines; the whole of each version is easier to judge than fragments)."""
    before = hook_text(theirs, absent).splitlines(keepends=True)
    after = hook_text(ours, absent).splitlines(keepends=True)
    lines = difflib.unified_diff(
        before, after, theirs_label, ours_label, n=max(len(before), len(after))
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
