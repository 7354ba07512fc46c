"""The ``chain`` section of the studio's workspace file (spec/pleach.md §3): which hooks run in the
pre and post chains, in order, as a built-in hook's name or ``{"source": "lib/x.py:fn",
"timeout_ms": 30000}``. :func:`parse_chain_config` returns the typed config, or every finding
with its JSON path when there is an error.

A source without a function names ``main`` in a Python file and the module's default export
(``export default``) in a TypeScript or JavaScript one (studio rule): Pleach registers hooks as
values, so no export name is conventional, and a module that holds one hook exports it as its
default."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from studio.core.chain.builtins import BUILTIN_HOOKS, DEFAULT_POST_HOOKS
from studio.core.chain.shapes import StudioRule
from studio.core.findings import (
    Finding,
    PathPart,
    dotted,
    errors,
    warnings,
)
from studio.core.json.values import is_whole_number, type_name
from studio.core.source_ref import SourceRef, lexical_path_problem, parse_source_ref
from studio.core.turn_error import HookRef

if TYPE_CHECKING:
    from studio.core.chain.sample import ChainSample

ChainName = Literal["pre", "post"]
CHAIN_SECTION: Final = "chain"
DEFAULT_HOOK_TIMEOUT_MS: Final = 30_000
MAX_HOOK_TIMEOUT_MS: Final = 300_000
CONFIG_KEYS: Final = ("pre", "post", "default_post_validators")
ENTRY_KEYS: Final = ("source", "timeout_ms")
RULE_CHAIN_CONFIG: Final = "pleach.chain-config"
STUDIO_DEFAULT_VALIDATORS: Final = "pleach.studio.default-validators"
STUDIO_DEFAULT_EXPORT: Final = "pleach.studio.default-export"
MODULE_DEFAULT_EXPORT: Final = "default"
MODULE_EXTENSIONS: Final = (".ts", ".mts", ".js", ".mjs")

CONFIG_STUDIO_RULES: Final[tuple[StudioRule, ...]] = (
    StudioRule(
        STUDIO_DEFAULT_EXPORT,
        "spec §3",
        "A chain hook source without a function name calls the module's default export "
        "(export default) in a TypeScript or JavaScript file, and main in a Python file: Pleach "
        "registers hooks as values, so no export name is conventional.",
    ),
)


class ChainHookRef(BaseModel):
    """One hook of a chain: a built-in hook by name, or a user's hook by source."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    builtin: str | None = None
    source: str | None = None
    timeout_ms: int = DEFAULT_HOOK_TIMEOUT_MS
    default: bool = False
    """Added by ``default_post_validators`` rather than listed by the user."""

    @property
    def is_builtin(self) -> bool:
        return self.builtin is not None

    @property
    def source_ref(self) -> SourceRef | None:
        if self.source is None:
            return None
        ref = parse_source_ref(self.source)
        if ref.path == self.source and ref.path.endswith(MODULE_EXTENSIONS):
            return SourceRef(ref.path, MODULE_DEFAULT_EXPORT)
        return ref

    @property
    def label(self) -> str:
        """How the interface names the hook: the built-in's name or ``path:function``."""
        if self.builtin is not None:
            return self.builtin
        ref = self.source_ref
        return str(ref) if ref is not None else "(no source)"

    def hook_ref(self, chain: ChainName, position: int) -> HookRef:
        """The turn error's hook field; a built-in's source is ``builtin:<name>``."""
        if self.builtin is not None:
            return HookRef(
                source=f"builtin:{self.builtin}",
                function=self.builtin,
                contract="chain",
                position=position,
                chain=chain,
            )
        ref = self.source_ref or SourceRef("", "main")
        return HookRef(
            source=ref.path, function=ref.function, contract="chain", position=position, chain=chain
        )

    def to_json(self) -> str | dict[str, Any]:
        """The config entry: the name for a built-in, ``{source, timeout_ms}`` otherwise."""
        if self.builtin is not None:
            return self.builtin
        entry: dict[str, Any] = {"source": self.source}
        if self.timeout_ms != DEFAULT_HOOK_TIMEOUT_MS:
            entry["timeout_ms"] = self.timeout_ms
        return entry


