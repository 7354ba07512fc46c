"""The four shipped model hooks (spec/pleach.md §4) as pure functions over JSON contexts."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from studio.core.chain.builtins import (
    BUILTIN_HOOKS,
    BUILTIN_STUDIO_RULES,
    DEFAULT_POST_HOOKS,
    MAX_TOOLS_PARALLEL,
    MAX_TOOLS_SERIAL,
    estimate_message_tokens,
    estimate_tokens,
    historyTrimmerHook,
    js_length,
    lazyModelDefaultsHook,
    message_characters,
    repetitionDetectorHook,
    tool_pair_groups,
    toolCallValidatorHook,
    trim_target,
)
from studio.core.chain.shapes import (
    STUDIO_RULE_IDS,
    validate_post_context,
    validate_post_result,
    validate_pre_context,
    validate_pre_result,
)
from studio.core.findings import errors

# --------------------------------------------------------------------------------------------
# Helpers


def profile(max_input: int = 1000, *, parallel: bool = False) -> dict[str, Any]:
    return {
        "maxInputTokens": max_input,
        "maxOutputTokens": 100,
        "costPerMillionInputTokens": 1.0,
        "costPerMillionOutputTokens": 2.0,
        "supportsParallelToolCalls": parallel,
        "supportsVision": False,
        "supportsCaching": False,
    }


def text(role: str, n: int = 36, tag: str = "") -> dict[str, Any]:
    """A message of exactly ``n`` characters (with the default 36: 9 + 3 = 12 tokens)."""
    body = (tag + "x" * n)[:n]
    return {"role": role, "content": body}


def call(call_id: str | None, *names: str) -> dict[str, Any]:
    calls = [{"name": name} for name in names]
    if call_id is not None:
        for i, c in enumerate(calls):
            c["id"] = call_id if len(calls) == 1 else f"{call_id}.{i}"
    return {"role": "assistant", "content": None, "toolCalls": calls}


def result(call_id: str | None, n: int = 36) -> dict[str, Any]:
    message = text("tool", n)
    if call_id is not None:
        message["toolCallId"] = call_id
    return message


def pre(messages: list[Any], prof: Any = None, tools: list[Any] | None = None) -> dict[str, Any]:
    context = {
        "messages": messages,
        "model": "m",
        "modelProfile": prof,
        "tools": tools if tools is not None else [],
        "systemPrompt": "S",
        "state": {},
    }
    assert errors(validate_pre_context(context)) == []
    return context


def post(
    response: dict[str, Any], history: list[Any] | None = None, tools: list[str] = ()
) -> dict[str, Any]:
    context = {
        "response": response,
        "request": {
            "messages": history or [],
            "model": "m",
            "tools": [{"name": name} for name in tools],
            "state": {},
        },
        "state": {},
    }
    assert errors(validate_post_context(context)) == []
    return context


def tagged(n: int, role: str = "user") -> list[dict[str, Any]]:
    """``n`` distinct 12-token messages."""
    return [text(role, 36, f"m{i}:") for i in range(n)]


# --------------------------------------------------------------------------------------------
# Token estimate


def test_estimate_is_ceil_of_quarter_characters_plus_three() -> None:
    assert estimate_message_tokens({"role": "user", "content": ""}) == 3
    assert estimate_message_tokens({"role": "user", "content": "abcd"}) == 4
    assert estimate_message_tokens({"role": "user", "content": "abcde"}) == 5
    assert estimate_message_tokens(text("user")) == 12
    assert estimate_tokens([text("user"), text("assistant", 1)]) == 12 + 4
    assert estimate_tokens([]) == 0


def test_characters_are_counted_as_javascript_counts_them() -> None:
    assert js_length("😀") == 2
    assert js_length("é") == 1
    # Four emoji are 8 UTF-16 code units: ceil(8 / 4) + 3.
    assert estimate_message_tokens({"role": "user", "content": "😀" * 4}) == 5


def test_characters_of_parts_and_tool_calls() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "abc"}, {"type": "image", "url": "u"}],
        "toolCalls": [{"name": "search", "id": "1", "arguments": {"q": "x"}}, {"name": "go"}],
    }
    image = len('{"type":"image","url":"u"}')
    assert message_characters(message) == 3 + image + len("search") + len('{"q":"x"}') + 2
    assert message_characters({"role": "assistant", "content": None}) == 0


# --------------------------------------------------------------------------------------------
# historyTrimmerHook


def test_trim_target_is_at_most_85_percent() -> None:
    assert trim_target(1000) == 850
    assert trim_target(200) == 170
    assert trim_target(7) == 5  # 5.95 rounds down: "at most" 85%


def test_no_profile_no_trimming() -> None:
    messages = tagged(40)
    assert historyTrimmerHook(pre(messages, None)) is None


def test_within_budget_is_left_alone() -> None:
    messages = tagged(20)  # 240 tokens
    assert historyTrimmerHook(pre(messages, profile(240))) is None
    assert historyTrimmerHook(pre(messages, profile(10_000))) is None


def test_over_budget_drops_the_oldest_until_85_percent() -> None:
    messages = tagged(20)  # 240 tokens; limit 200, target 170: drop 6 (72) to reach 168
    out = historyTrimmerHook(pre(messages, profile(200)))
    assert out == {"messages": messages[6:]}
    assert estimate_tokens(out["messages"]) <= trim_target(200)
    # Minimal: one message fewer dropped would still be over the target.
    assert estimate_tokens(messages[5:]) > trim_target(200)
    assert errors(validate_pre_result(out)) == []


def test_trimming_keeps_the_last_six_messages_even_over_the_target() -> None:
    messages = tagged(10)  # 120 tokens
    out = historyTrimmerHook(pre(messages, profile(50)))
    assert out == {"messages": messages[-6:]}
    assert estimate_tokens(out["messages"]) > trim_target(50)


def test_trimming_keeps_every_system_message() -> None:
    messages = tagged(14)
    messages[0] = text("system", 36, "sys0")
    messages[3] = text("system", 36, "sys3")
    out = historyTrimmerHook(pre(messages, profile(60)))
    assert out is not None
    kept = out["messages"]
    assert kept == [messages[0], messages[3], *messages[-6:]]


def test_nothing_droppable_changes_nothing() -> None:
    few = tagged(5)
    assert historyTrimmerHook(pre(few, profile(10))) is None
    systems = [text("system", 36, f"s{i}") for i in range(4)] + tagged(6)
    assert historyTrimmerHook(pre(systems, profile(10))) is None


def test_a_tool_call_whose_result_is_kept_is_kept() -> None:
    # The call at index 4 is droppable by age, but its result sits in the last six.
    messages = [*tagged(4), call("c1", "search"), *tagged(1), result("c1"), *tagged(5)]
    out = historyTrimmerHook(pre(messages, profile(20)))
    assert out is not None
    assert out["messages"] == [messages[4], *messages[-6:]]
    assert out["messages"][-6]["toolCallId"] == "c1"


def test_dropping_a_tool_call_drops_its_results() -> None:
    messages = [
        call("c1", "search", "read"),  # ids c1.0, c1.1
        result("c1.0"),
        result("c1.1"),
        *tagged(7),
    ]
    out = historyTrimmerHook(pre(messages, profile(100)))
    assert out is not None
    kept = out["messages"]
    assert not any(m.get("toolCallId", "").startswith("c1") for m in kept)
    assert messages[0] not in kept


def test_no_result_is_ever_left_without_its_call() -> None:
    messages = []
    for i in range(8):
        messages += [text("user", 36, f"q{i}"), call(f"c{i}", "search"), result(f"c{i}")]
    for limit in (20, 60, 100, 150, 200, 250, 300):
        out = historyTrimmerHook(pre(messages, profile(limit)))
        kept = out["messages"] if out else messages
        call_ids = {c["id"] for m in kept if m["role"] == "assistant" for c in m["toolCalls"]}
        result_ids = {m["toolCallId"] for m in kept if m["role"] == "tool"}
        assert call_ids == result_ids, limit
        assert kept[-6:] == messages[-6:]


def test_a_tool_result_without_an_id_goes_with_the_nearest_earlier_call() -> None:
    messages = [text("user"), call(None, "search"), result(None), text("user"), *tagged(6)]
    groups = tool_pair_groups(messages)
    assert [1, 2] in groups
    out = historyTrimmerHook(pre(messages, profile(70)))
    assert out is not None
    assert messages[1] not in out["messages"]
    assert messages[2] not in out["messages"]


def test_pair_groups_cover_every_message_once() -> None:
    messages = [call("a", "x"), result("a"), result("zzz"), text("user"), result("a")]
    groups = tool_pair_groups(messages)
    assert groups == [[0, 1, 4], [2], [3]]


def test_trimmer_does_not_touch_its_input() -> None:
    messages = tagged(20)
    context = pre(messages, profile(200))
    before = copy.deepcopy(context)
    historyTrimmerHook(context)
    assert context == before


# --------------------------------------------------------------------------------------------
# lazyModelDefaultsHook


def tools(n: int) -> list[dict[str, Any]]:
    return [{"name": f"t{i}"} for i in range(n)]


def test_33_tools_without_parallel_support_are_cut_to_the_first_32() -> None:
    out = lazyModelDefaultsHook(pre([], profile(parallel=False), tools(33)))
    assert out == {"tools": tools(32)}
    assert errors(validate_pre_result(out)) == []


def test_33_tools_with_parallel_support_are_left_alone() -> None:
    assert lazyModelDefaultsHook(pre([], profile(parallel=True), tools(33))) is None


def test_no_profile_caps_at_32() -> None:
    assert lazyModelDefaultsHook(pre([], None, tools(33))) == {"tools": tools(32)}
    assert lazyModelDefaultsHook(pre([], None, tools(32))) is None


def test_the_parallel_cap_is_128() -> None:
    out = lazyModelDefaultsHook(pre([], profile(parallel=True), tools(130)))
    assert out == {"tools": tools(MAX_TOOLS_PARALLEL)}
    assert lazyModelDefaultsHook(pre([], profile(parallel=True), tools(128))) is None
    assert (MAX_TOOLS_PARALLEL, MAX_TOOLS_SERIAL) == (128, 32)


# --------------------------------------------------------------------------------------------
# toolCallValidatorHook


def test_an_unknown_tool_asks_for_a_retry_naming_it() -> None:
    out = toolCallValidatorHook(post(call("1", "serch"), tools=["search", "read"]))
    assert out is not None
    assert set(out) == {"retry"}
    assert set(out["retry"]) == {"feedback"}  # no maxRetries: the default of 1 applies
    feedback = out["retry"]["feedback"]
    assert '"serch"' in feedback
    assert '"search", "read"' in feedback
    assert errors(validate_post_result(out)) == []


def test_every_unknown_tool_is_named_once_in_call_order() -> None:
    response = call("1", "b", "search", "a", "b")
    out = toolCallValidatorHook(post(response, tools=["search"]))
    assert out is not None
    feedback = out["retry"]["feedback"]
    assert 'tools "b", "a", which do not exist' in feedback
    assert feedback.count('"b"') == 1


def test_known_tools_and_plain_answers_pass() -> None:
    assert toolCallValidatorHook(post(call("1", "search"), tools=["search"])) is None
    assert toolCallValidatorHook(post(text("assistant"), tools=["search"])) is None
    assert toolCallValidatorHook(post(text("assistant"))) is None


def test_only_an_assistant_response_carries_tool_calls() -> None:
    response = {"role": "user", "content": "x", "toolCalls": [{"name": "nope"}]}
    assert toolCallValidatorHook(post(response, tools=["search"])) is None


def test_with_no_tools_available_every_call_is_unknown() -> None:
    out = toolCallValidatorHook(post(call("1", "search")))
    assert out is not None
    assert "No tools are available" in out["retry"]["feedback"]


# --------------------------------------------------------------------------------------------
# repetitionDetectorHook


def test_a_third_call_across_the_last_five_assistant_messages_asks_for_one_retry() -> None:
    history = [text("user"), call("1", "search"), result("1"), call("2", "search"), result("2")]
    out = repetitionDetectorHook(post(call("3", "search"), history, ["search"]))
    assert out is not None
    assert out["retry"]["maxRetries"] == 1
    assert '"search" 3 times' in out["retry"]["feedback"]
    assert errors(validate_post_result(out)) == []


def test_two_calls_are_not_a_repetition() -> None:
    history = [call("1", "search"), result("1")]
    assert repetitionDetectorHook(post(call("2", "search"), history, ["search"])) is None


def test_the_response_is_the_newest_of_the_five() -> None:
    # search in the 1st and 2nd of six earlier assistant messages: outside the window of the
    # last four plus the response.
    history = [
        call("1", "search"),
        call("2", "search"),
        call("3", "read"),
        call("4", "read"),
        call("5", "other"),
        call("6", "other"),
    ]
    assert repetitionDetectorHook(post(call("7", "search"), history)) is None
    # search in the 3rd and 6th: inside the window, with the response the third call.
    history[2] = call("3", "search")
    history[5] = call("6", "search")
    out = repetitionDetectorHook(post(call("7", "search"), history))
    assert out is not None


def test_other_roles_do_not_take_places_in_the_window() -> None:
    history = [call("1", "search"), *tagged(10), call("2", "search"), *tagged(10)]
    assert repetitionDetectorHook(post(call("3", "search"), history)) is not None


def test_a_response_that_stops_calling_the_repeated_tool_passes() -> None:
    history = [call(str(i), "search") for i in range(4)]
    assert repetitionDetectorHook(post(call("9", "read"), history)) is None
    assert repetitionDetectorHook(post(text("assistant"), history)) is None


def test_parallel_calls_in_one_message_count_each() -> None:
    out = repetitionDetectorHook(post(call("p", "search", "search", "search")))
    assert out is not None
    assert '"search" 3 times' in out["retry"]["feedback"]


def test_several_repeated_tools_are_all_named() -> None:
    history = [call("1", "a", "b"), call("2", "a", "b")]
    out = repetitionDetectorHook(post(call("3", "b", "a"), history))
    assert out is not None
    assert '"b" 3 times and "a" 3 times' in out["retry"]["feedback"]


# --------------------------------------------------------------------------------------------
# Registry and rules


def test_registry_names_kinds_and_defaults() -> None:
    assert {name: kind for name, (kind, _) in BUILTIN_HOOKS.items()} == {
        "historyTrimmerHook": "pre",
        "lazyModelDefaultsHook": "pre",
        "toolCallValidatorHook": "post",
        "repetitionDetectorHook": "post",
    }
    assert DEFAULT_POST_HOOKS == ("toolCallValidatorHook", "repetitionDetectorHook")
    for name, (_, function) in BUILTIN_HOOKS.items():
        assert function.__name__ == name


@pytest.mark.parametrize("name", list(BUILTIN_HOOKS))
def test_every_builtin_returns_a_valid_result_or_none(name: str) -> None:
    kind, function = BUILTIN_HOOKS[name]
    if kind == "pre":
        contexts = [
            pre(tagged(20), profile(100), tools(40)),
            pre([], None, []),
            pre([call("1", "x"), result("1"), *tagged(8)], profile(30, parallel=True), tools(1)),
        ]
        validate = validate_pre_result
    else:
        contexts = [
            post(call("1", "x", "x", "x"), [call("0", "x")], ["y"]),
            post(text("assistant")),
            post(call("1", "y"), tools=["y"]),
        ]
        validate = validate_post_result
    for context in contexts:
        out = function(context)
        assert out is None or isinstance(out, dict)
        assert errors(validate(out)) == []


def test_builtin_rules_are_studio_rules_with_text() -> None:
    ids = [rule.id for rule in BUILTIN_STUDIO_RULES]
    assert len(ids) == len(set(ids))
    assert all(rule.id.startswith("pleach.studio.") and rule.text for rule in BUILTIN_STUDIO_RULES)
    # token-estimate and trim-pairs restate existing entries; the others are new.
    assert set(ids) & STUDIO_RULE_IDS == {
        "pleach.studio.token-estimate",
        "pleach.studio.trim-pairs",
    }
