"""spec/crux.md §3: the amendment snapshot, rules V1 to V11 in the reference's order, and errors."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.core.findings import errors, first_error
from studio.core.step.amendment import (
    ADD_SHAPE,
    NO_OP_SELECTOR,
    TOOL_COLLISION,
    UNREADABLE,
    UnreadableAmendment,
    amendment_error,
    error_for,
    js_truthy,
    snapshot,
    validate_amendment,
)
from tests.support.hypothesis_profiles import examples
from tests.support.step_samples import baseline, json_values

BASE = baseline()


def rules(amendment: Any, base=BASE) -> list[str]:
    return [f.rule for f in errors(validate_amendment(base, amendment))]


def only(amendment: Any, base=BASE):
    found = errors(validate_amendment(base, amendment))
    assert len(found) == 1, found
    return found[0]


def remove(*ids: str) -> dict[str, Any]:
    return {"use": {"remove": [{"id": i} for i in ids]}}


def add(*entries: Any) -> dict[str, Any]:
    return {"use": {"add": list(entries)}}


# --- snapshot ------------------------------------------------------------------------------------


@pytest.mark.parametrize("falsy", [None, False, 0, 0.0, -0.0, ""])
def test_a_falsy_value_means_no_amendment(falsy):
    assert snapshot(falsy) is None
    assert validate_amendment(BASE, falsy) == []


@pytest.mark.parametrize("array", [[], [1, 2], [{"model": "big"}]])
def test_an_array_becomes_an_empty_amendment(array):
    assert snapshot(array) == {}
    assert validate_amendment(BASE, array) == []


def test_empty_object_and_array_are_truthy_as_in_javascript():
    assert js_truthy({}) and js_truthy([])
    assert snapshot({}) == {}


@pytest.mark.parametrize("value", ["x", 5, -1.5, True])
def test_a_truthy_non_object_passes_the_snapshot_unchanged(value):
    assert snapshot(value) == value


def test_unknown_keys_are_dropped():
    assert snapshot({"messages": [{"role": "user"}], "system": "x", "model": "big"}) == {
        "model": "big"
    }


def test_model_null_is_kept_but_an_absent_model_is_not():
    assert snapshot({"model": None}) == {"model": None}
    assert snapshot({"model": False}) == {"model": False}
    assert "model" not in snapshot({"tools": {}})


def test_active_tools_empty_is_kept_and_an_empty_string_is_dropped():
    assert snapshot({"activeTools": []}) == {"activeTools": []}
    assert snapshot({"activeTools": ""}) == {}


def test_keys_are_copied_only_when_truthy():
    assert snapshot({"tools": 0, "inputBudget": None, "use": False}) == {}
    assert snapshot({"tools": {}, "inputBudget": {}, "use": {}}) == {
        "use": {},
        "tools": {},
        "inputBudget": {},
    }
    assert snapshot({"use": {"add": [], "remove": None}}) == {"use": {"add": []}}
    assert snapshot({"use": "anything"}) == {"use": {}}


def test_spreading_follows_javascript():
    assert snapshot({"activeTools": "ab"}) == {"activeTools": ["a", "b"]}
    assert snapshot({"inputBudget": 7}) == {"inputBudget": {}}
    assert snapshot({"inputBudget": [5]}) == {"inputBudget": {"0": 5}}
    assert snapshot({"tools": "ab"}) == {"tools": {"0": "a", "1": "b"}}
    assert snapshot({"tools": True}) == {"tools": {}}


def test_the_snapshot_is_a_copy_of_the_returned_lists():
    value = {"activeTools": ["search"], "use": {"remove": [{"id": "notes"}]}}
    snap = snapshot(value)
    value["activeTools"].append("calc")
    value["use"]["remove"].clear()
    assert snap == {"use": {"remove": [{"id": "notes"}]}, "activeTools": ["search"]}


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"activeTools": {}}, ("activeTools",)),
        ({"activeTools": 5}, ("activeTools",)),
        ({"activeTools": True}, ("activeTools",)),
        ({"use": {"add": {"id": "x"}}}, ("use", "add")),
        ({"use": {"remove": 3}}, ("use", "remove")),
    ],
)
def test_a_value_that_cannot_be_spread_into_an_array_is_unreadable(value, path):
    snap = snapshot(value)
    assert isinstance(snap, UnreadableAmendment)
    assert snap.path == path
    finding = only(value)
    assert finding.rule == UNREADABLE
    assert error_for(finding) == {
        "name": "PreparationError",
        "code": None,
        "reason": "callback",
        "message": "Request preparation failed: callback.",
        "diagnostics": [],
    }


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {"use": {"add": []}}
    value["use"]["add"].append(value)
    return value


@pytest.mark.parametrize(
    "value",
    [
        {1, 2},
        {"model": (1, 2)},
        {"tools": {1: "x"}},
        {"model": object()},
        {"model": b"bytes"},
        {"model": _deep(100_000)},
        {"model": 10**5000},
        _cycle(),
    ],
    ids=["set", "tuple", "int-key", "object", "bytes", "deep", "huge-int", "cycle"],
)
def test_non_json_values_are_unreadable_and_never_crash(value):
    assert isinstance(snapshot(value), UnreadableAmendment)
    assert rules(value) == [UNREADABLE]


def test_a_non_finite_number_is_a_javascript_number():
    # JSON text 1e400 reads as Infinity in JavaScript and as inf in Python; NaN is falsy there.
    assert snapshot(math.nan) is None
    assert snapshot({"model": math.inf}) == {"model": math.inf}
    assert rules({"model": math.inf}) == []
    assert rules({"inputBudget": {"max": math.inf}}) == ["V10"]


def test_snapshot_is_idempotent_on_a_rich_amendment():
    value = {
        "use": {"add": [{"id": "x"}], "remove": ["y"]},
        "tools": "ab",
        "activeTools": [],
        "model": None,
        "inputBudget": {"max": 3, "extra": 1},
        "messages": [],
    }
    once = snapshot(value)
    assert snapshot(once) == once


# --- V1 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["use the big model", 1, 2.5, True])
def test_v1_a_truthy_value_that_is_not_an_object(value):
    finding = only(value)
    assert finding.rule == "V1"
    assert finding.path == ()
    assert "amendment object" in finding.message


def test_v1_an_object_is_accepted():
    assert rules({}) == []


# --- V2 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "history", "history-recent"])
def test_v2_adding_a_memory_or_history_contributor(kind):
    finding = only(add({"id": "new", "kind": kind}))
    assert finding.rule == "V2"
    assert finding.pointer == "/use/add/0"
    assert "transcript or history ownership" in finding.message


def test_v2_adding_a_context_is_fine_even_with_a_history_child():
    # The reference looks only at the added entry itself, not at its members.
    assert (
        rules(add({"id": "new"}, {"id": "n2", "children": [{"id": "m", "kind": "memory"}]})) == []
    )


# --- V3 ------------------------------------------------------------------------------------------


def test_v3_a_selector_matching_two_top_level_contributors():
    finding = only(remove("dup"))
    assert finding.rule == "V3"
    assert finding.pointer == "/use/remove/0"
    assert "unique" in finding.message


def test_v3_duplicate_selectors_of_one_contributor_are_not_an_error():
    assert rules(remove("notes", "notes")) == []


# --- V4 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("nested", ["kid", "guarded"])
def test_v4_a_selector_naming_only_a_nested_member(nested):
    finding = only(remove(nested))
    assert finding.rule == "V4"
    assert "only top-level contributors" in finding.message


def test_v4_children_count_only_under_a_context_contributor():
    # "inner" is a child of the droppable "optional": no nested member as the reference reads it.
    assert validate_amendment(BASE, remove("inner")) == []


def test_removing_an_id_that_is_not_active_is_a_no_op():
    assert validate_amendment(BASE, remove("nowhere")) == []


# --- V5 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["memory", "history", "recent"])
def test_v5_removing_a_memory_or_history_contributor(target):
    finding = only(remove(target))
    assert finding.rule == "V5"
    assert finding.pointer == "/use/remove/0"


# --- V6 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("policy", "work policy"),
        ("safety", "marked protected"),
        ("wrapper", "member 'guarded'"),
    ],
)
def test_v6_removing_a_protected_contributor(target, why):
    finding = only(remove(target))
    assert finding.rule == "V6"
    assert why in finding.message


def test_v6_a_droppable_top_level_contributor_may_go_with_its_protected_member():
    assert rules(remove("optional")) == []


def test_v6_a_droppable_subtree_is_never_protected():
    assert rules(remove("mixed")) == []


def test_v6_a_protected_flag_on_a_droppable_does_not_protect_it():
    base = baseline(contributors=[{"id": "d", "kind": "droppable", "protected": True}])
    assert rules(remove("d"), base) == []


def test_v6_plain_contributors_can_be_removed():
    assert rules(remove("notes", "guide", "parent")) == []


# --- V7 ------------------------------------------------------------------------------------------


def test_v7_adding_and_removing_an_identity_of_the_baseline():
    finding = only({"use": {"add": [{"id": "notes", "tools": []}], "remove": [{"id": "notes"}]}})
    assert finding.rule == "V7"
    assert finding.pointer == "/use/add/0"


def test_v7_only_when_the_removed_one_is_in_the_baseline():
    assert rules({"use": {"add": [{"id": "ghost"}], "remove": [{"id": "ghost"}]}}) == []


# --- V8 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["search", "lookup", "inner_tool"])
def test_v8_a_contributed_tool_that_already_exists(name):
    finding = only({"tools": {name: {"description": "again"}}})
    assert finding.rule == "V8"
    assert finding.path == ("tools", name)
    assert "unique" in finding.message


def test_v8_the_use_delta_comes_first_removing_the_owner_frees_the_name():
    assert rules({"use": {"remove": [{"id": "guide"}]}, "tools": {"lookup": {}}}) == []


def test_v8_includes_tools_owned_by_added_contributors():
    amendment = {"use": {"add": [{"id": "review", "tools": ["verify"]}]}, "tools": {"verify": {}}}
    assert only(amendment).rule == "V8"


def test_v8_new_tool_names_are_fine():
    assert rules({"tools": {"verify": {}, "summarize": {}}}) == []


# --- V9 ------------------------------------------------------------------------------------------


def test_v9_an_active_tool_missing_from_the_resolved_graph():
    finding = only({"activeTools": ["search", "missing"]})
    assert finding.rule == "V9"
    assert finding.pointer == "/activeTools/1"
    assert finding.message == "activeTools entry 'missing' must name a tool of the resolved graph"


def test_v9_a_non_string_active_tool():
    assert only({"activeTools": [5]}).rule == "V9"


def test_v9_active_tools_may_name_graph_contributed_and_added_tools():
    amendment = {
        "use": {"add": [{"id": "review", "tools": ["verify"]}]},
        "tools": {"summarize": {}},
        "activeTools": ["lookup", "inner_tool", "verify", "summarize"],
    }
    assert rules(amendment) == []


def test_v9_an_empty_active_tools_list_means_send_no_tools():
    assert rules({"activeTools": []}) == []


def test_v9_an_active_tool_whose_owner_is_removed():
    assert only({"use": {"remove": [{"id": "guide"}]}, "activeTools": ["lookup"]}).rule == "V9"


def test_v9_checks_the_baselines_active_tools_when_the_amendment_has_none():
    base = baseline(activeTools=["lookup"])
    finding = only(remove("guide"), base)
    assert finding.rule == "V9"
    assert finding.path == ()
    assert "baseline's activeTools entry 'lookup'" in finding.message
    assert rules({"use": {"remove": [{"id": "guide"}]}, "activeTools": ["search"]}, base) == []


def test_v9_is_not_checked_when_nothing_is_returned():
    base = baseline(activeTools=["nowhere"])
    assert validate_amendment(base, None) == []
    assert rules({}, base) == ["V9"]


# --- V10 and V11 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [True, False, 1.5, 0, -1, 2**53, 10**400, 1e300, "5", None, [], {}])
@pytest.mark.parametrize("key", ["optimizeAt", "max"])
def test_v10_a_limit_that_is_not_a_positive_safe_integer(key, bad):
    finding = only({"inputBudget": {key: bad}})
    assert finding.rule == "V10"
    assert finding.path == ("inputBudget", key)
    assert "positive safe integer" in finding.message
    assert error_for(finding)["name"] == "TypeError"


@pytest.mark.parametrize("good", [1, 5.0, 2**53 - 1])
def test_v10_positive_safe_integers_are_fine(good):
    assert rules({"inputBudget": {"optimizeAt": good, "max": 2**53 - 1}}) == []


def test_v11_optimize_at_above_max():
    finding = only({"inputBudget": {"optimizeAt": 500, "max": 300}})
    assert finding.rule == "V11"
    assert "must not exceed" in finding.message
    assert error_for(finding)["name"] == "TypeError"


def test_v11_equal_limits_are_fine_and_the_baseline_budget_is_replaced_whole():
    assert rules({"inputBudget": {"optimizeAt": 300, "max": 300}}) == []
    # The baseline's optimizeAt (1000) does not survive next to the amendment's max.
    assert rules({"inputBudget": {"max": 300}}) == []


def test_v11_is_not_reported_next_to_a_v10():
    assert rules({"inputBudget": {"optimizeAt": 2**53, "max": 3}}) == ["V10"]


# --- order and every finding ---------------------------------------------------------------------


def test_every_finding_is_listed_in_the_references_order():
    amendment = {
        "inputBudget": {"optimizeAt": 0, "max": 0},
        "activeTools": ["missing"],
        "tools": {"search": {}},
        "use": {
            "remove": [
                {"id": "policy"},
                {"id": "dup"},
                {"id": "kid"},
                {"id": "memory"},
                {"id": "x"},
            ],
            "add": [{"id": "m", "kind": "memory"}, {"id": "x"}],
        },
    }
    found = validate_amendment(BASE, amendment)
    assert [f.rule for f in found] == ["V2", "V6", "V3", "V4", "V5", "V8", "V9", "V10", "V10"]
    assert [f.pointer for f in found][:5] == [
        "/use/add/0",
        "/use/remove/0",
        "/use/remove/1",
        "/use/remove/2",
        "/use/remove/3",
    ]
    assert first_error(found) is found[0]


def test_v7_comes_after_every_removal_finding():
    amendment = {"use": {"add": [{"id": "notes"}], "remove": [{"id": "notes"}, {"id": "policy"}]}}
    assert rules(amendment) == ["V6", "V7"]


# --- outside the V table -------------------------------------------------------------------------


@pytest.mark.parametrize("entry", [7, True, [], {"kind": "context"}, {"id": ""}])
def test_an_added_entry_that_is_not_a_contributor(entry):
    finding = only(add(entry))
    assert finding.rule == ADD_SHAPE
    assert finding.pointer.startswith("/use/add/0")
    assert error_for(finding)["name"] == "TypeError"


@pytest.mark.parametrize("falsy", [None, False, 0, ""])
def test_falsy_added_entries_are_skipped(falsy):
    assert validate_amendment(BASE, add(falsy)) == []


def test_an_added_contributor_bringing_a_tool_with_another_owner():
    finding = only(add({"id": "copy", "children": [{"id": "c", "tools": ["calc"]}]}))
    assert finding.rule == TOOL_COLLISION
    assert finding.pointer == "/use/add/0/children/0/tools/0"
    error = error_for(finding)
    assert error["name"] == "Error" and error["code"] is None and error["diagnostics"] == []
    assert "copy" not in error["message"] and "calc" not in error["message"]


def test_adding_a_contributor_already_in_the_graph_changes_nothing():
    assert rules(add({"id": "guide", "tools": ["lookup"]})) == []


@pytest.mark.parametrize("selector", ["notes", 3, None, {"name": "notes"}, {"id": 3}])
def test_a_selector_that_selects_nothing_is_only_a_warning(selector):
    found = validate_amendment(BASE, {"use": {"remove": [selector]}})
    assert [(f.rule, f.severity) for f in found] == [(NO_OP_SELECTOR, "warning")]
    assert amendment_error(found) is None


def test_warnings_come_after_errors():
    found = validate_amendment(BASE, {"use": {"remove": ["notes", {"id": "policy"}]}})
    assert [f.rule for f in found] == ["V6", NO_OP_SELECTOR]


# --- the error object ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "amendment",
    [
        "x",
        add({"id": "m", "kind": "memory"}),
        remove("dup"),
        remove("kid"),
        remove("memory"),
        remove("policy"),
        {"use": {"add": [{"id": "notes"}], "remove": [{"id": "notes"}]}},
        {"tools": {"search": {}}},
        {"activeTools": ["missing"]},
    ],
    ids=[f"V{n}" for n in range(1, 10)],
)
def test_v1_to_v9_raise_the_composition_error(amendment):
    found = validate_amendment(BASE, amendment)
    error = amendment_error(found)
    assert error == {
        "name": "RequestCompositionError",
        "code": "INVALID_COMPOSITION",
        "message": error["message"],
        "requestId": "request_preparation_composition",
        "diagnostics": [
            {
                "id": "request_preparation_composition:amendment",
                "code": "INVALID_EXECUTION_AMENDMENT",
                "contributor": "prepareStep",
                "message": error["message"],
            }
        ],
    }
    # Content-free: the ids, tool names and values of the amendment stay in the finding.
    for word in ("'", "dup", "kid", "policy", "notes", "search", "missing", '"x"'):
        assert word not in error["message"]


def test_no_error_for_an_accepted_amendment():
    assert amendment_error(validate_amendment(BASE, {"model": "big"})) is None


# --- never raises --------------------------------------------------------------------------------


@settings(max_examples=examples(400), deadline=None)
@given(json_values)
def test_validation_never_raises_and_the_first_finding_fails_the_call(value):
    found = validate_amendment(BASE, value)
    if errors(found):
        assert found[0] is first_error(found)
        assert amendment_error(found)["name"] in {
            "RequestCompositionError",
            "TypeError",
            "Error",
            "PreparationError",
        }


@settings(max_examples=examples(400), deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["use", "tools", "activeTools", "model", "inputBudget"]), json_values
    )
)
def test_amendment_shaped_values_never_raise(value):
    validate_amendment(BASE, value)


@settings(max_examples=examples(300), deadline=None)
@given(json_values)
def test_snapshot_never_raises_and_is_idempotent(value):
    once = snapshot(value)
    assert snapshot(once) == once