class ChainConfig(BaseModel):
    """The ``chain`` section of the studio's workspace file."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    pre: tuple[ChainHookRef, ...] = ()
    post: tuple[ChainHookRef, ...] = ()
    default_post_validators: bool = True
    warnings: tuple[Finding, ...] = Field(default=(), exclude=True)

    def pre_chain(self) -> tuple[ChainHookRef, ...]:
        """The pre hooks in the order they run."""
        return self.pre

    def post_chain(self) -> tuple[ChainHookRef, ...]:
        """The post hooks in the order they run: the user's, then the default validators the
        user did not list (studio rule ``default-validators``)."""
        if not self.default_post_validators:
            return self.post
        listed = {hook.builtin for hook in self.post if hook.builtin is not None}
        defaults = tuple(
            ChainHookRef(builtin=name, default=True)
            for name in DEFAULT_POST_HOOKS
            if name not in listed
        )
        return self.post + defaults

    def to_json(self) -> dict[str, Any]:
        return {
            "pre": [hook.to_json() for hook in self.pre],
            "post": [hook.to_json() for hook in self.post],
            "default_post_validators": self.default_post_validators,
        }


def suggestion(word: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def shown(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 40 else value[:40] + "...")
    return type_name(value)


def _unknown_keys(
    obj: dict[Any, Any], known: Sequence[str], at: tuple[PathPart, ...], name: str, holds: str
) -> list[Finding]:
    """An error for each key of ``obj`` not in ``known``; ``holds`` says what the object holds."""
    return [
        Finding(
            (*at, str(key)),
            f"{name} has unknown key {shown(key)}{suggestion(str(key), known)}; {holds}",
            RULE_CHAIN_CONFIG,
        )
        for key in obj
        if key not in known
    ]


def _entry_findings(
    entry: Any, chain: ChainName, at: tuple[PathPart, ...]
) -> tuple[ChainHookRef | None, list[Finding]]:
    found: list[Finding] = []
    where = dotted(at)
    if isinstance(entry, str):
        known = BUILTIN_HOOKS.get(entry)
        if known is None:
            hint = suggestion(entry, list(BUILTIN_HOOKS))
            if not hint and any(mark in entry for mark in ("/", ".py", ":")):
                hint = f'; a hook of your own is written {{"source": {json.dumps(entry)}}}'
            found.append(
                Finding(
                    at,
                    f"{where} names no built-in hook: {shown(entry)} (the built-ins are "
                    f"{', '.join(BUILTIN_HOOKS)}){hint}",
                    RULE_CHAIN_CONFIG,
                )
            )
            return None, found
        if known[0] != chain:
            other = "post" if chain == "pre" else "pre"
            found.append(
                Finding(
                    at,
                    f"{where}: {entry} is a {known[0]}-model hook; list it under {other}",
                    RULE_CHAIN_CONFIG,
                )
            )
            return None, found
        return ChainHookRef(builtin=entry), found
    if not isinstance(entry, dict):
        found.append(
            Finding(
                at,
                f"{where} must be a built-in hook's name or an object {{source, timeout_ms}}, "
                f"got {type_name(entry)}",
                RULE_CHAIN_CONFIG,
            )
        )
        return None, found
    found += _unknown_keys(
        entry, ENTRY_KEYS, at, where, "a hook entry holds only source and timeout_ms"
    )
    source = entry.get("source")
    if "source" not in entry:
        found.append(
            Finding(
                (*at, "source"),
                f"{dotted((*at, 'source'))} is required (the hook's source, like "
                '"lib/hooks.py:trim")',
                RULE_CHAIN_CONFIG,
            )
        )
    elif not isinstance(source, str) or source == "":
        found.append(
            Finding(
                (*at, "source"),
                f"{dotted((*at, 'source'))} must be a non-empty string, got {shown(source)}",
                RULE_CHAIN_CONFIG,
            )
        )
    else:
        problem = lexical_path_problem(parse_source_ref(source).path)
        if problem:
            found.append(Finding((*at, "source"), problem, RULE_CHAIN_CONFIG))
    timeout = entry.get("timeout_ms", DEFAULT_HOOK_TIMEOUT_MS)
    if not (
        is_whole_number(timeout)
        and not isinstance(timeout, bool)
        and 1 <= timeout <= MAX_HOOK_TIMEOUT_MS
    ):
        got = repr(timeout) if is_whole_number(timeout) else shown(timeout)
        found.append(
            Finding(
                (*at, "timeout_ms"),
                f"{dotted((*at, 'timeout_ms'))} must be a whole number of milliseconds from 1 to "
                f"{MAX_HOOK_TIMEOUT_MS}, got {got}",
                RULE_CHAIN_CONFIG,
            )
        )
    if errors(found):
        return None, found
    return ChainHookRef(source=source, timeout_ms=int(timeout)), found


def parse_findings(result: ChainConfig | ChainSample | list[Finding]) -> list[Finding]:
    """What a ``validate_*`` call reports for a parse result: a parsed value's warnings, or
    every finding when the parse failed."""
    if isinstance(result, list):
        return result
    return list(result.warnings)


def validate_chain_config(value: Any, *, base: tuple[PathPart, ...] = ()) -> list[Finding]:
    """Every finding on a chain config section, errors first; paths start with ``base``."""
    return parse_findings(parse_chain_config(value, base=base))


def parse_chain_config(
    value: Any, *, base: tuple[PathPart, ...] = ()
) -> ChainConfig | list[Finding]:
    """The typed chain config (its warnings in ``warnings``), or every finding (errors first,
    then warnings) when there is an error. Paths start with ``base`` (e.g. ``("chain",)``)."""
    found: list[Finding] = []
    root = dotted(base) or "the chain config"
    if not isinstance(value, dict):
        return [
            Finding(
                base,
                f"{root} must be an object {{pre, post, default_post_validators}}, "
                f"got {type_name(value)}",
                RULE_CHAIN_CONFIG,
            )
        ]
    found += _unknown_keys(
        value,
        CONFIG_KEYS,
        base,
        root,
        "the chain config holds only pre, post and default_post_validators",
    )
    chains: dict[ChainName, list[tuple[int, ChainHookRef]]] = {"pre": [], "post": []}
    for chain in ("pre", "post"):
        entries = value.get(chain, [])
        at = (*base, chain)
        if not isinstance(entries, list):
            found.append(
                Finding(
                    at,
                    f"{dotted(at)} must be an array of hook entries, got {type_name(entries)}",
                    RULE_CHAIN_CONFIG,
                )
            )
            continue
        seen: set[str] = set()
        for i, entry in enumerate(entries):
            hook, entry_found = _entry_findings(entry, chain, (*at, i))
            found += entry_found
            if hook is None:
                continue
            chains[chain].append((i, hook))
            if hook.builtin is not None:
                if hook.builtin in seen:
                    found.append(
                        Finding(
                            (*at, i),
                            f"{dotted((*at, i))}: {hook.builtin} is listed more than once in "
                            f"{chain}; it runs each time",
                            RULE_CHAIN_CONFIG,
                            "warning",
                        )
                    )
                seen.add(hook.builtin)
    defaults = value.get("default_post_validators", True)
    if not isinstance(defaults, bool):
        at = (*base, "default_post_validators")
        found.append(
            Finding(
                at, f"{dotted(at)} must be a boolean, got {type_name(defaults)}", RULE_CHAIN_CONFIG
            )
        )
        defaults = True
    elif defaults:
        for i, hook in chains["post"]:
            if hook.builtin in DEFAULT_POST_HOOKS:
                at = (*base, "post", i)
                found.append(
                    Finding(
                        at,
                        f"{dotted(at)}: {hook.builtin} is also registered by "
                        "default_post_validators; it runs here only, not again after the "
                        "other post hooks",
                        STUDIO_DEFAULT_VALIDATORS,
                        "warning",
                    )
                )
    ordered = errors(found) + warnings(found)
    if errors(found):
        return ordered
    return ChainConfig(
        pre=tuple(hook for _, hook in chains["pre"]),
        post=tuple(hook for _, hook in chains["post"]),
        default_post_validators=defaults,
        warnings=tuple(ordered),
    )
