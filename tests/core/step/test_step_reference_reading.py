"""spec/crux.md §8: the places where the studio reads an amendment as the reference's code does.

The JSON vectors in tests/vectors/crux hold the document-level cases; these are the ones a JSON
document cannot carry (JavaScript values, depth, Python API values) and the rule tables.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import pytest

from studio.core.findings import Finding
from studio.core.json.canonical import NotCanonicalizable
from studio.core.json.js_values import JsValue
from studio.core.step.amendment import (
    ADD_SHAPE,
    COMPOSITION_RULES,
    ERROR_MESSAGES,
    TOOL_COLLISION,
    TYPE_ERROR_RULES,
    error_for,
    plan_amendment,
)
from studio.core.step.baseline import StepBaseline, parse_baseline
from studio.core.step.check import AmendmentDocumentError, check_amendment
from studio.core.step.effective import effective_step
from studio.core.step.value_hash import (
    HASHED_MAX_DEPTH,
    js_number_text,
    stringify_json,
    value_hash,
)


def base(**fields: Any) -> StepBaseline:
    parsed = parse_baseline({"contributors": [], "tools": [], "model": "m", **fields})
    assert isinstance(parsed, StepBaseline), parsed
    return parsed


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


# ---- the hash domain --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (JsValue("2024-01-01T00:00:00.000Z", "Date", True), "{}"),
        ({"at": JsValue("Invalid Date", "Date", True)}, '{"at":{}}'),
        (JsValue("NaN", "number", False), "null"),
        ([JsValue("-Infinity", "number", True)], "[null]"),
        (math.nan, "null"),
        (-math.inf, "null"),
        (-(10**400), "null"),
        (2**1023 * 2 - 1, "null"),  # a 1024-bit integer rounds past the largest double
        (2**1023, "8.98846567431158e+307"),
    ],
)
def test_values_outside_json_hash_as_json_stringify_writes_them(value, text):
    assert stringify_json(value) == text
    assert value_hash(value) == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("kind", ["bigint", "function", "symbol"])
def test_a_bigint_or_a_value_stringify_drops_cannot_be_hashed(kind):
    with pytest.raises(NotCanonicalizable):
        stringify_json({"x": JsValue("1", kind, True)})


def test_a_value_nested_1500_levels_hashes_without_recursion():
    value = nested(HASHED_MAX_DEPTH)
    text = "[" * HASHED_MAX_DEPTH + '"leaf"' + "]" * HASHED_MAX_DEPTH
    assert stringify_json(value) == text
    assert len(stringify_json(nested(50_000))) == 100_006


def test_a_cycle_cannot_be_hashed():
    value: dict[str, Any] = {}
    value["self"] = value
    with pytest.raises(NotCanonicalizable):
        stringify_json(value)


def test_a_shared_value_is_not_a_cycle():
    shared = [1]
    assert stringify_json({"a": shared, "b": shared}) == '{"a":[1],"b":[1]}'


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (-2.5e-7, "-2.5e-7"),
        (5e-324, "5e-324"),
        (0.1 + 0.2, "0.30000000000000004"),
        (-0.0, "0"),
        (123.0, "123"),
    ],
)
def test_numbers_are_written_as_javascript_writes_them(number, text):
    assert js_number_text(number) == text


def document(resources: list[Any], amendment: Any = None) -> dict[str, Any]:
    return {
        "baseline": {"contributors": [], "tools": [], "model": "m"},
        "amendment": amendment,
        "resources": resources,
    }


def test_check_amendment_hashes_a_resource_nested_1500_levels():
    value = nested(HASHED_MAX_DEPTH - 1)  # 1,499 arrays around a string: 1,500 levels
    result = check_amendment(document([{"identity": "working-state:a", "value": value}]))
    expected = hashlib.sha256(stringify_json(value).encode()).hexdigest()
    assert result["inspection"]["resources"][0]["valueHash"] == expected


def test_check_amendment_refuses_a_resource_nested_deeper_than_node_can_hash():
    value = nested(HASHED_MAX_DEPTH + 1)
    with pytest.raises(AmendmentDocumentError) as caught:
        check_amendment(document([{"identity": "working-state:a", "value": value}]))
    [finding] = caught.value.findings
    assert finding.pointer.startswith("/resources/0/value/0/0")
    assert "1500 levels" in finding.message


# ---- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", sorted(COMPOSITION_RULES | TYPE_ERROR_RULES | {TOOL_COLLISION}))
def test_every_rule_has_a_content_free_message_and_the_finding_keeps_the_detail(rule):
    finding = Finding(("activeTools", 0), "activeTools entry 'secret-tool' is wrong", rule)
    error = error_for(finding)
    assert error["message"] == ERROR_MESSAGES[rule]
    assert "secret-tool" not in error["message"]
    if rule in COMPOSITION_RULES:
        assert error["requestId"] == "request_preparation_composition"
        assert error["diagnostics"][0]["message"] == error["message"]
    else:
        assert "requestId" not in error and error["diagnostics"] == []
        assert error["name"] == ("TypeError" if rule in TYPE_ERROR_RULES else "Error")


# ---- contributor specs ------------------------------------------------------------------------


@pytest.mark.parametrize("tag", [5, "", None, True])
def test_a_tag_that_is_not_a_non_empty_string_is_no_contributor(tag):
    if tag is None:
        # null is a missing tag
        assert plan_amendment(base(), {"use": {"add": [{"id": "x", "_tag": tag}]}}).valid
        return
    plan = plan_amendment(base(), {"use": {"add": [{"id": "x", "_tag": tag}]}})
    assert [f.rule for f in plan.findings] == [ADD_SHAPE]
    assert plan.findings[0].pointer == "/use/add/0/_tag"


def test_a_tag_round_trips_through_the_baseline():
    parsed = base(contributors=[{"id": "rules", "_tag": "WorkPolicy"}])
    assert parsed.contributors[0].tag == "WorkPolicy"
    assert parsed.contributors[0].rule_kind == "work-policy"
    assert parse_baseline(parsed.to_json()) == parsed


def test_a_bad_tag_in_the_baseline_is_a_baseline_finding():
    found = parse_baseline({"contributors": [{"id": "a", "_tag": 3}], "tools": [], "model": None})
    assert isinstance(found, list)
    assert [f.pointer for f in found] == ["/contributors/0/_tag"]


def test_a_string_add_and_the_same_object_read_alike():
    as_string = effective_step(base(), {"use": {"add": ["review"]}})
    as_object = effective_step(base(), {"use": {"add": [{"id": "review"}]}})
    assert as_string is not None and as_object is not None
    assert as_string.to_json() == as_object.to_json()


def test_a_javascript_hooks_identities_decide_instead_of_equality():
    baseline = base(contributors=[{"id": "guide", "tools": ["lookup"]}])
    entry = {"id": "guide", "tools": ["lookup"]}
    # The stand-in's own object is the baseline's contributor: nothing added, nothing to say.
    same = plan_amendment(baseline, {"use": {"add": [entry]}}, identities=["stub"])
    assert same.valid and same.added == [] and same.findings == []
    # A fresh object with the same fields is a second contributor, whose tool collides.
    fresh = plan_amendment(baseline, {"use": {"add": [entry]}}, identities=["object:0"])
    assert [f.rule for f in fresh.findings] == [TOOL_COLLISION]


# ---- effective change -------------------------------------------------------------------------


def test_the_support_tool_stays_active_when_the_hook_returns_nothing():
    baseline = base(tools=["search", "__crux_ReadOffload"], activeTools=["search"])
    effective = effective_step(baseline, None)
    assert effective is not None
    assert effective.active_tools == ("search", "__crux_ReadOffload")


def test_the_decision_record_counts_what_was_asked_not_the_support_tool():
    doc = document([], {"activeTools": ["search"]})
    doc["baseline"]["tools"] = ["search", "__crux_ReadOffload"]
    result = check_amendment(doc)
    assert result["inspection"]["amendment"]["activeTools"] == 1
    assert result["effective"]["activeTools"] == ["search", "__crux_ReadOffload"]


def test_an_infinite_model_is_valid_and_written_as_null():
    result = check_amendment(document([], {"model": math.inf}))
    assert result["valid"] is True
    assert result["effective"]["model"] is None
