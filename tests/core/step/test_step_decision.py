"""spec/crux.md §3 to §6: the decision after a step hook returned, and the failures before it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings

from studio.core.json.canonical import value_hash
from studio.core.sealed_request import SEALED_REQUEST_ID_PATTERN
from studio.core.step.decision import (
    PREPARATION_TIMEOUT_MS,
    StepVerdict,
    decide_step,
    preparation_failure,
    resource_read_failure,
    step_timeout_ms,
)
from studio.core.step.sample import StepSample, parse_step_sample
from studio.core.turn_error import HookRef
from tests.support.hypothesis_profiles import examples
from tests.support.step_samples import baseline_json, json_values

REQUEST_ID = "request_" + "cd" * 16
VALUES = {
    "working-state:control": {"escalated": True, "score": 0.5, "b": 1, "a": 2},
    "blackboard:plan": [1, "two", None],
    "memory:support:prefs": None,
}
ZERO_COUNTS = {
    "addedContributors": 0,
    "removedContributors": 0,
    "contributedTools": 0,
    "activeTools": None,
    "modelChanged": False,
    "inputBudgetChanged": False,
}


def sample(index: int = 0, reason: str = "initial", **changes: Any) -> StepSample:
    value: dict[str, Any] = {
        "contract": "step",
        "baseline": baseline_json(),
        "step": {"index": index, "reason": reason},
        "resources": [{"identity": k, "value": v} for k, v in VALUES.items()]
        + [{"identity": "blackboard:down", "failure": "storage-unavailable"}],
    }
    value.update(changes)
    parsed = parse_step_sample(value)
    assert isinstance(parsed, StepSample), parsed
    return parsed


def decide(returned: Any, reads: list[str] | tuple[str, ...] = (), **kw: Any) -> StepVerdict:
    kw.setdefault("sealed_request_id", REQUEST_ID)
    return decide_step(sample(), returned, list(reads), **kw)


# ---- accepted decisions ----------------------------------------------------------------------


@pytest.mark.parametrize("returned", [None, False, 0, "", {}, []])
def test_nothing_returned_still_writes_the_record_with_zero_counts(returned):
    decision = decide(returned)
    assert decision.ok and decision.error is None
    assert decision.decision_record is not None
    assert decision.decision_record.to_json() == {
        "operation": "language",
        "stepIndex": 0,
        "reason": "initial",
        "amendment": ZERO_COUNTS,
        "resources": [],
        "sealedRequestId": REQUEST_ID,
    }
    assert decision.effective is not None
    assert decision.effective.to_json()["tools"] == decision.effective.to_json()["tools"]
    assert decision.effective.added_contributors == ()


def test_the_record_takes_the_step_index_and_reason_from_the_sample():
    decision = decide_step(sample(3, "validation-retry"), None, [])
    record = decision.decision_record.to_json()
    assert (record["stepIndex"], record["reason"]) == (3, "validation-retry")
    assert re.match(SEALED_REQUEST_ID_PATTERN, record["sealedRequestId"])


def test_a_valid_amendment_is_counted_and_applied():
    returned = {
        "use": {"add": [{"id": "review", "tools": ["verify"]}], "remove": [{"id": "notes"}]},
        "tools": {"draft": {"description": "x"}},
        "activeTools": ["verify", "draft"],
        "model": "big",
        "inputBudget": {"optimizeAt": 100, "max": 200},
        "messages": ["dropped by the snapshot"],
    }
    decision = decide(returned)
    assert decision.ok
    assert decision.decision_record.to_json()["amendment"] == {
        "addedContributors": 1,
        "removedContributors": 1,
        "contributedTools": 1,
        "activeTools": 2,
        "modelChanged": True,
        "inputBudgetChanged": True,
    }
    effective = decision.effective.to_json()
    assert effective["addedContributors"] == ["review"]
    assert effective["removedContributors"] == ["notes"]
    assert effective["activeTools"] == ["verify", "draft"]
    assert effective["model"] == "big"
    assert effective["inputBudget"] == {"optimizeAt": 100, "max": 200}
    assert "messages" not in decision.amendment


def test_the_inspection_hashes_the_sample_values_of_the_reads_in_completion_order():
    reads = ["blackboard:plan", "working-state:control", "blackboard:plan", "memory:support:prefs"]
    record = decide(None, reads).decision_record.to_json()
    assert record["resources"] == [
        {"identity": i, "revision": value_hash(VALUES[i]), "valueHash": value_hash(VALUES[i])}
        for i in ("blackboard:plan", "working-state:control", "memory:support:prefs")
    ]


def test_a_read_the_hook_api_could_not_have_recorded_is_an_engine_error():
    with pytest.raises(ValueError, match="not declared"):
        decide(None, ["working-state:nowhere"])
    with pytest.raises(ValueError, match="storage-unavailable"):
        decide(None, ["blackboard:down"])


# ---- failed decisions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("returned", "rule", "path"),
    [
        ("use the big model", "V1", None),
        ({"use": {"add": [{"id": "m2", "kind": "memory"}]}}, "V2", "/use/add/0"),
        ({"use": {"remove": [{"id": "dup"}]}}, "V3", "/use/remove/0"),
        ({"use": {"remove": [{"id": "kid"}]}}, "V4", "/use/remove/0"),
        ({"use": {"remove": [{"id": "history"}]}}, "V5", "/use/remove/0"),
        ({"use": {"remove": [{"id": "policy"}]}}, "V6", "/use/remove/0"),
        ({"use": {"add": [{"id": "notes"}], "remove": [{"id": "notes"}]}}, "V7", "/use/add/0"),
        ({"tools": {"search": {}}}, "V8", "/tools/search"),
        ({"activeTools": ["search", "missing"]}, "V9", "/activeTools/1"),
    ],
)
def test_a_composition_rule_failure_is_invalid_composition_with_its_path(returned, rule, path):
    decision = decide(returned, ["blackboard:plan"])
    assert not decision.ok
    assert decision.decision_record is None and decision.effective is None
    error = decision.error
    assert error.kind == "invalid_composition"
    assert error.reason == "callback"
    assert error.path == path
    assert error.details["rule"] == rule
    assert error.details["code"] == "INVALID_COMPOSITION"
    assert error.details["error"]["name"] == "RequestCompositionError"
    [diagnostic] = error.details["error"]["diagnostics"]
    assert diagnostic["code"] == "INVALID_EXECUTION_AMENDMENT"
    assert error.message == decision.findings[0].message
    assert [r.identity for r in decision.reads] == ["blackboard:plan"]


@pytest.mark.parametrize(
    ("budget", "rule", "path"),
    [
        ({"max": 0}, "V10", "/inputBudget/max"),
        ({"optimizeAt": 1.5}, "V10", "/inputBudget/optimizeAt"),
        ({"max": 2**53}, "V10", "/inputBudget/max"),
        ({"optimizeAt": 300, "max": 200}, "V11", "/inputBudget/optimizeAt"),
    ],
)
def test_a_budget_type_error_is_invalid_result(budget, rule, path):
    error = decide({"inputBudget": budget}).error
    assert error.kind == "invalid_result"
    assert error.path == path
    assert error.details["rule"] == rule
    assert error.details["error"]["name"] == "TypeError"
    assert "code" not in error.details


def test_an_unreadable_value_is_invalid_result_with_the_callback_error():
    error = decide({"use": {"add": {"id": "x"}}}).error
    assert error.kind == "invalid_result"
    assert error.details["rule"] == "unreadable"
    assert error.details["error"]["message"] == "Request preparation failed: callback."
    assert error.path == "/use/add"


def test_a_tool_collision_of_an_added_contributor_is_invalid_composition():
    error = decide({"use": {"add": [{"id": "extra", "tools": ["search"]}]}}).error
    assert error.kind == "invalid_composition"
    assert error.details["rule"] == "tool-collision"
    assert error.path == "/use/add/0/tools/0"


def test_the_first_finding_fails_the_call():
    returned = {"activeTools": ["missing"], "use": {"add": [{"id": "m", "kind": "memory"}]}}
    decision = decide(returned)
    assert decision.error.details["rule"] == "V2"
    assert len(decision.findings) == 2


def test_a_selector_that_selects_nothing_is_a_warning_only():
    decision = decide({"use": {"remove": ["notes"]}})
    assert decision.ok
    assert [f.severity for f in decision.findings] == ["warning"]
    assert decision.decision_record.to_json()["amendment"]["removedContributors"] == 1


@settings(max_examples=examples(300), deadline=None)
@given(returned=json_values)
def test_any_returned_value_gets_a_record_or_a_turn_error(returned):
    decision = decide(returned)
    assert (decision.decision_record is None) == (decision.error is not None)
    if decision.error is not None:
        assert decision.error.kind in ("invalid_composition", "invalid_result")
    json.dumps(decision.to_json())


# ---- failures before a value -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "kind"),
    [("callback", "exception"), ("timeout", "timeout"), ("aborted", "cancelled")],
)
def test_a_preparation_failure_has_the_content_free_message(reason, kind):
    error = preparation_failure(reason)
    assert error.kind == kind
    assert error.reason == reason
    assert error.message == f"Request preparation failed: {reason}."
    assert error.details["error"] == {
        "name": "PreparationError",
        "reason": reason,
        "message": error.message,
    }


def test_a_preparation_failure_keeps_the_callers_kind_and_fields():
    hook = HookRef(source="lib/step.py", function="main", contract="step")
    error = preparation_failure(
        "callback",
        kind="worker_crashed",
        hook=hook,
        duration_ms=12.5,
        stderr_tail="Segmentation fault",
        details={"signal": "SIGSEGV"},
    )
    assert (error.kind, error.reason) == ("worker_crashed", "callback")
    assert error.hook == hook and error.duration_ms == 12.5
    assert error.details["signal"] == "SIGSEGV"
    assert error.details["error"]["name"] == "PreparationError"


def test_an_unknown_preparation_reason_is_refused():
    with pytest.raises(ValueError):
        preparation_failure("crashed")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "reason", ["undeclared", "unresolved", "storage-unavailable", "unauthorized"]
)
def test_an_uncaught_resource_read_error_keeps_its_own_reason(reason):
    error = resource_read_failure(reason, identity="blackboard:x", loop="main")
    assert error.kind == "resource_read"
    assert error.reason == "callback"
    assert error.message == f"Preparation resource read failed: {reason}."
    assert error.details["resource_reason"] == reason
    assert error.details["identity"] == "blackboard:x"
    assert error.details["error"]["name"] == "ResourceReadError"
    assert error.loop == "main"
    with pytest.raises(ValueError):
        resource_read_failure("gone")


@pytest.mark.parametrize(
    ("deadline", "expected"),
    [
        (None, 30_000),
        (5_000, 5_000),
        (30_000, 30_000),
        (60_000, 30_000),
        (0, 0),
        (-10, 0),
        (float("inf"), 30_000),
        (float("nan"), 30_000),
    ],
)
def test_the_effective_timeout_is_the_ceiling_or_the_shorter_deadline(deadline, expected):
    assert step_timeout_ms(deadline) == expected
    assert PREPARATION_TIMEOUT_MS == 30_000


def test_the_sample_deadline_feeds_the_timeout():
    s = sample(deadline_ms=1234)
    assert step_timeout_ms(s.deadline_ms) == 1234
