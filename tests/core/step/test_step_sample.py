"""spec/crux.md §2, §5 and §7: the step-preparation sample, its tool history and honest stats."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.core.findings import Finding
from studio.core.step.sample import StepSample, parse_step_sample, step_context, step_worker_payload
from studio.core.step.sample_findings import SAMPLE_RULE
from studio.core.step.sample_messages import tool_history
from studio.core.step.sample_stats import derived_stats
from tests.support.hypothesis_profiles import examples
from tests.support.step_samples import baseline_json, json_values

CONTEXT_KEYS = ["operation", "input", "index", "reason", "messages", "toolHistory", "stats"]


def sample_json(**step: Any) -> dict[str, Any]:
    step.setdefault("index", 0)
    step.setdefault("reason", "initial")
    return {"contract": "step", "baseline": baseline_json(), "step": step}


def parsed(value: dict[str, Any]) -> StepSample:
    result = parse_step_sample(value)
    assert isinstance(result, StepSample), result
    return result


def problems(value: Any) -> list[Finding]:
    result = parse_step_sample(value)
    assert isinstance(result, list), result
    return result


def paths(findings: list[Finding]) -> set[str]:
    return {f.pointer for f in findings}


def scope(started: int = 0, succeeded: int = 0, **usage: Any) -> dict[str, Any]:
    usage.setdefault("coverage", {"tokens": "none", "cost": "none"})
    return {
        "usage": usage,
        "modelCalls": {
            "started": started,
            "succeeded": succeeded,
            "failed": 0,
            "cancelled": 0,
            "transportRetries": 0,
        },
    }


def stats_json(index: int = 0, **changes: Any) -> dict[str, Any]:
    value = {
        "cursor": index,
        "attempt": {"number": 1, "reason": "initial"},
        "stepIndex": index,
        "run": scope(index, index),
        "root": scope(index, index),
    }
    value.update(changes)
    return value


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def calls(*pairs: tuple[str, str], text: str = "") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": text,
        "metadata": {"toolCalls": [{"id": i, "name": n, "args": {}} for i, n in pairs]},
    }


def answer(call_id: str, result: Any, name: str | None = None) -> dict[str, Any]:
    metadata = {"toolCallId": call_id}
    if name is not None:
        metadata["toolName"] = name
    return {"role": "tool", "content": result, "metadata": metadata}


# ---- the sample ------------------------------------------------------------------------------


def test_a_minimal_sample_parses_with_defaults():
    sample = parsed(sample_json())
    assert sample.index == 0
    assert sample.reason == "initial"
    assert sample.input == {}
    assert sample.messages == ()
    assert sample.resources == ()
    assert sample.deadline_ms is None
    assert sample.stats_given is False
    assert sample.warnings == ()
    assert [c.id for c in sample.baseline.contributors][:2] == ["notes", "guide"]


def test_a_full_sample_keeps_everything_it_gives():
    value = sample_json(
        index=1,
        reason="tool-result",
        input={"ticketId": "ticket_4821"},
        messages=[user("hi"), calls(("c1", "search")), answer("c1", "found")],
    )
    value["description"] = "after one tool round"
    value["resources"] = [
        {"identity": "working-state:support-control", "value": {"escalated": True}},
        {"identity": "blackboard:notes", "value": None},
        {"identity": "memory:support-memory:prefs", "failure": "storage-unavailable"},
    ]
    value["deadline_ms"] = 5000
    sample = parsed(value)
    assert sample.input == {"ticketId": "ticket_4821"}
    assert len(sample.messages) == 3
    assert sample.deadline_ms == 5000.0
    assert sample.description == "after one tool round"
    assert sample.resource("working-state:support-control").value == {"escalated": True}
    assert sample.resource("blackboard:notes").readable
    assert sample.resource("blackboard:notes").value is None
    assert sample.resource("memory:support-memory:prefs").failure == "storage-unavailable"
    assert sample.resource("working-state:other") is None


@pytest.mark.parametrize("value", [None, [], "step", 3, True])
def test_a_sample_that_is_not_an_object_gets_one_finding(value):
    [finding] = problems(value)
    assert finding.path == ()
    assert "must be an object" in finding.message


def test_every_finding_of_a_broken_sample_has_a_path():
    value = {
        "contract": "pre_llm",
        "extra": 1,
        "baseline": {"contributors": [{"id": ""}], "tools": "x", "model": None},
        "step": {
            "index": -1,
            "reason": "later",
            "input": {"x": float("nan")},
            "messages": [
                "hello",
                {"role": "robot", "content": 3, "name": "x"},
                {"role": "user", "content": [{"type": "tool-call", "toolCallId": "a"}]},
                {"role": "user", "content": [{"type": "sparkle"}, {"type": "text"}]},
                {"role": "assistant", "content": "", "metadata": {"toolCalls": [{"id": 1}]}},
                {"role": "tool", "content": "r"},
            ],
            "stats": {"cursor": -2, "attempt": {"number": 0, "reason": "x"}},
            "surprise": True,
        },
        "resources": [
            {"identity": "working-state:a", "value": 1, "failure": "unauthorized"},
            {"identity": "nonsense", "value": 1},
            {"identity": "blackboard:b", "failure": "undeclared"},
            "working-state:c",
        ],
        "deadline_ms": -5,
    }
    findings = problems(value)
    assert findings
    assert all(f.path for f in findings), [f for f in findings if not f.path]
    assert all(f.severity == "error" for f in findings)
    expected = {
        "/extra",
        "/contract",
        "/baseline/contributors/0/id",
        "/baseline/tools",
        "/step/index",
        "/step/reason",
        "/step/input/x",
        "/step/messages/0",
        "/step/messages/1/role",
        "/step/messages/1/content",
        "/step/messages/1/name",
        "/step/messages/2/content/0/type",
        "/step/messages/2/content/0/toolName",
        "/step/messages/3/content/0/type",
        "/step/messages/3/content/1/text",
        "/step/messages/4/metadata/toolCalls/0/id",
        "/step/messages/4/metadata/toolCalls/0/name",
        "/step/messages/5/metadata/toolCallId",
        "/step/stats/cursor",
        "/step/stats/attempt/number",
        "/step/stats/attempt/reason",
        "/step/stats/run",
        "/step/surprise",
        "/resources/0",
        "/resources/1/identity",
        "/resources/2/failure",
        "/resources/3",
        "/deadline_ms",
    }
    assert expected <= paths(findings), sorted(expected - paths(findings))
    assert all(f.rule in (SAMPLE_RULE, "baseline") for f in findings)


def test_baseline_findings_point_into_the_baseline():
    value = sample_json()
    value["baseline"]["activeTools"] = [""]
    assert paths(problems(value)) == {"/baseline/activeTools/0"}


def test_required_parts_are_named():
    assert paths(problems({"contract": "step"})) == {"/baseline", "/step"}
    assert paths(problems({**sample_json(), "step": {}})) == {"/step/index", "/step/reason"}


def test_undeclared_is_not_a_failure_a_sample_can_declare():
    value = sample_json()
    value["resources"] = [{"identity": "working-state:x", "failure": "undeclared"}]
    [finding] = problems(value)
    assert finding.pointer == "/resources/0/failure"
    assert "undeclared" in finding.message and "missing from this list" in finding.message


def test_a_resource_is_declared_once():
    value = sample_json()
    value["resources"] = [
        {"identity": "working-state:x", "value": 1},
        {"identity": "working-state:x", "value": 2},
    ]
    [finding] = problems(value)
    assert finding.pointer == "/resources/1/identity"


@pytest.mark.parametrize(
    "identity",
    ["working-state:support-control", "blackboard:plan", "memory:support-memory:prefs"],
)
def test_the_reference_identity_forms_are_accepted(identity):
    value = sample_json()
    value["resources"] = [{"identity": identity, "value": {"n": 1}}]
    assert parsed(value).resources[0].identity == identity


@pytest.mark.parametrize("identity", ["", "support-control", "memory:only-one", "state:x", 5])
def test_other_identities_are_refused(identity):
    value = sample_json()
    value["resources"] = [{"identity": identity, "value": 1}]
    assert paths(problems(value)) == {"/resources/0/identity"}


def test_reason_and_index_must_agree():
    assert paths(problems(sample_json(index=2, reason="initial"))) == {"/step/index"}
    assert paths(problems(sample_json(index=0, reason="tool-result"))) == {"/step/reason"}
    assert parsed(sample_json(index=3, reason="validation-retry")).index == 3


@settings(max_examples=examples(300), deadline=None)
@given(step=json_values, resources=json_values, deadline=json_values)
def test_parsing_never_raises(step, resources, deadline):
    value = {"contract": "step", "baseline": baseline_json(), "step": step}
    value["resources"] = resources
    value["deadline_ms"] = deadline
    result = parse_step_sample(value)
    if isinstance(result, list):
        assert result and all(isinstance(f, Finding) and f.path for f in result)


@settings(max_examples=examples(200), deadline=None)
@given(messages=st.lists(json_values, max_size=5))
def test_messages_of_any_shape_get_an_answer(messages):
    result = parse_step_sample(sample_json(index=1, reason="tool-result", messages=messages))
    if isinstance(result, list):
        assert all(f.path[:2] == ("step", "messages") for f in result)
    tool_history(messages)  # tolerant of anything


# ---- messages and tool history ---------------------------------------------------------------


def test_canonical_messages_of_every_part_type_parse():
    messages = [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look", "providerOptions": {"openai": {"detail": "low"}}},
                {"type": "image", "source": "https://example.com/a.png", "mediaType": "image/png"},
                {"type": "audio", "source": "data:audio/wav;base64,AAAA"},
                {"type": "video", "source": "https://example.com/v.mp4"},
                {"type": "file", "source": "https://example.com/r.pdf", "filename": "r.pdf"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "need the log"},
                {"type": "text", "text": "Reading."},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "search", "input": {"q": 1}},
            ],
        },
        {
            "role": "tool",
            "content": [{"type": "text", "text": "done"}],
            "metadata": {"toolCallId": "c1"},
        },
    ]
    sample = parsed(sample_json(index=1, reason="tool-result", messages=messages))
    assert sample.warnings == ()
    assert [e.to_json() for e in sample.tool_history] == [
        {"callId": "c1", "name": "search", "result": [{"type": "text", "text": "done"}]}
    ]


def test_tool_history_is_in_first_seen_order_and_marks_unanswered_calls():
    messages = [
        user("go"),
        calls(("c1", "search"), ("c2", "calc")),
        answer("c2", "4"),
        {
            "role": "assistant",
            "content": [
                {"type": "tool-call", "toolCallId": "c3", "toolName": "lookup", "input": {}}
            ],
        },
        answer("c1", {"hits": 2}),
    ]
    history = [e.to_json() for e in tool_history(messages)]
    assert history == [
        {"callId": "c1", "name": "search", "result": {"hits": 2}},
        {"callId": "c2", "name": "calc", "result": "4"},
        {"callId": "c3", "name": "lookup"},
    ]
    assert "result" not in history[2]


def test_an_answered_call_with_an_empty_or_null_result_still_has_a_result():
    history = [e.to_json() for e in tool_history([calls(("c1", "x")), answer("c1", "")])]
    assert history == [{"callId": "c1", "name": "x", "result": ""}]


def test_a_tool_result_names_its_tool_or_inherits_the_call_name():
    history = tool_history([answer("c9", "r", name="fetch"), calls(("c1", "a")), answer("c1", "s")])
    assert [(e.call_id, e.name, e.result) for e in history] == [
        ("c9", "fetch", "r"),
        ("c1", "a", "s"),
    ]


def test_metadata_calls_come_before_part_calls_of_the_same_message_and_are_not_doubled():
    message = {
        "role": "assistant",
        "content": [
            {"type": "tool-call", "toolCallId": "p", "toolName": "one"},
            {"type": "tool-call", "toolCallId": "m", "toolName": "two"},
        ],
        "metadata": {"toolCalls": [{"id": "m", "name": "two"}]},
    }
    assert [e.call_id for e in tool_history([message])] == ["m", "p"]


def test_a_call_announced_again_is_reset_in_place_as_the_reference_does():
    history = tool_history(
        [calls(("c1", "a")), calls(("c2", "b")), answer("c1", "r"), calls(("c1", "a2"))]
    )
    assert [e.to_json() for e in history] == [
        {"callId": "c1", "name": "a2"},
        {"callId": "c2", "name": "b"},
    ]


def test_an_orphan_tool_result_is_a_warning_and_stays_out_of_the_history():
    sample = parsed(sample_json(index=1, reason="tool-result", messages=[answer("zz", "r")]))
    [warning] = sample.warnings
    assert warning.severity == "warning"
    assert warning.pointer == "/step/messages/0/metadata/toolCallId"
    assert sample.tool_history == ()


def test_tool_call_and_reasoning_parts_belong_to_assistant_messages_only():
    messages = [
        {
            "role": "tool",
            "content": [{"type": "reasoning", "text": "x"}],
            "metadata": {"toolCallId": "a", "toolName": "t"},
        }
    ]
    findings = problems(sample_json(index=1, reason="tool-result", messages=messages))
    assert paths(findings) == {"/step/messages/0/content/0/type"}


# ---- stats -----------------------------------------------------------------------------------


def token_keys(scope_json: dict[str, Any]) -> set[str]:
    return set(scope_json["usage"]) & {"inputTokens", "outputTokens", "totalTokens"}


def test_initial_stats_are_derived_honestly():
    sample = parsed(sample_json())
    stats = step_context(sample)["stats"]
    assert stats == {
        "cursor": 0,
        "attempt": {"number": 1, "reason": "initial"},
        "stepIndex": 0,
        "run": {
            "usage": {"coverage": {"tokens": "none", "cost": "none"}},
            "modelCalls": {
                "started": 0,
                "succeeded": 0,
                "failed": 0,
                "cancelled": 0,
                "transportRetries": 0,
            },
        },
        "root": stats["run"],
    }
    assert token_keys(stats["run"]) == set() and token_keys(stats["root"]) == set()


def test_later_derived_stats_count_the_earlier_calls_but_not_tokens():
    stats = step_context(parsed(sample_json(index=2, reason="validation-retry")))["stats"]
    assert stats["stepIndex"] == 2 and stats["cursor"] == 2
    assert stats["attempt"] == {"number": 1, "reason": "validation-retry"}
    assert stats["run"]["modelCalls"]["started"] == 2
    assert stats["run"]["modelCalls"]["succeeded"] == 2
    assert stats["run"]["usage"] == {"coverage": {"tokens": "none", "cost": "none"}}
    assert derived_stats(1, "tool-result").attempt_reason == "initial"


def test_given_stats_are_used_as_given():
    run = scope(
        2,
        2,
        inputTokens=18_500,
        outputTokens=400,
        totalTokens=18_900,
        coverage={"tokens": "complete", "cost": "none"},
    )
    root = scope(5, 4, inputTokens=30_000, coverage={"tokens": "partial", "cost": "partial"})
    given_stats = stats_json(2, cursor=7, run=run, root=root, at="2025-01-01T00:00:00.000Z")
    sample = parsed(sample_json(index=2, reason="tool-result", stats=given_stats))
    assert sample.stats_given
    assert step_context(sample)["stats"] == given_stats


def test_token_fields_must_be_absent_when_coverage_is_none():
    run = scope(1, 1, inputTokens=0)
    findings = problems(sample_json(index=1, reason="tool-result", stats=stats_json(1, run=run)))
    assert paths(findings) == {"/step/stats/run/usage/inputTokens"}
    assert "absent" in findings[0].message


@pytest.mark.parametrize(
    ("changes", "where"),
    [
        ({"stepIndex": 2}, "/step/stats/stepIndex"),
        ({"attempt": {"number": 1, "reason": "validation-retry"}}, "/step/stats/attempt/reason"),
        ({"attempt": {"number": 1.5, "reason": "retry"}}, "/step/stats/attempt/number"),
        ({"cursor": True}, "/step/stats/cursor"),
        ({"run": scope(0, 0)}, "/step/stats/run/modelCalls/started"),
        ({"root": scope(0, 0)}, "/step/stats/root/modelCalls/started"),
        ({"run": scope(1, 2)}, "/step/stats/run/modelCalls/started"),
        ({"bogus": 1}, "/step/stats/bogus"),
    ],
)
def test_dishonest_or_malformed_stats_are_findings(changes, where):
    findings = problems(sample_json(index=1, reason="tool-result", stats=stats_json(1, **changes)))
    assert where in paths(findings)


def test_a_retry_attempt_is_allowed_outside_validation_retries():
    stats = stats_json(1, attempt={"number": 2, "reason": "retry"})
    assert parsed(sample_json(index=1, reason="tool-result", stats=stats)).stats.attempt_number == 2


def test_initial_stats_cannot_claim_earlier_calls_in_the_run():
    stats = stats_json(0, run=scope(1, 1), root=scope(1, 1))
    assert "/step/stats/run/modelCalls/started" in paths(problems(sample_json(stats=stats)))


# ---- the context -----------------------------------------------------------------------------


def test_the_context_has_exactly_the_documented_fields_and_is_json():
    sample = parsed(
        sample_json(index=1, reason="tool-result", input={"q": 1}, messages=[user("x")])
    )
    context = step_context(sample)
    assert list(context) == CONTEXT_KEYS
    assert context["operation"] == "language"
    assert json.loads(json.dumps(context)) == context


def test_the_context_is_a_copy():
    sample = parsed(
        sample_json(index=1, reason="tool-result", input={"q": [1]}, messages=[calls(("c", "t"))])
    )
    before = copy.deepcopy(step_context(sample))
    context = step_context(sample)
    context["input"]["q"].append(2)
    context["messages"][0]["metadata"]["toolCalls"].clear()
    context["stats"]["run"]["modelCalls"]["started"] = 99
    assert step_context(sample) == before


def test_the_worker_payload_carries_the_context_and_the_declared_resources():
    value = sample_json()
    value["resources"] = [
        {"identity": "working-state:a", "value": {"k": 1}},
        {"identity": "blackboard:b", "failure": "unauthorized"},
    ]
    payload = step_worker_payload(parsed(value))
    assert list(payload) == ["context", "resources"]
    assert payload["resources"] == value["resources"]
    assert json.loads(json.dumps(payload)) == payload
