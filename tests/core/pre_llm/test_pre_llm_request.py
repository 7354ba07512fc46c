"""spec/adf.md §3: the request a pre-LLM hook returns, rules 1–8, and presented-but-not-enabled."""

from __future__ import annotations

import copy
import json
import math
import re
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studio.core.findings import Finding, dotted, first_error
from studio.core.pre_llm.request import presented_not_enabled, validate_request
from studio.core.pre_llm.request_check import (
    RULE_BLOCKS,
    RULE_JSON,
    RULE_MESSAGES,
    RULE_NOT_ENABLED,
    RULE_OBJECT,
    RULE_OPTIONS,
    RULE_PAIRING,
    RULE_SYSTEM,
    RULE_TOOLS,
)
from studio.core.pre_llm.request_messages import BLOCK_TYPES
from tests.support.hypothesis_profiles import examples
from tests.support.json_strategies import json_scalars, json_values

NAN = float("nan")
INF = float("inf")


def base() -> dict[str, Any]:
    """A valid returned request that uses every common shape once."""
    return {
        "system": "You are careful.",
        "messages": [
            {"role": "user", "content": "Read the notes."},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "I should read them."},
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "t1", "name": "fs_read", "input": {"path": "a.md"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "notes"},
                ],
            },
            {"role": "assistant", "content": "Done."},
        ],
        "tools": [
            {"name": "fs_read", "description": "Read a file", "input_schema": {"type": "object"}}
        ],
        "options": {"maxTokens": 1024, "temperature": 0.5},
    }


def with_messages(*messages: Any) -> dict[str, Any]:
    request = base()
    request["messages"] = list(messages)
    return request


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def use(use_id: str, name: str = "fs_read", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, **extra}


def result(use_id: str, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": content, **extra}


def text(value: Any = "hi") -> dict[str, Any]:
    return {"type": "text", "text": value}


def errors(value: object) -> list[Finding]:
    return [f for f in validate_request(value) if f.severity == "error"]


def paths(value: object) -> list[tuple[Any, ...]]:
    return [f.path for f in errors(value)]


def rules(value: object) -> list[str]:
    return [f.rule for f in errors(value)]


def first(value: object) -> Finding:
    finding = first_error(validate_request(value))
    assert finding is not None
    return finding


def only(value: object) -> Finding:
    found = errors(value)
    assert len(found) == 1, [f.message for f in found]
    return found[0]


# ---------------------------------------------------------------------------------------------
# Valid requests


class TestValid:
    def test_the_base_request_is_valid(self):
        assert validate_request(base()) == []

    def test_the_smallest_request_is_valid(self):
        request = {
            "system": "",
            "messages": [{"role": "user", "content": ""}],
            "tools": [],
            "options": {},
        }
        assert validate_request(request) == []

    def test_every_block_type_in_its_role_is_valid(self):
        request = with_messages(
            user(
                text(),
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                {"type": "video_url", "video_url": {"url": "https://x/y.mp4"}},
            ),
            assistant(
                {"type": "thinking", "thinking": ""},
                text(""),
                use("a", input={"q": [1, 2.5, None, True, {"n": "x"}]}),
                use("b"),
                use("c", input=None),
            ),
            user(result("a", is_error=True), result("b", "", is_error=False), result("c")),
        )
        assert validate_request(request) == []

    def test_an_empty_content_array_is_valid(self):
        assert validate_request(with_messages({"role": "user", "content": []})) == []

    def test_extra_message_keys_are_allowed(self):
        request = with_messages({"role": "user", "content": "x", "name": "ann", "meta": {"k": [1]}})
        assert validate_request(request) == []

    def test_extra_block_keys_are_allowed(self):
        request = with_messages(
            user(
                {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}},
                {"type": "image_url", "image_url": {"url": "u", "detail": "high"}},
            )
        )
        assert validate_request(request) == []

    def test_extra_tool_keys_are_allowed(self):
        request = base()
        request["tools"][0]["cache_control"] = {"type": "ephemeral"}
        request["tools"][0]["strict"] = True
        assert validate_request(request) == []

    def test_every_option_at_its_bounds_is_valid(self):
        request = base()
        request["options"] = {
            "maxTokens": 1,
            "thinkingBudget": 2048.0,  # a whole float counts as an integer
            "temperature": 2,
            "topP": 0,
            "dynamicInstructions": "",
            "reasoning": {"effort": "low"},
            "providerParams": {"seed": 3, "nested": {"a": [None]}},
        }
        assert validate_request(request) == []

    def test_key_order_does_not_matter(self):
        request = base()
        reordered = {key: request[key] for key in ("options", "tools", "messages", "system")}
        assert validate_request(reordered) == []

    def test_a_shared_value_is_not_a_cycle(self):
        shared = {"path": "a.md", "deep": [[{"x": 1}]]}
        request = with_messages(
            assistant(use("a", input=shared), use("b", input=shared)),
            user(result("a"), result("b")),
        )
        assert validate_request(request) == []

    def test_the_input_is_not_changed(self):
        request = base()
        before = copy.deepcopy(request)
        validate_request(request)
        assert request == before


# ---------------------------------------------------------------------------------------------
# Rule 1: a JSON object with only the four keys


class TestRule1:
    def test_none_is_no_json_request(self):
        found = validate_request(None)
        assert len(found) == 1
        assert found[0].message == "the hook returned no JSON request"
        assert found[0].rule == RULE_OBJECT
        assert found[0].path == ()

    @pytest.mark.parametrize(
        "value", ["{}", "", 3, 2.5, True, False, [], [base()], (1,), b"{}", {1, 2}]
    )
    def test_a_value_that_is_not_an_object_fails_rule_1(self, value):
        finding = first(value)
        assert finding.rule == RULE_OBJECT
        assert finding.path == ()
        assert "JSON object" in finding.message

    def test_a_string_says_what_it_got(self):
        assert 'got "x"' in only("x").message

    def test_the_request_loop_input_fails_on_request(self):
        request = base()
        finding = first({"request": request, "loop": {"name": "main"}})
        assert finding.rule == RULE_OBJECT
        assert finding.path == ("request",)
        assert "request.request" in finding.message
        assert "{request, loop}" in finding.message

    def test_each_unsupported_key_is_listed_in_order(self):
        request = base()
        request["model"] = "x"
        request["stream"] = True
        found = errors(request)
        assert [f.path for f in found] == [("model",), ("stream",)]
        assert all(f.rule == RULE_OBJECT for f in found)

    def test_an_unsupported_key_comes_before_a_bad_system(self):
        request = {"extra": 1, **base()}
        request["system"] = None
        assert rules(request) == [RULE_OBJECT, RULE_SYSTEM]

    def test_a_non_string_key_fails_rule_1(self):
        request: dict[Any, Any] = base()
        request[1] = "x"
        finding = only(request)
        assert finding.rule == RULE_OBJECT
        assert finding.path == ()
        assert "not a string" in finding.message

    @pytest.mark.parametrize("key", ["system", "messages", "tools", "options"])
    def test_every_key_is_required(self, key):
        request = base()
        del request[key]
        finding = only(request)
        assert finding.path == (key,)
        assert "missing" in finding.message

    def test_a_dict_subclass_is_not_a_plain_object(self):
        assert first(OrderedDict(base())).rule == RULE_OBJECT


