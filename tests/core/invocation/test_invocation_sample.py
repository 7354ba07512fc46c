"""Invocation samples of the four kinds, and the frozen context a hook gets (spec/crux.md §9)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from studio.core.invocation.sample import (
    InvocationSample,
    invocation_context,
    invocation_worker_payload,
    parse_invocation_sample,
)

BASELINE = {
    "contributors": ["persona", {"id": "desk", "kind": "droppable", "tools": ["refund"]}],
    "tools": ["search"],
    "activeTools": ["search"],
    "model": "standard-model",
}
SCOPE = {
    "usage": {"coverage": {"tokens": "none", "cost": "none"}},
    "modelCalls": {
        "started": 0,
        "succeeded": 0,
        "failed": 0,
        "cancelled": 0,
        "transportRetries": 0,
    },
}


def sample(kind: str = "pipeline", **changes: Any) -> dict[str, Any]:
    positions = {
        "pipeline": ("step", {"name": "draft", "index": 1}),
        "parallel": ("branch", {"name": "billing", "index": 0}),
        "consensus": ("candidate", {"index": 2}),
        "swarm": ("hop", {"index": 1, "path": ["triage", "billing"], "fromAgent": "triage"}),
    }
    key, position = positions[kind]
    document: dict[str, Any] = {
        "contract": "invocation",
        "baseline": copy.deepcopy(BASELINE),
        "target": {"id": "child-agent"},
        "composition": {"id": "comp-1", "kind": kind, key: position},
    }
    document["context" if kind in ("pipeline", "parallel") else "input"] = {"ticket": 7}
    document.update(changes)
    return document


def parsed(document: dict[str, Any]) -> InvocationSample:
    result = parse_invocation_sample(document)
    assert not isinstance(result, list), result
    return result


def stats_json() -> dict[str, Any]:
    return {"at": "2026-01-01T00:00:00.000Z", "cursor": 3, "run": SCOPE, "root": SCOPE}


class TestFrozenContext:
    @pytest.mark.parametrize(
        ("kind", "position_key", "payload_key"),
        [
            ("pipeline", "step", "context"),
            ("parallel", "branch", "context"),
            ("consensus", "candidate", "input"),
            ("swarm", "hop", "input"),
        ],
    )
    def test_each_kind_gets_exactly_the_common_fields_and_its_own(
        self, kind, position_key, payload_key
    ):
        context = invocation_context(parsed(sample(kind, stats=stats_json())))
        assert set(context) == {
            "operation",
            "target",
            "composition",
            "stats",
            position_key,
            payload_key,
        }
        assert context["operation"] == "language"
        assert context["target"] == {"id": "child-agent", "operation": "language"}
        assert context["composition"] == {"id": "comp-1", "kind": kind}
        assert context[payload_key] == {"ticket": 7}

    def test_stats_have_no_attempt_and_no_step_index(self):
        context = invocation_context(parsed(sample(stats=stats_json())))
        assert set(context["stats"]) == {"at", "cursor", "run", "root"}
        assert context["stats"]["cursor"] == 3

    def test_without_stats_the_child_is_the_first_boundary(self):
        stats = invocation_context(parsed(sample()))["stats"]
        assert stats["cursor"] == 0
        assert stats["run"]["modelCalls"]["started"] == 0
        # coverage none: the token fields are absent, not zero
        assert stats["run"]["usage"] == {"coverage": {"tokens": "none", "cost": "none"}}

    def test_positions_of_each_kind(self):
        hop = invocation_context(parsed(sample("swarm")))["hop"]
        assert hop == {"index": 1, "path": ["triage", "billing"], "fromAgent": "triage"}
        assert invocation_context(parsed(sample("consensus")))["candidate"] == {"index": 2}
        assert invocation_context(parsed(sample("parallel")))["branch"] == {
            "name": "billing",
            "index": 0,
        }

    def test_the_worker_gets_the_context_and_the_declared_resources(self):
        declared = [{"identity": "working-state:x", "value": {"a": 1}}]
        payload = invocation_worker_payload(parsed(sample(resources=declared)))
        assert payload["resources"] == declared
        assert payload["context"]["composition"]["kind"] == "pipeline"


class TestFindings:
    def findings(self, document: Any) -> dict[str, str]:
        result = parse_invocation_sample(document)
        assert isinstance(result, list)
        return {f.pointer: f.message for f in result if f.severity == "error"}

    def test_a_child_gets_context_or_input_by_its_kind(self):
        document = sample("consensus", context={"x": 1})
        assert "/context" in self.findings(document)
        document = sample("pipeline", input={"x": 1})
        assert "/input" in self.findings(document)

    def test_the_position_key_must_fit_the_kind(self):
        document = sample("pipeline")
        document["composition"] = {"id": "c", "kind": "pipeline", "hop": {"index": 0, "path": []}}
        found = self.findings(document)
        assert "/composition/hop" in found and "/composition/step" in found

    def test_an_unknown_kind(self):
        document = sample()
        document["composition"]["kind"] = "relay"
        assert "/composition/kind" in self.findings(document)

    def test_stats_with_a_step_index_or_attempt_are_refused(self):
        stats = {**stats_json(), "stepIndex": 0, "attempt": {"number": 1, "reason": "initial"}}
        found = self.findings(sample(stats=stats))
        assert "/stats/stepIndex" in found and "/stats/attempt" in found

    def test_an_invocation_tool_may_not_shadow_an_agent_tool(self):
        found = self.findings(sample(invocation={"tools": ["search", "refund", "lookup"]}))
        assert set(found) == {"/invocation/tools/0", "/invocation/tools/1"}

    def test_a_swarm_hop_needs_its_path(self):
        document = sample("swarm")
        del document["composition"]["hop"]["path"]
        assert "/composition/hop/path" in self.findings(document)

    def test_steps_are_checked_as_step_samples_at_their_own_paths(self):
        steps = [{"index": 0, "reason": "tool-result"}, {"index": 0, "reason": "initial"}]
        found = self.findings(sample(steps=steps))
        assert "/steps/0/reason" in found
        assert "/steps/1/index" in found

    def test_unknown_fields(self):
        assert "/messages" in self.findings(sample(messages=[]))
