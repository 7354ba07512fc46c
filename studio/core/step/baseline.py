"""The baseline a step-preparation hook amends (spec/crux.md §7), parsed with every finding.

A baseline is the JSON stand-in for the reference library's resolved graph: top-level contributors
(each with an id, a kind, a protected flag, the tools it owns and its nested children), the tools
the definition itself declares, the active tools, the model and the input budget.

``tools`` names only the tools the definition declares itself; tools owned by a contributor are
listed on that contributor, so removing the contributor takes its tools out of the graph. As in the
reference, where merging two owners of one tool name fails prompt resolution, a tool name may have
only one owner in the whole graph.

A contributor may carry the reference's ``_tag`` (``Context``, ``Memory``, ``HistoryManaged``,
``HistoryRecent``, ``WorkPolicy``, ``droppable``, or another); where it does, the rules judge the
tag, not ``kind``. As the reference reads them, ``protected`` and ``children`` count only on a
context contributor: a memory contributor's children are no nested members, and a history
contributor marked protected is not protected.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from studio.core.findings import Finding, PathPart, dotted
from studio.core.json.js_values import is_js_string
from studio.core.json.values import JsonProblem, is_safe_integer, json_problems, type_name

ContributorKind = Literal[
    "context", "memory", "history", "history-recent", "work-policy", "droppable"
]
CONTRIBUTOR_KINDS: Final[tuple[str, ...]] = get_args(ContributorKind)
# The kinds that own the transcript or history; preparation may neither add nor remove them.
TRANSCRIPT_KINDS: Final[frozenset[str]] = frozenset({"memory", "history", "history-recent"})
# The reference tells contributors apart by their ``_tag``; ``kind`` is the studio's name for it.
# A tag not listed here is a contributor the studio does not model: never transcript, never
# protected, without children the reference would look into.
TAG_KINDS: Final[dict[str, str]] = {
    "Context": "context",
    "Memory": "memory",
    "HistoryManaged": "history",
    "HistoryRecent": "history-recent",
    "WorkPolicy": "work-policy",
    "droppable": "droppable",
}

# A hook's value crosses a process boundary as JSON; Python's own JSON codec gives up near 1000
# levels, so anything deeper could never have arrived and is treated as unreadable.
MAX_JSON_DEPTH: Final = 500
# Shared sub-objects make a small Python value expand without bound when walked as JSON.
MAX_JSON_NODES: Final = 1_000_000
MAX_CONTRIBUTOR_DEPTH: Final = 64

BASELINE_RULE: Final = "baseline"

_CONTRIBUTOR_KEYS: Final = ("id", "kind", "_tag", "protected", "tools", "children")
_BASELINE_KEYS: Final = ("contributors", "tools", "activeTools", "model", "inputBudget")
_BUDGET_KEYS: Final = ("optimizeAt", "max")


class Contributor(BaseModel):
    """One contributor of the graph; a plain string in JSON is shorthand for ``{"id": ...}``."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    id: str
    kind: ContributorKind = "context"
    tag: str | None = None
    protected: bool = False
    tools: tuple[str, ...] = ()
    children: tuple[Contributor, ...] = ()

    @property
    def rule_kind(self) -> str | None:
        """The kind the V rules judge: the ``_tag``'s when there is one (``None`` for a tag the
        studio does not model), otherwise ``kind``."""
        return self.kind if self.tag is None else TAG_KINDS.get(self.tag)

    @property
    def is_transcript(self) -> bool:
        return self.rule_kind in TRANSCRIPT_KINDS

    def counted_children(self) -> tuple[Contributor, ...]:
        """The children the reference looks into (for protection and nested members): only a
        context contributor's."""
        return self.children if self.rule_kind == "context" else ()

    def nested_members(self) -> Iterator[Contributor]:
        """Every counted nested member, depth first, in declaration order."""
        stack = list(reversed(self.counted_children()))
        while stack:
            child = stack.pop()
            yield child
            stack.extend(reversed(child.counted_children()))

    def descendants(self) -> Iterator[Contributor]:
        """Every nested member, depth first, in declaration order."""
        stack = list(reversed(self.children))
        while stack:
            child = stack.pop()
            yield child
            stack.extend(reversed(child.children))

    def owned_tools(self) -> Iterator[tuple[str, Contributor]]:
        """Each tool name this contributor brings into the graph, with the member that owns it."""
        for member in (self, *self.descendants()):
            for name in member.tools:
                yield name, member

    def to_json(self) -> dict[str, Any]:
        tag = {} if self.tag is None else {"_tag": self.tag}
        return {
            "id": self.id,
            "kind": self.kind,
            **tag,
            "protected": self.protected,
            "tools": list(self.tools),
            "children": [child.to_json() for child in self.children],
        }


