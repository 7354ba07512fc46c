"""The ``pre_llm_hook`` config of an agent document: its rules, which loops it applies to, and its
effective timeout (spec/adf.md §1–§2)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from studio.core.findings import Finding, PathPart, errors
from studio.core.js_text import js_trim
from studio.core.json.values import is_whole_number, type_name
from studio.core.source_ref import lexical_path_problem, parse_source_ref

Scope = Literal["all", "main", "loops"]
SCOPES: tuple[Scope, ...] = ("all", "main", "loops")
MAIN = "main"
LOOP_NAME_PATTERN = r"[a-z0-9][a-z0-9_-]{0,31}"
MAX_LOOPS = 64
MIN_TIMEOUT_MS = 1_000
MAX_TIMEOUT_MS = 300_000
DEFAULT_EXECUTION_TIMEOUT_MS = 60_000
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
        shown = (
            type_name(value)
            if not isinstance(value, int | float) or isinstance(value, bool)
            else repr(value)
        )
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

    model_config = ConfigDict(frozen=True)

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

    def effective_timeout_ms(self, execution_limit_ms: int = DEFAULT_EXECUTION_TIMEOUT_MS) -> int:
        return effective_timeout_ms(self.timeout_ms, execution_limit_ms)


def validate_hook_config(value: Any, base: tuple[PathPart, ...] = (HOOK_KEY,)) -> list[Finding]:
    """Every finding on a ``pre_llm_hook`` object, errors in the runtime's order, then warnings."""
    at = base
    if not isinstance(value, dict):
        return [Finding(at, f"{HOOK_KEY} must be an object, got {type_name(value)}", "adf.config")]
    found: list[Finding] = []

    source = value.get("source")
    if not isinstance(source, str) or not js_trim(source):
        got = "an empty string" if isinstance(source, str) else type_name(source)
        if "source" not in value:
            got = "nothing"
        found.append(
            Finding((*at, "source"), f"source must be a non-empty string, got {got}", "adf.source")
        )
    else:
        problem = lexical_path_problem(parse_source_ref(js_trim(source)).path)
        if problem:
            found.append(Finding((*at, "source"), problem, "adf.source.path"))

    scope = value.get("scope", "all")
    if scope not in SCOPES or not isinstance(scope, str):
        found.append(
            Finding(
                (*at, "scope"),
                f'scope must be "all", "main" or "loops", got {_shown(scope)}',
                "adf.scope",
            )
        )

    if scope == "loops":
        found.extend(_loops_findings(value.get("loops"), (*at, "loops"), "loops" in value))
    elif "loops" in value:
        found.append(
            Finding((*at, "loops"), 'loops is only allowed with scope "loops"', "adf.loops.scope")
        )

    if "include_main" in value:
        include_main = value["include_main"]
        if scope != "loops":
            found.append(
                Finding(
                    (*at, "include_main"),
                    'include_main is only allowed with scope "loops" (even false)',
                    "adf.include_main.scope",
                )
            )
        elif not isinstance(include_main, bool):
            found.append(
                Finding(
                    (*at, "include_main"),
                    f"include_main must be true or false, got {type_name(include_main)}",
                    "adf.include_main",
                )
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
    return found


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
    return PreLlmHookConfig(
        source=js_trim(value["source"]),
        scope=value.get("scope", "all"),
        loops=tuple(value.get("loops") or ()),
        include_main=value.get("include_main") is True,
        timeout_ms=int(timeout) if timeout is not None else None,
    )


def validate_execution_limit(document: Mapping[str, Any]) -> list[Finding]:
    if "limits" not in document:
        return []
    limits = document["limits"]
    if not isinstance(limits, dict):
        return [
            Finding(("limits",), f"limits must be an object, got {type_name(limits)}", "adf.limits")
        ]
    if "execution_timeout_ms" not in limits:
        return []
    limit = limits["execution_timeout_ms"]
    if not is_whole_number(limit) or limit <= 0:
        return [
            Finding(
                ("limits", "execution_timeout_ms"),
                "limits.execution_timeout_ms must be a positive whole number, "
                f"got {_number_shown(limit)}",
                "adf.limit",
            )
        ]
    return []


def _number_shown(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return type_name(value)


def execution_limit_ms(document: Mapping[str, Any]) -> int:
    """The agent's ``limits.execution_timeout_ms``, or the runtime default when absent."""
    limits = document.get("limits")
    if isinstance(limits, dict) and "execution_timeout_ms" in limits:
        return int(limits["execution_timeout_ms"])
    return DEFAULT_EXECUTION_TIMEOUT_MS


@dataclass(frozen=True)
class AgentConfigCheck:
    """What an agent config says about its pre-LLM hook, with every finding."""

    findings: list[Finding] = field(default_factory=list)
    hook: PreLlmHookConfig | None = None
    execution_limit_ms: int = DEFAULT_EXECUTION_TIMEOUT_MS

    @property
    def valid(self) -> bool:
        return not errors(self.findings)

    def applies_to(self, loop: str) -> bool:
        return self.hook is not None and self.hook.applies_to(loop)

    @property
    def effective_timeout_ms(self) -> int:
        if self.hook is None:
            return min(self.execution_limit_ms, MAX_TIMEOUT_MS)
        return self.hook.effective_timeout_ms(self.execution_limit_ms)

    def applies_table(self, loops: Iterable[str]) -> dict[str, bool]:
        table = {MAIN: self.applies_to(MAIN)}
        for loop in loops:
            table[loop] = self.applies_to(loop)
        return table


def check_agent_config(document: Any) -> AgentConfigCheck:
    """Validate an agent config document's hook and limit.

    As in the reference runtime, an absent or falsy ``pre_llm_hook`` means no hook; anything
    else is validated whole, so a malformed hook fails even the loops it does not target.
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
    found = validate_execution_limit(document)
    raw_hook = document.get(HOOK_KEY)
    hook_present = HOOK_KEY in document and not _is_js_falsy(raw_hook)
    if hook_present:
        found = validate_hook_config(raw_hook) + found
    elif HOOK_KEY in document:
        found.append(
            Finding(
                (HOOK_KEY,),
                f"{HOOK_KEY} is {_shown(raw_hook)}; the runtime treats that as no hook",
                "adf.no_hook",
                "warning",
            )
        )
    if errors(found):
        return AgentConfigCheck(_errors_first(found))
    hook = None
    if hook_present:
        assert isinstance(raw_hook, dict)  # validate_hook_config finds anything else an error
        hook = hook_config_from(raw_hook)
    return AgentConfigCheck(_errors_first(found), hook, execution_limit_ms(document))


def _is_js_falsy(value: Any) -> bool:
    if value is None or value is False or value == "":
        return True
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value == 0 or value != value
    return False


def _errors_first(found: list[Finding]) -> list[Finding]:
    return errors(found) + [f for f in found if f.severity == "warning"]
