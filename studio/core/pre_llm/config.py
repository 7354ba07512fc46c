"""The ``pre_llm_hook`` config of an agent document: its rules, which loops it applies to, and its
effective timeout (spec/adf.md §1–§2 and §7).

The hook config and the agent's execution limit are judged apart, as the runtime judges them: a
malformed hook fails every call, while a missing or malformed ``limits.execution_timeout_ms``
fails only the calls the hook applies to (the *runtime errors* of :class:`AgentConfigCheck`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from studio.core.findings import Finding, PathPart, errors
from studio.core.js_text import js_trim
from studio.core.json.values import int_is_finite, is_whole_number, type_name
from studio.core.source_ref import lexical_path_problem, parse_source_ref

Scope = Literal["all", "main", "loops"]
SourceHome = Literal["folder", "adf"]
"""Where a config's sources live: files of a workspace folder, or keys of an ``.adf`` file."""
SCOPES: tuple[Scope, ...] = ("all", "main", "loops")
MAIN = "main"
LOOP_NAME_PATTERN = r"[a-z0-9][a-z0-9_-]{0,31}"
MAX_LOOPS = 64
MIN_TIMEOUT_MS = 1_000
MAX_TIMEOUT_MS = 300_000
LIMIT_MESSAGE = "limits.execution_timeout_ms must be a positive integer"
HOOK_KEY = "pre_llm_hook"
KNOWN_HOOK_KEYS = ("source", "scope", "loops", "include_main", "timeout_ms")

_LOOP_NAME = re.compile(LOOP_NAME_PATTERN)


def loop_name_problem(name: Any) -> str | None:
    """Why ``name`` cannot name an inner loop, or None when it can."""
    if not isinstance(name, str):
        return f"a loop name must be a string, got {type_name(name)}"
    if name == MAIN:
        return "'main' is not an inner loop; target Main instead"
    if _LOOP_NAME.fullmatch(name) is None:
        return (
            f"loop name '{name}' must start with a lowercase letter or digit and hold at most 32 "
            "lowercase letters, digits, '_' or '-'"
        )
    return None


def timeout_problem(value: Any) -> str | None:
    if not is_whole_number(value) or not MIN_TIMEOUT_MS <= value <= MAX_TIMEOUT_MS:
        if not isinstance(value, int | float) or isinstance(value, bool):
            shown = type_name(value)
        elif isinstance(value, int) and not int_is_finite(value):
            shown = "an integer too large for a double (it reads as Infinity)"
        else:
            shown = repr(value)
        return (
            f"timeout_ms must be a whole number of milliseconds from {MIN_TIMEOUT_MS} to "
            f"{MAX_TIMEOUT_MS}, got {shown}"
        )
    return None


def effective_timeout_ms(timeout_ms: int | None, execution_limit_ms: int) -> int:
    """A hook can only shorten the agent's execution limit, and never past 300000 ms."""
    wanted = timeout_ms if timeout_ms is not None else execution_limit_ms
    return min(wanted, execution_limit_ms, MAX_TIMEOUT_MS)