class InputBudget(BaseModel):
    """Per-call input pressure; each limit is a positive safe integer and optimizeAt <= max."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid", populate_by_name=True)

    optimize_at: int | None = Field(default=None, alias="optimizeAt")
    max: int | None = None

    def to_json(self) -> dict[str, int]:
        out: dict[str, int] = {}
        if self.optimize_at is not None:
            out["optimizeAt"] = self.optimize_at
        if self.max is not None:
            out["max"] = self.max
        return out


class StepBaseline(BaseModel):
    """What a provider call would use if the hook returned nothing."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid", populate_by_name=True)

    contributors: tuple[Contributor, ...]
    tools: tuple[str, ...]
    active_tools: tuple[str, ...] | None = Field(default=None, alias="activeTools")
    model: Any = None
    input_budget: InputBudget | None = Field(default=None, alias="inputBudget")

    def graph_tools(self) -> list[str]:
        """The tool names of the resolved baseline graph: contributors' first, then the declared
        ones, as the reference's prompt resolution lists them."""
        names = [name for c in self.contributors for name, _ in c.owned_tools()]
        return names + list(self.tools)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "contributors": [c.to_json() for c in self.contributors],
            "tools": list(self.tools),
        }
        if self.active_tools is not None:
            out["activeTools"] = list(self.active_tools)
        out["model"] = self.model
        if self.input_budget is not None:
            out["inputBudget"] = self.input_budget.to_json()
        return out


def json_problem(
    value: Any, *, max_depth: int = MAX_JSON_DEPTH, infinite_numbers: bool = False
) -> JsonProblem | None:
    """Where ``value`` stops being plain JSON as the reference reads a hook's value, and how (a
    phrase after the path's name); ``None`` when all of it is JSON. Never recurses.

    With ``infinite_numbers``, a non-finite float is a number: JSON text such as ``1e400`` reads
    as Infinity in JavaScript (Python's reader makes it ``inf``). Only values that never go to a
    hook may hold one, since the studio writes strict JSON to its workers.
    """
    for where, what in json_problems(
        value,
        exact_types=False,
        large_ints="unwritable",
        max_depth=max_depth,
        max_nodes=MAX_JSON_NODES,
    ):
        if not (infinite_numbers and _is_non_finite_float(_value_at(value, where))):
            return where, what
    return None