# ---------------------------------------------------------------------------------------------
# Rule 2: system


class TestRule2:
    @pytest.mark.parametrize("value", [None, 3, True, [], {}, ["a"]])
    def test_system_must_be_a_string(self, value):
        request = base()
        request["system"] = value
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_SYSTEM, ("system",))
        assert finding.message.startswith("request.system must be a string")

    def test_an_empty_system_is_valid(self):
        request = base()
        request["system"] = ""
        assert validate_request(request) == []


# ---------------------------------------------------------------------------------------------
# Rule 3: messages


class TestRule3:
    @pytest.mark.parametrize("value", [[], None, "hi", {}, {"role": "user", "content": "x"}])
    def test_messages_must_be_a_non_empty_array(self, value):
        request = base()
        request["messages"] = value
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_MESSAGES, ("messages",))
        assert "non-empty array" in finding.message

    @pytest.mark.parametrize("message", [None, "hi", [], 3])
    def test_a_message_must_be_an_object(self, message):
        finding = only(with_messages({"role": "user", "content": "x"}, message))
        assert (finding.rule, finding.path) == (RULE_MESSAGES, ("messages", 1))
        assert "request.messages[1]" in finding.message

    @pytest.mark.parametrize("role", ["system", "tool", "User", "", None, 1, True])
    def test_a_wrong_role_fails(self, role):
        finding = only(with_messages({"role": role, "content": "x"}))
        assert (finding.rule, finding.path) == (RULE_MESSAGES, ("messages", 0, "role"))
        assert '"user" or "assistant"' in finding.message

    def test_a_missing_role_fails(self):
        finding = only(with_messages({"content": "x"}))
        assert finding.path == ("messages", 0, "role")
        assert "missing" in finding.message

    @pytest.mark.parametrize("content", [None, 3, {"type": "text", "text": "x"}, True])
    def test_content_must_be_a_string_or_an_array(self, content):
        finding = only(with_messages({"role": "user", "content": content}))
        assert (finding.rule, finding.path) == (RULE_MESSAGES, ("messages", 0, "content"))
        assert "string or an array" in finding.message

    def test_a_missing_content_fails(self):
        assert paths(with_messages({"role": "user"})) == [("messages", 0, "content")]

    def test_messages_are_reported_in_document_order(self):
        request = with_messages(
            {"role": "user", "content": "x"},
            {"role": "bot", "content": "x"},
            {"role": "user", "content": 5},
        )
        assert paths(request) == [("messages", 1, "role"), ("messages", 2, "content")]


# ---------------------------------------------------------------------------------------------
# Rule 4: blocks


