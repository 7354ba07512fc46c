"""The expectations of a sample: the ``"expect"`` key of a sample file, a list of blocks.

::

    "expect": [
      {"targets": ["main", "researcher"],          (optional: every target the sample runs on)
       "outcome": "ok",                            ("ok", "not_applied" or "turn_error")
       "turn_error": "invalid_result",             (a turn error kind; implies "turn_error")
       "result": [{"path": "/system", "contains": "policy"},
                  {"path": "/tools/2", "absent": true},
                  {"path": "/options/maxTokens", "equals": 1024}],
       "tools": {"removed": ["shell"], "kept": ["fs_read"]},
       "decision": {"applied": true, "/tools/removed": ["shell"]}}
    ]

A run on a target is judged by every block that names the target. ``decision`` keys are fields
of the decision record, or JSON pointers into it. Every problem is a finding at its path in the
sample, so the sample editor marks it and ``hook-studio test`` reports it against the sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from studio.core.findings import Finding, PathPart
from studio.core.json.values import type_name
from studio.core.pre_llm.config import MAIN, loop_name_problem
from studio.core.turn_error import KIND_REASONS

EXPECT_KEY: Final = "expect"
RULE: Final = "studio.expect"
BLOCK_KEYS: Final = ("targets", "outcome", "turn_error", "result", "tools", "decision")
OUTCOMES: Final = ("ok", "not_applied", "turn_error")
MATCHES: Final = ("equals", "contains", "absent")
TOOL_KEYS: Final = ("removed", "kept")

Match = Literal["equals", "contains", "absent"]


@dataclass(frozen=True)
class ResultAssertion:
    """``path`` (a JSON pointer into the result) equals, contains, or is absent."""

    at: tuple[PathPart, ...]
    """Where the assertion is in the sample."""
    path: str
    match: Match
    value: Any = None


@dataclass(frozen=True)
class DecisionField:
    at: tuple[PathPart, ...]
    key: str
    """A field of the decision record, or a JSON pointer into it (starting with ``/``)."""
    value: Any

    @property
    def pointer(self) -> str:
        return (
            self.key
            if self.key.startswith("/")
            else "/" + self.key.replace("~", "~0").replace("/", "~1")
        )


@dataclass(frozen=True)
class Expectation:
    """One block of ``expect``; ``targets`` None means every target the sample runs on."""

    index: int
    targets: tuple[str, ...] | None = None
    outcome: str | None = None
    turn_error: str | None = None
    """A turn error kind; it implies the outcome ``turn_error``."""
    result: tuple[ResultAssertion, ...] = ()
    removed: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    decision: tuple[DecisionField, ...] = ()

    @property
    def at(self) -> tuple[PathPart, ...]:
        return (EXPECT_KEY, self.index)

    def names(self, target: str) -> bool:
        return self.targets is None or target in self.targets


def _finding(at: tuple[PathPart, ...], message: str, severity: str = "error") -> Finding:
    return Finding(at, message, RULE, "warning" if severity == "warning" else "error")


def has_expectations(document: Any) -> bool:
    return isinstance(document, dict) and EXPECT_KEY in document


def parse_expectations(document: Any) -> tuple[list[Expectation], list[Finding]]:
    """The sample's expectations and every finding on them (errors first); no expectations and
    no findings when the sample has no ``expect`` key."""
    if not isinstance(document, dict) or EXPECT_KEY not in document:
        return [], []
    raw = document[EXPECT_KEY]
    at: tuple[PathPart, ...] = (EXPECT_KEY,)
    if not isinstance(raw, list):
        return [], [_finding(at, f"expect must be an array of expectations, got {type_name(raw)}")]
    found: list[Finding] = []
    blocks = []
    for index, block in enumerate(raw):
        parsed = _block(index, block, found)
        if parsed is not None:
            blocks.append(parsed)
    if not raw:
        found.append(_finding(at, "expect is empty: this sample tests nothing", "warning"))
    ordered = [f for f in found if f.severity == "error"] + [
        f for f in found if f.severity != "error"
    ]
    return blocks, ordered


def _block(index: int, block: Any, found: list[Finding]) -> Expectation | None:
    at: tuple[PathPart, ...] = (EXPECT_KEY, index)
    if not isinstance(block, dict):
        found.append(_finding(at, f"expect[{index}] must be an object, got {type_name(block)}"))
        return None
    before = len(found)
    for key in block:
        if key not in BLOCK_KEYS:
            found.append(
                _finding(
                    (*at, key),
                    f"expect[{index}] has key '{key}' that an expectation does not define "
                    f"({', '.join(BLOCK_KEYS)})",
                )
            )
    targets = _targets(block, at, found)
    outcome = block.get("outcome")
    if "outcome" in block and outcome not in OUTCOMES:
        found.append(
            _finding(
                (*at, "outcome"),
                f"outcome must be one of {', '.join(OUTCOMES)}, got {_text(outcome)}",
            )
        )
    kind = block.get("turn_error")
    if "turn_error" in block:
        if kind not in KIND_REASONS:
            found.append(
                _finding(
                    (*at, "turn_error"),
                    f"turn_error must be a turn error kind ({', '.join(KIND_REASONS)}), "
                    f"got {_text(kind)}",
                )
            )
        elif outcome is not None and outcome != "turn_error":
            found.append(
                _finding(
                    (*at, "turn_error"),
                    f'a turn_error kind expects the outcome "turn_error", not {_text(outcome)}',
                )
            )
    result = _result(block, at, found)
    removed, kept = _tools(block, at, found)
    decision = _decision(block, at, found)
    if not any(key in block for key in BLOCK_KEYS if key != "targets"):
        found.append(_finding(at, f"expect[{index}] expects nothing", "warning"))
    if any(f.severity == "error" for f in found[before:]):
        return None
    return Expectation(
        index=index,
        targets=targets,
        outcome=outcome,
        turn_error=kind,
        result=result,
        removed=removed,
        kept=kept,
        decision=decision,
    )


def _targets(
    block: dict[str, Any], at: tuple[PathPart, ...], found: list[Finding]
) -> tuple[str, ...] | None:
    if "targets" not in block:
        return None
    raw = block["targets"]
    where = (*at, "targets")
    if not isinstance(raw, list):
        found.append(_finding(where, f"targets must be an array of names, got {type_name(raw)}"))
        return None
    if not raw:
        found.append(
            _finding(
                where, "targets is empty; leave it out to test every target the sample runs on"
            )
        )
    names: list[str] = []
    for i, name in enumerate(raw):
        problem = None if name == MAIN else loop_name_problem(name)
        if problem:
            found.append(_finding((*where, i), f'a target is "main" or a loop name: {problem}'))
        elif name in names:
            found.append(_finding((*where, i), f"target '{name}' is named twice", "warning"))
        else:
            names.append(name)
    return tuple(names)


def _result(
    block: dict[str, Any], at: tuple[PathPart, ...], found: list[Finding]
) -> tuple[ResultAssertion, ...]:
    if "result" not in block:
        return ()
    raw = block["result"]
    where = (*at, "result")
    if not isinstance(raw, list):
        found.append(
            _finding(where, f"result must be an array of assertions, got {type_name(raw)}")
        )
        return ()
    assertions = []
    for i, item in enumerate(raw):
        here = (*where, i)
        if not isinstance(item, dict):
            found.append(
                _finding(
                    here,
                    f'an assertion is {{"path", and one of {", ".join(MATCHES)}}}, '
                    f"got {type_name(item)}",
                )
            )
            continue
        extra = [k for k in item if k != "path" and k not in MATCHES]
        for key in extra:
            found.append(
                _finding(
                    (*here, key),
                    f"'{key}' is not part of an assertion (path, {', '.join(MATCHES)})",
                )
            )
        path = item.get("path")
        if not isinstance(path, str) or (path and not path.startswith("/")):
            found.append(
                _finding(
                    (*here, "path"),
                    'path must be a JSON pointer into the result ("" for all of it, or starting '
                    f"with /), got {_text(path)}",
                )
            )
        matches = [k for k in MATCHES if k in item]
        if len(matches) != 1:
            found.append(
                _finding(
                    here,
                    f"an assertion has exactly one of {', '.join(MATCHES)}"
                    + (f", not {' and '.join(matches)}" if matches else ""),
                )
            )
            continue
        match = cast(Match, matches[0])
        if match == "absent" and item["absent"] is not True:
            found.append(_finding((*here, "absent"), 'absent takes true: "absent": true'))
            continue
        if extra or not isinstance(path, str) or (path and not path.startswith("/")):
            continue
        assertions.append(ResultAssertion(here, path, match, item.get(match)))
    return tuple(assertions)


def _tools(
    block: dict[str, Any], at: tuple[PathPart, ...], found: list[Finding]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if "tools" not in block:
        return (), ()
    raw = block["tools"]
    where = (*at, "tools")
    if not isinstance(raw, dict):
        found.append(
            _finding(
                where, f'tools must be {{"removed": [...], "kept": [...]}}, got {type_name(raw)}'
            )
        )
        return (), ()
    lists: dict[str, tuple[str, ...]] = {}
    for key in raw:
        if key not in TOOL_KEYS:
            found.append(_finding((*where, key), f"tools has only removed and kept, not '{key}'"))
    for key in TOOL_KEYS:
        names = raw.get(key, [])
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            found.append(_finding((*where, key), f"tools.{key} must be an array of tool names"))
            names = []
        lists[key] = tuple(names)
    both = set(lists["removed"]) & set(lists["kept"])
    if both:
        found.append(
            _finding(where, f"a tool cannot be both removed and kept: {', '.join(sorted(both))}")
        )
    return lists["removed"], lists["kept"]


def _decision(
    block: dict[str, Any], at: tuple[PathPart, ...], found: list[Finding]
) -> tuple[DecisionField, ...]:
    if "decision" not in block:
        return ()
    raw = block["decision"]
    where = (*at, "decision")
    if not isinstance(raw, dict):
        found.append(
            _finding(
                where,
                "decision must be an object of decision record fields (or /pointers) and their "
                f"values, got {type_name(raw)}",
            )
        )
        return ()
    fields = []
    for key, value in raw.items():
        if not key:
            found.append(_finding((*where, key), "a decision field needs a name"))
            continue
        fields.append(DecisionField((*where, key), key, value))
    return tuple(fields)


def _text(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else type_name(value)
