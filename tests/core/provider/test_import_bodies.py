"""Captured bodies of each format as pre-LLM samples: every mapping rule of
spec/provider-requests.md §3, and the loss report naming the original body's paths."""

from __future__ import annotations

import pytest

from studio.core.provider.importer import ImportFailed, import_body
from tests.support.provider_bodies import PNG, T0, anthropic_body, chat_body, responses_body


def losses(imported, change=None):
    return {loss.where: loss.message for loss in imported.losses if change in (None, loss.change)}


# ---- Anthropic Messages ------------------------------------------------------------------------


def test_anthropic_body_maps_every_block_kind():
    imported = import_body(anthropic_body(), "anthropic")
    assert imported.valid, imported.findings
    request = imported.sample["request"]
    assert imported.sample["contract"] == "pre_llm" and imported.sample["loop"] == "main"
    assert request["system"] == "You are a support agent.\n\nAnswer in English."
    first, second, third = request["messages"]
    assert first == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Why was order 4821 refunded twice?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/receipt.png"}},
        ],
        "created_at": T0,
        "seq": 4,
    }
    assert second["content"] == [
        {"type": "thinking", "thinking": "Check the log first."},
        {"type": "text", "text": "Let me read the order log."},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "fs_read",
            "input": {"path": "orders/4821.log"},
        },
    ]
    assert third["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": "refund issued 09:14\nrefund issued 09:15",
            "is_error": False,
        },
        {"type": "text", "text": "Is that a bug?"},
    ]
    assert [t["name"] for t in request["tools"]] == ["fs_read"]
    assert "cache_control" not in request["tools"][0]
    assert request["options"] == {"thinkingBudget": 4000, "maxTokens": 8000, "temperature": 1}


def test_anthropic_loss_report_names_each_path_and_why():
    found = losses(import_body(anthropic_body(), "anthropic"))
    assert "cache breakpoints" in found["system[0].cache_control"]
    assert "2 system texts joined" in found["system[1]"]
    assert "server tool 'web_search'" in found["tools[1]"]
    assert "document" in found["messages[0].content[3]"]
    assert "only its text" in found["messages[1].content[0].signature"]
    assert "redacted thinking" in found["messages[1].content[1]"]
    assert "server tool" in found["messages[1].content[2]"]
    assert "server tool" in found["messages[1].content[3]"]
    assert "tool result here is a string" in found["messages[2].content[0].content[2]"]
    assert "12000 - 4000" in found["max_tokens"]
    assert "created_at and seq restored" in found["messages[0].content[0]"]
    unrepresentable = losses(import_body(anthropic_body(), "anthropic"), "not representable")
    assert {"top_k", "stop_sequences", "tool_choice", "metadata", "stream", "model"} <= set(
        unrepresentable
    )


def test_anthropic_string_system_and_no_thinking_keep_max_tokens():
    body = {
        "system": "Be brief.",
        "max_tokens": 300,
        "top_p": 0.9,
        "messages": [{"role": "user", "content": "hi"}],
    }
    imported = import_body(body, "anthropic")
    assert imported.sample["request"]["system"] == "Be brief."
    assert imported.sample["request"]["options"] == {"maxTokens": 300, "topP": 0.9}
    assert imported.losses == []


# ---- OpenAI Chat Completions --------------------------------------------------------------------


def test_chat_body_maps_messages_tool_calls_and_tools():
    imported = import_body(chat_body(), "openai-chat")
    assert imported.valid, imported.findings
    request = imported.sample["request"]
    assert request["system"] == "You are a support agent.\n\nAnswer in English."
    user, assistant, results, answer, last = request["messages"]
    assert user == {
        "role": "user",
        "content": "Why was order 4821 refunded twice?",
        "created_at": T0,
        "seq": 4,
    }
    assert assistant["created_at"] == T0 and "seq" not in assistant
    assert assistant["content"] == [
        {"type": "text", "text": "Let me read the order log."},
        {
            "type": "tool_use",
            "id": "call_1",
            "name": "fs_read",
            "input": {"path": "orders/4821.log"},
        },
        {
            "type": "tool_use",
            "id": "call_2",
            "name": "kb_search",
            "input": '{"query": "double refund',
        },
    ]
    # a run of tool messages and the user message after it: one user message
    assert results["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "call_1",
            "content": "refund issued 09:14; refund issued 09:15",
        },
        {"type": "tool_result", "tool_use_id": "call_2", "content": "no hits"},
        {"type": "text", "text": "Here is the receipt."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]
    assert answer == {"role": "assistant", "content": "It was issued twice by a retry."}
    assert last == {"role": "user", "content": "Thanks; summarise it."}
    assert request["tools"] == [
        {
            "name": "fs_read",
            "description": "Read a file",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
        {"name": "kb_search", "description": "", "input_schema": {"type": "object"}},
    ]
    assert request["options"] == {
        "maxTokens": 2048,
        "temperature": 0.2,
        "reasoning": {"effort": "low"},
    }


def test_chat_unparseable_arguments_and_unknown_is_error_are_reported():
    found = losses(import_body(chat_body(), "openai-chat"))
    assert "not valid JSON" in found["messages[3].tool_calls[1].function.arguments"]
    assert "is_error" in found["messages[4]"]
    assert "strict" in found["tools[0].function.strict"]
    assert "only its URL" in found["messages[6].content[1].image_url.detail"]
    assert {"stream", "stream_options", "parallel_tool_calls", "model"} <= set(found)


def test_chat_tool_messages_at_the_end_become_one_user_message():
    body = chat_body()
    body["messages"] = body["messages"][:6]
    request = import_body(body, "openai-chat").sample["request"]
    assert [b["tool_use_id"] for b in request["messages"][-1]["content"]] == ["call_1", "call_2"]


def test_chat_max_tokens_when_there_is_no_max_completion_tokens():
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 99}
    assert import_body(body, "openai-chat").sample["request"]["options"] == {"maxTokens": 99}


