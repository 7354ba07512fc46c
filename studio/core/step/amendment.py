"""A step-preparation amendment: its snapshot, its validation (V1 to V11) and the error it raises.

The rules are those of spec/crux.md §3 as the reference library applies them. The reference stops
at the first failure; this module keeps going and returns every finding, listed in the order the
reference meets them, so the first error is the one that fails the call:

1. V1, the value is not an object;
2. V2 for each added contributor, in order;
3. each remove selector in order: V3 or V4 for the selector, then V5 or V6 for what it selects;
4. V7 for each added contributor, in order;
5. resolving the graph with the additions: an added entry that is not a contributor, or whose
   tool another owner already provides (the reference fails there with a type error or a plain
   error, outside the V rules);
6. V8, V9, then V10 (optimizeAt, then max) and V11, which the reference checks when sealing.

JSON has no object identity, so a remove selector selects by ``id`` only; a bare string or an
object without an ``id`` selects nothing there (a warning here), exactly as it does in the
reference. An added contributor equal to one already in the graph is read as that contributor:
adding it again changes nothing, and a warning says the document could not tell. A bare string in
``use.add`` is read as the baseline reads one, ``{"id": ...}``, with a warning that what the
reference does with it is not verified.

The error of the failing finding is the reference's, with a content-free message (no id, tool
name or value in it); the finding's own message is the studio's explanation, shown beside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from studio.core.findings import Finding, PathPart, dotted, first_error
from studio.core.json.js_values import JsValue, is_js_string
from studio.core.json.values import type_name
from studio.core.step.baseline import (
    TAG_KINDS,
    TRANSCRIPT_KINDS,
    Contributor,
    StepBaseline,
    budget_limit_problem,
    budget_order_problem,
    json_problem,
    owned_tool_paths,
    parse_contributor,
    shown_value,
)

V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11 = (f"V{n}" for n in range(1, 12))
# Outside the V table: the value could not be read (the reference reports a callback failure),
# an added entry is not a contributor, or an added contributor brings a tool that already has an
# owner (both fail the reference's graph resolution).
UNREADABLE: Final = "unreadable"
ADD_SHAPE: Final = "add-shape"
TOOL_COLLISION: Final = "tool-collision"
# A selector that can select nothing: not an error in the reference, but almost never meant.
NO_OP_SELECTOR: Final = "no-op-selector"
# Readings the studio makes where a JSON value cannot say what a JavaScript one would.
SAME_AS_BASELINE: Final = "same-contributor"
STRING_ADD: Final = "string-add-unverified"

# The reference's support tool for offloaded values: active whenever it is in the tool set.
OFFLOAD_SUPPORT_TOOL: Final = "__crux_ReadOffload"

# The names `name in {}` finds on any plain JavaScript object (spec/crux.md §8).
OBJECT_PROTOTYPE_MEMBERS: Final = frozenset(
    {
        "__proto__",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
    }
)

COMPOSITION_RULES: Final = frozenset({V1, V2, V3, V4, V5, V6, V7, V8, V9})
TYPE_ERROR_RULES: Final = frozenset({V10, V11, ADD_SHAPE})

COMPOSITION_ERROR_NAME: Final = "RequestCompositionError"
COMPOSITION_ERROR_CODE: Final = "INVALID_COMPOSITION"
AMENDMENT_DIAGNOSTIC_CODE: Final = "INVALID_EXECUTION_AMENDMENT"
# The reference names the failed composition attempt with this fixed id, not a sealed request id.
AMENDMENT_REQUEST_ID: Final = "request_preparation_composition"
CALLBACK_FAILURE_MESSAGE: Final = "Request preparation failed: callback."

# The error's own message for each rule: it names the rule in plain words and quotes nothing the
# hook or the baseline wrote.
ERROR_MESSAGES: Final[dict[str, str]] = {
    V1: "The hook must return an amendment object or nothing.",
    V2: "Preparation cannot add a memory or history contributor: transcript and history "
    "ownership stay as they are.",
    V3: "A remove selector must select a unique id among the top-level contributors.",
    V4: "Only top-level contributors can be removed, not a nested member.",
    V5: "Preparation cannot remove a memory or history contributor: transcript and history "
    "ownership stay as they are.",
    V6: "A protected contributor can be removed only when its whole top-level contributor is "
    "droppable.",
    V7: "One amendment cannot add and remove the same contributor.",
    V8: "Each contributed tool needs a name the resolved graph does not have yet.",
    V9: "Each activeTools entry must name a tool of the resolved graph.",
    V10: "inputBudget limits must be positive safe integers (1 to 2^53-1).",
    V11: "inputBudget.optimizeAt must not exceed inputBudget.max.",
    ADD_SHAPE: "Each use.add entry must be a contributor.",
    TOOL_COLLISION: "A tool name may have only one owner in the resolved graph.",
}


@dataclass(frozen=True, slots=True)
class UnreadableAmendment:
    """A returned value the reference could not snapshot: preparation fails with ``callback``."""

    path: tuple[PathPart, ...]
    problem: str


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness: ``{}`` and ``[]`` are truthy there, unlike in Python."""
    if isinstance(value, JsValue):
        return value.truthy
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, int | float):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


