"""The ``adf`` object of a TypeScript or JavaScript pre-LLM hook (spec/js-runtime.md §2): what the
Node host needs to gate and answer its calls, read from the agent config, the sample's declared
replies and the studio's authorization setting.

The host (``studio/engine/node/adf_calls.mjs``) applies the rules; this module only gathers their
inputs and reports any that are malformed as findings at their exact paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.core.findings import Finding
from studio.core.json.values import type_name
from studio.core.run_outcome import CallError, HostCall
from studio.core.source_ref import SourceRef

DEFAULT_RESTRICTED_METHODS = ("attestation_issue",)
CONFIG_RULE = "adf.host_api"
SAMPLE_RULE = "workspace.sample"
SETTINGS_RULE = "studio.settings"
REPLY_KEYS = ("args", "result", "error")


def tool_gates(document: dict[str, Any]) -> tuple[dict[str, dict[str, bool]], list[Finding]]:
    """The agent's declared tools by name (``enabled``, ``restricted``, each false unless set),
    and the findings on a ``tools`` entry that is not a list of ``{name, enabled, restricted}``."""
    raw = document.get("tools")
    tools: dict[str, dict[str, bool]] = {}
    found: list[Finding] = []
    if raw is None:
        return tools, found
    if not isinstance(raw, list):
        found.append(
            Finding(
                ("tools",),
                "tools must be a list of {name, enabled, restricted} objects, "
                f"got {type_name(raw)}",
                CONFIG_RULE,
            )
        )
        return tools, found
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            found.append(
                Finding(
                    ("tools", i),
                    "a tool must be a {name, enabled, restricted} object, "
                    f"got {type_name(entry)}",
                    CONFIG_RULE,
                )
            )
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            found.append(
                Finding(("tools", i, "name"), "a tool needs a non-empty name", CONFIG_RULE)
            )
            continue
        flags: dict[str, bool] = {}
        for flag in ("enabled", "restricted"):
            value = entry.get(flag, False)
            if not isinstance(value, bool):
                found.append(
                    Finding(
                        ("tools", i, flag),
                        f"{flag} must be true or false, got {type_name(value)}",
                        CONFIG_RULE,
                    )
                )
            flags[flag] = value is True
        tools[name] = flags
    return tools, found


def code_execution_gates(
    document: dict[str, Any],
) -> tuple[dict[str, bool], list[str], list[Finding]]:
    """The ``code_execution`` switches as written (the host applies the defaults) and the
    restricted methods, with findings on values of the wrong type."""
    raw = document.get("code_execution")
    found: list[Finding] = []
    if raw is None:
        return {}, list(DEFAULT_RESTRICTED_METHODS), found
    if not isinstance(raw, dict):
        found.append(
            Finding(
                ("code_execution",),
                f"code_execution must be an object, got {type_name(raw)}",
                CONFIG_RULE,
            )
        )
        return {}, list(DEFAULT_RESTRICTED_METHODS), found
    switches: dict[str, bool] = {}
    restricted = list(DEFAULT_RESTRICTED_METHODS)
    for key, value in raw.items():
        if key == "restricted_methods":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                restricted = list(value)
            else:
                found.append(
                    Finding(
                        ("code_execution", key),
                        "restricted_methods must be a list of method names",
                        CONFIG_RULE,
                    )
                )
        elif isinstance(value, bool):
            switches[key] = value
    return switches, restricted, found


def reply_findings(value: Any) -> list[Finding]:
    """Findings on a sample's ``adf`` object: ``{"replies": {method: reply | [reply, ...]}}``,
    a reply being ``{"args"?, "result"}`` or ``{"args"?, "error": {"code", "message"}}``."""
    if not isinstance(value, dict):
        return [Finding(("adf",), f"adf must be an object, got {type_name(value)}", SAMPLE_RULE)]
    found = [
        Finding(
            ("adf", key),
            f"'{key}' is not a field of adf (replies); it is ignored",
            SAMPLE_RULE,
            "warning",
        )
        for key in value
        if key != "replies"
    ]
    replies = value.get("replies", {})
    if not isinstance(replies, dict):
        found.append(
            Finding(
                ("adf", "replies"),
                f"replies must be an object of method names, got {type_name(replies)}",
                SAMPLE_RULE,
            )
        )
        return found
    for method, declared in replies.items():
        if isinstance(declared, list):
            for i, reply in enumerate(declared):
                found += _reply_findings(reply, ("adf", "replies", method, i))
        else:
            found += _reply_findings(declared, ("adf", "replies", method))
    return found


def _reply_findings(reply: Any, path: tuple[str | int, ...]) -> list[Finding]:
    if not isinstance(reply, dict):
        return [
            Finding(
                path,
                'a reply must be an object: {"result": ...} or {"error": {"code", "message"}}, '
                f"got {type_name(reply)}",
                SAMPLE_RULE,
            )
        ]
    found = [
        Finding(
            (*path, key),
            f"'{key}' is not a field of a reply ({', '.join(REPLY_KEYS)})",
            SAMPLE_RULE,
        )
        for key in reply
        if key not in REPLY_KEYS
    ]
    has_result, has_error = "result" in reply, "error" in reply
    if has_result == has_error:
        found.append(
            Finding(path, 'a reply needs exactly one of "result" and "error"', SAMPLE_RULE)
        )
    if has_error:
        error = reply["error"]
        if not isinstance(error, dict):
            found.append(
                Finding((*path, "error"), 'error must be {"code", "message"}', SAMPLE_RULE)
            )
        else:
            for key in ("code", "message"):
                if not isinstance(error.get(key), str) or not error.get(key):
                    found.append(
                        Finding(
                            (*path, "error", key),
                            f"error.{key} must be a non-empty string",
                            SAMPLE_RULE,
                        )
                    )
    return found


@dataclass(frozen=True)
class AdfSettings:
    """The studio's ``adf`` section of ``hookstudio.json``: which source files run as
    authorized code (ADF keeps that flag per file; a folder workspace has no place for it)."""

    authorized: tuple[str, ...] = ()


def parse_adf_settings(value: Any) -> AdfSettings | list[Finding]:
    if not isinstance(value, dict):
        return [Finding((), f"adf must be an object, got {type_name(value)}", SETTINGS_RULE)]
    found = [
        Finding((key,), f"'{key}' is not a field of adf (authorized)", SETTINGS_RULE)
        for key in value
        if key != "authorized"
    ]
    authorized = value.get("authorized", [])
    if not isinstance(authorized, list):
        found.append(
            Finding(
                ("authorized",), "authorized must be a list of source file paths", SETTINGS_RULE
            )
        )
    else:
        found += [
            Finding(
                ("authorized", i), "each authorized entry must be a source file path", SETTINGS_RULE
            )
            for i, path in enumerate(authorized)
            if not isinstance(path, str) or not path
        ]
    if found:
        return found
    return AdfSettings(authorized=tuple(authorized))


def adf_settings_schema() -> dict[str, Any]:
    return {
        "description": "the ADF host API of TypeScript and JavaScript pre-LLM hooks",
        "type": "object",
        "default": None,
        "additionalProperties": False,
        "properties": {
            "authorized": {
                "description": "source files (paths in the workspace) that run as authorized code",
                "type": "array",
                "items": {"type": "string", "minLength": 1},
            }
        },
    }


def host_options(
    document: dict[str, Any],
    replies: dict[str, Any],
    settings: AdfSettings | None,
    ref: SourceRef,
) -> tuple[dict[str, Any], list[Finding]]:
    """The ``adf`` field of a hook call's options, or the config findings that stop the run."""
    tools, tool_found = tool_gates(document)
    switches, restricted, switch_found = code_execution_gates(document)
    authorized = list(settings.authorized if settings else ())
    source = f"{ref.path}:{ref.function}"
    options = {
        "tools": tools,
        "code_execution": switches,
        "restricted_methods": restricted,
        "authorized": ref.path in authorized,
        "authorized_sources": authorized,
        "replies": replies,
        "source": source,
        "chain": [source],
        "depth": 0,
        # A Python callee keeps the Python runtime's own gate (true only when written so).
        "python_sys_lambda": switches.get("sys_lambda") is True,
    }
    return options, tool_found + switch_found


def calls_from_log(logged: Any) -> list[HostCall]:
    """A runtime's log of a hook's ``adf.*`` calls (the Node host's, or a Python worker's
    ``sys_lambda`` calls) as :class:`HostCall` records; an entry that is not one is skipped."""
    calls: list[HostCall] = []
    for entry in logged if isinstance(logged, list) else []:
        if isinstance(entry, HostCall):
            calls.append(entry)
            continue
        if not isinstance(entry, dict):
            continue
        error = entry.get("error")
        calls.append(
            HostCall(
                method=str(entry.get("method", "")),
                args=entry.get("args"),
                gate=str(entry.get("gate") or "allowed"),
                answered_by=entry.get("answered_by"),
                reply=entry.get("reply"),
                error=CallError(code=str(error.get("code")), message=str(error.get("message")))
                if isinstance(error, dict)
                else None,
                output=str(entry.get("output") or ""),
                depth=int(entry.get("depth") or 0),
                duration_ms=float(entry.get("duration_ms") or 0.0),
            )
        )
    return calls