class TestRule4:
    @pytest.mark.parametrize(
        ("block", "role", "words"),
        [
            ({"type": "thinking", "thinking": "x"}, "user", "a thinking block must be in an "),
            (use("a"), "user", "a tool_use must be in an assistant message"),
            (result("a"), "assistant", "a tool_result must be in a user message"),
            (
                {"type": "image_url", "image_url": {"url": "u"}},
                "assistant",
                "an image_url block must be in a user message",
            ),
            (
                {"type": "input_audio", "input_audio": {"data": "d", "format": "wav"}},
                "assistant",
                "an input_audio block must be in a user message",
            ),
            (
                {"type": "video_url", "video_url": {"url": "u"}},
                "assistant",
                "a video_url block must be in a user message",
            ),
        ],
    )
    def test_a_block_in_the_wrong_role_fails(self, block, role, words):
        request = with_messages({"role": role, "content": [block]})
        finding = first(request)
        assert (finding.rule, finding.path) == (RULE_BLOCKS, ("messages", 0, "content", 0))
        assert words in finding.message
        assert finding.message.startswith("request.messages[0].content[0]")

    @pytest.mark.parametrize("role", ["user", "assistant"])
    def test_text_is_allowed_in_any_role(self, role):
        assert validate_request(with_messages({"role": role, "content": [text()]})) == []

    @pytest.mark.parametrize("block", [None, "text", 3, [], ["type", "text"]])
    def test_a_block_must_be_an_object(self, block):
        finding = only(with_messages(user(block)))
        assert (finding.rule, finding.path) == (RULE_BLOCKS, ("messages", 0, "content", 0))

    @pytest.mark.parametrize("block_type", [None, 3, True, ["text"]])
    def test_a_block_type_must_be_a_string(self, block_type):
        finding = only(with_messages(user({"type": block_type, "text": "x"})))
        assert finding.rule == RULE_BLOCKS
        assert finding.path == ("messages", 0, "content", 0, "type")

    def test_a_block_without_a_type_fails(self):
        finding = only(with_messages(user({"text": "x"})))
        assert finding.path == ("messages", 0, "content", 0, "type")

    @pytest.mark.parametrize("block_type", ["image", "tool_call", "Text", "", "document"])
    def test_an_unknown_block_type_fails(self, block_type):
        finding = only(with_messages(user({"type": block_type, "text": "x"})))
        assert (finding.rule, finding.path) == (RULE_BLOCKS, ("messages", 0, "content", 0, "type"))
        assert "not a supported block type" in finding.message

    @pytest.mark.parametrize("value", [None, 3, ["x"], {"t": "x"}])
    def test_text_must_be_a_string(self, value):
        finding = only(with_messages(user(text(value))))
        assert finding.path == ("messages", 0, "content", 0, "text")

    def test_text_must_be_present(self):
        finding = only(with_messages(user({"type": "text"})))
        assert finding.path == ("messages", 0, "content", 0, "text")
        assert "missing" in finding.message

    @pytest.mark.parametrize("value", [None, 3, "missing"])
    def test_thinking_must_be_a_string(self, value):
        block: dict[str, Any] = {"type": "thinking"}
        if value != "missing":
            block["thinking"] = value
        finding = only(with_messages(assistant(block)))
        assert finding.path == ("messages", 0, "content", 0, "thinking")

    @pytest.mark.parametrize("field", ["id", "name"])
    @pytest.mark.parametrize("value", ["", None, 3, ["a"], "missing"])
    def test_tool_use_id_and_name_must_be_non_empty_strings(self, field, value):
        block = use("a")
        if value == "missing":
            del block[field]
        else:
            block[field] = value
        request = with_messages(assistant(block), user(result("a")))
        found = errors(request)
        assert found[0].path == ("messages", 0, "content", 0, field)
        assert found[0].rule == RULE_BLOCKS
        assert f"tool_use {field} must be a non-empty string" in found[0].message

    def test_tool_use_input_is_optional_and_may_be_any_json(self):
        for value in [None, 3, "x", [1, [2]], {"a": {"b": [True]}}]:
            request = with_messages(assistant(use("a", input=value)), user(result("a")))
            assert validate_request(request) == [], value

    @pytest.mark.parametrize("value", [NAN, INF, {"x": NAN}, [1, {2, 3}], (1, 2)])
    def test_tool_use_input_must_be_json(self, value):
        request = with_messages(assistant(use("a", input=value)), user(result("a")))
        finding = only(request)
        assert finding.rule == RULE_JSON
        assert finding.path[:5] == ("messages", 0, "content", 0, "input")

    @pytest.mark.parametrize("value", ["", None, 7, "missing"])
    def test_tool_result_tool_use_id_must_be_a_non_empty_string(self, value):
        block = result("a")
        if value == "missing":
            del block["tool_use_id"]
        else:
            block["tool_use_id"] = value
        found = errors(with_messages(assistant(use("a")), user(block)))
        assert found[0].path == ("messages", 1, "content", 0, "tool_use_id")
        assert found[0].rule == RULE_BLOCKS

    @pytest.mark.parametrize(
        "content", [[{"type": "text", "text": "x"}], [], None, 3, {"text": "x"}, True]
    )
    def test_tool_result_content_must_be_a_string(self, content):
        request = with_messages(assistant(use("a")), user(result("a", content)))
        finding = only(request)
        assert (finding.rule, finding.path) == (
            RULE_BLOCKS,
            ("messages", 1, "content", 0, "content"),
        )
        assert "tool_result content must be a string" in finding.message
        assert finding.message.startswith("request.messages[1].content[0].content")

    def test_tool_result_content_must_be_present(self):
        block = result("a")
        del block["content"]
        finding = only(with_messages(assistant(use("a")), user(block)))
        assert finding.path == ("messages", 1, "content", 0, "content")

    @pytest.mark.parametrize("value", [None, 0, 1, "true", [], {}])
    def test_is_error_must_be_a_boolean_when_present(self, value):
        request = with_messages(assistant(use("a")), user(result("a", is_error=value)))
        finding = only(request)
        assert finding.path == ("messages", 1, "content", 0, "is_error")
        assert "is_error must be a boolean" in finding.message

    @pytest.mark.parametrize(
        ("block", "where"),
        [
            ({"type": "image_url"}, ("image_url",)),
            ({"type": "image_url", "image_url": "https://x"}, ("image_url",)),
            ({"type": "image_url", "image_url": None}, ("image_url",)),
            ({"type": "image_url", "image_url": {}}, ("image_url", "url")),
            ({"type": "image_url", "image_url": {"url": 3}}, ("image_url", "url")),
            ({"type": "video_url", "video_url": {"href": "u"}}, ("video_url", "url")),
            ({"type": "video_url", "video_url": ["u"]}, ("video_url",)),
            ({"type": "input_audio", "input_audio": {"data": "d"}}, ("input_audio", "format")),
            (
                {"type": "input_audio", "input_audio": {"format": "wav", "data": None}},
                ("input_audio", "data"),
            ),
            ({"type": "input_audio", "input_audio": "d"}, ("input_audio",)),
        ],
    )
    def test_media_block_shapes(self, block, where):
        finding = only(with_messages(user(block)))
        assert finding.rule == RULE_BLOCKS
        assert finding.path == ("messages", 0, "content", 0, *where)

    def test_both_input_audio_fields_are_reported(self):
        block = {"type": "input_audio", "input_audio": {}}
        assert paths(with_messages(user(block))) == [
            ("messages", 0, "content", 0, "input_audio", "data"),
            ("messages", 0, "content", 0, "input_audio", "format"),
        ]

    def test_blocks_are_reported_in_document_order(self):
        request = with_messages(
            user(text(1), {"type": "nope"}),
            assistant(text(), {"type": "thinking", "thinking": 2}),
        )
        assert paths(request) == [
            ("messages", 0, "content", 0, "text"),
            ("messages", 0, "content", 1, "type"),
            ("messages", 1, "content", 1, "thinking"),
        ]

    def test_a_block_check_of_an_earlier_message_comes_before_a_later_role(self):
        request = with_messages(user(text(None)), {"role": "bot", "content": "x"})
        assert paths(request) == [("messages", 0, "content", 0, "text"), ("messages", 1, "role")]


# ---------------------------------------------------------------------------------------------
# Rule 5: tool pairing