class PreLlmHookConfig(BaseModel):
    """A valid hook config, normalised: source trimmed, scope defaulted, timeout an int."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    source: str
    scope: Scope = "all"
    loops: tuple[str, ...] = ()
    include_main: bool = False
    timeout_ms: int | None = None

    def applies_to(self, loop: str) -> bool:
        """Whether the hook runs on the calls of ``loop`` ("main" or an inner loop name)."""
        if self.scope == "all":
            return True
        if self.scope == "main":
            return loop == MAIN
        if loop == MAIN:
            return self.include_main
        return loop in self.loops

    def effective_timeout_ms(self, execution_limit_ms: int) -> int:
        return effective_timeout_ms(self.timeout_ms, execution_limit_ms)


def validate_hook_config(
    value: Any, base: tuple[PathPart, ...] = (HOOK_KEY,), home: SourceHome = "folder"
) -> list[Finding]:
    """Every finding on a ``pre_llm_hook`` object: errors in the order the runtime checks them
    (source, scope, include_main, loops, timeout_ms), so the first is the one it fails with, then
    warnings. ``home`` says how a source that leaves the workspace folder is judged: an error for a
    folder workspace (the studio's own rule), a warning for an ``.adf`` file (where ADF reads the
    source as a file's key and accepts it)."""
    at = base
    if not isinstance(value, dict):
        return [Finding(at, f"{HOOK_KEY} must be an object, got {type_name(value)}", "adf.config")]
    found: list[Finding] = []
    found.extend(_source_findings(value, (*at, "source"), home))

    scope_given = value.get("scope")
    scope = "all" if scope_given is None else scope_given
    if scope not in SCOPES or not isinstance(scope, str):
        found.append(
            Finding(
                (*at, "scope"),
                f'scope must be "all", "main" or "loops", got {_shown(scope)}',
                "adf.scope",
            )
        )
    elif "scope" in value and scope_given is None:
        found.append(
            Finding(
                (*at, "scope"),
                'scope is null, which the runtime reads as "all"; ADF\'s own editor and '
                'sys_update_config refuse it, so write "all" or leave scope out',
                "adf.scope.null",
                "warning",
            )
        )

    if "include_main" in value:
        include_main = value["include_main"]
        if not isinstance(include_main, bool):
            found.append(
                Finding(
                    (*at, "include_main"),
                    f"include_main must be true or false, got {type_name(include_main)}",
                    "adf.include_main",
                )
            )
        if scope != "loops":
            found.append(
                Finding(
                    (*at, "include_main"),
                    'include_main is only allowed with scope "loops" (even false)',
                    "adf.include_main.scope",
                )
            )

    if scope == "loops":
        found.extend(_loops_findings(value.get("loops"), (*at, "loops"), "loops" in value))
    elif "loops" in value:
        found.append(
            Finding((*at, "loops"), 'loops is only allowed with scope "loops"', "adf.loops.scope")
        )

    if "timeout_ms" in value:
        problem = timeout_problem(value["timeout_ms"])
        if problem:
            found.append(Finding((*at, "timeout_ms"), problem, "adf.timeout"))

    for key in value:
        if key not in KNOWN_HOOK_KEYS:
            found.append(
                Finding(
                    (*at, key),
                    f"'{key}' is not a pre_llm_hook setting; the runtime ignores it",
                    "adf.unknown_key",
                    "warning",
                )
            )
    return _errors_first(found)


def _source_findings(
    hook: dict[str, Any], at: tuple[PathPart, ...], home: SourceHome
) -> list[Finding]:
    source = hook.get("source")
    if not isinstance(source, str) or not js_trim(source):
        got = "an empty string" if isinstance(source, str) else type_name(source)
        if "source" not in hook:
            got = "nothing"
        return [Finding(at, f"source must be a non-empty string, got {got}", "adf.source")]
    problem = lexical_path_problem(parse_source_ref(js_trim(source)).path, bare_drive=False)
    if problem is None:
        return []
    if home == "adf":
        # ADF looks the source up as a key of the agent file's own files, so any text is fine
        # there; only the studio, which runs hooks from a folder, cannot follow it.
        return [
            Finding(
                at,
                f"{problem}: ADF reads it as the name of a file in the agent and accepts it, but "
                "the studio runs a hook only from inside its workspace folder",
                "studio.source.path",
                "warning",
            )
        ]
    return [
        Finding(
            at,
            f"{problem} (a studio rule: it runs a hook only from inside its workspace folder)",
            "studio.source.path",
        )
    ]


def _loops_findings(loops: Any, at: tuple[PathPart, ...], present: bool) -> list[Finding]:
    if not isinstance(loops, list) or not loops:
        got = "nothing" if not present else ("an empty array" if loops == [] else type_name(loops))
        return [Finding(at, f'scope "loops" needs a non-empty loops array, got {got}', "adf.loops")]
    found: list[Finding] = []
    if len(loops) > MAX_LOOPS:
        found.append(
            Finding(
                at,
                f"loops holds {len(loops)} names; at most {MAX_LOOPS} are allowed",
                "adf.loops.max",
            )
        )
    seen: set[str] = set()
    for index, name in enumerate(loops):
        problem = loop_name_problem(name)
        if problem:
            found.append(Finding((*at, index), problem, "adf.loops.name"))
        elif name in seen:
            found.append(
                Finding((*at, index), f"loop '{name}' is listed twice", "adf.loops.duplicate")
            )
        else:
            seen.add(name)
    return found


def _shown(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else type_name(value)


def hook_config_from(value: Mapping[str, Any]) -> PreLlmHookConfig:
    """The typed config of a value that ``validate_hook_config`` found no error in."""
    timeout = value.get("timeout_ms")
    scope = value.get("scope")
    return PreLlmHookConfig(
        source=js_trim(value["source"]),
        scope="all" if scope is None else scope,
        loops=tuple(value.get("loops") or ()),
        include_main=value.get("include_main") is True,
        timeout_ms=int(timeout) if timeout is not None else None,
    )


def execution_limit_ms(document: Mapping[str, Any]) -> int | None:
    """The agent's ``limits.execution_timeout_ms`` as the runtime reads it, or None when it is
    missing or not a positive integer (which fails every hooked call: there is no default)."""
    limits = document.get("limits")
    limit = limits.get("execution_timeout_ms") if isinstance(limits, dict) else None
    if not is_whole_number(limit) or limit <= 0:
        return None
    # A JSON integer too large for a double reads as Infinity, which is not an integer.
    if isinstance(limit, int) and not int_is_finite(limit):
        return None
    return int(limit)


def execution_limit_errors(document: Mapping[str, Any]) -> list[Finding]:
    """What fails every hooked call of this document: its execution limit, judged apart."""
    if execution_limit_ms(document) is not None:
        return []
    return [Finding(("limits", "execution_timeout_ms"), LIMIT_MESSAGE, "adf.limit")]


@dataclass(frozen=True)
class AgentConfigCheck:
    """What an agent config says about its pre-LLM hook.

    ``findings`` judge the hook config as the runtime validates it on every call (``valid``);
    ``runtime_errors`` are what will fail every call the hook applies to (a missing or bad
    execution limit). ``hook`` is set whenever the hook config is valid, so where it applies is
    known even when its calls are bound to fail.
    """

    findings: list[Finding] = field(default_factory=list)
    hook: PreLlmHookConfig | None = None
    runtime_errors: list[Finding] = field(default_factory=list)
    execution_limit_ms: int | None = None

    @property
    def valid(self) -> bool:
        return not errors(self.findings)

    def applies_to(self, loop: str) -> bool:
        return self.hook is not None and self.hook.applies_to(loop)

    @property
    def effective_timeout_ms(self) -> int | None:
        """The time a hooked call gets; None when the limit leaves none (the call fails)."""
        if self.execution_limit_ms is None:
            return None
        if self.hook is None:
            return min(self.execution_limit_ms, MAX_TIMEOUT_MS)
        return self.hook.effective_timeout_ms(self.execution_limit_ms)

    def applies_table(self, loops: Iterable[str]) -> dict[str, bool]:
        table = {MAIN: self.applies_to(MAIN)}
        for loop in loops:
            table[loop] = self.applies_to(loop)
        return table


def check_agent_config(document: Any, home: SourceHome = "folder") -> AgentConfigCheck:
    """Validate an agent config document's hook, and judge its execution limit apart.

    As in the reference runtime, an absent or falsy ``pre_llm_hook`` means no hook; anything
    else is validated whole, so a malformed hook fails even the loops it does not target. The
    limit matters only when there is a hook: it fails the calls the hook applies to.
    """
    if not isinstance(document, dict):
        return AgentConfigCheck(
            [
                Finding(
                    (),
                    f"an agent config must be a JSON object, got {type_name(document)}",
                    "adf.document",
                )
            ]
        )
    found: list[Finding] = []
    raw_hook = document.get(HOOK_KEY)
    hook_present = HOOK_KEY in document and not _is_js_falsy(raw_hook)
    if hook_present:
        found = validate_hook_config(raw_hook, home=home)
    elif HOOK_KEY in document:
        found.append(
            Finding(
                (HOOK_KEY,),
                f"{HOOK_KEY} is {_shown(raw_hook)}; the runtime treats that as no hook",
                "adf.no_hook",
                "warning",
            )
        )
    runtime = execution_limit_errors(document) if hook_present else []
    limit = execution_limit_ms(document)
    if errors(found):
        return AgentConfigCheck(found, None, runtime, limit)
    hook = None
    if hook_present:
        assert isinstance(raw_hook, dict)  # validate_hook_config finds anything else an error
        hook = hook_config_from(raw_hook)
    return AgentConfigCheck(found, hook, runtime, limit)


def _is_js_falsy(value: Any) -> bool:
    if value is None or value is False or value == "":
        return True
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value == 0 or value != value
    return False


def _errors_first(found: list[Finding]) -> list[Finding]:
    return errors(found) + [f for f in found if f.severity == "warning"]
