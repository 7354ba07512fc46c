"""The pre-model and post-model hook contract: shapes, validators, views and chain semantics."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studio.core.chain.shape_keys import (
    DEFAULT_MAX_RETRIES,
    INTERRUPT_KEYS,
    MAX_DEPTH,
    MESSAGE_KEYS,
    POST_CONTEXT_KEYS,
    POST_RESULT_KEYS,
    PRE_CONTEXT_KEYS,
    PRE_RESULT_KEYS,
    PROFILE_KEYS,
    REQUEST_KEYS,
    RETRY_KEYS,
    ROLES,
    RULE_UNCHECKABLE,
    STUDIO_ESCAPE_ROLE,
    STUDIO_JSON_ONLY,
    STUDIO_RESULT_UNKNOWN_KEY,
    STUDIO_SINGLE_ESCAPE,
)
from studio.core.chain.shape_views import (
    Interrupt,
    Message,
    ModelProfile,
    PostModelHookContext,
    PostModelHookResult,
    PreModelHookContext,
    PreModelHookResult,
    Retry,
)
from studio.core.chain.shapes import (
    STUDIO_RULE_IDS,
    STUDIO_RULES,
    ShapeError,
    escape_of,
    merge_system_prompt_suffixes,
    parse_post_context,
    parse_post_result,
    parse_pre_context,
    parse_pre_result,
    retries_used,
    retry_budget,
    should_retry,
    studio_rule,
    validate_post_context,
    validate_post_result,
    validate_pre_context,
    validate_pre_result,
)
from studio.core.findings import Finding, errors, first_error, warnings
from studio.core.json.values import MAX_SAFE_INTEGER

VALIDATORS = [
    validate_pre_context,
    validate_pre_result,
    validate_post_context,
    validate_post_result,
]


def profile(**changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "maxInputTokens": 128_000,
        "maxOutputTokens": 4_096,
        "costPerMillionInputTokens": 3,
        "costPerMillionOutputTokens": 15.0,
        "supportsParallelToolCalls": True,
        "supportsVision": False,
        "supportsCaching": True,
    }
    value.update(changes)
    return value


def pre_context(**changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": None,
                "toolCalls": [{"id": "c1", "name": "weather", "arguments": {"city": "Oslo"}}],
            },
            {"role": "tool", "toolCallId": "c1", "content": "4 C, rain"},
        ],
        "model": "big-model",
        "modelProfile": profile(),
        "tools": [{"name": "weather", "description": "Forecast", "parameters": {}}],
        "systemPrompt": "You are helpful.",
        "state": {"turn": 3, "tags": ["a", "b"]},
    }
    value.update(changes)
    return value


def post_context(**changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "response": {"role": "assistant", "content": "It is raining."},
        "request": {
            "messages": [{"role": "user", "content": "Weather in Oslo?"}],
            "model": "big-model",
            "tools": [{"name": "weather"}],
            "state": {},
        },
        "state": {"turn": 3},
    }
    value.update(changes)
    return value


def error_paths(findings: list[Finding]) -> list[tuple[Any, ...]]:
    return [f.path for f in errors(findings)]


def warning_paths(findings: list[Finding]) -> list[tuple[Any, ...]]:
    return [f.path for f in warnings(findings)]


def only_error(findings: list[Finding]) -> Finding:
    found = errors(findings)
    assert len(found) == 1, found
    return found[0]


def msg_findings(message: Any) -> list[Finding]:
    return validate_pre_context(pre_context(messages=[message]))


# ---------------------------------------------------------------------------------------------
# Pre-model hook context


def test_valid_pre_context_has_no_findings() -> None:
    assert validate_pre_context(pre_context()) == []


def test_null_profile_is_allowed() -> None:
    assert validate_pre_context(pre_context(modelProfile=None)) == []


@pytest.mark.parametrize("key", PRE_CONTEXT_KEYS)
def test_every_pre_context_key_is_required(key: str) -> None:
    value = pre_context()
    del value[key]
    finding = only_error(validate_pre_context(value))
    assert finding.path == (key,)
    assert key in finding.message and "required" in finding.message


@pytest.mark.parametrize("value", [None, [], "ctx", 3, True])
def test_pre_context_must_be_an_object(value: Any) -> None:
    finding = only_error(validate_pre_context(value))
    assert finding.path == ()
    assert "must be an object" in finding.message


@pytest.mark.parametrize("messages", [None, {}, "hi", 1, ({"role": "user", "content": "x"},)])
def test_messages_not_an_array(messages: Any) -> None:
    finding = only_error(validate_pre_context(pre_context(messages=messages)))
    assert finding.path == ("messages",)
    assert "messages must be an array of messages" in finding.message


def test_empty_messages_and_tools_are_allowed() -> None:
    assert validate_pre_context(pre_context(messages=[], tools=[])) == []


@pytest.mark.parametrize("model", ["", None, 3, ["m"]])
def test_model_must_be_a_non_empty_string(model: Any) -> None:
    finding = only_error(validate_pre_context(pre_context(model=model)))
    assert finding.path == ("model",)
    assert "non-empty string" in finding.message
    assert studio_rule(finding.rule) is not None


def test_system_prompt_must_be_a_string_but_may_be_empty() -> None:
    assert validate_pre_context(pre_context(systemPrompt="")) == []
    finding = only_error(validate_pre_context(pre_context(systemPrompt=None)))
    assert finding.path == ("systemPrompt",)


@pytest.mark.parametrize("state", [None, [], "s", 0])
def test_state_must_be_an_object(state: Any) -> None:
    finding = only_error(validate_pre_context(pre_context(state=state)))
    assert finding.path == ("state",)
    assert "state must be an object" in finding.message


def test_unknown_context_key_is_only_a_warning() -> None:
    findings = validate_pre_context(pre_context(systemprompt="x"))
    assert errors(findings) == []
    assert warning_paths(findings) == [("systemprompt",)]
    assert 'did you mean "systemPrompt"' in findings[0].message


# Model profile


@pytest.mark.parametrize("key", ["maxInputTokens", "maxOutputTokens"])
@pytest.mark.parametrize("bad", [True, False, 0, -1, 1.5, "1000", None, math.nan, math.inf, 2**53])
def test_token_limits_must_be_positive_whole_numbers(key: str, bad: Any) -> None:
    finding = only_error(validate_pre_context(pre_context(modelProfile=profile(**{key: bad}))))
    assert finding.path == ("modelProfile", key)
    assert f"modelProfile.{key} must be a positive whole number" in finding.message


def test_bool_max_input_tokens_is_named_as_a_boolean() -> None:
    finding = only_error(
        validate_pre_context(pre_context(modelProfile=profile(maxInputTokens=True)))
    )
    assert finding.message.endswith("got a boolean")


@pytest.mark.parametrize("good", [1, 1000.0, MAX_SAFE_INTEGER])
def test_token_limits_accept_whole_numbers(good: Any) -> None:
    assert validate_pre_context(pre_context(modelProfile=profile(maxInputTokens=good))) == []


@pytest.mark.parametrize("key", ["costPerMillionInputTokens", "costPerMillionOutputTokens"])
@pytest.mark.parametrize("bad", [-0.01, -1, math.nan, math.inf, True, "3", None, 10**400])
def test_costs_must_be_finite_and_not_negative(key: str, bad: Any) -> None:
    finding = only_error(validate_pre_context(pre_context(modelProfile=profile(**{key: bad}))))
    assert finding.path == ("modelProfile", key)
    assert "finite number, zero or more" in finding.message


@pytest.mark.parametrize("good", [0, 0.0, 2.5, 10**6])
def test_costs_accept_zero_and_fractions(good: Any) -> None:
    assert (
        validate_pre_context(pre_context(modelProfile=profile(costPerMillionInputTokens=good)))
        == []
    )


@pytest.mark.parametrize("key", ["supportsParallelToolCalls", "supportsVision", "supportsCaching"])
@pytest.mark.parametrize("bad", [1, 0, "true", None])
def test_flags_must_be_booleans(key: str, bad: Any) -> None:
    finding = only_error(validate_pre_context(pre_context(modelProfile=profile(**{key: bad}))))
    assert finding.path == ("modelProfile", key)
    assert "must be a boolean" in finding.message


@pytest.mark.parametrize("key", PROFILE_KEYS)
def test_every_profile_key_is_required(key: str) -> None:
    value = profile()
    del value[key]
    finding = only_error(validate_pre_context(pre_context(modelProfile=value)))
    assert finding.path == ("modelProfile", key)
    assert "required" in finding.message


def test_profile_keeps_extra_keys_and_must_be_object_or_null() -> None:
    assert validate_pre_context(pre_context(modelProfile=profile(family="x"))) == []
    finding = only_error(validate_pre_context(pre_context(modelProfile=[])))
    assert finding.path == ("modelProfile",)
    assert "object or null" in finding.message


def test_every_profile_problem_is_reported() -> None:
    findings = validate_pre_context(pre_context(modelProfile={"maxInputTokens": True}))
    assert len(errors(findings)) == len(PROFILE_KEYS)


# Tools


@pytest.mark.parametrize(
    ("tools", "path"),
    [
        ([{"name": ""}], ("tools", 0, "name")),
        ([{"name": "ok"}, {"description": "no name"}], ("tools", 1, "name")),
        ([{"name": 3}], ("tools", 0, "name")),
        (["weather"], ("tools", 0)),
        ({"name": "x"}, ("tools",)),
    ],
)
def test_tool_definitions(tools: Any, path: tuple[Any, ...]) -> None:
    finding = only_error(validate_pre_context(pre_context(tools=tools)))
    assert finding.path == path


def test_empty_tool_name_message_names_the_field() -> None:
    finding = only_error(validate_pre_context(pre_context(tools=[{"name": ""}])))
    assert finding.message == "tools[0].name must be a non-empty string, got an empty string"


def test_duplicate_tool_names_are_a_warning() -> None:
    findings = validate_pre_context(pre_context(tools=[{"name": "a"}, {"name": "a"}]))
    assert errors(findings) == []
    assert warning_paths(findings) == [("tools", 1, "name")]


# Messages


@pytest.mark.parametrize("role", ROLES)
def test_every_role_is_accepted(role: str) -> None:
    assert msg_findings({"role": role, "content": "hi"}) == []


@pytest.mark.parametrize("role", ["bot", "User", "", None, 1])
def test_unknown_role_is_an_error(role: Any) -> None:
    finding = only_error(msg_findings({"role": role, "content": "hi"}))
    assert finding.path == ("messages", 0, "role")
    assert "must be one of user, assistant, system, tool" in finding.message


def test_missing_role_is_an_error() -> None:
    finding = only_error(msg_findings({"content": "hi"}))
    assert finding.path == ("messages", 0, "role")
    assert "required" in finding.message


@pytest.mark.parametrize("content", [3, {"text": "x"}, True])
def test_content_must_be_string_or_parts(content: Any) -> None:
    finding = only_error(msg_findings({"role": "user", "content": content}))
    assert finding.path == ("messages", 0, "content")


def test_content_parts() -> None:
    parts = [
        {"type": "text", "text": "look"},
        {"type": "image", "url": "https://example.org/a.png"},
        {"type": "image", "text": None},
    ]
    assert msg_findings({"role": "user", "content": parts}) == []
    assert msg_findings({"role": "user", "content": []}) == []


@pytest.mark.parametrize(
    ("part", "path"),
    [
        ("text", ("messages", 0, "content", 0)),
        ({"text": "x"}, ("messages", 0, "content", 0, "type")),
        ({"type": ""}, ("messages", 0, "content", 0, "type")),
        ({"type": "text"}, ("messages", 0, "content", 0, "text")),
        ({"type": "text", "text": 3}, ("messages", 0, "content", 0, "text")),
        ({"type": "image", "text": 3}, ("messages", 0, "content", 0, "text")),
    ],
)
def test_bad_content_parts(part: Any, path: tuple[Any, ...]) -> None:
    finding = only_error(msg_findings({"role": "user", "content": [part]}))
    assert finding.path == path


def test_content_may_be_left_out_only_with_tool_calls() -> None:
    calls = [{"name": "weather"}]
    assert msg_findings({"role": "assistant", "content": None, "toolCalls": calls}) == []
    assert msg_findings({"role": "assistant", "toolCalls": calls}) == []
    for message in (
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": None, "toolCalls": []},
        {"role": "user", "content": None},
        {"role": "user"},
    ):
        finding = only_error(msg_findings(message))
        assert finding.path == ("messages", 0, "content")


@pytest.mark.parametrize(
    ("calls", "path"),
    [
        ({"name": "x"}, ("messages", 0, "toolCalls")),
        ([{"id": "c1"}], ("messages", 0, "toolCalls", 0, "name")),
        ([{"name": ""}], ("messages", 0, "toolCalls", 0, "name")),
        ([{"name": "x", "id": ""}], ("messages", 0, "toolCalls", 0, "id")),
        (["weather"], ("messages", 0, "toolCalls", 0)),
    ],
)
def test_bad_tool_calls(calls: Any, path: tuple[Any, ...]) -> None:
    finding = only_error(msg_findings({"role": "assistant", "content": "", "toolCalls": calls}))
    assert finding.path == path


def test_tool_calls_keep_any_json_arguments() -> None:
    calls = [{"name": "a", "arguments": '{"q": 1}'}, {"name": "b", "arguments": {"q": [1]}}]
    assert msg_findings({"role": "assistant", "content": "", "toolCalls": calls}) == []


def test_tool_calls_on_other_roles_and_snake_case_key_are_warnings() -> None:
    findings = msg_findings({"role": "user", "content": "x", "toolCalls": [{"name": "a"}]})
    assert errors(findings) == []
    assert warning_paths(findings) == [("messages", 0, "toolCalls")]
    findings = msg_findings({"role": "assistant", "content": "x", "tool_calls": [{"x": 1}]})
    assert errors(findings) == []
    assert warning_paths(findings) == [("messages", 0, "tool_calls")]


def test_tool_call_id_must_be_a_non_empty_string() -> None:
    finding = only_error(msg_findings({"role": "tool", "content": "x", "toolCallId": ""}))
    assert finding.path == ("messages", 0, "toolCallId")
    assert msg_findings({"role": "tool", "content": "x"}) == []


def test_messages_keep_extra_keys() -> None:
    assert msg_findings({"role": "user", "content": "x", "name": "ann", "meta": {"k": [1]}}) == []


@pytest.mark.parametrize("message", ["hello", None, ["user", "hi"], 3])
def test_message_must_be_an_object(message: Any) -> None:
    finding = only_error(msg_findings(message))
    assert finding.path == ("messages", 0)
    assert "messages[0] must be a message object" in finding.message


def test_every_finding_is_reported_errors_first() -> None:
    value = pre_context(
        messages=[{"role": "bot", "content": 1}, "x"],
        model="",
        modelProfile=profile(maxInputTokens=True),
        tools=[{"name": ""}, {"name": "a"}, {"name": "a"}],
        systemPrompt=None,
        state=[],
        extra=1,
    )
    findings = validate_pre_context(value)
    assert error_paths(findings) == [
        ("messages", 0, "role"),
        ("messages", 0, "content"),
        ("messages", 1),
        ("model",),
        ("modelProfile", "maxInputTokens"),
        ("tools", 0, "name"),
        ("systemPrompt",),
        ("state",),
    ]
    assert warning_paths(findings) == [("extra",), ("tools", 2, "name")]
    assert findings[: len(errors(findings))] == errors(findings)
    first = first_error(findings)
    assert first is not None and first.path == ("messages", 0, "role")


# JSON-only values


@pytest.mark.parametrize(
    ("state", "path"),
    [
        ({"x": math.nan}, ("state", "x")),
        ({"x": [math.inf]}, ("state", "x", 0)),
        ({"x": {1, 2}}, ("state", "x")),
        ({"x": (1, 2)}, ("state", "x")),
        ({"x": b"raw"}, ("state", "x")),
        ({"x": object()}, ("state", "x")),
        ({"x": {1: "a"}}, ("state", "x")),
    ],
)
def test_state_must_hold_json(state: Any, path: tuple[Any, ...]) -> None:
    finding = only_error(validate_pre_context(pre_context(state=state)))
    assert finding.path == path
    assert finding.rule == STUDIO_JSON_ONLY


def test_cycles_are_findings() -> None:
    state: dict[str, Any] = {"a": 1}
    state["self"] = state
    finding = only_error(validate_pre_context(pre_context(state=state)))
    assert finding.path == ("state", "self")
    assert "contains itself" in finding.message

    messages: list[Any] = []
    messages.append(messages)
    assert error_paths(validate_pre_context(pre_context(messages=messages))) == [("messages", 0)]

    message: dict[str, Any] = {"role": "user"}
    message["content"] = [message]
    findings = validate_pre_context(pre_context(messages=[message]))
    assert any("contains itself" in f.message for f in findings)
    assert all(f.rule != RULE_UNCHECKABLE for f in findings)

    result: dict[str, Any] = {"interrupt": {"reason": "r"}}
    result["interrupt"]["value"] = result
    assert "contains itself" in only_error(validate_pre_result(result)).message


def test_integers_too_long_to_print_are_handled() -> None:
    huge = 10**5000
    values = [
        pre_context(modelProfile=profile(maxInputTokens=huge, costPerMillionInputTokens=-huge)),
        pre_context(messages=[{"role": huge, "content": huge}], state={"n": huge}),
    ]
    for value in values:
        check_findings(validate_pre_context(value))
    for value in (huge, {huge: 1}, {"retry": {"feedback": "f", "maxRetries": huge}}):
        for validate in VALIDATORS:
            check_findings(validate(value))


def test_shared_values_are_not_cycles() -> None:
    shared = [1, 2]
    assert validate_pre_context(pre_context(state={"a": shared, "b": shared})) == []


def test_deep_nesting_is_a_finding_not_a_crash() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    for validate, value in (
        (validate_pre_context, pre_context(state={"d": deep})),
        (validate_post_result, {"interrupt": {"reason": "r", "value": deep}}),
        (validate_pre_result, {"messages": deep}),
        (validate_post_context, deep),
    ):
        findings = validate(value)
        assert errors(findings)
        assert all(f.rule != RULE_UNCHECKABLE for f in findings)
    finding = only_error(validate_pre_context(pre_context(state={"d": deep})))
    assert f"deeper than {MAX_DEPTH} levels" in finding.message


def test_nesting_up_to_the_limit_is_fine() -> None:
    deep: Any = []
    for _ in range(MAX_DEPTH - 3):
        deep = [deep]
    value = pre_context(state={"d": deep})
    assert validate_pre_context(value) == []
    assert parse_pre_context(value).to_json() == value


# ---------------------------------------------------------------------------------------------
# Pre-model hook result


def test_none_result_means_no_change() -> None:
    assert validate_pre_result(None) == []
    assert validate_post_result(None) == []
    assert parse_pre_result(None) == PreModelHookResult()
    assert parse_post_result(None) == PostModelHookResult()
    assert parse_pre_result(None).to_json() == {}


def test_empty_result_is_valid() -> None:
    assert validate_pre_result({}) == []
    assert validate_post_result({}) == []


def test_full_pre_result_is_valid() -> None:
    value = {
        "messages": [{"role": "user", "content": "short"}],
        "model": "small-model",
        "systemPromptSuffix": "Answer in French.",
        "tools": [{"name": "weather"}],
        "interrupt": {"reason": "needs approval", "value": {"tool": "weather"}},
    }
    assert validate_pre_result(value) == []
    assert validate_pre_result({"shortCircuit": {"role": "assistant", "content": "cached"}}) == []


def test_null_keys_in_a_result_count_as_omitted() -> None:
    value = dict.fromkeys(PRE_RESULT_KEYS)
    assert validate_pre_result(value) == []
    assert parse_pre_result(value).to_json() == {}
    assert validate_post_result({"retry": {"feedback": "f", "maxRetries": None}}) == []


@pytest.mark.parametrize("value", [[], "no change", 0, True, ({},)])
def test_result_must_be_an_object(value: Any) -> None:
    for validate in (validate_pre_result, validate_post_result):
        finding = only_error(validate(value))
        assert finding.path == ()
        assert "must be an object (or null for no change)" in finding.message


def test_unknown_result_key_is_an_error() -> None:
    finding = only_error(validate_pre_result({"systemPromptSufix": "x"}))
    assert finding.path == ("systemPromptSufix",)
    assert finding.rule == STUDIO_RESULT_UNKNOWN_KEY
    assert 'did you mean "systemPromptSuffix"' in finding.message
    finding = only_error(validate_post_result({"response": None, "shortCircuit": None}))
    assert finding.path == ("shortCircuit",)
    assert only_error(validate_pre_result({1: "x"})).rule == STUDIO_JSON_ONLY


@pytest.mark.parametrize(
    "short_circuit",
    ["cached answer", 3, [], {"content": "no role"}, {"role": "model", "content": ""}],
)
def test_short_circuit_must_be_a_message(short_circuit: Any) -> None:
    findings = validate_pre_result({"shortCircuit": short_circuit})
    assert errors(findings)
    assert all(f.path[0] == "shortCircuit" for f in findings)


def test_short_circuit_from_another_role_is_a_warning() -> None:
    findings = validate_pre_result({"shortCircuit": {"role": "user", "content": "x"}})
    assert errors(findings) == []
    assert [f.rule for f in findings] == [STUDIO_ESCAPE_ROLE]


@pytest.mark.parametrize(
    ("interrupt", "path"),
    [
        ({"value": 1}, ("interrupt", "reason")),
        ({}, ("interrupt", "reason")),
        ({"reason": None}, ("interrupt", "reason")),
        ({"reason": 5}, ("interrupt", "reason")),
        ({"reason": "r", "why": "x"}, ("interrupt", "why")),
        ({"reason": "r", "value": math.nan}, ("interrupt", "value")),
        ("pause", ("interrupt",)),
        ([], ("interrupt",)),
    ],
)
def test_bad_interrupts(interrupt: Any, path: tuple[Any, ...]) -> None:
    for validate in (validate_pre_result, validate_post_result):
        finding = only_error(validate({"interrupt": interrupt}))
        assert finding.path == path


def test_interrupt_without_reason_message() -> None:
    finding = only_error(validate_pre_result({"interrupt": {"value": 1}}))
    assert finding.message.startswith("interrupt.reason is required")


def test_interrupt_value_is_optional_and_any_json() -> None:
    for value in (None, 0, "x", [1, {"a": None}], {"k": True}):
        assert validate_pre_result({"interrupt": {"reason": "r", "value": value}}) == []
    assert validate_pre_result({"interrupt": {"reason": "r"}}) == []
    assert parse_pre_result({"interrupt": {"reason": "r"}}).interrupt == Interrupt(reason="r")


def test_empty_interrupt_reason_is_a_warning() -> None:
    findings = validate_pre_result({"interrupt": {"reason": ""}})
    assert errors(findings) == []
    assert warning_paths(findings) == [("interrupt", "reason")]


def test_two_escapes_in_one_pre_result_is_a_warning_and_short_circuit_wins() -> None:
    value = {"shortCircuit": {"role": "assistant", "content": "x"}, "interrupt": {"reason": "r"}}
    findings = validate_pre_result(value)
    assert errors(findings) == []
    [finding] = warnings(findings)
    assert finding.path == ()
    assert finding.rule == STUDIO_SINGLE_ESCAPE
    assert finding.severity == "warning"
    assert "takes shortCircuit and ignores the interrupt" in finding.message
    assert escape_of(value) == "shortCircuit" == parse_pre_result(value).escape


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"messages": {"role": "user"}}, ("messages",)),
        ({"messages": [{"role": "user"}]}, ("messages", 0, "content")),
        ({"model": ""}, ("model",)),
        ({"model": 4}, ("model",)),
        ({"systemPromptSuffix": 1}, ("systemPromptSuffix",)),
        ({"tools": [{"name": ""}]}, ("tools", 0, "name")),
        ({"tools": "weather"}, ("tools",)),
    ],
)
def test_bad_pre_result_fields(value: Any, path: tuple[Any, ...]) -> None:
    assert only_error(validate_pre_result(value)).path == path


# ---------------------------------------------------------------------------------------------
# Post-model hook context and result


def test_valid_post_context_has_no_findings() -> None:
    assert validate_post_context(post_context()) == []


@pytest.mark.parametrize("key", POST_CONTEXT_KEYS)
def test_every_post_context_key_is_required(key: str) -> None:
    value = post_context()
    del value[key]
    assert error_paths(validate_post_context(value)) == [(key,)]


@pytest.mark.parametrize("key", REQUEST_KEYS)
def test_every_request_key_is_required(key: str) -> None:
    value = post_context()
    del value["request"][key]
    assert error_paths(validate_post_context(value)) == [("request", key)]


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"request": []}, ("request",)),
        ({"response": "hi"}, ("response",)),
        ({"response": {"role": "assistant", "content": 1}}, ("response", "content")),
        ({"state": None}, ("state",)),
    ],
)
def test_bad_post_context(changes: dict[str, Any], path: tuple[Any, ...]) -> None:
    assert only_error(validate_post_context(post_context(**changes))).path == path


def test_bad_request_fields_carry_the_request_path() -> None:
    value = post_context()
    value["request"].update(messages="x", model="", tools=[{"name": ""}], state=[])
    assert error_paths(validate_post_context(value)) == [
        ("request", "messages"),
        ("request", "model"),
        ("request", "tools", 0, "name"),
        ("request", "state"),
    ]
    finding = errors(validate_post_context(value))[0]
    assert finding.message.startswith("request.messages must be an array")


def test_response_from_another_role_is_a_warning() -> None:
    findings = validate_post_context(post_context(response={"role": "tool", "content": "x"}))
    assert errors(findings) == []
    assert [f.rule for f in findings] == [STUDIO_ESCAPE_ROLE]


def test_valid_post_results() -> None:
    for value in (
        {"response": {"role": "assistant", "content": "better"}},
        {"retry": {"feedback": "Use a known tool."}},
        {"retry": {"feedback": "again", "maxRetries": 3}},
        {"retry": {"feedback": "again", "maxRetries": 2.0}},
        {"interrupt": {"reason": "review", "value": None}},
        {"response": {"role": "assistant", "content": "x"}, "retry": {"feedback": "f"}},
    ):
        assert validate_post_result(value) == [], value


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, False, "2", math.nan, math.inf, 2**53])
def test_max_retries_must_be_a_positive_whole_number(bad: Any) -> None:
    finding = only_error(validate_post_result({"retry": {"feedback": "f", "maxRetries": bad}}))
    assert finding.path == ("retry", "maxRetries")
    assert "retry.maxRetries must be a positive whole number" in finding.message


@pytest.mark.parametrize(
    ("retry", "path"),
    [
        ({}, ("retry", "feedback")),
        ({"maxRetries": 1}, ("retry", "feedback")),
        ({"feedback": 3}, ("retry", "feedback")),
        ({"feedback": "f", "maxRetry": 2}, ("retry", "maxRetry")),
        ("try again", ("retry",)),
    ],
)
def test_bad_retries(retry: Any, path: tuple[Any, ...]) -> None:
    assert only_error(validate_post_result({"retry": retry})).path == path


def test_empty_feedback_is_a_warning() -> None:
    findings = validate_post_result({"retry": {"feedback": ""}})
    assert errors(findings) == []
    assert warning_paths(findings) == [("retry", "feedback")]


def test_retry_and_interrupt_together_is_a_warning_and_retry_wins() -> None:
    value = {"retry": {"feedback": "f"}, "interrupt": {"reason": "r"}}
    findings = validate_post_result(value)
    assert errors(findings) == []
    [finding] = warnings(findings)
    assert (finding.path, finding.rule, finding.severity) == ((), STUDIO_SINGLE_ESCAPE, "warning")
    assert "takes retry and ignores the interrupt" in finding.message
    assert escape_of(value) == "retry" == parse_post_result(value).escape


def test_post_result_unknown_key() -> None:
    finding = only_error(validate_post_result({"retry": {"feedback": "f"}, "feedback": "x"}))
    assert finding.path == ("feedback",)
    assert finding.rule == STUDIO_RESULT_UNKNOWN_KEY


def test_pre_only_keys_are_unknown_in_a_post_result() -> None:
    finding = only_error(validate_post_result({"model": "m"}))
    assert finding.path == ("model",)


# ---------------------------------------------------------------------------------------------
# Typed views


def test_pre_context_view_round_trips() -> None:
    value = pre_context()
    view = parse_pre_context(value)
    assert isinstance(view, PreModelHookContext)
    assert view.model == "big-model"
    assert view.modelProfile == ModelProfile.model_validate(profile())
    assert view.modelProfile is not None and view.modelProfile.maxInputTokens == 128_000
    assert view.messages[2].tool_call_names() == ["weather"]
    assert view.messages[3].toolCallId == "c1"
    assert view.tools[0].name == "weather"
    assert view.to_json() == value


def test_views_keep_extra_keys() -> None:
    message = {"role": "user", "content": "x", "name": "ann", "tool_calls": [1]}
    value = pre_context(messages=[message], modelProfile=profile(family="f"))
    view = parse_pre_context(value)
    assert view.messages[0].toolCalls is None
    assert view.to_json() == value


def test_message_text() -> None:
    parts = [
        {"type": "text", "text": "a"},
        {"type": "image", "url": "u"},
        {"type": "text", "text": "b"},
    ]
    assert Message.model_validate({"role": "user", "content": parts}).text() == "ab"
    assert Message.model_validate({"role": "user", "content": "hi"}).text() == "hi"
    calls = [{"name": "x"}]
    view = Message.model_validate({"role": "assistant", "content": None, "toolCalls": calls})
    assert view.text() == ""
    assert (
        Message.model_validate(
            {"role": "user", "content": "x", "toolCalls": calls}
        ).tool_call_names()
        == []
    )


def test_post_views() -> None:
    view = parse_post_context(post_context())
    assert isinstance(view, PostModelHookContext)
    assert view.request.tools[0].name == "weather"
    assert view.response.text() == "It is raining."
    result = parse_post_result({"retry": {"feedback": "f"}})
    assert result.retry == Retry(feedback="f", maxRetries=DEFAULT_MAX_RETRIES)
    assert result.to_json() == {"retry": {"feedback": "f"}}
    assert parse_post_result({"retry": {"feedback": "f", "maxRetries": 2.0}}).retry == Retry(
        feedback="f", maxRetries=2
    )


def test_views_are_frozen() -> None:
    view = parse_pre_result({"model": "m"})
    with pytest.raises(ValueError, match="frozen"):
        view.model = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("parse", "value"),
    [
        (parse_pre_context, pre_context(model="")),
        (parse_post_context, {}),
        (parse_pre_result, {"interrupt": {}}),
        (parse_post_result, {"retry": {"feedback": "f", "maxRetries": 0}}),
        (parse_pre_result, "x"),
    ],
)
def test_parse_raises_shape_error_with_every_finding(parse: Any, value: Any) -> None:
    with pytest.raises(ShapeError) as caught:
        parse(value)
    assert errors(caught.value.findings)
    assert caught.value.findings[0].message in str(caught.value)


def test_parse_accepts_warnings() -> None:
    result = parse_pre_result({"shortCircuit": {"role": "user", "content": "x"}})
    assert result.shortCircuit is not None and result.shortCircuit.role == "user"


# ---------------------------------------------------------------------------------------------
# Chain semantics


def test_escape_of_pre_results() -> None:
    short = parse_pre_result({"shortCircuit": {"role": "assistant", "content": "x"}})
    pause = parse_pre_result({"interrupt": {"reason": "r"}})
    change = parse_pre_result({"model": "m", "systemPromptSuffix": "s"})
    assert escape_of(short) == "shortCircuit" == short.escape
    assert escape_of(pause) == "interrupt"
    assert escape_of(change) is None
    assert escape_of(PreModelHookResult()) is None
    assert escape_of(None) is None


def test_escape_of_post_results() -> None:
    assert escape_of(parse_post_result({"retry": {"feedback": "f"}})) == "retry"
    assert escape_of(parse_post_result({"interrupt": {"reason": "r"}})) == "interrupt"
    response = {"role": "assistant", "content": "x"}
    assert escape_of(parse_post_result({"response": response})) is None


def test_escape_of_raw_mappings() -> None:
    assert escape_of({"shortCircuit": {"role": "assistant", "content": "x"}}) == "shortCircuit"
    assert escape_of({"retry": {"feedback": "f"}}) == "retry"
    assert escape_of({"interrupt": {"reason": "r"}}) == "interrupt"
    assert escape_of({"interrupt": None, "retry": None, "shortCircuit": None}) is None
    assert escape_of({"model": "m"}) is None
    assert escape_of("not a result") is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("base", "suffixes", "expected"),
    [
        ("Base.", [], "Base."),
        ("Base.", ["One."], "Base.\n\nOne."),
        ("Base.", ["One.", "Two."], "Base.\n\nOne.\n\nTwo."),
        ("Base.\n", ["One.\n\n", "\nTwo."], "Base.\n\nOne.\n\nTwo."),
        ("Base.\r\n", ["One."], "Base.\n\nOne."),
        ("", ["One.", "Two."], "One.\n\nTwo."),
        ("  \n", ["One."], "One."),
        ("Base.", [None, "", "  \n ", "One."], "Base.\n\nOne."),
        ("", [None, ""], ""),
        ("Base.", ["  indented"], "Base.\n\n  indented"),
    ],
)
def test_merge_system_prompt_suffixes(base: str, suffixes: list[str | None], expected: str) -> None:
    assert merge_system_prompt_suffixes(base, suffixes) == expected


def test_merge_takes_any_iterable() -> None:
    assert merge_system_prompt_suffixes("B", iter(["x", "y"])) == "B\n\nx\n\ny"


def retry(max_retries: int | None = None) -> PostModelHookResult:
    value: dict[str, Any] = {"feedback": "again"}
    if max_retries is not None:
        value["maxRetries"] = max_retries
    return parse_post_result({"retry": value})


def test_retry_budget_defaults_to_one() -> None:
    assert retry_budget([]) == 0
    assert retry_budget([None, PostModelHookResult()]) == 0
    assert retry_budget([retry()]) == DEFAULT_MAX_RETRIES == 1
    assert retry_budget([retry(3)]) == 3
    assert retry_budget([retry(3), None, retry()]) == 1
    assert retry_budget([{"retry": {"feedback": "f"}}]) == 1
    assert retry_budget([{"retry": {"feedback": "f", "maxRetries": 2.0}}]) == 2
    assert retry_budget([{"retry": None}, {"interrupt": {"reason": "r"}}]) == 0


def test_retry_budget_is_counted_per_turn() -> None:
    assert should_retry([retry()])
    assert not should_retry([retry(), retry()])
    assert should_retry([retry(2), retry(2)])
    assert not should_retry([retry(2), retry(2), retry(2)])
    assert not should_retry([retry(3), retry()])
    assert retries_used([retry(2), retry(2), retry(2)]) == 2
    assert retries_used([]) == 0


def test_should_retry_needs_the_latest_result_to_ask() -> None:
    assert not should_retry([])
    assert not should_retry([retry(), PostModelHookResult()])
    assert not should_retry([parse_post_result({"interrupt": {"reason": "r"}})])
    assert not should_retry([parse_pre_result({"model": "m"})])
    assert should_retry([{"retry": {"feedback": "f"}}])


# ---------------------------------------------------------------------------------------------
# Studio rules


def test_studio_rules_are_listed_once_with_text() -> None:
    ids = [rule.id for rule in STUDIO_RULES]
    assert len(ids) == len(set(ids)) == len(STUDIO_RULE_IDS)
    assert all(rule.text and rule.source for rule in STUDIO_RULES)
    from_spec = [rule for rule in STUDIO_RULES if rule.source.startswith("spec")]
    assert len(from_spec) == 5
    texts = " ".join(rule.text for rule in from_spec)
    for words in ("blank line", "maxRetries defaults to 1", "fails the turn closed", "ceil("):
        assert words in texts
    assert studio_rule("pleach.interrupt") is None
    assert studio_rule(STUDIO_SINGLE_ESCAPE) is not None


def test_findings_from_studio_rules_name_a_listed_rule() -> None:
    values = [
        pre_context(
            model="",
            modelProfile=profile(maxInputTokens=0),
            tools=[{"name": ""}, {"name": "a"}, {"name": "a"}],
            messages=[{"role": "x"}],
            state={"n": math.nan},
            odd=1,
        ),
        {"shortCircuit": {"role": "user", "content": "x"}, "interrupt": {"reason": ""}, "z": 1},
    ]
    findings = validate_pre_context(values[0]) + validate_pre_result(values[1])
    findings += validate_post_result({"retry": {"feedback": "", "maxRetries": 0, "x": 1}})
    rules = {f.rule for f in findings}
    studio = {r for r in rules if r.startswith("pleach.studio.")}
    assert studio <= STUDIO_RULE_IDS
    assert len(studio) >= 10


# ---------------------------------------------------------------------------------------------
# Properties


CONTRACT_KEYS = sorted(
    set(
        PRE_CONTEXT_KEYS
        + PRE_RESULT_KEYS
        + POST_CONTEXT_KEYS
        + POST_RESULT_KEYS
        + REQUEST_KEYS
        + MESSAGE_KEYS
        + PROFILE_KEYS
        + INTERRUPT_KEYS
        + RETRY_KEYS
        + ("name", "type", "text", "id", "arguments", "tool_calls")
    )
)
keys = st.sampled_from(CONTRACT_KEYS) | st.text(max_size=8)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
    | st.sampled_from((*ROLES, "text"))
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=6),
    max_leaves=40,
)
hashables = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4)
python_scalars = (
    json_scalars
    | st.floats()
    | st.sampled_from([math.nan, math.inf, -math.inf, 10**400, -(10**400), 2**53])
    | st.binary(max_size=4)
    | st.complex_numbers()
    | st.builds(object)
    | st.sets(hashables, max_size=3)
    | st.frozensets(hashables, max_size=3)
)
python_values = st.recursive(
    python_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(keys | hashables, children, max_size=6)
    ),
    max_leaves=40,
)


def check_findings(findings: list[Finding]) -> None:
    assert isinstance(findings, list)
    for finding in findings:
        assert isinstance(finding, Finding)
        assert isinstance(finding.path, tuple)
        assert all(isinstance(part, str | int) for part in finding.path)
        assert isinstance(finding.message, str) and finding.message
        assert finding.rule != RULE_UNCHECKABLE, finding
        assert finding.severity in ("error", "warning")


def check_parse(value: Any) -> None:
    for parse in (parse_pre_context, parse_pre_result, parse_post_context, parse_post_result):
        try:
            view = parse(value)
        except ShapeError:
            continue
        view.to_json()


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_no_validator_raises_on_json(value: Any) -> None:
    for validate in VALIDATORS:
        check_findings(validate(value))
    check_parse(value)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(keys, json_values, max_size=8))
def test_no_validator_raises_on_contract_shaped_objects(value: Any) -> None:
    for validate in VALIDATORS:
        check_findings(validate(value))
    check_parse(value)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(python_values)
def test_no_validator_raises_on_python_values(value: Any) -> None:
    for validate in VALIDATORS:
        check_findings(validate(value))
    check_parse(value)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(python_values, st.sampled_from(PRE_CONTEXT_KEYS))
def test_no_validator_raises_inside_a_context(value: Any, key: str) -> None:
    context = pre_context(**{key: value})
    check_findings(validate_pre_context(context))
    post = post_context(request={**post_context()["request"], "messages": [value]})
    check_findings(validate_post_context(post))
    check_findings(validate_pre_result({"interrupt": {"reason": "r", "value": value}}))
    check_findings(validate_post_result({"response": value}))


# Valid values, built from the rules, pass and round-trip through the views.

names = st.text(min_size=1, max_size=8)
texts = st.text(max_size=12)
content = texts | st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": texts})
    | st.fixed_dictionaries({"type": st.sampled_from(["image", "file"])}, optional={"url": texts}),
    max_size=3,
)
tool_calls = st.lists(
    st.fixed_dictionaries({"name": names}, optional={"id": names, "arguments": json_values}),
    min_size=1,
    max_size=3,
)
messages = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "system"]), "content": content})
    | st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": content}, optional={"toolCalls": tool_calls}
    )
    | st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": st.none(), "toolCalls": tool_calls}
    )
    | st.fixed_dictionaries({"role": st.just("tool"), "content": content, "toolCallId": names}),
    max_size=5,
)
assistant = st.fixed_dictionaries({"role": st.just("assistant"), "content": content})
tools = st.lists(
    st.fixed_dictionaries({"name": names}, optional={"description": texts}),
    max_size=4,
    unique_by=lambda tool: tool["name"],
)
states = st.dictionaries(st.text(max_size=6), json_values, max_size=4)
costs = st.integers(0, 10**6) | st.floats(0, 1e6)
profiles = st.none() | st.fixed_dictionaries(
    {
        "maxInputTokens": st.integers(1, MAX_SAFE_INTEGER),
        "maxOutputTokens": st.integers(1, MAX_SAFE_INTEGER),
        "costPerMillionInputTokens": costs,
        "costPerMillionOutputTokens": costs,
        "supportsParallelToolCalls": st.booleans(),
        "supportsVision": st.booleans(),
        "supportsCaching": st.booleans(),
    }
)
pre_contexts = st.fixed_dictionaries(
    {
        "messages": messages,
        "model": names,
        "modelProfile": profiles,
        "tools": tools,
        "systemPrompt": texts,
        "state": states,
    }
)
interrupts = st.fixed_dictionaries({"reason": names}, optional={"value": json_values})
pre_results = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "messages": messages,
        "model": names,
        "systemPromptSuffix": texts,
        "tools": tools,
        "shortCircuit": assistant,
        "interrupt": interrupts,
    },
).filter(lambda r: not ("shortCircuit" in r and "interrupt" in r))
post_contexts = st.fixed_dictionaries(
    {
        "response": assistant,
        "request": st.fixed_dictionaries(
            {"messages": messages, "model": names, "tools": tools, "state": states}
        ),
        "state": states,
    }
)
post_results = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "response": assistant,
        "retry": st.fixed_dictionaries(
            {"feedback": names}, optional={"maxRetries": st.integers(1, 100)}
        ),
        "interrupt": interrupts,
    },
).filter(lambda r: not ("retry" in r and "interrupt" in r))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pre_contexts, post_contexts)
def test_valid_contexts_pass_and_round_trip(pre: Any, post: Any) -> None:
    assert errors(validate_pre_context(pre)) == []
    assert parse_pre_context(copy.deepcopy(pre)).to_json() == pre
    assert errors(validate_post_context(post)) == []
    assert parse_post_context(copy.deepcopy(post)).to_json() == post


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pre_results, post_results)
def test_valid_results_pass_and_round_trip(pre: Any, post: Any) -> None:
    assert validate_pre_result(pre) == []
    assert parse_pre_result(pre).to_json() == (pre or {})
    assert validate_post_result(post) == []
    parsed = parse_post_result(post)
    assert parsed.to_json() == (post or {})
    assert escape_of(parsed) == escape_of(post)
