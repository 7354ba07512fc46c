"""``check-amendment``: a document in; the verdict, the record and the effective change out."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.core.findings import errors
from studio.core.step.amendment import validate_amendment
from studio.core.step.check import (
    AmendmentDocumentError,
    amendment_document_findings,
    check_amendment,
    parse_document,
)
from studio.core.step.effective import effective_step
from tests.support.hypothesis_profiles import examples
from tests.support.json_strategies import json_values, python_values
from tests.support.step_samples import baseline, baseline_json
from tests.support.step_samples import json_values as amendment_values

REQUEST_ID = "request_" + "0f" * 16
RESULT_KEYS = {"valid", "error", "explanation", "inspection", "effective", "warnings"}
ERROR_KEYS = {"name", "code", "message", "diagnostics"}
OPTIONAL_ERROR_KEYS = {"requestId", "reason", "rule"}
DOCUMENT_KEYS = ["baseline", "amendment", "step", "resources"]


def document(amendment, **extra):
    return {"baseline": baseline_json(), "amendment": amendment, **extra}


def check(amendment, **extra):
    return check_amendment(document(amendment, **extra), sealed_request_id=REQUEST_ID)


def test_an_accepted_amendment_gives_the_record_and_the_effective_change():
    result = check(
        {
            "use": {"add": [{"id": "review"}], "remove": [{"id": "notes"}, {"id": "nowhere"}]},
            "model": "big",
            "inputBudget": {"max": 24000},
        },
        step={"index": 2, "reason": "validation-retry", "messages": []},
        resources=[
            {"identity": "working-state:support-control", "value": {"escalated": True}},
            {"identity": "working-state:support-control", "value": {"escalated": True}},
        ],
    )
    assert set(result) == RESULT_KEYS
    assert result["valid"] is True and result["error"] is None
    inspection = result["inspection"]
    assert inspection["stepIndex"] == 2 and inspection["reason"] == "validation-retry"
    assert inspection["amendment"]["addedContributors"] == 1
    assert inspection["amendment"]["removedContributors"] == 2
    assert inspection["amendment"]["modelChanged"] is True
    assert len(inspection["resources"]) == 1
    assert inspection["sealedRequestId"] == REQUEST_ID
    effective = result["effective"]
    assert effective["addedContributors"] == ["review"]
    assert effective["removedContributors"] == ["notes"]
    assert effective["model"] == "big"
    assert effective["inputBudget"] == {"max": 24000}
    json.dumps(result)


def test_the_step_defaults_to_the_initial_boundary():
    result = check(None)
    assert result["inspection"]["stepIndex"] == 0
    assert result["inspection"]["reason"] == "initial"
    assert result["effective"]["model"] == "small"


def test_a_rejected_amendment_gives_the_error_and_the_studios_explanation_beside_it():
    result = check({"activeTools": ["missing"]})
    assert result["valid"] is False
    assert result["inspection"] is None and result["effective"] is None
    error = result["error"]
    assert error["name"] == "RequestCompositionError"
    assert error["code"] == "INVALID_COMPOSITION"
    assert error["requestId"] == "request_preparation_composition"
    assert [(d["id"], d["code"], d["contributor"]) for d in error["diagnostics"]] == [
        ("request_preparation_composition:amendment", "INVALID_EXECUTION_AMENDMENT", "prepareStep")
    ]
    # The error quotes nothing the amendment holds; the explanation names it.
    assert "missing" not in error["message"]
    assert error["diagnostics"][0]["message"] == error["message"]
    explanation = result["explanation"]
    assert explanation["path"] == "/activeTools/0"
    assert explanation["rule"] == "V9"
    assert "'missing'" in explanation["message"]


def test_a_value_that_cannot_be_read_is_a_preparation_error_with_its_reason():
    result = check({"activeTools": {}})
    assert result["error"]["name"] == "PreparationError"
    assert result["error"]["reason"] == "callback"
    assert result["error"]["message"] == "Request preparation failed: callback."
    assert result["explanation"]["path"] == "/activeTools"


@pytest.mark.parametrize(
    ("amendment", "name"),
    [
        ({"inputBudget": {"max": True}}, "TypeError"),
        ({"inputBudget": {"optimizeAt": 9, "max": 3}}, "TypeError"),
        ({"activeTools": {}}, "PreparationError"),
    ],
)
def test_errors_outside_the_composition_rules(amendment, name):
    result = check(amendment)
    assert result["valid"] is False
    assert result["error"]["name"] == name
    assert result["error"]["code"] is None


def test_a_fresh_sealed_request_id_when_none_is_given():
    result = check_amendment(document({}))
    assert re.fullmatch(r"request_[0-9a-f]{32}", result["inspection"]["sealedRequestId"])


@pytest.mark.parametrize(
    ("doc", "pointers"),
    [
        (None, {""}),
        ([], {""}),
        ({}, {"/baseline", "/amendment"}),
        ({"baseline": baseline_json()}, {"/amendment"}),
        ({"baseline": baseline_json(), "amendment": None, "hook": "x"}, {"/hook"}),
        (
            {"baseline": {"tools": []}, "amendment": None},
            {"/baseline/contributors", "/baseline/model"},
        ),
        (document(None, step={"index": -1, "reason": "retry"}), {"/step/index", "/step/reason"}),
        (document(None, step={"index": True}), {"/step/index"}),
        (document(None, step=[]), {"/step"}),
        (document(None, resources={}), {"/resources"}),
        (
            document(None, resources=[{"identity": "", "value": 1}, {"value": 1}, 3]),
            {"/resources/0/identity", "/resources/1", "/resources/2"},
        ),
        (
            document(None, resources=[{"identity": "working-state:x", "value": {1, 2}}]),
            {"/resources/0/value"},
        ),
    ],
)
def test_a_malformed_document_raises_with_every_finding(doc, pointers):
    with pytest.raises(AmendmentDocumentError) as caught:
        check_amendment(doc)
    assert {f.pointer for f in caught.value.findings} == pointers
    assert "malformed" in str(caught.value)
    assert {f.pointer for f in amendment_document_findings(doc)} == pointers


def test_editor_findings_point_into_the_document():
    doc = document({"use": {"remove": [{"id": "policy"}, "notes"]}, "activeTools": ["missing"]})
    found = amendment_document_findings(doc)
    assert [(f.pointer, f.rule, f.severity) for f in found] == [
        ("/amendment/use/remove/0", "V6", "error"),
        ("/amendment/activeTools/0", "V9", "error"),
        ("/amendment/use/remove/1", "no-op-selector", "warning"),
    ]


def test_editor_findings_for_a_clean_document_are_empty():
    assert amendment_document_findings(document({"model": "big"})) == []


def test_parse_document_keeps_the_amendment_raw():
    parsed = parse_document(document({"messages": [], "model": None}))
    assert parsed.amendment == {"messages": [], "model": None}
    assert parsed.baseline == baseline()


def _check_result(result):
    assert set(result) == RESULT_KEYS
    assert result["valid"] is (result["error"] is None)
    assert (result["inspection"] is None) is (not result["valid"])
    assert (result["effective"] is None) is (not result["valid"])
    if result["error"] is not None:
        assert ERROR_KEYS <= set(result["error"]) <= ERROR_KEYS | OPTIONAL_ERROR_KEYS
        assert result["explanation"]["path"].startswith("/") or result["explanation"]["path"] == ""
    json.dumps(result, allow_nan=False)


@settings(max_examples=examples(400), deadline=None)
@given(json_values | amendment_values)
def test_check_amendment_never_raises_on_any_json_amendment(amendment):
    result = check_amendment(document(amendment), sealed_request_id=REQUEST_ID)
    _check_result(result)
    base = baseline()
    assert result["valid"] is not bool(errors(validate_amendment(base, amendment)))
    assert (effective_step(base, amendment) is None) is (not result["valid"])


@settings(max_examples=examples(300), deadline=None)
@given(python_values)
def test_check_amendment_never_raises_on_python_values(amendment):
    _check_result(check_amendment(document(amendment), sealed_request_id=REQUEST_ID))


@settings(max_examples=examples(300), deadline=None)
@given(
    st.dictionaries(st.sampled_from(["baseline", "amendment", "step", "resources"]), json_values)
)
def test_a_document_is_either_checked_or_refused_with_findings(doc):
    try:
        _check_result(check_amendment(doc, sealed_request_id=REQUEST_ID))
    except AmendmentDocumentError as exc:
        assert exc.findings
    amendment_document_findings(doc)
