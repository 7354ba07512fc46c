"""The studio's effective view of an accepted amendment: what really changed in the request."""

from __future__ import annotations

import pytest

from studio.core.step.effective import EffectiveStep, effective_step
from tests.support.step_samples import baseline

BASE = baseline()
IDS = [c.id for c in BASE.contributors]


def test_no_amendment_leaves_the_baseline():
    effective = effective_step(BASE, None)
    assert effective == EffectiveStep(
        contributors=tuple(IDS),
        added_contributors=(),
        removed_contributors=(),
        tools=("lookup", "inner_tool", "search", "calc"),
        active_tools=("search",),
        model="small",
        input_budget={"optimizeAt": 1000, "max": 2000},
    )


def test_an_invalid_amendment_has_no_effect():
    assert effective_step(BASE, {"activeTools": ["missing"]}) is None
    assert effective_step(BASE, "x") is None


def test_contributors_really_added_and_removed():
    effective = effective_step(
        BASE,
        {
            "use": {
                "add": [{"id": "review", "tools": ["verify"]}, None],
                "remove": [{"id": "guide"}, {"id": "guide"}, {"id": "nowhere"}],
            }
        },
    )
    assert effective.added_contributors == ("review",)
    assert effective.removed_contributors == ("guide",)
    assert effective.contributors == (*[i for i in IDS if i != "guide"], "review")
    assert effective.tools == ("inner_tool", "verify", "search", "calc")


def test_removing_an_inactive_id_is_a_no_op():
    effective = effective_step(BASE, {"use": {"remove": [{"id": "nowhere"}]}})
    assert effective.removed_contributors == ()
    assert effective.contributors == tuple(IDS)


def test_adding_a_contributor_already_in_the_graph_adds_nothing():
    effective = effective_step(BASE, {"use": {"add": [{"id": "notes"}, {"id": "x"}, {"id": "x"}]}})
    assert effective.added_contributors == ("x",)


def test_removing_a_droppable_takes_its_members_tools_with_it():
    effective = effective_step(BASE, {"use": {"remove": [{"id": "optional"}]}})
    assert "inner_tool" not in effective.tools


def test_contributed_tools_and_active_tools():
    effective = effective_step(BASE, {"tools": {"summarize": {}}, "activeTools": ["summarize"]})
    assert effective.tools == ("lookup", "inner_tool", "search", "calc", "summarize")
    assert effective.active_tools == ("summarize",)


def test_tool_names_keep_javascript_key_order():
    effective = effective_step(BASE, {"tools": {"b": {}, "10": {}, "2": {}}})
    assert effective.tools[:2] == ("2", "10")


def test_active_tools_empty_means_send_no_tools():
    assert effective_step(BASE, {"activeTools": []}).active_tools == ()


def test_the_model_changes_and_null_keeps_the_baseline_model():
    assert effective_step(BASE, {"model": {"id": "big"}}).model == {"id": "big"}
    assert effective_step(BASE, {"model": None}).model == "small"
    assert effective_step(BASE, {"model": False}).model is False


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        ({"max": 300}, {"max": 300}),
        ({"optimizeAt": 5.0}, {"optimizeAt": 5}),
        ({}, {}),
        (7, {}),
    ],
)
def test_the_input_budget_replaces_the_baseline_budget_as_a_whole(budget, expected):
    effective = effective_step(BASE, {"inputBudget": budget})
    assert effective.to_json()["inputBudget"] == expected


def test_a_falsy_input_budget_keeps_the_baseline_budget():
    kept = effective_step(BASE, {"inputBudget": 0}).input_budget
    assert kept == {"optimizeAt": 1000, "max": 2000}


def test_to_json_has_exactly_the_documented_keys():
    assert list(effective_step(BASE, {}).to_json()) == [
        "contributors",
        "addedContributors",
        "removedContributors",
        "tools",
        "activeTools",
        "model",
        "inputBudget",
    ]
