"""spec/crux.md §5 and §6: resource reads and the decision inspection record, exactly shaped."""

from __future__ import annotations

import hashlib
import re

import pytest
from pydantic import ValidationError

from studio.core.json.canonical import NotCanonicalizable
from studio.core.json.js_values import JsValue
from studio.core.sealed_request import new_sealed_request_id
from studio.core.step.decision_record import (
    amendment_counts,
    pinned_reads,
    resource_read,
    step_decision_record,
)
from studio.core.step.value_hash import stringify_json, value_hash


def canonical_json(value) -> bytes:
    return stringify_json(value).encode()


REQUEST_ID = "request_" + "ab" * 16
RECORD_KEYS = ["operation", "stepIndex", "reason", "amendment", "resources", "sealedRequestId"]
COUNT_KEYS = [
    "addedContributors",
    "removedContributors",
    "contributedTools",
    "activeTools",
    "modelChanged",
    "inputBudgetChanged",
]


def record(amendment, **kw):
    kw.setdefault("step_index", 0)
    kw.setdefault("reason", "initial")
    kw.setdefault("sealed_request_id", REQUEST_ID)
    return step_decision_record(amendment=amendment, **kw).to_json()


def test_the_record_has_exactly_the_documented_keys():
    out = record({"model": "big"})
    assert list(out) == RECORD_KEYS
    assert list(out["amendment"]) == COUNT_KEYS
    assert out["operation"] == "language"


def test_nothing_returned_still_gives_a_record_with_empty_counts():
    assert record(None) == {
        "operation": "language",
        "stepIndex": 0,
        "reason": "initial",
        "amendment": {
            "addedContributors": 0,
            "removedContributors": 0,
            "contributedTools": 0,
            "activeTools": None,
            "modelChanged": False,
            "inputBudgetChanged": False,
        },
        "resources": [],
        "sealedRequestId": REQUEST_ID,
    }


def test_counts_are_what_the_hook_asked_for():
    out = record(
        {
            "use": {
                "add": [{"id": "a"}, {"id": "a"}],
                "remove": [{"id": "nowhere"}, {"id": "x"}, {"id": "x"}],
            },
            "tools": {"t1": {}, "t2": {}},
            "activeTools": ["t1", "t1", "t2"],
            "model": "small",
            "inputBudget": {"max": 10},
            "messages": ["dropped"],
        },
        step_index=3,
        reason="tool-result",
    )
    assert out["stepIndex"] == 3 and out["reason"] == "tool-result"
    assert out["amendment"] == {
        "addedContributors": 2,
        "removedContributors": 3,
        "contributedTools": 2,
        "activeTools": 3,
        "modelChanged": True,
        "inputBudgetChanged": True,
    }


def test_presence_flags_follow_the_snapshot():
    counts = amendment_counts({"model": None, "inputBudget": 0, "activeTools": []})
    assert counts.model_changed is True
    assert counts.input_budget_changed is False
    assert counts.active_tools == 0


def test_only_an_accepted_decision_has_counts():
    with pytest.raises(ValueError):
        amendment_counts("not an object")
    with pytest.raises(ValueError):
        amendment_counts({"activeTools": {}})


def test_sealed_request_ids_have_the_references_form():
    ids = {new_sealed_request_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(re.fullmatch(r"request_[0-9a-f]{32}", i) for i in ids)
    assert re.fullmatch(
        r"request_[0-9a-f]{32}", record({}, sealed_request_id=None)["sealedRequestId"]
    )


@pytest.mark.parametrize("bad", ["request_1", "request_" + "AB" * 16, "req_" + "a" * 32])
def test_a_malformed_sealed_request_id_is_refused(bad):
    with pytest.raises(ValidationError):
        record({}, sealed_request_id=bad)


def test_a_resource_read_records_the_value_hash_as_revision():
    read = resource_read("working-state:support-control", {"escalated": True})
    expected = hashlib.sha256(b'{"escalated":true}').hexdigest()
    assert read.to_json() == {
        "identity": "working-state:support-control",
        "revision": expected,
        "valueHash": expected,
    }


def test_resource_reads_are_pinned_once_per_identity_in_completion_order():
    reads = [
        resource_read("blackboard:b", 1),
        resource_read("memory:m:block", None),
        resource_read("blackboard:b", 2),
    ]
    out = record({}, resources=reads)["resources"]
    assert [r["identity"] for r in out] == ["blackboard:b", "memory:m:block"]
    assert out[0]["valueHash"] == value_hash(1)
    assert pinned_reads(reads) == (reads[0], reads[1])


def test_a_resource_with_no_value_hashes_null():
    null_hash = "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"
    assert resource_read("working-state:x", None).value_hash == null_hash


@pytest.mark.parametrize(
    ("value", "digest"),
    [
        (None, "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"),
        ({}, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"),
        ([], "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"),
        (True, "b5bea41b6c623f7c09f1bf24dcae58ebab3c0cdd90ad966bc43a45b44867e12b"),
        ({"b": 1, "a": 2}, "d3626ac30a87e6f7a6428233b3c68299976865fa5508e4267c5415c76af7a772"),
    ],
)
def test_value_hash_on_known_vectors(value, digest):
    assert value_hash(value) == digest


def test_value_hash_on_the_rfc_8785_example():
    # RFC 8785 §3.2.2: the canonical form of its sample object.
    value = {
        "numbers": [333333333.33333329, 1e30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000f\u000aA'\u0042\u0022\u005c\\\"/",
        "literals": [None, True, False],
    }
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    ).encode()
    assert canonical_json(value) == expected
    assert value_hash(value) == hashlib.sha256(expected).hexdigest()


def test_value_hash_sorts_keys_by_utf16_code_units_as_rfc_8785_does():
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    order = [k for k in canonical_json(value).decode().split('"')[1::4]]
    assert order == ["\\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


@pytest.mark.parametrize(
    ("value", "text"),
    [(1e21, b"1e+21"), (1e-7, b"1e-7"), (-0.0, b"0"), (5.0, b"5"), (2**60, b"1152921504606847000")],
)
def test_numbers_hash_as_javascript_writes_them(value, text):
    assert canonical_json(value) == text


@pytest.mark.parametrize(
    "value",
    [JsValue("12n", "bigint", True), {"n": [JsValue("0n", "bigint", False)]}, {1, 2}, b"x"],
    ids=["bigint", "bigint-inside", "set", "bytes"],
)
def test_a_value_the_references_hash_cannot_write_cannot_be_read_into_the_record(value):
    # JSON.stringify throws on a BigInt, and the reference then fails the callback.
    with pytest.raises(NotCanonicalizable):
        resource_read("working-state:x", value)