class TestRule5:
    def test_a_duplicate_tool_use_id_fails(self):
        request = with_messages(
            assistant(use("x")),
            user(result("x")),
            assistant(use("x")),
            user(result("x")),
        )
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_PAIRING, ("messages", 2, "content", 0))
        assert "tool_use id 'x' is used twice" in finding.message
        assert "request.messages[0].content[0]" in finding.message

    def test_a_duplicate_while_still_open_fails_once(self):
        request = with_messages(assistant(use("x"), use("x")), user(result("x")))
        assert paths(request) == [("messages", 0, "content", 1)]

    def test_a_tool_result_before_its_tool_use_fails(self):
        request = with_messages(user(result("x")), assistant(use("x")))
        found = errors(request)
        assert [f.rule for f in found] == [RULE_PAIRING, RULE_PAIRING]
        assert found[0].path == ("messages", 0, "content", 0)
        assert "tool_result 'x' does not answer an earlier unmatched tool_use" in found[0].message
        assert found[1].path == ("messages", 1, "content", 0)
        assert "tool_use 'x' is never answered" in found[1].message

    def test_a_second_answer_fails(self):
        request = with_messages(assistant(use("x")), user(result("x"), result("x")))
        finding = only(request)
        assert finding.path == ("messages", 1, "content", 1)
        assert "does not answer an earlier unmatched tool_use" in finding.message

    def test_a_result_for_an_unknown_id_fails(self):
        request = with_messages(assistant(use("x")), user(result("x"), result("y")))
        assert paths(request) == [("messages", 1, "content", 1)]

    def test_results_need_not_be_adjacent_or_in_order(self):
        request = with_messages(
            assistant(use("a"), use("b")),
            user(text("thinking it over")),
            assistant(text("still working"), use("c")),
            user(result("c"), result("b")),
            assistant(text("and")),
            user(result("a")),
        )
        assert validate_request(request) == []

    def test_every_unanswered_tool_use_fails_in_order(self):
        request = with_messages(assistant(use("a"), use("b"), use("c")), user(result("b")))
        found = errors(request)
        assert [f.path for f in found] == [
            ("messages", 0, "content", 0),
            ("messages", 0, "content", 2),
        ]
        assert "tool_use 'a' is never answered" in found[0].message

    def test_pairing_comes_after_every_message_check(self):
        request = with_messages(assistant(use("a")), {"role": "user", "content": 3})
        assert rules(request) == [RULE_MESSAGES, RULE_PAIRING]

    def test_pairing_ignores_string_content(self):
        request = with_messages({"role": "user", "content": "tool_result x"})
        assert validate_request(request) == []


# ---------------------------------------------------------------------------------------------
# Rule 6: tools


def tool(name: Any = "t", **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": "d", "input_schema": {"type": "object"}, **extra}


def with_tools(*tools: Any) -> dict[str, Any]:
    request = base()
    request["tools"] = list(tools)
    return request


class TestRule6:
    def test_no_tools_is_valid(self):
        assert validate_request(with_tools()) == []

    @pytest.mark.parametrize("value", [None, {}, "fs_read", "missing"])
    def test_tools_must_be_an_array(self, value):
        request = base()
        if value == "missing":
            del request["tools"]
        else:
            request["tools"] = value
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_TOOLS, ("tools",))

    @pytest.mark.parametrize("value", [None, "fs_read", []])
    def test_a_tool_must_be_an_object(self, value):
        assert paths(with_tools(tool(), value)) == [("tools", 1)]

    @pytest.mark.parametrize("name", ["", None, 3])
    def test_a_tool_name_must_be_a_non_empty_string(self, name):
        finding = only(with_tools(tool(name)))
        assert (finding.rule, finding.path) == (RULE_TOOLS, ("tools", 0, "name"))

    @pytest.mark.parametrize("key", ["name", "description", "input_schema"])
    def test_a_missing_tool_field_fails(self, key):
        entry = tool()
        del entry[key]
        finding = only(with_tools(entry))
        assert (finding.rule, finding.path) == (RULE_TOOLS, ("tools", 0, key))
        assert "missing" in finding.message

    @pytest.mark.parametrize("value", [None, 3, ["d"]])
    def test_a_description_must_be_a_string(self, value):
        assert paths(with_tools(tool(description=value))) == [("tools", 0, "description")]

    def test_an_empty_description_is_valid(self):
        assert validate_request(with_tools(tool(description=""))) == []

    @pytest.mark.parametrize("value", [None, "object", [], True])
    def test_an_input_schema_must_be_an_object(self, value):
        assert paths(with_tools(tool(input_schema=value))) == [("tools", 0, "input_schema")]

    def test_an_input_schema_must_be_json(self):
        finding = only(with_tools(tool(input_schema={"maximum": INF})))
        assert finding.rule == RULE_JSON
        assert finding.path == ("tools", 0, "input_schema", "maximum")

    def test_a_duplicate_tool_name_fails(self):
        found = errors(with_tools(tool("a"), tool("b"), tool("a")))
        assert len(found) == 1
        assert (found[0].rule, found[0].path) == (RULE_TOOLS, ("tools", 2, "name"))
        assert "tool name 'a' is used twice" in found[0].message

    def test_tools_are_reported_in_document_order(self):
        request = with_tools(tool(""), tool("b", description=None), tool("b"))
        assert paths(request) == [
            ("tools", 0, "name"),
            ("tools", 1, "description"),
            ("tools", 2, "name"),
        ]

    def test_a_tool_extra_key_that_is_not_json_is_reported_last(self):
        request = with_tools(tool(extra={"x": NAN}))
        request["options"] = {"temperature": 9}
        assert rules(request) == [RULE_OPTIONS, RULE_JSON]
        assert paths(request)[1] == ("tools", 0, "extra", "x")


# ---------------------------------------------------------------------------------------------
# Rule 7: options


def with_options(**options: Any) -> dict[str, Any]:
    request = base()
    request["options"] = options
    return request


