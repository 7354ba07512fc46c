"""The shared step-preparation baseline and JSON strategies, and checks on the samples."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from studio.core.step.baseline import StepBaseline, parse_baseline

BASELINE_JSON: dict[str, Any] = {
    "contributors": [
        "notes",
        {"id": "guide", "tools": ["lookup"]},
        {"id": "policy", "kind": "work-policy"},
        {"id": "safety", "protected": True},
        {"id": "memory", "kind": "memory"},
        {"id": "history", "kind": "history"},
        {"id": "recent", "kind": "history-recent"},
        {
            "id": "optional",
            "kind": "droppable",
            "children": [{"id": "inner", "protected": True, "tools": ["inner_tool"]}],
        },
        {"id": "wrapper", "children": [{"id": "guarded", "protected": True}]},
        {"id": "dup"},
        {"id": "dup"},
        {"id": "parent", "children": [{"id": "kid"}]},
        {
            "id": "mixed",
            "children": [
                {
                    "id": "drop",
                    "kind": "droppable",
                    "children": [{"id": "deep", "kind": "work-policy"}],
                }
            ],
        },
    ],
    "tools": ["search", "calc"],
    "activeTools": ["search"],
    "model": "small",
    "inputBudget": {"optimizeAt": 1000, "max": 2000},
}


def baseline_json(**changes: Any) -> dict[str, Any]:
    value = copy.deepcopy(BASELINE_JSON)
    value.update(changes)
    return value


def baseline(**changes: Any) -> StepBaseline:
    parsed = parse_baseline(baseline_json(**changes))
    assert isinstance(parsed, StepBaseline), parsed
    return parsed


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
AMENDMENT_KEYS = st.sampled_from(
    [
        "use",
        "add",
        "remove",
        "id",
        "kind",
        "protected",
        "children",
        "tools",
        "activeTools",
        "model",
        "inputBudget",
        "optimizeAt",
        "max",
        "messages",
        "search",
        "lookup",
        "notes",
        "guide",
        "policy",
        "memory",
    ]
) | st.text(max_size=4)
KINDS_AND_IDS = st.sampled_from(
    ["notes", "guide", "policy", "safety", "memory", "dup", "kid", "search", "lookup", "memory"]
)

json_values = st.recursive(
    SCALARS | KINDS_AND_IDS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(AMENDMENT_KEYS, children, max_size=5)
    ),
    max_leaves=25,
)