def snapshot(value: Any) -> Any:
    """What the reference keeps of a hook's return value before validating it.

    ``None`` means no amendment (any falsy value). A truthy value that is not an object comes back
    as it is (V1 rejects it). An array becomes ``{}``. An object is rebuilt from the known keys:
    ``use`` (``add``/``remove`` copied when truthy), ``tools``, ``activeTools`` (``[]`` kept),
    ``model`` (kept whenever present, ``null`` included) and ``inputBudget``, each copied only when
    truthy. A non-JSON value, or an ``add``/``remove``/``activeTools`` that cannot be spread into
    an array, gives an :class:`UnreadableAmendment`. Idempotent; never raises.
    """
    if isinstance(value, UnreadableAmendment):
        return value
    problem = json_problem(value, infinite_numbers=True)
    if problem is not None:
        where, what = problem
        return UnreadableAmendment(where, f"the hook's value is not JSON: {_at(where)} {what}")
    if not js_truthy(value):
        return None
    if isinstance(value, list):
        return {}
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    use = value.get("use")
    if js_truthy(use):
        rebuilt: dict[str, Any] = {}
        if isinstance(use, dict):
            for key in ("add", "remove"):
                part = use.get(key)
                if js_truthy(part):
                    spread = _spread_array(part, ("use", key))
                    if isinstance(spread, UnreadableAmendment):
                        return spread
                    rebuilt[key] = spread
        out["use"] = rebuilt
    if js_truthy(value.get("tools")):
        out["tools"] = _spread_object(value["tools"])
    if js_truthy(value.get("activeTools")):
        spread = _spread_array(value["activeTools"], ("activeTools",))
        if isinstance(spread, UnreadableAmendment):
            return spread
        out["activeTools"] = spread
    if "model" in value:
        out["model"] = value["model"]
    if js_truthy(value.get("inputBudget")):
        out["inputBudget"] = _spread_object(value["inputBudget"])
    return out


@dataclass(slots=True)
class AmendmentPlan:
    """The amendment applied to the baseline as far as it goes, with every finding on the way."""

    baseline: StepBaseline
    snapshot: Any
    findings: list[Finding] = field(default_factory=list)
    kept: list[Contributor] = field(default_factory=list)
    added: list[Contributor] = field(default_factory=list)
    removed: list[Contributor] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    active_tools: list[Any] | None = None
    model: Any = None
    # The baseline's budget, or the amendment's as the snapshot spread it (extra keys included).
    input_budget: dict[str, Any] | None = None

    @property
    def valid(self) -> bool:
        return first_error(self.findings) is None


def validate_amendment(baseline: StepBaseline, amendment: Any) -> list[Finding]:
    """Every finding for ``amendment`` (raw or snapshotted) against ``baseline``, reference order.

    Paths point into the amendment. Warnings (selectors that select nothing) do not fail the call.
    Never raises on any value.
    """
    return plan_amendment(baseline, amendment).findings


