"""The invocation decision: the step rules with §9's differences (spec/crux.md §9)."""

from __future__ import annotations

from typing import Any

import pytest

from studio.core.invocation.decision import (
    INVOCATION_TIMEOUT_MS,
    decide_invocation,
    worker_failure,
)
from studio.core.invocation.sample import InvocationSample, parse_invocation_sample
from studio.core.turn_error import TurnError

V1_MESSAGE = "Preparation callbacks must return an amendment object."


def invocation(baseline: dict[str, Any], tools: list[str] | None = None) -> InvocationSample:
    document: dict[str, Any] = {
        "contract": "invocation",
        "baseline": baseline,
        "target": {"id": "child"},
        "composition": {"id": "c", "kind": "consensus", "candidate": {"index": 0}},
        "resources": [{"identity": "working-state:policy", "value": {"strict": True}}],
    }
    if tools is not None:
        document["invocation"] = {"tools": tools}
    result = parse_invocation_sample(document)
    assert not isinstance(result, list), result
    return result


AGENT = {
    "contributors": [
        "persona",
        {"id": "desk", "kind": "droppable", "tools": ["refund"]},
        {"id": "memory", "kind": "memory"},
        {"id": "policy", "kind": "work-policy"},
        {"id": "dup"},
        {"id": "dup"},
        {"id": "wrapper", "children": [{"id": "inner"}]},
    ],
    "tools": ["search"],
    "activeTools": ["search", "refund"],
    "model": "standard-model",
    "inputBudget": {"optimizeAt": 1000, "max": 2000},
}


def rule_of(returned: Any, tools: list[str] | None = None) -> str | None:
    verdict = decide_invocation(invocation(AGENT, tools), returned)
    return None if verdict.error is None else verdict.error.details["rule"]


class TestRawValue:
    def test_nothing_keeps_the_agent_baseline_as_the_child_baseline(self):
        verdict = decide_invocation(invocation(AGENT, ["lookup"]), None)
        assert verdict.ok
        assert verdict.child is not None
        assert [c.id for c in verdict.child.contributors] == [
            "persona",
            "desk",
            "memory",
            "policy",
            "dup",
            "dup",
            "wrapper",
        ]
        assert verdict.child.active_tools == ("search", "refund")
        assert verdict.child.model == "standard-model"
        # the invocation's own tools are the child's too
        assert set(verdict.child.graph_tools()) == {"refund", "search", "lookup"}

    @pytest.mark.parametrize("returned", [[], [{"model": "x"}], "text", 7, True, False, 0, ""])
    def test_anything_but_an_object_or_nothing_fails_v1_with_the_reference_message(self, returned):
        verdict = decide_invocation(invocation(AGENT), returned)
        assert verdict.error is not None
        error = verdict.error.details["error"]
        assert verdict.error.details["rule"] == "V1"
        assert error["name"] == "RequestCompositionError"
        assert error["code"] == "INVALID_COMPOSITION"
        assert error["message"] == V1_MESSAGE
        (diagnostic,) = error["diagnostics"]
        assert diagnostic["message"] == V1_MESSAGE
        assert diagnostic["code"] == "INVALID_EXECUTION_AMENDMENT"
        assert diagnostic["contributor"] == "prepareStep"

    def test_no_decision_record_is_made(self):
        verdict = decide_invocation(invocation(AGENT), {"model": "review-model"})
        assert verdict.ok
        assert not hasattr(verdict, "decision_record")
        assert "decision_record" not in verdict.to_json()


