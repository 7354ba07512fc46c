"""spec/crux.md §7: the step baseline, parsed with every finding and never raising."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings

from studio.core.step.baseline import (
    MAX_CONTRIBUTOR_DEPTH,
    Contributor,
    InputBudget,
    StepBaseline,
    json_problem,
    parse_baseline,
)
from tests.support.hypothesis_profiles import examples
from tests.support.json_strategies import json_values, python_values
from tests.support.step_samples import BASELINE_JSON, baseline, baseline_json

MINIMAL = {"contributors": [], "tools": [], "model": None}


def findings_of(value, at=()):
    parsed = parse_baseline(value, at)
    assert isinstance(parsed, list), parsed
    return {(f.pointer, f.rule) for f in parsed}, [f.message for f in parsed]


def test_a_minimal_baseline_and_its_defaults():
    parsed = parse_baseline(MINIMAL)
    assert parsed == StepBaseline(contributors=(), tools=(), model=None)
    assert parsed.active_tools is None and parsed.input_budget is None


def test_a_string_is_shorthand_for_a_context_contributor():
    parsed = parse_baseline({**MINIMAL, "contributors": ["notes"]})
    assert parsed.contributors == (Contributor(id="notes"),)
    assert parsed.contributors[0].kind == "context" and not parsed.contributors[0].protected


def test_the_full_sample_round_trips_through_json():
    parsed = parse_baseline(BASELINE_JSON)
    assert isinstance(parsed, StepBaseline)
    assert parse_baseline(parsed.to_json()) == parsed
    assert parsed.input_budget == InputBudget(optimize_at=1000, max=2000)
    # Contributors' tools first, then the baseline's own, as the reference resolves them.
    assert parsed.graph_tools() == ["lookup", "inner_tool", "search", "calc"]


def test_duplicate_top_level_ids_are_allowed_they_are_what_v3_is_about():
    assert isinstance(parse_baseline({**MINIMAL, "contributors": ["a", "a"]}), StepBaseline)


@pytest.mark.parametrize("value", [None, [], "baseline", 3, True])
def test_a_baseline_must_be_an_object(value):
    where, messages = findings_of(value)
    assert where == {("", "baseline")}
    assert "must be an object" in messages[0]


def test_missing_and_unknown_fields():
    where, messages = findings_of({"tool": []})
    assert where == {
        ("/tool", "baseline"),
        ("/contributors", "baseline"),
        ("/tools", "baseline"),
        ("/model", "baseline"),
    }
    assert any("unknown baseline field 'tool'" in m for m in messages)


def test_every_contributor_finding_has_a_path_naming_the_field():
    value = {
        **MINIMAL,
        "contributors": [
            "",
            7,
            {"id": 3, "kind": "note", "protected": "yes", "tools": "search", "colour": 1},
            {"id": "p", "children": {"id": "c"}},
            {"id": "q", "children": [{"id": "r", "tools": ["x", "x", ""]}]},
        ],
    }
    where, messages = findings_of(value)
    assert {w for w, _ in where} == {
        "/contributors/0",
        "/contributors/1",
        "/contributors/2/id",
        "/contributors/2/kind",
        "/contributors/2/protected",
        "/contributors/2/tools",
        "/contributors/2/colour",
        "/contributors/3/children",
        "/contributors/4/children/0/tools/1",
        "/contributors/4/children/0/tools/2",
    }
    assert any("contributors[2].kind must be one of context, memory" in m for m in messages)
    assert any("contributors[2].protected must be true or false" in m for m in messages)


def test_tools_and_active_tools_must_be_names():
    where, _ = findings_of({**MINIMAL, "tools": ["a", "a", 3], "activeTools": "a"})
    assert {w for w, _ in where} == {"/tools/1", "/tools/2", "/activeTools"}


def test_active_tools_may_repeat_and_may_be_null():
    assert isinstance(parse_baseline({**MINIMAL, "activeTools": None}), StepBaseline)
    assert parse_baseline({**MINIMAL, "activeTools": ["a", "a"]}).active_tools == ("a", "a")


@pytest.mark.parametrize("bad", [0, -3, 1.5, True, "10", 2**53, None])
def test_the_baseline_budget_limits_are_positive_safe_integers(bad):
    where, messages = findings_of({**MINIMAL, "inputBudget": {"max": bad}})
    assert where == {("/inputBudget/max", "baseline")}
    assert "inputBudget.max must be a positive safe integer" in messages[0]


def test_the_baseline_budget_order_and_unknown_keys():
    where, messages = findings_of({**MINIMAL, "inputBudget": {"optimizeAt": 9, "max": 3, "min": 1}})
    assert {w for w, _ in where} == {"/inputBudget/optimizeAt", "/inputBudget/min"}
    assert any(
        "inputBudget.optimizeAt (9) must not exceed inputBudget.max (3)" in m for m in messages
    )
    assert parse_baseline({**MINIMAL, "inputBudget": {"max": 3.0}}).input_budget.max == 3


def test_a_tool_name_has_one_owner_in_the_graph():
    value = {
        **MINIMAL,
        "tools": ["search"],
        "contributors": [
            {"id": "a", "tools": ["search"]},
            {"id": "b", "tools": ["x"], "children": [{"id": "c", "tools": ["x"]}]},
        ],
    }
    where, messages = findings_of(value)
    assert {w for w, _ in where} == {
        "/contributors/0/tools/0",
        "/contributors/1/children/0/tools/0",
    }
    assert any("already provided by the baseline's tools" in m for m in messages)
    assert any("already provided by contributor 'b'" in m for m in messages)


def test_the_model_must_be_json():
    where, _ = findings_of({**MINIMAL, "model": {"options": [math.nan]}})
    assert where == {("/model/options/0", "baseline")}


def test_contributor_nesting_is_bounded():
    node: dict = {"id": "leaf"}
    for level in range(MAX_CONTRIBUTOR_DEPTH + 5):
        node = {"id": f"n{level}", "children": [node]}
    parsed = parse_baseline({**MINIMAL, "contributors": [node]})
    assert isinstance(parsed, list)
    assert "nested at most" in parsed[0].message


def test_paths_can_start_inside_a_document():
    where, messages = findings_of({**MINIMAL, "tools": [1]}, at=("baseline",))
    assert where == {("/baseline/tools/0", "baseline")}
    assert messages[0].startswith("baseline.tools[0]")


def test_json_problem_walks_without_recursion():
    deep: list = []
    for _ in range(50_000):
        deep = [deep]
    assert json_problem(deep) is not None
    assert json_problem({"a": [1, 2.5, "x", None, True, {"b": []}]}) is None
    assert json_problem({"a": {1, 2}})[0] == ("a",)


def test_baseline_json_changes_apply():
    assert baseline_json(model="big")["model"] == "big"


@settings(max_examples=examples(300), deadline=None)
@given(json_values)
def test_parse_baseline_never_raises_on_json(value):
    parse_baseline(value)


@settings(max_examples=examples(300), deadline=None)
@given(python_values)
def test_parse_baseline_never_raises_on_python_values(value):
    parse_baseline({**MINIMAL, "contributors": [value], "model": value})


def test_the_shared_baseline_parses_with_every_kind_of_contributor():
    kinds = {c.kind for c in baseline().contributors}
    assert kinds == {"context", "work-policy", "memory", "history", "history-recent", "droppable"}


def test_baseline_json_returns_an_independent_copy():
    changed = baseline_json()
    changed["contributors"].append("extra")
    assert "extra" not in BASELINE_JSON["contributors"]