def plan_amendment(
    baseline: StepBaseline, amendment: Any, identities: list[Any] | None = None
) -> AmendmentPlan:
    """Snapshot, validate and apply ``amendment``; the plan's findings say whether it stands.

    ``identities`` come with a JavaScript hook's value, one per ``use.add`` entry: ``"stub"``
    for an object the studio's ``@use-crux/core`` stand-in made (it stands for the baseline's
    own contributor with that id and fields), ``"object:<n>"`` for any other object (the same
    ``n`` is the same object), ``None`` for a value that is not an object. The reference
    compares contributors by identity, so a fresh object equal to a baseline entry is a new
    contributor there. Without them (JSON has no identity) an entry equal to a baseline one is
    that entry.
    """
    snap = snapshot(amendment)
    plan = AmendmentPlan(
        baseline=baseline,
        snapshot=snap,
        kept=list(baseline.contributors),
        tools=_tool_set(baseline.graph_tools()),
        active_tools=None if baseline.active_tools is None else list(baseline.active_tools),
        model=baseline.model,
        input_budget=None if baseline.input_budget is None else baseline.input_budget.to_json(),
    )
    if snap is None:
        keep_support_tool_active(plan)
        return plan
    if isinstance(snap, UnreadableAmendment):
        plan.findings.append(Finding(snap.path, snap.problem, UNREADABLE))
        return plan
    if not isinstance(snap, dict):
        plan.findings.append(
            Finding(
                (),
                f"the hook returned {shown_value(snap)}: it must return an amendment object "
                "or nothing",
                V1,
            )
        )
        return plan
    _apply_use(plan, snap.get("use") or {}, identities)
    _apply_tools(plan, snap)
    _check_budget(plan, snap)
    if "model" in snap and snap["model"] is not None:
        # The reference takes ``amendment.model ?? model``: a null model keeps the baseline's.
        plan.model = snap["model"]
    # Warnings go last so that the first finding is always the one that fails the call.
    plan.findings.sort(key=lambda f: f.severity == "warning")
    return plan


def amendment_error(findings: Iterable[Finding]) -> dict[str, Any] | None:
    """The error the reference raises for the first error finding, or ``None`` if there is none."""
    first = first_error(list(findings))
    return None if first is None else error_for(first)


def error_for(finding: Finding) -> dict[str, Any]:
    """The error the reference raises for a finding: ``{name, code, message, diagnostics}``,
    with ``requestId`` on a composition error and ``reason`` on a ``PreparationError``.

    The message is content-free; ``finding.message`` is the explanation to show beside it.
    """
    if finding.rule in COMPOSITION_RULES:
        message = ERROR_MESSAGES[finding.rule]
        return {
            "name": COMPOSITION_ERROR_NAME,
            "code": COMPOSITION_ERROR_CODE,
            "message": message,
            "requestId": AMENDMENT_REQUEST_ID,
            "diagnostics": [
                {
                    "id": f"{AMENDMENT_REQUEST_ID}:amendment",
                    "code": AMENDMENT_DIAGNOSTIC_CODE,
                    "contributor": "prepareStep",
                    "message": message,
                }
            ],
        }
    if finding.rule == UNREADABLE:
        return {
            "name": "PreparationError",
            "code": None,
            "reason": "callback",
            "message": CALLBACK_FAILURE_MESSAGE,
            "diagnostics": [],
        }
    name = "TypeError" if finding.rule in TYPE_ERROR_RULES else "Error"
    message = ERROR_MESSAGES.get(finding.rule, "The amendment cannot be applied.")
    return {"name": name, "code": None, "message": message, "diagnostics": []}


