"""What each provider receives for a request after the hook: every rule of
spec/provider-requests.md §2, in each wire format."""

from __future__ import annotations

import json

import pytest

from studio.core.provider.preview import PROVIDERS, provider_body
from tests.support.provider_bodies import PNG, STAMP, T0


def request(messages, **options):
    return {"system": "Be brief.", "messages": messages, "tools": [], "options": options}


ROUND = [
    {"role": "user", "content": "Why twice?", "created_at": T0, "seq": 4},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "t1", "name": "fs_read", "input": {"path": "a"}},
        ],
        "created_at": T0,
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True},
            {"type": "text", "text": "And?"},
        ],
        "created_at": T0,
        "seq": 6,
    },
]


def test_prefixes_user_strings_and_assistant_strings_but_not_block_arrays():
    messages = [
        {"role": "user", "content": "hi", "created_at": T0, "seq": 3},
        {"role": "assistant", "content": "hello", "created_at": T0, "seq": 4},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            ],
            "created_at": T0,
            "seq": 5,
        },
        {"role": "user", "content": "no time"},
    ]
    sent = provider_body(request(messages), "chat-completions").body["messages"]
    assert sent[1]["content"] == f"{STAMP} [S3] hi"
    assert sent[2]["content"] == f"{STAMP} hello"
    assert sent[3]["content"][0] == {"type": "text", "text": "look"}
    assert sent[4]["content"] == "no time"


def test_a_text_only_user_message_is_collapsed_then_prefixed():
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
            "created_at": T0,
            "seq": 9,
        }
    ]
    sent = provider_body(request(messages), "chat-completions").body["messages"]
    assert sent[1] == {"role": "user", "content": f"{STAMP} [S9] one\ntwo"}


def test_tool_results_become_a_tool_message_and_the_text_a_user_message_after_it():
    sent = provider_body(request(ROUND), "chat-completions").body["messages"]
    assert sent[3] == {"role": "tool", "tool_call_id": "t1", "content": "boom"}
    assert sent[4] == {"role": "user", "content": f"{STAMP} [S6] And?"}
    # Anthropic: the library sends a tool turn and the user turn after it as one user message
    anthropic = provider_body(request(ROUND), "anthropic").body["messages"]
    assert anthropic[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True},
            {"type": "text", "text": f"{STAMP} [S6] And?"},
        ],
    }


def test_tool_names_are_recovered_for_the_tool_message():
    from studio.core.provider.sending import prepared_messages

    tool = prepared_messages(request(ROUND))[2]
    assert tool == {
        "role": "tool",
        "content": [{"id": "t1", "name": "fs_read", "output": "boom", "is_error": True}],
    }


def test_thinking_is_dropped_unless_it_carries_reasoning_details_and_empty_assistants_go():
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "only this"}]},
        {"role": "assistant", "content": ""},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "kept", "reasoning_details": [{"type": "x"}]},
                {"type": "text", "text": "a"},
            ],
        },
    ]
    anthropic = provider_body(request(messages), "anthropic").body["messages"]
    assert [m["role"] for m in anthropic] == ["user", "assistant"]
    assert anthropic[1]["content"][0] == {"type": "thinking", "thinking": "kept"}
    openrouter = provider_body(request(messages), "openrouter").body["messages"]
    assert openrouter[-1]["reasoning_details"] == [{"type": "x"}]
    assert len(openrouter) == 3  # system, user, the one assistant left


def test_dynamic_instructions_are_the_final_user_message():
    body = provider_body(
        request([{"role": "user", "content": "q"}], dynamicInstructions="Today is Monday."),
        "openai",
    ).body
    assert body["input"][0] == {"role": "system", "content": "Be brief."}
    assert body["input"][-1] == {
        "role": "user",
        "content": [{"type": "input_text", "text": "Today is Monday."}],
    }


def test_anthropic_with_thinking_adds_the_budget_and_leaves_out_sampling():
    sent = provider_body(
        request(
            [{"role": "user", "content": "q"}],
            maxTokens=1000,
            thinkingBudget=2000,
            temperature=0.5,
            topP=0.9,
        ),
        "anthropic",
    )
    assert sent.body["max_tokens"] == 3000
    assert sent.body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert "temperature" not in sent.body and "top_p" not in sent.body
    assert any("temperature" in note for note in sent.notes)
    plain = provider_body(
        request([{"role": "user", "content": "q"}], maxTokens=1000, temperature=0.5), "anthropic"
    ).body
    assert (plain["max_tokens"], plain["temperature"]) == (1000, 0.5)


def test_max_tokens_per_wire_format():
    req = request([{"role": "user", "content": "q"}], maxTokens=321)
    assert provider_body(req, "openai").body["max_output_tokens"] == 321
    assert provider_body(req, "chat-completions").body["max_tokens"] == 321
    assert "max_output_tokens" not in provider_body(req, "chatgpt-subscription").body


def test_cache_control_and_other_extra_keys_are_not_forwarded():
    req = request(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            }
        ]
    )
    req["tools"] = [
        {"name": "t", "description": "", "input_schema": {}, "cache_control": {"type": "x"}}
    ]
    for provider in PROVIDERS:
        assert "cache_control" not in json.dumps(provider_body(req, provider).body)
    image = provider_body(req, "anthropic").body["messages"][0]["content"][1]
    assert image == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    }


def test_provider_params_only_for_the_chatgpt_subscription():
    req = request([{"role": "user", "content": "q"}], providerParams={"prompt_cache_key": "k"})
    for provider in PROVIDERS:
        body = provider_body(req, provider).body
        assert ("prompt_cache_key" in body) == (provider == "chatgpt-subscription")


def test_chatgpt_subscription_is_responses_patched():
    body = provider_body(request(ROUND, maxTokens=10), "chatgpt-subscription").body
    assert body["instructions"] == "Be brief."
    assert body["store"] is False and body["stream"] is True
    assert all(item.get("role") != "system" for item in body["input"])


def test_responses_tool_calls_and_outputs():
    items = provider_body(request(ROUND), "openai").body["input"]
    assert items[2] == {
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Reading."}],
    }
    assert items[3] == {
        "type": "function_call",
        "call_id": "t1",
        "name": "fs_read",
        "arguments": '{"path":"a"}',
    }
    assert items[4] == {"type": "function_call_output", "call_id": "t1", "output": "boom"}


def test_tools_per_wire_format():
    req = request([{"role": "user", "content": "q"}])
    req["tools"] = [{"name": "t", "description": "d", "input_schema": {"type": "object"}}]
    assert provider_body(req, "anthropic").body["tools"] == req["tools"]
    assert provider_body(req, "openai").body["tools"] == [
        {"type": "function", "name": "t", "description": "d", "parameters": {"type": "object"}}
    ]
    assert provider_body(req, "chat-completions").body["tools"] == [
        {
            "type": "function",
            "function": {"name": "t", "description": "d", "parameters": {"type": "object"}},
        }
    ]


def test_reasoning_per_wire_format():
    req = request([{"role": "user", "content": "q"}], reasoning={"effort": "high"})
    assert provider_body(req, "openai").body["reasoning"] == {"effort": "high"}
    assert provider_body(req, "chat-completions").body["reasoning_effort"] == "high"
    assert provider_body(req, "openrouter").body["reasoning"] == {"effort": "high"}


def test_an_unknown_provider_is_refused():
    with pytest.raises(ValueError, match="no provider named 'gemini'"):
        provider_body(request([{"role": "user", "content": "q"}]), "gemini")