class TestRule7:
    @pytest.mark.parametrize("value", [None, [], "x", 3, "missing"])
    def test_options_must_be_an_object(self, value):
        request = base()
        if value == "missing":
            del request["options"]
        else:
            request["options"] = value
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_OPTIONS, ("options",))

    @pytest.mark.parametrize("key", ["maxTokens", "thinkingBudget"])
    @pytest.mark.parametrize("value", [None, True, False, 0, -1, 1.5, NAN, INF, "10", [1], {}])
    def test_token_counts_must_be_positive_integers(self, key, value):
        finding = only(with_options(**{key: value}))
        assert (finding.rule, finding.path) == (RULE_OPTIONS, ("options", key))
        assert f"request.options.{key} must be a positive integer" in finding.message

    @pytest.mark.parametrize("value", [1, 10**6, 4096.0])
    def test_token_counts_accept_whole_numbers(self, value):
        assert validate_request(with_options(maxTokens=value, thinkingBudget=value)) == []

    @pytest.mark.parametrize("value", [None, True, -0.1, 2.0001, 3, NAN, INF, -INF, "1"])
    def test_temperature_must_be_finite_from_0_to_2(self, value):
        finding = only(with_options(temperature=value))
        assert (finding.rule, finding.path) == (RULE_OPTIONS, ("options", "temperature"))
        assert "options.temperature must be a finite number from 0 to 2" in finding.message

    @pytest.mark.parametrize("value", [0, 0.0, 1, 1.999, 2, 2.0])
    def test_temperature_bounds_are_inclusive(self, value):
        assert validate_request(with_options(temperature=value)) == []

    @pytest.mark.parametrize("value", [None, False, -0.01, 1.1, 2, NAN, INF, "0.5"])
    def test_top_p_must_be_finite_from_0_to_1(self, value):
        finding = only(with_options(topP=value))
        assert (finding.rule, finding.path) == (RULE_OPTIONS, ("options", "topP"))
        assert "options.topP must be a finite number from 0 to 1" in finding.message

    @pytest.mark.parametrize("value", [None, 3, ["x"], {}])
    def test_dynamic_instructions_must_be_a_string(self, value):
        finding = only(with_options(dynamicInstructions=value))
        assert finding.path == ("options", "dynamicInstructions")

    @pytest.mark.parametrize("key", ["reasoning", "providerParams"])
    @pytest.mark.parametrize("value", [None, "high", [], 1, True])
    def test_reasoning_and_provider_params_must_be_objects(self, key, value):
        finding = only(with_options(**{key: value}))
        assert (finding.rule, finding.path) == (RULE_OPTIONS, ("options", key))

    @pytest.mark.parametrize("key", ["reasoning", "providerParams"])
    def test_reasoning_and_provider_params_must_be_json(self, key):
        finding = only(with_options(**{key: {"a": [NAN]}}))
        assert (finding.rule, finding.path) == (RULE_JSON, ("options", key, "a", 0))

    @pytest.mark.parametrize("key", ["max_tokens", "model", "stream", "signal", "onChunk"])
    def test_an_unknown_option_key_fails(self, key):
        finding = only(with_options(**{key: 1}))
        assert (finding.rule, finding.path) == (RULE_OPTIONS, ("options", key))
        assert "not a supported option" in finding.message

    def test_options_are_reported_in_key_order(self):
        request = with_options(topP=5, extra=1, maxTokens=0)
        assert paths(request) == [
            ("options", "topP"),
            ("options", "extra"),
            ("options", "maxTokens"),
        ]

    def test_a_non_string_option_key_fails(self):
        request = base()
        request["options"] = {1: 2}
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_OPTIONS, ("options",))


# ---------------------------------------------------------------------------------------------
# Rule 8: JSON safety


class Hostile:
    """A key whose equality and repr both fail, colliding with a key the validator looks up."""

    def __hash__(self) -> int:
        return hash("system")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparing")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class TestRule8:
    @pytest.mark.parametrize(
        ("where", "expected"),
        [
            (lambda r: r["messages"][0].__setitem__("meta", NAN), ("messages", 0, "meta")),
            (
                lambda r: r["messages"][1]["content"][1].__setitem__("extra", [INF]),
                ("messages", 1, "content", 1, "extra", 0),
            ),
            (
                lambda r: r["messages"][1]["content"][2]["input"].__setitem__("n", -INF),
                ("messages", 1, "content", 2, "input", "n"),
            ),
            (
                lambda r: r["tools"][0]["input_schema"].__setitem__("x", {"y": NAN}),
                ("tools", 0, "input_schema", "x", "y"),
            ),
            (
                lambda r: r["options"].__setitem__("providerParams", {"k": NAN}),
                ("options", "providerParams", "k"),
            ),
            (lambda r: r["tools"][0].__setitem__("x", NAN), ("tools", 0, "x")),
        ],
    )
    def test_nan_anywhere_fails_where_it_is(self, where, expected):
        request = base()
        where(request)
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_JSON, expected)
        assert dotted(expected, "request") in finding.message
        assert "NaN" in finding.message or "Infinity" in finding.message

    @pytest.mark.parametrize(
        "value", [{1, 2}, frozenset({"a"}), (1, 2), b"bytes", bytearray(b"x"), object(), 1j]
    )
    def test_a_python_value_that_is_not_json_fails(self, value):
        request = base()
        request["messages"][0]["meta"] = value
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_JSON, ("messages", 0, "meta"))
        assert "not JSON" in finding.message

    def test_subclasses_of_json_types_are_not_plain(self):
        class Text(str):
            pass

        request = base()
        request["messages"][0]["meta"] = [Text("x"), OrderedDict(a=1)]
        assert paths(request) == [("messages", 0, "meta", 0), ("messages", 0, "meta", 1)]

    def test_an_integer_too_large_for_a_double_is_not_finite(self):
        request = base()
        request["messages"][0]["meta"] = 10**400
        finding = only(request)
        assert "Infinity" in finding.message
        request["messages"][0]["meta"] = 2**1000
        assert validate_request(request) == []

    def test_a_huge_integer_option_does_not_raise(self):
        assert paths(with_options(maxTokens=10**400, temperature=10**400)) == [
            ("options", "maxTokens"),
            ("options", "temperature"),
        ]

    def test_a_non_string_key_fails(self):
        request = base()
        request["messages"][1]["content"][2]["input"] = {"ok": 1, 2: "two", None: 3}
        found = errors(request)
        assert [f.path for f in found] == [("messages", 1, "content", 2, "input")] * 2
        assert all("not a string" in f.message for f in found)

    def test_a_non_string_block_key_fails(self):
        request = with_messages(user({"type": "text", "text": "x", 5: "y"}))
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_JSON, ("messages", 0, "content", 0))

    def test_a_cycle_fails(self):
        request = base()
        loop: list[Any] = [1]
        loop.append(loop)
        request["messages"][0]["meta"] = {"loop": loop}
        finding = only(request)
        assert (finding.rule, finding.path) == (RULE_JSON, ("messages", 0, "meta", "loop", 1))
        assert "cycle" in finding.message

    def test_a_cycle_through_the_request_itself_fails(self):
        request = base()
        request["messages"][1]["content"][2]["input"] = request
        finding = only(request)
        assert finding.path == ("messages", 1, "content", 2, "input")
        assert "cycle" in finding.message

    def test_a_block_that_holds_itself_fails(self):
        request = base()
        block = request["messages"][1]["content"][1]
        block["self"] = block
        assert paths(request) == [("messages", 1, "content", 1, "self")]

    def test_a_message_list_that_holds_itself_fails(self):
        request = base()
        request["messages"].append(request["messages"])
        found = errors(request)
        assert found[0].path == ("messages", 4)
        assert any("cycle" in f.message for f in found)

    def test_a_tool_extra_that_holds_the_request_fails(self):
        request = base()
        request["tools"][0]["back"] = request
        assert paths(request) == [("tools", 0, "back")]

    @pytest.mark.parametrize("container", ["list", "dict"])
    def test_deep_nesting_does_not_raise(self, container):
        depth = 100_000
        deep: Any = NAN
        for _ in range(depth):
            deep = [deep] if container == "list" else {"d": deep}
        request = base()
        request["messages"][0]["meta"] = deep
        finding = only(request)
        assert finding.rule == RULE_JSON
        assert len(finding.path) == depth + 3
        assert "levels" in finding.message and len(finding.message) < 1000

    def test_deep_valid_nesting_is_valid(self):
        deep: Any = "bottom"
        for _ in range(100_000):
            deep = {"d": [deep]}
        request = base()
        request["messages"][1]["content"][2]["input"] = deep
        request["options"]["providerParams"] = {"deep": deep}
        assert validate_request(request) == []

    def test_deep_nesting_in_a_shape_position_does_not_raise(self):
        deep: Any = []
        for _ in range(100_000):
            deep = [deep]
        request = base()
        request["messages"] = [deep]
        assert paths(request) == [("messages", 0)]
        assert validate_request(deep)[0].rule == RULE_OBJECT

    def test_a_wide_shared_graph_is_walked_once(self):
        node: Any = [1]
        for _ in range(200):
            node = [node, node]
        request = base()
        request["messages"][0]["meta"] = node
        assert validate_request(request) == []

    def test_a_shape_finding_is_not_repeated_as_a_json_finding(self):
        request = with_messages(user(text(NAN)))
        assert rules(request) == [RULE_BLOCKS]

    def test_inside_a_value_of_the_wrong_shape_json_problems_still_show(self):
        request = base()
        request["system"] = [NAN]
        assert rules(request) == [RULE_SYSTEM, RULE_JSON]
        assert paths(request) == [("system",), ("system", 0)]

    def test_a_hostile_key_does_not_raise(self):
        request: dict[Any, Any] = {Hostile(): 1}
        found = validate_request(request)
        assert found
        assert found[0].rule in (RULE_OBJECT, RULE_JSON)

    def test_a_hostile_key_deep_inside_does_not_raise(self):
        request = base()
        request["messages"][0]["meta"] = {Hostile(): 1}
        finding = only(request)
        assert finding.path == ("messages", 0, "meta")