def _apply_use(plan: AmendmentPlan, use: dict[str, Any], identities: list[Any] | None) -> None:
    adds: list[Any] = use.get("add") or []
    selectors: list[Any] = use.get("remove") or []
    baseline = plan.baseline.contributors

    for i, entry in enumerate(adds):
        read_as = _transcript_reading(entry)
        if read_as is not None:
            plan.findings.append(
                Finding(
                    ("use", "add", i),
                    f"use.add[{i}] {_label(entry)} is {read_as}: preparation cannot change "
                    "transcript or history ownership",
                    V2,
                )
            )

    nested_ids = {member.id for top in baseline for member in top.nested_members()}
    removed: set[int] = set()
    for j, selector in enumerate(selectors):
        path: tuple[PathPart, ...] = ("use", "remove", j)
        selected = selector.get("id") if isinstance(selector, dict) else None
        if not is_js_string(selected):
            warning = Finding(path, _no_op_message(j, selector), NO_OP_SELECTOR, "warning")
            plan.findings.append(warning)
            continue
        matches = [k for k, c in enumerate(baseline) if c.id == selected]
        if len(matches) > 1:
            plan.findings.append(
                Finding(
                    path,
                    f"use.remove[{j}] selects id {selected!r}, which {len(matches)} top-level "
                    "contributors share: selected ids must be unique",
                    V3,
                )
            )
        if not matches and selected in nested_ids:
            plan.findings.append(
                Finding(
                    path,
                    f"use.remove[{j}] selects {selected!r}, a nested member: only top-level "
                    "contributors can be removed",
                    V4,
                )
            )
        for k in matches:
            contributor = baseline[k]
            why = _protection(contributor)
            if contributor.is_transcript:
                plan.findings.append(
                    Finding(
                        path,
                        f"use.remove[{j}] selects {selected!r}, a {contributor.rule_kind} "
                        "contributor: preparation cannot change transcript or history ownership",
                        V5,
                    )
                )
            elif why:
                plan.findings.append(
                    Finding(
                        path,
                        f"use.remove[{j}] selects {selected!r}, which is protected ({why}): a "
                        "protected contributor can be removed only when its whole top-level "
                        "contributor is droppable",
                        V6,
                    )
                )
        removed.update(matches)

    removed_ids = {baseline[k].id for k in removed}
    for i, entry in enumerate(adds):
        added_id = entry if is_js_string(entry) else _field(entry, "id")
        if is_js_string(added_id) and added_id in removed_ids:
            plan.findings.append(
                Finding(
                    ("use", "add", i),
                    f"use.add[{i}] adds {added_id!r}, which this amendment also removes: one "
                    "amendment cannot add and remove the same contributor",
                    V7,
                )
            )

    plan.kept = [c for k, c in enumerate(baseline) if k not in removed]
    plan.removed = [c for k, c in enumerate(baseline) if k in removed]
    owners = _tool_owners(plan.baseline.tools, plan.kept)
    seen_objects: set[Any] = set()
    for i, entry in enumerate(adds):
        if not js_truthy(entry):
            continue  # the reference skips falsy entries (the ``flag && entry`` pattern)
        path = ("use", "add", i)
        added = _added_contributor(plan, entry, path)
        if added is None:
            continue
        token = identities[i] if identities is not None and i < len(identities) else None
        if isinstance(token, str) and token.startswith("object:"):
            if token in seen_objects:
                continue
            seen_objects.add(token)
        elif added in baseline or added in plan.added:
            if token is None:
                plan.findings.append(_same_contributor_note(i, added, added in baseline))
            continue
        for name, member, tool_path in owned_tool_paths(added, path):
            if name in owners:
                plan.findings.append(
                    Finding(
                        tool_path,
                        f"use.add[{i}] brings tool {name!r} (owned by {member.id!r}), which "
                        f"{owners[name]} already provides: a tool name may have only one owner",
                        TOOL_COLLISION,
                    )
                )
            else:
                owners[name] = f"contributor {member.id!r}"
        plan.added.append(added)
    # The reference's resolved tool set: contributors' tools in graph order, then the declared.
    contributor_tools = [name for c in (*plan.kept, *plan.added) for name, _ in c.owned_tools()]
    plan.tools = _tool_set(list(dict.fromkeys([*contributor_tools, *plan.baseline.tools])))


