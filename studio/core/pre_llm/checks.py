"""``hook-studio check-config`` and ``check-request``: the pre-LLM rules, headless."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from studio.core.contract import CheckUsageError, HeadlessCheck
from studio.core.findings import errors, warnings
from studio.core.pre_llm.config import SourceHome, check_agent_config, loop_name_problem
from studio.core.pre_llm.request import presented_not_enabled, validate_request


def _config_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="an agent config document (JSON)")
    p.add_argument(
        "--loop",
        action="append",
        default=[],
        metavar="NAME",
        help="also report whether the hook applies to this inner loop (repeatable)",
    )
    p.add_argument(
        "--adf",
        action="store_true",
        help="judge sources as an .adf file's keys (implied for an .adf FILE; for configs taken "
        "out of .adf files, as with --batch)",
    )


def _check_config(
    args: argparse.Namespace, read: Callable[[str], Any]
) -> tuple[dict[str, Any], bool]:
    """``valid`` and ``errors`` judge the hook config as the runtime validates it on every call;
    ``runtime_errors`` say what will fail every call it applies to. ``applies`` is given whenever
    the hook config is valid, and so is ``effective_timeout_ms`` (null when the limit leaves the
    hooked calls none). The answer is ok only when neither list holds an error."""
    for loop in args.loop:
        problem = loop_name_problem(loop)
        if problem and loop != "main":
            raise CheckUsageError(f"--loop {loop!r}: {problem}")
    # Sources in an .adf are keys of the agent file, not paths of a folder.
    home: SourceHome = "adf" if args.adf or str(args.file).endswith(".adf") else "folder"
    check = check_agent_config(read(args.file), home)
    result: dict[str, Any] = {
        "valid": check.valid,
        "errors": [f.to_json() for f in errors(check.findings)],
        "warnings": [f.to_json() for f in warnings(check.findings)],
        "runtime_errors": [f.to_json() for f in check.runtime_errors],
    }
    if check.valid:
        result["applies"] = check.applies_table(dict.fromkeys(args.loop))
        result["effective_timeout_ms"] = check.effective_timeout_ms
    return result, check.valid and not check.runtime_errors


def _request_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="what a pre-LLM hook returned (JSON)")
    p.add_argument(
        "--input",
        metavar="FILE",
        help="the request the hook received, to warn about tools presented but not enabled",
    )


def _check_request(
    args: argparse.Namespace, read: Callable[[str], Any]
) -> tuple[dict[str, Any], bool]:
    returned = read(args.file)
    found = errors(validate_request(returned))
    result: dict[str, Any] = {"valid": not found, "errors": [f.to_json() for f in found]}
    if args.input is not None:
        original = read(args.input)
        tools = original.get("tools") if isinstance(original, dict) else None
        result["warnings"] = [f.to_json() for f in presented_not_enabled(tools, returned)]
    return result, not found


CHECKS = (
    HeadlessCheck(
        "check-config", "validate an agent config's pre_llm_hook", _config_arguments, _check_config
    ),
    HeadlessCheck(
        "check-request",
        "validate what a pre-LLM hook returned",
        _request_arguments,
        _check_request,
    ),
)
