"""The prompt-cache check: the first point where the transformed request stops sharing the
original's prefix, in the provider's order (tools, system, messages)."""

from __future__ import annotations

import copy

import pytest

from studio.core.provider.cache_check import cache_check
from studio.core.provider.preview import PROVIDERS

ORIGINAL = {
    "system": "You are a support agent.",
    "messages": [
        {"role": "user", "content": f"question {k}"}
        if k % 2 == 0
        else {"role": "assistant", "content": f"answer {k}"}
        for k in range(13)
    ],
    "tools": [
        {
            "name": "fs_read",
            "description": "Read",
            "input_schema": {"type": "object", "properties": {}},
        }
    ],
    "options": {"maxTokens": 100},
}


def changed(edit):
    request = copy.deepcopy(ORIGINAL)
    edit(request)
    return request


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_nothing_changed(provider):
    check = cache_check(ORIGINAL, copy.deepcopy(ORIGINAL), provider)
    assert check.kind == "unchanged" and check.kept_messages == 13
    assert check.text == "nothing changed: the whole prompt stays cached (13 messages)"


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_tools_changed(provider):
    check = cache_check(ORIGINAL, changed(lambda r: r["tools"].clear()), provider)
    assert (check.kind, check.kept_messages) == ("tools", 0)
    assert check.text == "tools changed: the whole prompt cache is lost"


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_system_changed(provider):
    def edit(r):
        r["system"] += " Be kind."

    check = cache_check(ORIGINAL, changed(edit), provider)
    assert check.kind == "system"
    assert check.text.startswith("system changed: the whole prompt cache is lost")


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_a_message_in_the_middle_changed(provider):
    def edit(r):
        r["messages"][12]["content"] = "question 12, reworded"

    check = cache_check(ORIGINAL, changed(edit), provider)
    assert (check.kind, check.kept_messages) == ("message", 12)
    assert check.text == "message 13 changed: cache prefix kept through message 12"


def test_keys_in_another_order_count_as_a_change():
    reorder = changed(
        lambda r: r["tools"][0].update(input_schema={"properties": {}, "type": "object"})
    )
    assert reorder["tools"] == ORIGINAL["tools"]  # equal as values, not as the bytes sent
    assert cache_check(ORIGINAL, reorder, "anthropic").kind == "tools"


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_messages_only_appended(provider):
    def edit(r):
        r["messages"] += [
            {"role": "assistant", "content": "answer 13"},
            {"role": "user", "content": "question 14"},
        ]

    check = cache_check(ORIGINAL, changed(edit), provider)
    assert (check.kind, check.kept_messages) == ("appended", 13)
    assert check.text.endswith("cache prefix kept through message 13")


def test_dynamic_instructions_only_touch_the_last_message():
    check = cache_check(
        ORIGINAL, changed(lambda r: r["options"].update(dynamicInstructions="Now: 10:00")), "openai"
    )
    assert (check.kind, check.kept_messages) == ("appended", 13)


def test_messages_removed_from_the_end():
    check = cache_check(ORIGINAL, changed(lambda r: r["messages"].pop()), "chat-completions")
    assert (check.kind, check.kept_messages) == ("removed", 12)


def test_anthropic_thinking_change_keeps_only_tools_and_system():
    check = cache_check(
        ORIGINAL, changed(lambda r: r["options"].update(thinkingBudget=2048)), "anthropic"
    )
    assert check.kind == "thinking"
    assert "tools and system stay cached" in check.text