def _added_contributor(
    plan: AmendmentPlan, entry: Any, path: tuple[PathPart, ...]
) -> Contributor | None:
    if is_js_string(entry):
        plan.findings.append(
            Finding(
                path,
                f"{dotted(path)} is the bare string {shown_value(entry)}, read here as "
                f"{{'id': {entry!r}}} as in the baseline; what the reference does with a string "
                "in use.add is not verified",
                STRING_ADD,
                "warning",
            )
        )
        return Contributor(id=entry)
    if not isinstance(entry, dict):
        plan.findings.append(
            Finding(
                path,
                f"{dotted(path)} must be a contributor object with an 'id', got "
                f"{shown_value(entry)}",
                ADD_SHAPE,
            )
        )
        return None
    contributor, problems = parse_contributor(entry, path)
    plan.findings.extend(Finding(p.path, p.message, ADD_SHAPE) for p in problems)
    return contributor


def _apply_tools(plan: AmendmentPlan, snap: dict[str, Any]) -> None:
    contributed = _js_key_order(list((snap.get("tools") or {}).keys()))
    existing = set(plan.tools)
    for name in contributed:
        if name in OBJECT_PROTOTYPE_MEMBERS:
            plan.findings.append(
                Finding(
                    ("tools", name),
                    f"tools entry {name!r} names a member of Object.prototype: the reference "
                    "looks a tool name up with `in` on a plain object, where that name always "
                    "exists, so it collides: contributed tool names must be unique",
                    V8,
                )
            )
        elif name in existing:
            plan.findings.append(
                Finding(
                    ("tools", name),
                    f"tools entry {name!r} already exists in the resolved graph: contributed "
                    "tool names must be unique",
                    V8,
                )
            )
    plan.tools = _js_key_order(plan.tools + [n for n in contributed if n not in existing])

    available = set(plan.tools)
    if "activeTools" in snap:
        plan.active_tools = list(snap["activeTools"])
        for i, name in enumerate(plan.active_tools):
            if not (is_js_string(name) and name in available):
                plan.findings.append(
                    Finding(
                        ("activeTools", i),
                        f"activeTools entry {shown_value(name)} must name a tool of the "
                        "resolved graph",
                        V9,
                    )
                )
    elif plan.active_tools is not None:
        for name in plan.active_tools:
            if name not in available:
                plan.findings.append(
                    Finding(
                        (),
                        f"the baseline's activeTools entry {name!r} must name a tool of the "
                        "resolved graph, and this amendment leaves no such tool (it sets no "
                        "activeTools of its own)",
                        V9,
                    )
                )
    keep_support_tool_active(plan)


def keep_support_tool_active(plan: AmendmentPlan) -> None:
    """The offload support tool stays active whatever the active list says, when it exists."""
    active = plan.active_tools
    present = OFFLOAD_SUPPORT_TOOL in plan.tools
    if active is not None and present and OFFLOAD_SUPPORT_TOOL not in active:
        plan.active_tools = [*active, OFFLOAD_SUPPORT_TOOL]


def _check_budget(plan: AmendmentPlan, snap: dict[str, Any]) -> None:
    if "inputBudget" not in snap:
        return
    budget: dict[str, Any] = snap["inputBudget"]
    limits: dict[str, int] = {}
    for key in ("optimizeAt", "max"):
        if key not in budget:
            continue
        problem = budget_limit_problem(budget[key], f"inputBudget.{key}")
        if problem:
            plan.findings.append(Finding(("inputBudget", key), problem, V10))
        else:
            limits[key] = int(budget[key])
    problem = budget_order_problem(limits.get("optimizeAt"), limits.get("max"), "inputBudget")
    if problem:
        plan.findings.append(Finding(("inputBudget", "optimizeAt"), problem, V11))
    # An amendment's budget replaces the baseline's as a whole, even when it sets neither limit,
    # and keeps every key the snapshot spread into it.
    plan.input_budget = dict(budget)


def _protection(contributor: Contributor) -> str | None:
    """Why removing the contributor would drop a protected capability, if it would.

    A droppable subtree is never protected: its author allowed it to be omitted entirely. A work
    policy always is; a context contributor is when marked protected or when a counted child is.
    """
    stack = [(contributor, True)]
    while stack:
        member, top = stack.pop()
        kind = member.rule_kind
        if kind == "droppable":
            continue
        if kind == "work-policy" or (kind == "context" and member.protected):
            what = "a work policy" if kind == "work-policy" else "marked protected"
            return f"it is {what}" if top else f"its member {member.id!r} is {what}"
        stack.extend((child, False) for child in reversed(member.counted_children()))
    return None


