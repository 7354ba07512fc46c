"""The chain section as the chain editor holds it: ordered rows per chain, each a built-in hook
or a user's hook with its options, and the default-validators switch.

A draft turns back into the section's JSON value (:meth:`ChainDraft.value`) over the section it
was loaded from, so keys the editor does not show are kept, and keys that were absent stay
absent while they hold their default. What the user typed is kept as typed (a timeout of
``"abc"`` becomes the string ``"abc"``), so the config's own validation names the problem at
its JSON path.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from studio.core.chain.builtins import BUILTIN_HOOKS, DEFAULT_POST_HOOKS
from studio.core.chain.config import MODULE_DEFAULT_EXPORT, MODULE_EXTENSIONS, ChainName
from studio.core.row_order import move_row as move_row
from studio.core.row_order import remove_row as remove_row
from studio.core.source_ref import DEFAULT_FUNCTION, parse_source_ref
from studio.core.workspace.studio_config_edit import ABSENT

RowKind = Literal["builtin", "user", "other"]
CHAINS: Final[tuple[ChainName, ...]] = ("pre", "post")
DEFAULTS_KEY: Final = "default_post_validators"


def builtins_of(chain: ChainName) -> list[str]:
    """The built-in hooks that may be listed in ``chain``, in the studio's order."""
    return [name for name, known in BUILTIN_HOOKS.items() if known[0] == chain]


def timeout_value(text: str) -> Any:
    """A typed timeout as the config holds it: a JSON number when it reads as one, else the
    text itself (which the validation then refuses with its path)."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, int | float) and not isinstance(value, bool) else text


@dataclass(frozen=True)
class ChainRow:
    """One entry of a chain. ``name`` is the built-in's name or the user hook's source
    (``path:function``); ``timeout`` is as typed (empty: the default); ``kept`` holds what the
    editor does not show: an entry's other keys, or the whole entry when it is neither a name nor
    an object with a source."""

    kind: RowKind
    name: str = ""
    timeout: str = ""
    kept: Any = None

    @classmethod
    def builtin(cls, name: str) -> ChainRow:
        return cls("builtin", name)

    @classmethod
    def user(cls, source: str = "", timeout: str = "") -> ChainRow:
        return cls("user", source, timeout)

    @classmethod
    def from_entry(cls, entry: Any) -> ChainRow:
        if isinstance(entry, str):
            return cls.builtin(entry)
        if isinstance(entry, dict) and isinstance(entry.get("source"), str):
            others = {k: v for k, v in entry.items() if k not in ("source", "timeout_ms")}
            timeout = entry.get("timeout_ms", ABSENT)
            typed = "" if timeout is ABSENT else _typed(timeout)
            return cls("user", entry["source"], typed, others or None)
        return cls("other", kept=entry)

    def entry(self) -> Any:
        """The row as the config holds it."""
        if self.kind == "builtin":
            return self.name
        if self.kind == "other":
            return self.kept
        entry: dict[str, Any] = {"source": self.name}
        if self.timeout.strip():
            entry["timeout_ms"] = timeout_value(self.timeout.strip())
        if isinstance(self.kept, dict):
            entry.update(self.kept)
        return entry

    @property
    def label(self) -> str:
        if self.kind == "other":
            return json.dumps(self.kept)
        return self.name


def _typed(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


Rows = tuple[ChainRow, ...]


@dataclass(frozen=True)
class ChainDraft:
    pre: Rows = ()
    post: Rows = ()
    default_post_validators: bool = True
    base: Any = ABSENT
    """The section as loaded; what the editor does not show is kept from it."""

    @classmethod
    def load(cls, section: Any) -> tuple[ChainDraft, list[str]]:
        """The draft of a section as written, and what the editor had to leave out (a part
        that is not what the config allows, which a save then replaces)."""
        notes: list[str] = []
        if section is ABSENT or section is None:
            return cls(base=section), notes
        if not isinstance(section, dict):
            notes.append("chain is not an object; saving replaces it with the chains shown here")
            return cls(base=section), notes
        rows: dict[str, Rows] = {}
        for chain in CHAINS:
            entries = section.get(chain, [])
            if not isinstance(entries, list):
                notes.append(f"chain.{chain} is not a list; saving replaces it with the rows shown")
                entries = []
            rows[chain] = tuple(ChainRow.from_entry(e) for e in entries)
        defaults = section.get(DEFAULTS_KEY, True)
        if not isinstance(defaults, bool):
            notes.append(f"chain.{DEFAULTS_KEY} is not true or false; saving writes the switch")
            defaults = True
        return cls(rows["pre"], rows["post"], defaults, section), notes

    def rows(self, chain: ChainName) -> Rows:
        return self.pre if chain == "pre" else self.post

    def with_rows(self, chain: ChainName, rows: Sequence[ChainRow]) -> ChainDraft:
        if chain == "pre":
            return replace(self, pre=tuple(rows))
        return replace(self, post=tuple(rows))

    def value(self) -> Any:
        """The section's JSON value; ``ABSENT`` while there was none and nothing was set."""
        base = self.base if isinstance(self.base, dict) else {}
        value = dict(base)
        for chain in CHAINS:
            entries = [row.entry() for row in self.rows(chain)]
            if chain in base or entries:
                value[chain] = entries
        if DEFAULTS_KEY in base or not self.default_post_validators:
            value[DEFAULTS_KEY] = self.default_post_validators
        if not value and not isinstance(self.base, dict):
            return self.base
        return value

    def post_run_order(self) -> list[str]:
        """The post chain as it runs: the rows, then the default validators not listed."""
        names = [row.label for row in self.post]
        if self.default_post_validators:
            listed = {row.name for row in self.post if row.kind == "builtin"}
            names += [name for name in DEFAULT_POST_HOOKS if name not in listed]
        return names


def add_row(rows: Rows, row: ChainRow, at: int | None = None) -> Rows:
    at = len(rows) if at is None else at
    return (*rows[:at], row, *rows[at:])


def set_row(rows: Rows, index: int, row: ChainRow) -> Rows:
    return (*rows[:index], row, *rows[index + 1 :])


def default_function(path: str) -> str:
    """What runs when a chain hook's source names no function (studio rule default-export)."""
    return MODULE_DEFAULT_EXPORT if path.endswith(MODULE_EXTENSIONS) else DEFAULT_FUNCTION


def split_source(source: str) -> tuple[str, str]:
    """``(path, function)`` as the chain runs the source."""
    text = source.strip()
    if not text:
        return "", ""
    ref = parse_source_ref(text)
    return ref.path, default_function(ref.path) if text == ref.path else ref.function


def join_source(path: str, function: str) -> str:
    """The source text for a path and a function, which is left out where the chain would call
    the same one without it."""
    path, function = path.strip(), function.strip()
    if not path:
        return ""
    if not function or function == default_function(path):
        return path
    return f"{path}:{function}"