class TestRules:
    def test_v2_adding_memory(self):
        assert rule_of({"use": {"add": [{"id": "m2", "kind": "memory"}]}}) == "V2"

    def test_v3_a_shared_id(self):
        assert rule_of({"use": {"remove": [{"id": "dup"}]}}) == "V3"

    def test_v4_a_nested_member(self):
        assert rule_of({"use": {"remove": [{"id": "inner"}]}}) == "V4"

    def test_v5_removing_memory(self):
        assert rule_of({"use": {"remove": [{"id": "memory"}]}}) == "V5"

    def test_v6_removing_a_work_policy(self):
        assert rule_of({"use": {"remove": [{"id": "policy"}]}}) == "V6"

    def test_v7_adding_and_removing_the_same(self):
        assert rule_of({"use": {"add": [{"id": "desk"}], "remove": [{"id": "desk"}]}}) == "V7"

    def test_v8_against_the_agent_tools(self):
        assert rule_of({"tools": {"search": {}}}) == "V8"

    def test_v8_against_the_invocation_tools(self):
        assert rule_of({"tools": {"lookup": {}}}, tools=["lookup"]) == "V8"
        assert rule_of({"tools": {"lookup": {}}}) is None

    def test_v9_against_the_merged_tools(self):
        assert rule_of({"activeTools": ["lookup"]}, tools=["lookup"]) is None
        assert rule_of({"activeTools": ["lookup"]}) == "V9"

    def test_v9_does_not_judge_the_inherited_active_tools(self):
        # The agent's activeTools name `refund`, whose owner this amendment removes: on the
        # step path that fails V9; on the invocation path V9 runs only when activeTools is set.
        verdict = decide_invocation(invocation(AGENT), {"use": {"remove": [{"id": "desk"}]}})
        assert verdict.ok
        assert verdict.child is not None
        assert verdict.child.active_tools == ("search", "refund")
        assert "refund" not in verdict.child.graph_tools()

    def test_v9_when_set_after_a_removal(self):
        returned = {"use": {"remove": [{"id": "desk"}]}, "activeTools": ["refund"]}
        assert rule_of(returned) == "V9"

    def test_v10_and_v11_are_type_errors(self):
        verdict = decide_invocation(invocation(AGENT), {"inputBudget": {"max": 0}})
        assert verdict.error is not None
        assert verdict.error.details["rule"] == "V10"
        assert verdict.error.details["error"]["name"] == "TypeError"
        assert rule_of({"inputBudget": {"optimizeAt": 5, "max": 4}}) == "V11"


class TestChildBaseline:
    def test_the_amendment_becomes_the_child_baseline(self):
        returned = {
            "use": {"add": [{"id": "rubric", "tools": ["grade"]}], "remove": [{"id": "desk"}]},
            "tools": {"note": {"description": "x"}},
            "activeTools": ["search", "grade", "note"],
            "model": "review-model",
            "inputBudget": {"max": 1500},
        }
        verdict = decide_invocation(invocation(AGENT), returned)
        assert verdict.ok, verdict.error
        child = verdict.child
        assert child is not None
        ids = [c.id for c in child.contributors]
        assert ids == ["persona", "memory", "policy", "dup", "dup", "wrapper", "rubric"]
        assert child.active_tools == ("search", "grade", "note")
        assert child.model == "review-model"
        assert child.input_budget is not None and child.input_budget.to_json() == {"max": 1500}
        assert set(child.graph_tools()) == {"grade", "search", "note"}
        # the tool of the added contributor stays its own, not a declared tool of the child
        assert "grade" not in child.tools

    def test_a_null_model_keeps_the_agent_model(self):
        verdict = decide_invocation(invocation(AGENT), {"model": None})
        assert verdict.child is not None and verdict.child.model == "standard-model"


class TestFailures:
    def failed(self, kind: str, **details: Any) -> TurnError:
        return TurnError(kind=kind, reason="callback", message="worker said so", details=details)

    def test_the_ceiling_is_thirty_seconds(self):
        assert INVOCATION_TIMEOUT_MS == 30_000

    def test_a_timeout_is_reason_timeout(self):
        error = worker_failure(self.failed("timeout"))
        assert error.reason == "timeout"
        assert error.message.startswith("Request preparation failed: timeout.")
        assert error.details["error"] == {
            "name": "PreparationError",
            "reason": "timeout",
            "message": "Request preparation failed: timeout.",
        }

    @pytest.mark.parametrize("kind", ["exception", "worker_crashed", "cancelled"])
    def test_anything_else_is_callback_never_aborted(self, kind):
        error = worker_failure(self.failed(kind))
        assert error.reason == "callback"
        assert error.details["error"]["reason"] == "callback"

    def test_a_reference_aborted_reason_still_reads_as_callback(self):
        contract_error = {"error": "PreparationError", "reason": "aborted"}
        error = worker_failure(self.failed("exception", contract_error=contract_error))
        assert error.reason == "callback"

    def test_an_uncaught_resource_read_keeps_its_reason(self):
        contract_error = {
            "error": "ResourceReadError",
            "reason": "unresolved",
            "identity": "working-state:x",
        }
        error = worker_failure(self.failed("exception", contract_error=contract_error))
        assert error.kind == "resource_read"
        assert error.details["resource_reason"] == "unresolved"