# ---- OpenAI Responses ---------------------------------------------------------------------------


def test_responses_body_folds_calls_and_outputs():
    imported = import_body(responses_body(), "openai-responses")
    assert imported.valid, imported.findings
    assert not imported.incomplete
    request = imported.sample["request"]
    assert request["system"] == "You are a support agent.\n\nAnswer in English."
    user, assistant, results = request["messages"]
    assert user["content"] == [
        {"type": "text", "text": "Why was order 4821 refunded twice?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/receipt.png"}},
    ]
    assert (user["created_at"], user["seq"]) == (T0, 4)
    assert assistant["content"] == [
        {"type": "text", "text": "Let me read the order log."},
        {
            "type": "tool_use",
            "id": "call_1",
            "name": "fs_read",
            "input": {"path": "orders/4821.log"},
        },
        {"type": "tool_use", "id": "call_2", "name": "kb_search", "input": "{oops"},
    ]
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "refund issued twice"},
        {"type": "tool_result", "tool_use_id": "call_2", "content": "no hits"},
        {"type": "text", "text": "Is that a bug?"},
    ]
    assert [t["name"] for t in request["tools"]] == ["fs_read", "kb_search"]
    assert request["tools"][1]["description"] == ""
    assert request["options"] == {
        "maxTokens": 4096,
        "reasoning": {"effort": "medium", "summary": "auto"},
    }
    found = losses(imported)
    assert "built-in tool 'web_search'" in found["tools[2]"]
    assert "file_search" in found["tools[3]"]
    assert "web_search_call" in found["input[3]"]
    assert "reasoning item" in found["input[2]"]
    assert "not valid JSON" in found["input[6].arguments"]
    assert {"store", "include", "model"} <= set(found)


def test_responses_function_call_without_an_assistant_message_starts_one():
    body = {
        "input": [
            {"role": "user", "content": "read it"},
            {"type": "function_call", "call_id": "c", "name": "fs_read", "arguments": "{}"},
            {
                "type": "function_call_output",
                "call_id": "c",
                "output": [{"type": "input_text", "text": "x"}],
            },
        ]
    }
    request = import_body(body, "openai-responses").sample["request"]
    assert request["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "c", "name": "fs_read", "input": {}}],
    }
    assert request["messages"][2]["content"][0]["content"] == "x"


@pytest.mark.parametrize(
    "extra",
    [
        {"previous_response_id": "resp_1"},
        {"input": [{"type": "item_reference", "id": "msg_1"}, {"role": "user", "content": "go"}]},
    ],
)
def test_responses_history_on_the_server_marks_the_sample_incomplete(extra):
    body = {"input": [{"role": "user", "content": "go on"}], **extra}
    imported = import_body(body, "openai-responses")
    assert imported.incomplete
    assert "incomplete" in imported.sample["description"]
    assert any("lives on the provider's server" in loss.message for loss in imported.losses)


def test_responses_input_string_is_one_user_message():
    request = import_body({"input": "hello", "instructions": "Be kind."}).sample["request"]
    assert request["system"] == "Be kind."
    assert request["messages"] == [{"role": "user", "content": "hello"}]


# ---- all formats ----------------------------------------------------------------------------


def test_final_user_message_as_dynamic_instructions():
    imported = import_body(chat_body(), "openai-chat", dynamic_instructions=True)
    request = imported.sample["request"]
    assert request["options"]["dynamicInstructions"] == "Thanks; summarise it."
    assert request["messages"][-1]["role"] == "assistant"
    assert any("dynamicInstructions" in loss.message for loss in imported.losses)


def test_a_sample_that_fails_the_request_checks_is_not_valid():
    body = {
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
            },
        ],
    }
    imported = import_body(body, "anthropic")
    assert not imported.valid
    assert any("t" in f.message and f.path[0] == "request" for f in imported.findings)


def test_a_body_that_is_not_an_object_is_refused():
    with pytest.raises(ImportFailed, match="not a JSON object"):
        import_body([1, 2], "anthropic")


def test_the_loss_report_follows_the_body_top_down():
    imported = import_body(chat_body(), "openai-chat")
    where = [loss.where for loss in imported.losses]
    assert where[:3] == ["model", "messages[1]", "messages[2].content"]
    assert where.index("messages[6]") < where.index("tools[0].function.strict")
    assert where[-1] == "parallel_tool_calls"