# ---------------------------------------------------------------------------------------------
# The order of findings: the first is the one the runtime fails the call on


class TestOrder:
    def test_the_rules_come_in_the_runtimes_order(self):
        request = {
            "system": 1,
            "messages": [user(result("zz", content=[]))],
            "tools": [tool(""), tool(extra=NAN)],
            "options": {"topP": 2},
            "loop": {},
        }
        assert rules(request) == [
            RULE_OBJECT,
            RULE_SYSTEM,
            RULE_BLOCKS,
            RULE_PAIRING,
            RULE_TOOLS,
            RULE_OPTIONS,
            RULE_JSON,
        ]

    def test_a_message_json_problem_comes_before_the_next_message(self):
        request = with_messages(
            {"role": "user", "content": "x", "meta": NAN},
            {"role": "bot", "content": "x"},
        )
        assert paths(request) == [("messages", 0, "meta"), ("messages", 1, "role")]

    def test_a_block_json_problem_comes_before_the_next_block(self):
        request = with_messages(user({"type": "text", "text": "x", "k": {1, 2}}, text(None)))
        assert paths(request) == [
            ("messages", 0, "content", 0, "k"),
            ("messages", 0, "content", 1, "text"),
        ]

    def test_the_first_error_is_what_fails_the_call(self):
        request = base()
        request["options"]["temperature"] = NAN
        request["messages"][2]["content"][0]["content"] = ["x"]
        finding = first(request)
        assert finding.path == ("messages", 2, "content", 0, "content")
        assert finding.message.startswith("request.messages[2].content[0].content")

    def test_findings_are_findings(self):
        request = base()
        request["messages"][0]["role"] = "tool"
        finding = first(request)
        assert finding.pointer == "/messages/0/role"
        # adf.md §3 rule 3: each message's role is "user" or "assistant".
        assert finding.to_json() == {
            "path": "/messages/0/role",
            "message": finding.message,
            "rule": "adf.request.3",
        }


# ---------------------------------------------------------------------------------------------
# Presented but not enabled


class TestPresentedNotEnabled:
    def test_only_new_names_are_flagged_as_warnings(self):
        returned = with_tools(tool("fs_read"), tool("sys_lambda"), tool("web"))
        found = presented_not_enabled([tool("fs_read"), tool("web")], returned)
        assert len(found) == 1
        assert found[0].severity == "warning"
        assert found[0].rule == RULE_NOT_ENABLED
        assert found[0].path == ("tools", 1)
        assert "'sys_lambda' is presented but not enabled" in found[0].message

    def test_names_or_the_input_object_are_accepted(self):
        returned = with_tools(tool("a"), tool("b"))
        assert presented_not_enabled(["a", "b"], returned) == []
        assert presented_not_enabled({"request": with_tools(tool("a"))}, returned)[0].path == (
            "tools",
            1,
        )
        assert len(presented_not_enabled(with_tools(), returned)) == 2

    def test_a_subset_is_never_flagged(self):
        assert presented_not_enabled([tool("a"), tool("b")], with_tools(tool("b"))) == []

    @pytest.mark.parametrize(
        ("given_tools", "returned"),
        [(None, None), (3, base()), ([NAN], {"tools": [None, {"name": 3}]}), ({1, 2}, "x")],
    )
    def test_malformed_input_never_raises(self, given_tools, returned):
        assert isinstance(presented_not_enabled(given_tools, returned), list)

    def test_the_validator_does_not_warn(self):
        returned = with_tools(tool("fs_read"), tool("new"))
        assert validate_request(returned) == []