def _value_at(value: Any, path: tuple[PathPart, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _is_non_finite_float(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def parse_baseline(value: Any, at: tuple[PathPart, ...] = ()) -> StepBaseline | list[Finding]:
    """The baseline, or every finding that stops it being one (paths start at ``at``).

    Never raises: any Python value gets an answer.
    """
    findings: list[Finding] = []
    if not isinstance(value, dict):
        return [_finding(at, f"the baseline must be an object, got {type_name(value)}")]
    for key in value:
        if key not in _BASELINE_KEYS:
            findings.append(_finding((*at, key), f"unknown baseline field {key!r}"))
    for key in ("contributors", "tools", "model"):
        if key not in value:
            findings.append(_finding((*at, key), f"the baseline field {key!r} is required"))

    contributors: list[Contributor] = []
    raw_contributors = value.get("contributors", [])
    if isinstance(raw_contributors, list):
        for i, raw in enumerate(raw_contributors):
            parsed, problems = parse_contributor(raw, (*at, "contributors", i))
            findings.extend(problems)
            if parsed is not None:
                contributors.append(parsed)
    else:
        findings.append(_finding((*at, "contributors"), _must("an array", at, raw_contributors)))

    tools = _names(value.get("tools", []), (*at, "tools"), findings, unique=True)
    active_tools = None
    if value.get("activeTools") is not None:
        active_tools = _names(value["activeTools"], (*at, "activeTools"), findings, unique=False)

    model = value.get("model")
    problem = json_problem(model)
    if problem is not None:
        where, what = problem
        path = (*at, "model", *where)
        findings.append(_finding(path, f"the model must be JSON, but {_name(path)} {what}"))

    budget = None
    if value.get("inputBudget") is not None:
        budget = parse_input_budget(value["inputBudget"], (*at, "inputBudget"), findings)

    findings.extend(_tool_owner_findings(tools, contributors, at))
    if findings:
        return findings
    return StepBaseline(
        contributors=tuple(contributors),
        tools=tuple(tools),
        active_tools=None if active_tools is None else tuple(active_tools),
        model=model,
        input_budget=budget,
    )


def parse_contributor(
    value: Any, path: tuple[PathPart, ...], depth: int = 0
) -> tuple[Contributor | None, list[Finding]]:
    """One contributor (a string id, or an object) with the findings that stop it parsing."""
    if isinstance(value, str):
        if not value:
            return None, [_finding(path, f"{_name(path)} must be a non-empty contributor id")]
        return Contributor(id=value), []
    if not isinstance(value, dict):
        return None, [
            _finding(
                path,
                f"{_name(path)} must be a contributor id or an object with an 'id', "
                f"got {type_name(value)}",
            )
        ]
    findings: list[Finding] = []
    for key in value:
        if key not in _CONTRIBUTOR_KEYS:
            findings.append(_finding((*path, key), f"unknown contributor field {key!r}"))
    raw_id = value.get("id")
    if not is_js_string(raw_id) or not raw_id:
        findings.append(_finding((*path, "id"), _must("a non-empty string", (*path, "id"), raw_id)))
    kind = value.get("kind", "context")
    if kind not in CONTRIBUTOR_KINDS:
        findings.append(
            _finding(
                (*path, "kind"),
                f"{_name((*path, 'kind'))} must be one of {', '.join(CONTRIBUTOR_KINDS)}, "
                f"got {shown_value(kind)}",
            )
        )
    tag = value.get("_tag")
    if tag is not None and not (is_js_string(tag) and tag):
        findings.append(
            _finding((*path, "_tag"), _must("a non-empty string", (*path, "_tag"), tag))
        )
    protected = value.get("protected", False)
    if not isinstance(protected, bool):
        findings.append(
            _finding((*path, "protected"), _must("true or false", (*path, "protected"), protected))
        )
    tools = _names(value.get("tools", []), (*path, "tools"), findings, unique=True)
    children: list[Contributor] = []
    raw_children = value.get("children", [])
    if not isinstance(raw_children, list):
        findings.append(
            _finding((*path, "children"), _must("an array", (*path, "children"), raw_children))
        )
    elif raw_children and depth >= MAX_CONTRIBUTOR_DEPTH:
        findings.append(
            _finding(
                (*path, "children"),
                f"contributors may be nested at most {MAX_CONTRIBUTOR_DEPTH} levels deep",
            )
        )
    else:
        for i, raw in enumerate(raw_children):
            child, problems = parse_contributor(raw, (*path, "children", i), depth + 1)
            findings.extend(problems)
            if child is not None:
                children.append(child)
    if findings:
        return None, findings
    assert isinstance(raw_id, str)  # anything else is a finding above
    return (
        Contributor(
            id=raw_id,
            kind=kind,
            tag=tag,
            protected=protected,
            tools=tuple(tools),
            children=tuple(children),
        ),
        [],
    )


def parse_input_budget(
    value: Any, path: tuple[PathPart, ...], findings: list[Finding]
) -> InputBudget | None:
    """A baseline input budget, adding to ``findings`` what the reference would reject."""
    if not isinstance(value, dict):
        findings.append(_finding(path, _must("an object", path, value)))
        return None
    start = len(findings)
    for key in value:
        if key not in _BUDGET_KEYS:
            findings.append(_finding((*path, key), f"unknown input budget field {key!r}"))
    limits: dict[str, int] = {}
    for key in _BUDGET_KEYS:
        if key in value:
            problem = budget_limit_problem(value[key], _name((*path, key)))
            if problem:
                findings.append(_finding((*path, key), problem))
            else:
                limits[key] = int(value[key])
    problem = budget_order_problem(limits.get("optimizeAt"), limits.get("max"), _name(path))
    if problem:
        findings.append(_finding((*path, "optimizeAt"), problem))
    if len(findings) > start:
        return None
    return InputBudget(optimize_at=limits.get("optimizeAt"), max=limits.get("max"))


def budget_limit_problem(value: Any, name: str) -> str | None:
    """Why a budget limit is not a positive safe integer (1 to 2**53 - 1), if it is not."""
    if is_safe_integer(value) and value > 0:
        return None
    return f"{name} must be a positive safe integer (1 to 2^53-1), got {shown_value(value)}"


def budget_order_problem(optimize_at: int | None, max_: int | None, name: str) -> str | None:
    if optimize_at is None or max_ is None or optimize_at <= max_:
        return None
    return f"{name}.optimizeAt ({optimize_at}) must not exceed {name}.max ({max_})"


def _tool_owner_findings(
    declared: list[str], contributors: list[Contributor], at: tuple[PathPart, ...]
) -> list[Finding]:
    owners: dict[str, str] = {name: "the baseline's tools" for name in declared}
    findings: list[Finding] = []
    for i, contributor in enumerate(contributors):
        for name, member, path in owned_tool_paths(contributor, (*at, "contributors", i)):
            if name in owners:
                findings.append(
                    _finding(
                        path,
                        f"tool {name!r} of contributor {member.id!r} is already provided by "
                        f"{owners[name]}: a tool name may have only one owner in the graph",
                    )
                )
            else:
                owners[name] = f"contributor {member.id!r}"
    return findings


def owned_tool_paths(
    contributor: Contributor, path: tuple[PathPart, ...]
) -> Iterator[tuple[str, Contributor, tuple[PathPart, ...]]]:
    """Each tool the contributor brings, with its owner and the JSON path of the tool entry."""
    stack: list[tuple[Contributor, tuple[PathPart, ...]]] = [(contributor, path)]
    while stack:
        member, at = stack.pop()
        for j, name in enumerate(member.tools):
            yield name, member, (*at, "tools", j)
        stack.extend(
            (child, (*at, "children", k)) for k, child in reversed(list(enumerate(member.children)))
        )


def _names(
    value: Any, path: tuple[PathPart, ...], findings: list[Finding], *, unique: bool
) -> list[str]:
    if not isinstance(value, list):
        findings.append(_finding(path, _must("an array of tool names", path, value)))
        return []
    names: list[str] = []
    for i, name in enumerate(value):
        if not is_js_string(name) or not name:
            findings.append(_finding((*path, i), _must("a non-empty tool name", (*path, i), name)))
        elif unique and name in names:
            findings.append(_finding((*path, i), f"tool {name!r} is listed twice in {_name(path)}"))
        else:
            names.append(name)
    return names


def _finding(path: tuple[PathPart, ...], message: str) -> Finding:
    return Finding(path=path, message=message, rule=BASELINE_RULE)


def _name(path: tuple[PathPart, ...]) -> str:
    return dotted(path) or "the value"


def _must(what: str, path: tuple[PathPart, ...], value: Any) -> str:
    return f"{_name(path)} must be {what}, got {shown_value(value)}"


def shown_value(value: Any) -> str:
    """A value as a message may quote it: short scalars verbatim, anything else by its type."""
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else "a long string"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int) and abs(value) < 10**24:
        return repr(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return type_name(value)