def _transcript_reading(entry: Any) -> str | None:
    """How an added entry reads as a memory or history contributor, if it does: by its ``_tag``
    when it has one (the reference reads only that), otherwise by its ``kind``."""
    if not isinstance(entry, dict):
        return None
    if "_tag" in entry:
        tag = entry["_tag"]
        if is_js_string(tag) and TAG_KINDS.get(tag) in TRANSCRIPT_KINDS:
            return f"tagged {tag!r} (a {TAG_KINDS[tag]} contributor)"
        return None
    kind = entry.get("kind")
    if is_js_string(kind) and kind in TRANSCRIPT_KINDS:
        return f"a {kind} contributor"
    return None


def _field(entry: Any, key: str) -> Any:
    return entry.get(key) if isinstance(entry, dict) else None


def _same_contributor_note(i: int, added: Contributor, in_baseline: bool) -> Finding:
    where = "a contributor of the baseline" if in_baseline else "an entry added before it"
    return Finding(
        ("use", "add", i),
        f"use.add[{i}] ({added.id!r}) equals {where}, so it is read as that same contributor "
        "and adds nothing; a JSON document cannot say whether a JavaScript hook would return "
        "that object or a fresh one (a fresh one is a second contributor there)",
        SAME_AS_BASELINE,
        "warning",
    )


def _tool_owners(declared: Iterable[str], contributors: Iterable[Contributor]) -> dict[str, str]:
    owners = {name: "the baseline's own tools" for name in declared}
    for contributor in contributors:
        for name, member in contributor.owned_tools():
            owners.setdefault(name, f"contributor {member.id!r}")
    return owners


def _tool_set(names: list[str]) -> list[str]:
    """The tool names the reference's tool set keeps: it builds a plain object, where assigning
    ``__proto__`` sets the prototype instead of adding a key, so a tool of that name is lost."""
    return _js_key_order([n for n in names if n != "__proto__"])


def _js_key_order(names: list[str]) -> list[str]:
    """Names in the order a JavaScript object keeps its keys: array indices first, ascending."""
    indices = sorted((n for n in names if _is_array_index(n)), key=int)
    return indices + [n for n in names if not _is_array_index(n)]


def _is_array_index(name: str) -> bool:
    return (
        name.isascii()
        and name.isdigit()
        and (name == "0" or not name.startswith("0"))
        and int(name) < 2**32 - 1
    )


def _spread_array(value: Any, path: tuple[PathPart, ...]) -> list[Any] | UnreadableAmendment:
    """``[...value]``: arrays copy, strings split into characters, anything else throws."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return list(value)
    return UnreadableAmendment(
        path, f"{dotted(path)} must be an array to be read, got {type_name(value)}"
    )


def _spread_object(value: Any) -> dict[str, Any]:
    """``{...value}``: objects copy, arrays and strings give index keys, other values nothing."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return {str(i): item for i, item in enumerate(value)}
    if isinstance(value, str):
        units = value.encode("utf-16-le", "surrogatepass")
        return {
            str(i): units[2 * i : 2 * i + 2].decode("utf-16-le", "surrogatepass")
            for i in range(len(units) // 2)
        }
    return {}


def _label(entry: dict[str, Any]) -> str:
    entry_id = entry.get("id")
    return repr(entry_id) if isinstance(entry_id, str) else "(no id)"


def _no_op_message(j: int, selector: Any) -> str:
    if is_js_string(selector):
        return (
            f"use.remove[{j}] is the bare string {shown_value(selector)}, which selects "
            f"nothing: write {{'id': {selector!r}}} to remove that contributor"
        )
    if isinstance(selector, dict) and "id" in selector:
        return f"use.remove[{j}] has an id that is not a string, so it selects nothing"
    return f"use.remove[{j}] has no 'id', so it selects nothing"


def _at(path: tuple[PathPart, ...]) -> str:
    if len(path) > 8:
        return f"{dotted(path[:8])}… ({len(path)} levels down)"
    return dotted(path) or "the top level"