# ---------------------------------------------------------------------------------------------
# Properties

# Wider than json_strategies.python_values: sets, bytes, an int past the finite bound and
# None keys are what this validator has to name too.
hashables = st.one_of(
    st.integers(), st.text(max_size=5), st.binary(max_size=5), st.tuples(st.integers())
)
python_values = st.recursive(
    json_scalars | st.sampled_from([NAN, INF, -INF, b"x", 10**400]) | st.binary(max_size=4),
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.sets(hashables, max_size=3)
        | st.frozensets(hashables, max_size=3)
        | st.dictionaries(st.text(max_size=5) | st.integers() | st.none(), children, max_size=4)
    ),
    max_leaves=25,
)


@st.composite
def valid_requests(draw: st.DrawFn) -> dict[str, Any]:
    """Valid requests: tool_use/tool_result pairs answered later, in any order, any distance."""
    words = st.text(max_size=10)
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(words)}]
    open_ids: list[str] = []
    counter = 0
    for _ in range(draw(st.integers(0, 6))):
        uses = []
        for _ in range(draw(st.integers(0, 3))):
            counter += 1
            uses.append(use(f"t{counter}", input=draw(json_values)))
            open_ids.append(f"t{counter}")
        blocks: list[Any] = [text(draw(words))]
        if draw(st.booleans()):
            blocks.insert(0, {"type": "thinking", "thinking": draw(words)})
        messages.append(assistant(*blocks, *uses))
        answer = draw(st.permutations(open_ids))
        count = draw(st.integers(0, len(answer)))
        answered, open_ids = answer[:count], list(answer[count:])
        user_blocks: list[Any] = [
            result(i, draw(words), is_error=draw(st.booleans())) for i in answered
        ]
        if draw(st.booleans()):
            user_blocks.append({"type": "image_url", "image_url": {"url": draw(words)}})
        messages.append(user(*user_blocks) if user_blocks else {"role": "user", "content": "."})
    if open_ids:
        messages.append(user(*(result(i) for i in open_ids)))
    names = draw(st.lists(st.text(min_size=1, max_size=6), unique=True, max_size=4))
    options = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "maxTokens": st.integers(1, 10**6),
                "temperature": st.floats(0, 2),
                "topP": st.floats(0, 1),
                "dynamicInstructions": words,
                "reasoning": st.dictionaries(st.text(max_size=5), json_values, max_size=3),
            },
        )
    )
    return {
        "system": draw(words),
        "messages": messages,
        "tools": [
            {"name": n, "description": draw(words), "input_schema": {"type": "object"}}
            for n in names
        ],
        "options": options,
    }


