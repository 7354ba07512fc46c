"""Differential check: valid amendments, mutated, against a plain statement of the rules.

``expected_rule`` below restates spec/crux.md §3 and §8 on its own, from the spec's words, over a
small vocabulary of contributors, selectors, tools and budgets; it shares no code with the
studio's judge. Each example starts from an amendment the rules accept, applies a few mutations,
and asks both for the verdict and for the rule of the first failure.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from studio.core.step.check import check_amendment
from tests.support.hypothesis_profiles import examples

BASELINE: dict[str, Any] = {
    "contributors": [
        "persona",
        {"id": "guide", "tools": ["lookup"]},
        {"id": "policy", "kind": "work-policy"},
        {"id": "safety", "protected": True},
        {"id": "notes", "kind": "memory", "children": [{"id": "block"}]},
        {"id": "history", "kind": "history"},
        {
            "id": "optional",
            "kind": "droppable",
            "children": [{"id": "inner", "protected": True, "tools": ["inner_tool"]}],
        },
        {"id": "wrapper", "children": [{"id": "guarded", "protected": True}]},
        {"id": "dup"},
        {"id": "dup"},
        {"id": "tagged", "_tag": "WorkPolicy"},
        {"id": "odd", "_tag": "Prompt", "protected": True},
    ],
    "tools": ["search", "calc"],
    "activeTools": ["search"],
    "model": "m",
    "inputBudget": {"optimizeAt": 1000, "max": 2000},
}

ADDS: list[Any] = [
    "persona",
    "fresh",
    None,
    {"id": "review"},
    {"id": "review", "tools": ["verify"]},
    {"id": "copy", "tools": ["lookup"]},
    {"id": "clash", "tools": ["search"]},
    {"id": "guide", "tools": ["lookup"]},
    {"id": "mem", "kind": "memory"},
    {"id": "managed", "_tag": "HistoryManaged"},
    {"id": "ctx", "kind": "memory", "_tag": "Context"},
    {"id": "optional"},
    {"id": "persona"},
]
REMOVES: list[Any] = [
    *({"id": i} for i in ["persona", "guide", "policy", "safety", "notes", "history"]),
    *({"id": i} for i in ["optional", "wrapper", "dup", "tagged", "odd", "inner", "guarded"]),
    {"id": "block"},
    {"id": "nowhere"},
    "persona",
]
TOOL_NAMES = ["toString", "constructor", "__proto__", "valueOf", "search", "lookup", "verify"]
TOOL_NAMES += ["summarize", "inner_tool", "fresh_tool"]
ACTIVE = ["search", "calc", "lookup", "verify", "summarize", "inner_tool", "missing", "toString"]
ACTIVE += ["__proto__", "fresh_tool"]
BUDGETS: list[Any] = [
    {},
    {"max": 500},
    {"optimizeAt": 100, "max": 50},
    {"optimizeAt": 0},
    {"max": 2**53},
    {"max": 1.5},
    {"optimizeAt": 5.0, "max": 5},
    {"optimizeAt": "10"},
    {"max": 3000, "note": "x"},
    0,
]
SEEDS: list[Any] = [
    None,
    {},
    {"model": "big"},
    {"activeTools": []},
    {"use": {"add": [{"id": "review"}], "remove": [{"id": "persona"}]}},
    {"tools": {"summarize": {}}, "activeTools": ["summarize", "search"]},
    {"inputBudget": {"optimizeAt": 10, "max": 20}},
    {"use": {"remove": [{"id": "optional"}]}, "activeTools": ["calc"]},
]
SCALARS: list[Any] = ["use the big model", 5, True, [], [{"model": "x"}], 0, "", False]

TRANSCRIPT = {"memory", "history", "history-recent"}
TAGS = {
    "Context": "context",
    "Memory": "memory",
    "HistoryManaged": "history",
    "HistoryRecent": "history-recent",
    "WorkPolicy": "work-policy",
    "droppable": "droppable",
}
PROTOTYPE = {"toString", "constructor", "__proto__", "valueOf", "hasOwnProperty"}


# ---- the rules, restated ------------------------------------------------------------------------


def spec(entry: Any) -> dict[str, Any]:
    """A contributor with every field written out; a string is {id}."""
    if isinstance(entry, str):
        entry = {"id": entry}
    return {
        "id": entry["id"],
        "kind": entry.get("kind", "context"),
        "_tag": entry.get("_tag"),
        "protected": entry.get("protected", False),
        "tools": list(entry.get("tools", [])),
        "children": [spec(c) for c in entry.get("children", [])],
    }


def judged_kind(c: dict[str, Any]) -> str | None:
    return c["kind"] if c["_tag"] is None else TAGS.get(c["_tag"])


def children(c: dict[str, Any]) -> list[dict[str, Any]]:
    return c["children"] if judged_kind(c) == "context" else []


def protected(c: dict[str, Any]) -> bool:
    kind = judged_kind(c)
    if kind == "droppable":
        return False
    if kind == "work-policy" or (kind == "context" and c["protected"]):
        return True
    return any(protected(child) for child in children(c))


def nested_ids(c: dict[str, Any]) -> set[str]:
    return {n for child in children(c) for n in {child["id"], *nested_ids(child)}}


def tools_of(c: dict[str, Any]) -> list[str]:
    return c["tools"] + [t for child in c["children"] for t in tools_of(child)]


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") or isinstance(value, list | dict)


def safe_positive(value: Any) -> bool:
    whole = type(value) is int or (type(value) is float and value.is_integer())
    return whole and 1 <= value <= 2**53 - 1


def expected_rule(amendment: Any) -> str | None:
    """The rule of the first failure, or None when the amendment is accepted."""
    if not truthy(amendment):
        return None
    if isinstance(amendment, list):
        amendment = {}
    if not isinstance(amendment, dict):
        return "V1"
    base = [spec(c) for c in BASELINE["contributors"]]
    use = amendment.get("use") or {}
    adds = [spec(a) for a in use.get("add") or [] if truthy(a)]
    for a in adds:
        if judged_kind(a) in TRANSCRIPT:
            return "V2"
    removed: list[dict[str, Any]] = []
    for selector in use.get("remove") or []:
        if not isinstance(selector, dict):
            continue
        matches = [c for c in base if c["id"] == selector["id"]]
        if len(matches) > 1:
            return "V3"
        if not matches and any(selector["id"] in nested_ids(c) for c in base):
            return "V4"
        for c in matches:
            if judged_kind(c) in TRANSCRIPT:
                return "V5"
            if protected(c):
                return "V6"
            removed.append(c)
    if any(a["id"] == r["id"] for a in adds for r in removed):
        return "V7"
    kept = [c for c in base if c not in removed]
    new: list[dict[str, Any]] = []
    for a in adds:
        if a not in base and a not in new:
            new.append(a)
    owned = [t for c in kept for t in tools_of(c)] + BASELINE["tools"]
    for a in new:
        for t in tools_of(a):
            if t in owned:
                return "tool-collision"
            owned.append(t)
    contributed = list(amendment.get("tools") or {})
    for name in contributed:
        if name in PROTOTYPE or name in owned:
            return "V8"
    available = {t for t in owned + contributed if t != "__proto__"}
    active = amendment.get("activeTools") if "activeTools" in amendment else None
    if active is None or (not truthy(active) and active != []):
        active = BASELINE["activeTools"]
    if any(name not in available for name in active):
        return "V9"
    budget = amendment.get("inputBudget")
    if truthy(budget):
        for key in ("optimizeAt", "max"):
            if key in budget and not safe_positive(budget[key]):
                return "V10"
        if "optimizeAt" in budget and "max" in budget and budget["optimizeAt"] > budget["max"]:
            return "V11"
    return None


# ---- mutations ----------------------------------------------------------------------------------


def mutate(amendment: Any, data: st.DataObject) -> Any:
    if not isinstance(amendment, dict):
        amendment = {}
    out = copy.deepcopy(amendment)
    op = data.draw(st.sampled_from(["add", "remove", "tool", "active", "budget", "model", "drop"]))
    use = out.setdefault("use", {}) if op in ("add", "remove") else None
    if op == "add":
        use.setdefault("add", []).append(copy.deepcopy(data.draw(st.sampled_from(ADDS))))
    elif op == "remove":
        use.setdefault("remove", []).append(copy.deepcopy(data.draw(st.sampled_from(REMOVES))))
    elif op == "tool":
        out.setdefault("tools", {})[data.draw(st.sampled_from(TOOL_NAMES))] = {}
    elif op == "active":
        out["activeTools"] = data.draw(st.lists(st.sampled_from(ACTIVE), max_size=3))
    elif op == "budget":
        out["inputBudget"] = copy.deepcopy(data.draw(st.sampled_from(BUDGETS)))
    elif op == "model":
        out["model"] = data.draw(st.sampled_from([None, "big", {"id": "x"}, 9007199254740993]))
    elif out:
        out.pop(data.draw(st.sampled_from(sorted(out))))
    return out


@settings(max_examples=examples(600), deadline=None)
@given(st.data())
def test_mutated_amendments_get_the_verdict_and_first_rule_the_rules_give(data):
    amendment = copy.deepcopy(data.draw(st.sampled_from(SEEDS)))
    assert expected_rule(amendment) is None
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        amendment = mutate(amendment, data)
    if data.draw(st.integers(min_value=0, max_value=19)) == 0:
        amendment = data.draw(st.sampled_from(SCALARS))
    document = json.loads(json.dumps({"baseline": BASELINE, "amendment": amendment}))
    result = check_amendment(document)
    wanted = expected_rule(amendment)
    got = None if result["valid"] else result["explanation"]["rule"]
    assert got == wanted, (amendment, result["explanation"])


def test_every_seed_is_accepted_by_the_studio_too():
    for seed in SEEDS:
        assert check_amendment({"baseline": BASELINE, "amendment": seed})["valid"], seed
