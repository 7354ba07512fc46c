"""Save as test: a finished run turned into expectations, and written into its sample file.

The expectations say what the run gave: its outcome (or turn error kind), each top-level part of
its result, the tools it removed and kept, and its decision record, leaving out what differs
from run to run (ids made for each run, durations). The file keeps every other byte: only the
``expect`` value is replaced (or added before the closing brace), and the write is atomic.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

from studio.core.contract import Contract
from studio.core.expectations.json_match import json_equal
from studio.core.expectations.model import EXPECT_KEY
from studio.core.expectations.targets import FUTURE_LOOP, workspace_targets
from studio.core.file_reads import read_bytes
from studio.core.json.files import JsonFileError, parse_json_text
from studio.core.json.locate import locate
from studio.core.pre_llm.config import MAIN
from studio.core.run_outcome import RunOutcome
from studio.core.workspace.atomic_write import write_atomically
from studio.core.workspace.folder import Workspace, WorkspaceFileError

VOLATILE_KEYS: Final = frozenset({"sealedRequestId", "durationMs", "duration_ms"})
"""Decision and result fields that change on every run, so no test can expect them."""


class SaveAsTestError(ValueError):
    """The sample file cannot take the expectations (unreadable, not an object, or its
    ``expect`` is not a list); nothing was written."""


def _volatile(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k in VOLATILE_KEYS or _volatile(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_volatile(v) for v in value)
    return False


def expectation_from_outcome(
    outcome: RunOutcome, contract: Contract | None, target: str | None
) -> dict[str, Any]:
    """The expectations that ``outcome`` meets, for ``target`` (None: every target)."""
    block: dict[str, Any] = {}
    if target is not None:
        block["targets"] = [target]
    if outcome.turn_error is not None:
        block["turn_error"] = outcome.turn_error.kind
    else:
        block["outcome"] = outcome.status
    result = outcome.result
    if outcome.status == "ok" and isinstance(result, dict):
        block["result"] = [
            {"path": "/" + key.replace("~", "~0").replace("/", "~1"), "equals": value}
            for key, value in result.items()
            if key not in VOLATILE_KEYS and not _volatile(value)
        ]
    names = contract.tool_names(outcome) if contract and outcome.status == "ok" else None
    if names is not None:
        before, after = names
        block["tools"] = {
            "removed": [n for n in before if n not in after],
            "kept": [n for n in before if n in after],
        }
    decision = {
        key: value
        for key, value in outcome.decision_record.items()
        if key not in VOLATILE_KEYS and not _volatile(value)
    }
    if decision:
        block["decision"] = decision
    return block


def merged_expectations(
    current: Any, block: dict[str, Any], target: str | None, all_targets: list[str]
) -> list[Any]:
    """``current`` (the sample's ``expect``) with ``block`` in place of what it said about
    ``target``: that target leaves every other block (a block left with no target goes), and
    ``block`` is added. With ``target`` None (a sample that runs once) ``block`` replaces all."""
    if current is None or target is None:
        return [block]
    if not isinstance(current, list):
        raise SaveAsTestError("its expect is not a list of expectations; fix that first")
    kept: list[Any] = []
    for old in current:
        if not isinstance(old, dict):
            kept.append(old)
            continue
        targets = old.get("targets", all_targets)
        if not isinstance(targets, list) or target not in targets:
            kept.append(old)
            continue
        rest = [t for t in targets if t != target]
        if rest:
            kept.append({**old, "targets": rest})
    return [*kept, block]


def save_as_test(
    path: Path,
    outcome: RunOutcome,
    contract: Contract | None,
    target: str | None,
    all_targets: list[str],
) -> dict[str, Any]:
    """Write the expectations of ``outcome`` into the sample file at ``path``; returns the new
    block. Raises :class:`SaveAsTestError` when the file cannot take them."""
    try:
        data = read_bytes(path)
    except OSError as exc:
        raise SaveAsTestError(f"{path.name} cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SaveAsTestError(f"{path.name} is not UTF-8 text") from None
    bom = data.startswith(b"\xef\xbb\xbf")
    crlf = "\r\n" in text
    text = text.replace("\r\n", "\n")
    try:
        document = parse_json_text(text, path.name)
    except JsonFileError as exc:
        raise SaveAsTestError(str(exc)) from None
    if not isinstance(document, dict):
        raise SaveAsTestError(f"{path.name} is not a JSON object")
    block = expectation_from_outcome(outcome, contract, target)
    expect = merged_expectations(document.get(EXPECT_KEY), block, target, all_targets)
    new_text = with_expect(text, document, expect)
    wanted = {**document, EXPECT_KEY: expect}
    if not json_equal(parse_json_text(new_text, path.name), wanted):
        raise SaveAsTestError(f"{path.name}: the edit would change more than expect; not saved")
    if crlf:
        new_text = new_text.replace("\n", "\r\n")
    write_atomically(path, (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8"))
    return block


_INDENT = re.compile(r'\n([ \t]+)"')


def with_expect(text: str, document: dict[str, Any], expect: list[Any]) -> str:
    """``text`` with its ``expect`` member set to ``expect``, every other byte as it was."""
    step = m.group(1) if (m := _INDENT.search(text)) else "  "
    value = json.dumps(expect, indent=step, ensure_ascii=False)
    value = value.replace("\n", "\n" + step)
    if EXPECT_KEY in document:
        place = locate(text, (EXPECT_KEY,))
        if place.exact:
            return text[: place.start] + value + text[place.end :]
    root = locate(text, ())
    close = text.rindex("}", root.start, root.end)
    body_end = len(text[:close].rstrip())
    empty = text[body_end - 1] == "{"
    member = ("" if empty else ",") + f"\n{step}{json.dumps(EXPECT_KEY)}: {value}\n"
    return text[:body_end] + member + text[close:]


UNSAVABLE_KINDS: Final = frozenset({"cancelled", "engine_failed", "sample_invalid"})
"""Runs that say nothing about the hook, so no test is made of them."""


def save_runs_as_tests(workspace: Workspace, outcomes: list[RunOutcome]) -> list[str]:
    """Each run's expectations written into its sample file, for its target; the sample files
    written. Raises :class:`SaveAsTestError` (before writing anything) when one cannot be."""
    from studio.core.registry import CONTRACTS

    try:
        declared = list(workspace.settings().loops)
    except WorkspaceFileError as exc:
        raise SaveAsTestError(str(exc)) from None
    plans = []
    for outcome in outcomes:
        kind = outcome.turn_error.kind if outcome.turn_error else None
        if kind in UNSAVABLE_KINDS:
            raise SaveAsTestError(f"a run that ended {kind} says nothing about the hook to test")
        if outcome.sample is None:
            raise SaveAsTestError("this run has no sample to save a test into")
        try:
            path = workspace.sample(outcome.sample).path
        except WorkspaceFileError as exc:
            raise SaveAsTestError(str(exc)) from None
        contract = CONTRACTS.get(outcome.contract)
        per_loop = contract is not None and contract.runs_per_loop
        targets = workspace_targets(declared) if per_loop else [MAIN]
        target = (outcome.loop or MAIN) if per_loop else None
        if target is not None and target not in targets:
            raise SaveAsTestError(
                f"the loop '{target}' is not a target of this workspace ({', '.join(targets)}): "
                f"declare it in hookstudio.json, or run on {FUTURE_LOOP} for a loop declared later"
            )
        plans.append((path, outcome, contract, target, targets))
    written = []
    for path, outcome, contract, target, targets in plans:
        save_as_test(path, outcome, contract, target, targets)
        written.append(f"samples/{path.name}")
    return list(dict.fromkeys(written))