def _places(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if type(value) is dict:
        for k, v in value.items():
            out.extend(_places(v, (*at, k)))
    elif type(value) is list:
        for i, v in enumerate(value):
            out.extend(_places(v, (*at, i)))
    return out


def _replace(value: Any, at: tuple[Any, ...], new: Any) -> Any:
    if not at:
        return new
    parent = value
    for part in at[:-1]:
        parent = parent[part]
    parent[at[-1]] = new
    return value


def _mutate(request: Any, data: st.DataObject) -> Any:
    """One random change: replace a value, drop a key, repeat a list item, or reuse an id."""
    # Deepest places first: hypothesis favours the start of a sampled list.
    places = sorted(_places(request)[1:], key=len, reverse=True)
    if not places:
        return request
    at = data.draw(st.sampled_from(places))
    parent = request
    for part in at[:-1]:
        parent = parent[part]
    kind = data.draw(st.sampled_from(["replace", "drop", "repeat", "id"]))
    if kind == "drop":
        del parent[at[-1]]
    elif kind == "repeat" and type(parent) is list:
        parent.insert(at[-1], copy.deepcopy(parent[at[-1]]))
    elif kind == "id" and type(parent) is dict:
        ids = [p for p in _places(request) if p[-1:] in (("id",), ("tool_use_id",))]
        if ids and at[-1] in ("id", "tool_use_id", "name"):
            other = data.draw(st.sampled_from(ids))
            parent[at[-1]] = _get(request, other)
    else:
        _replace(request, at, data.draw(python_values | json_values))
    return request


def _get(value: Any, at: tuple[Any, ...]) -> Any:
    for part in at:
        value = value[part]
    return value


# An independent statement of where the runtime fails first: (acceptable rules, path prefix).
def _json(value: Any, seen: frozenset[int] = frozenset()) -> bool:
    t = type(value)
    if t is float:
        return math.isfinite(value)
    if t is int:
        return abs(value) < 2**1023
    if t in (str, bool) or value is None:
        return True
    if t not in (dict, list) or id(value) in seen:
        return False
    inner = seen | {id(value)}
    if t is dict:
        return all(type(k) is str and _json(v, inner) for k, v in value.items())
    return all(_json(v, inner) for v in value)


def _nonempty(v: Any) -> bool:
    return type(v) is str and v != ""


def _block_ok(b: dict[str, Any], role: str) -> bool:
    kind = b["type"]
    if kind == "text":
        return type(b.get("text")) is str
    if kind == "thinking":
        return role == "assistant" and type(b.get("thinking")) is str
    if kind == "tool_use":
        return (
            role == "assistant"
            and _nonempty(b.get("id"))
            and _nonempty(b.get("name"))
            and ("input" not in b or _json(b["input"]))
        )
    if kind == "tool_result":
        return (
            role == "user"
            and _nonempty(b.get("tool_use_id"))
            and type(b.get("content")) is str
            and ("is_error" not in b or type(b["is_error"]) is bool)
        )
    inner = b.get(kind)
    fields = ("data", "format") if kind == "input_audio" else ("url",)
    return role == "user" and type(inner) is dict and all(type(inner.get(f)) is str for f in fields)


def _js_order(obj: dict[Any, Any]) -> list[Any]:
    """Keys as JavaScript lists them: array indices (0 to 2^32 - 2) first, ascending."""
    indices = [
        k
        for k in obj
        if type(k) is str and re.fullmatch(r"0|[1-9][0-9]*", k) and int(k) < 2**32 - 1
    ]
    return sorted(indices, key=int) + [k for k in obj if k not in indices]


def _runtime_first(request: Any) -> tuple[set[str], tuple[Any, ...]] | None:
    r1, r2, r3, r4, r5, r6, r7, r8 = (
        RULE_OBJECT,
        RULE_SYSTEM,
        RULE_MESSAGES,
        RULE_BLOCKS,
        RULE_PAIRING,
        RULE_TOOLS,
        RULE_OPTIONS,
        RULE_JSON,
    )
    if type(request) is not dict:
        return {r1}, ()
    for key in _js_order(request):
        if type(key) is not str:
            return {r1}, ()
        if key not in ("system", "messages", "tools", "options"):
            return {r1}, (key,)
    if type(request.get("system")) is not str:
        return {r2}, ("system",)
    messages = request.get("messages")
    if type(messages) is not list or not messages:
        return {r3}, ("messages",)

    for i, m in enumerate(messages):
        if type(m) is not dict:
            return {r3}, ("messages", i)
        role = m.get("role")
        if type(role) is not str or role not in ("user", "assistant"):
            return {r3}, ("messages", i, "role")
        content = m.get("content")
        if type(content) not in (str, list):
            return {r3}, ("messages", i, "content")
        if type(content) is list:
            for j, b in enumerate(content):
                at = ("messages", i, "content", j)
                if type(b) is not dict or type(b.get("type")) is not str:
                    return {r4}, at
                kind = b["type"]
                if kind not in BLOCK_TYPES:
                    return {r4}, at
                if not _block_ok(b, role):
                    return {r4, r8}, at
                if not _json(b):
                    return {r8}, at
        if not _json(m):
            return {r8}, ("messages", i)
    outstanding: set[str] = set()
    completed: set[str] = set()
    for i, m in enumerate(messages):
        if type(m["content"]) is not list:
            continue
        for j, b in enumerate(m["content"]):
            if b["type"] == "tool_use":
                if b["id"] in outstanding or b["id"] in completed:
                    return {r5}, ("messages", i, "content", j)
                outstanding.add(b["id"])
            elif b["type"] == "tool_result":
                if b["tool_use_id"] not in outstanding:
                    return {r5}, ("messages", i, "content", j)
                outstanding.discard(b["tool_use_id"])
                completed.add(b["tool_use_id"])
    if outstanding:
        return {r5}, ("messages",)
    tools = request.get("tools")
    if type(tools) is not list:
        return {r6}, ("tools",)
    names: set[str] = set()
    for k, t in enumerate(tools):
        if type(t) is not dict:
            return {r6}, ("tools", k)
        if not _nonempty(t.get("name")):
            return {r6}, ("tools", k, "name")
        if type(t.get("description")) is not str:
            return {r6}, ("tools", k, "description")
        if type(t.get("input_schema")) is not dict or not _json(t["input_schema"]):
            return {r6, r8}, ("tools", k, "input_schema")
        if t["name"] in names:
            return {r6}, ("tools", k, "name")
        names.add(t["name"])
    options = request.get("options")
    if type(options) is not dict:
        return {r7}, ("options",)
    for key in _js_order(options):
        v = options[key]
        at = ("options", key)
        number = type(v) in (int, float) and _json(v)
        if key in ("maxTokens", "thinkingBudget"):
            good = number and float(v).is_integer() and v > 0
        elif key == "temperature":
            good = number and 0 <= v <= 2
        elif key == "topP":
            good = number and 0 <= v <= 1
        elif key == "dynamicInstructions":
            good = type(v) is str
        elif key in ("reasoning", "providerParams"):
            good = type(v) is dict and _json(v)
        else:
            return {r7}, ("options",)
        if not good:
            return {r7, r8}, at
    if not _json(request):
        return {r8}, ()
    return None


def _check_against_runtime(request: Any) -> None:
    found = validate_request(request)
    expected = _runtime_first(request)
    if expected is None:
        assert found == [], [f.message for f in found]
        return
    allowed, prefix = expected
    head = first_error(found)
    assert head is not None
    assert head.rule in allowed, (head, expected)
    assert head.path[: len(prefix)] == prefix, (head, expected)


class TestProperties:
    @given(json_values)
    @settings(max_examples=examples(300))
    def test_never_raises_on_json(self, value):
        found = validate_request(value)
        assert isinstance(found, list)
        assert all(isinstance(f, Finding) for f in found)
        _check_against_runtime(value)

    @given(python_values)
    @settings(max_examples=examples(300))
    def test_never_raises_on_python_values(self, value):
        found = validate_request(value)
        assert all(type(p) in (str, int) for f in found for p in f.path)
        assert presented_not_enabled(value, value) is not None

    @given(valid_requests())
    @settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
    def test_valid_requests_have_no_findings(self, request):
        assert validate_request(request) == []
        assert validate_request(json.loads(json.dumps(request))) == []

    @given(valid_requests(), st.data())
    @settings(max_examples=examples(250), suppress_health_check=[HealthCheck.too_slow])
    def test_the_first_error_is_the_runtimes(self, request, data):
        for _ in range(data.draw(st.integers(1, 3))):
            request = _mutate(request, data)
        _check_against_runtime(request)

    @given(valid_requests(), st.data())
    @settings(max_examples=examples(200), suppress_health_check=[HealthCheck.too_slow])
    def test_no_findings_means_json_can_hold_it(self, request, data):
        request = _mutate(request, data)
        if not errors(request):
            json.dumps(request, allow_nan=False)

    @given(python_values)
    def test_findings_name_their_location(self, value):
        for f in validate_request({"system": "", "messages": [value], "tools": [], "options": {}}):
            where = dotted(f.path, "request") if len(f.path) <= 48 else "request"
            assert f.message.startswith(where) or f.path == ()


@pytest.mark.parametrize(("block_type", "key"), [("thinking", "thinking"), ("tool_use", "id")])
def test_a_field_that_holds_its_own_block_is_a_cycle_at_the_field(block_type, key):
    block: dict = {"type": block_type, "name": "t", "id": "x", "thinking": "x"}
    block[key] = [block]
    request = {
        "system": "",
        "messages": [{"role": "assistant", "content": [block]}],
        "tools": [],
        "options": {},
    }
    cycles = [f for f in validate_request(request) if "cycle" in f.message]
    assert cycles and cycles[0].path == ("messages", 0, "content", 0, key, 0)
