"""Captured request bodies of the three provider formats, as a proxy log would hold them:
a tool round, images, thinking, server tools, unparseable arguments, ADF's time prefixes."""

from __future__ import annotations

from typing import Any

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
# 2026-11-30 10:00:00 UTC in epoch ms, and the prefix ADF writes for it
T0 = 1796032800000
STAMP = "[2026-11-30 10:00:00 UTC]"


def anthropic_body() -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 12000,
        "thinking": {"type": "enabled", "budget_tokens": 4000},
        "system": [
            {
                "type": "text",
                "text": "You are a support agent.",
                "cache_control": {"type": "ephemeral"},
            },
            {"type": "text", "text": "Answer in English."},
        ],
        "tools": [
            {
                "name": "fs_read",
                "description": "Read a file",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
                "cache_control": {"type": "ephemeral"},
            },
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"{STAMP} [S4] Why was order 4821 refunded twice?"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                    },
                    {
                        "type": "image",
                        "source": {"type": "url", "url": "https://example.com/receipt.png"},
                    },
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": "x"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "Check the log first.",
                        "signature": "EqQBCkYI",
                    },
                    {"type": "redacted_thinking", "data": "EmwKAhgB"},
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_1",
                        "name": "web_search",
                        "input": {"query": "refund"},
                    },
                    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                    {"type": "text", "text": "Let me read the order log."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "fs_read",
                        "input": {"path": "orders/4821.log"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "is_error": False,
                        "content": [
                            {"type": "text", "text": "refund issued 09:14"},
                            {"type": "text", "text": "refund issued 09:15"},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": PNG,
                                },
                            },
                        ],
                    },
                    {
                        "type": "text",
                        "text": "Is that a bug?",
                        "cache_control": {"type": "ephemeral"},
                    },
                ],
            },
        ],
        "temperature": 1,
        "top_k": 40,
        "stop_sequences": ["###"],
        "tool_choice": {"type": "auto"},
        "metadata": {"user_id": "u-1"},
        "stream": True,
    }


def chat_body() -> dict[str, Any]:
    return {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You are a support agent."},
            {"role": "developer", "content": [{"type": "text", "text": "Answer in English."}]},
            {"role": "user", "content": f"{STAMP} [S4] Why was order 4821 refunded twice?"},
            {
                "role": "assistant",
                "content": f"{STAMP} Let me read the order log.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "fs_read", "arguments": '{"path": "orders/4821.log"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "kb_search", "arguments": '{"query": "double refund'},
                    },
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": "refund issued 09:14; refund issued 09:15",
            },
            {
                "role": "tool",
                "tool_call_id": "call_2",
                "content": [{"type": "text", "text": "no hits"}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Here is the receipt."},
                    {
                        "type": "image_url",
                        "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "low"},
                    },
                    {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                ],
            },
            {"role": "assistant", "content": "It was issued twice by a retry."},
            {"role": "user", "content": "Thanks; summarise it."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "fs_read",
                    "description": "Read a file",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                    "strict": True,
                },
            },
            {
                "type": "function",
                "function": {"name": "kb_search", "parameters": {"type": "object"}},
            },
        ],
        "max_completion_tokens": 2048,
        "reasoning_effort": "low",
        "temperature": 0.2,
        "stream": True,
        "stream_options": {"include_usage": True},
        "parallel_tool_calls": False,
    }


def responses_body() -> dict[str, Any]:
    return {
        "model": "gpt-5",
        "instructions": "You are a support agent.",
        "input": [
            {"role": "developer", "content": "Answer in English."},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": f"{STAMP} [S4] Why was order 4821 refunded twice?",
                    },
                    {
                        "type": "input_image",
                        "image_url": "https://example.com/receipt.png",
                        "detail": "auto",
                    },
                ],
            },
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"},
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Let me read the order log."}],
            },
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "fs_read",
                "arguments": '{"path":"orders/4821.log"}',
            },
            {
                "type": "function_call",
                "call_id": "call_2",
                "name": "kb_search",
                "arguments": "{oops",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "refund issued twice"},
            {"type": "function_call_output", "call_id": "call_2", "output": "no hits"},
            {"role": "user", "content": "Is that a bug?"},
        ],
        "tools": [
            {
                "type": "function",
                "name": "fs_read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                "strict": False,
            },
            {"type": "function", "name": "kb_search", "parameters": {"type": "object"}},
            {"type": "web_search"},
            {"type": "file_search", "vector_store_ids": ["vs_1"]},
        ],
        "max_output_tokens": 4096,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": True,
        "include": ["reasoning.encrypted_content"],
    }
