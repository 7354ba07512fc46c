"""The request diff: messages, tools, system and options of an original pre-LLM request against
the transformed one, the summary line, "only changes", odd inputs, and the alignment property."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.core.pre_llm.diff import (
    MINUS,
    MessageEntry,
    RequestDiff,
    Segment,
    diff_lines,
    diff_request,
    diff_text,
    json_number,
    only_changes,
    short_json,
    summary,
)
from studio.core.pre_llm.diff_messages import TEXT_DIFF_MOST
from tests.support.hypothesis_profiles import examples


def text(role: str, words: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": words}]}


def request() -> dict[str, Any]:
    return {
        "system": "You are a careful assistant.\nAnswer briefly.\nCite files.",
        "messages": [
            {"role": "user", "content": "Summarise the notes in docs/."},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me read them."},
                    {"type": "tool_use", "id": "tu_1", "name": "fs_read", "input": {"p": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "tu_1", "content": "alpha beta gamma"}
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "The notes mention three things."},
                    {"type": "text", "text": "The notes cover alpha, beta and gamma."},
                ],
            },
            text("user", "Thanks. Now the second folder please."),
            text("assistant", "Sure, reading it now."),
        ],
        "tools": [
            {"name": "fs_read", "description": "Read a file.", "input_schema": {"type": "object"}},
            {"name": "fs_write", "description": "Write a file.", "input_schema": {}},
            {"name": "search", "description": "Search.", "input_schema": {}},
            {"name": "shell", "description": "Run a command.", "input_schema": {}},
            {"name": "fetch", "description": "Fetch a URL.", "input_schema": {}},
        ],
        "options": {"temperature": 0.7, "topP": 0.9},
    }


def kinds(entries: Any) -> list[str]:
    return [e.kind for e in entries]


def sides(diff: RequestDiff) -> tuple[list[int], list[int]]:
    originals = [e.original_index for e in diff.messages if e.original_index is not None]
    transformed = [e.transformed_index for e in diff.messages if e.transformed_index is not None]
    return originals, transformed


def joined(segments: tuple[Segment, ...], side: str) -> str:
    keep = {"equal", "delete"} if side == "original" else {"equal", "insert"}
    return "".join(s.text for s in segments if s.op in keep)


# ---------------------------------------------------------------------------------------------
# Identical


def test_identical_requests_have_no_changes():
    original = request()
    diff = diff_request(original, json.loads(json.dumps(original)))
    assert diff.summary == "no changes"
    assert summary(diff) == "no changes"
    assert diff.identical
    assert diff.problems == ()
    assert diff.system.kind == "same"
    assert set(kinds(diff.messages)) == {"same"}
    assert [(e.original_index, e.transformed_index) for e in diff.messages] == [
        (k, k) for k in range(6)
    ]
    assert set(kinds(diff.tools)) == {"same"}
    assert set(kinds(diff.options)) == {"same"}
    assert all(e.blocks == () for e in diff.messages)
    assert only_changes(diff).messages == ()
    assert only_changes(diff).tools == ()
    assert only_changes(diff).options == ()


def test_key_order_and_whole_floats_are_no_change():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["messages"] = [dict(reversed(m.items())) for m in transformed["messages"]]
    transformed["messages"][1]["content"][1]["input"] = {"p": "a"}
    original["options"]["maxTokens"] = 100
    transformed["options"]["maxTokens"] = 100.0
    assert diff_request(original, transformed).summary == "no changes"


def test_empty_requests():
    assert diff_request({}, {}).summary == "no changes"
    assert diff_request({"messages": []}, {}).summary == "no changes"


# ---------------------------------------------------------------------------------------------
# Tools


def test_a_removed_tool_is_shown_where_it_was():
    original = request()
    transformed = copy.deepcopy(original)
    del transformed["tools"][2]
    diff = diff_request(original, transformed)
    assert diff.summary == f"tools {MINUS}1"
    assert [(e.kind, e.name, e.original_index, e.transformed_index) for e in diff.tools] == [
        ("same", "fs_read", 0, 0),
        ("same", "fs_write", 1, 1),
        ("removed", "search", 2, None),
        ("same", "shell", 3, 2),
        ("same", "fetch", 4, 3),
    ]
    assert [e.name for e in only_changes(diff).tools] == ["search"]


def test_tools_keep_the_transformed_order_with_removed_ones_after_their_neighbour():
    original = request()
    transformed = copy.deepcopy(original)
    fs_read, _fs_write, search, shell, fetch = transformed["tools"]
    shell["description"] = "Run a shell command."
    added = {"name": "grant_me", "description": "", "input_schema": {}}
    transformed["tools"] = [added, fetch, shell, search, fs_read]
    diff = diff_request(original, transformed)
    assert [(e.kind, e.name) for e in diff.tools] == [
        ("added", "grant_me"),
        ("same", "fetch"),
        ("changed", "shell"),
        ("same", "search"),
        ("same", "fs_read"),
        ("removed", "fs_write"),
    ]
    changed = diff.tools[2]
    assert changed.keys == ("description",)
    assert (changed.original_index, changed.transformed_index) == (3, 2)
    assert diff.summary == f"tools +1 {MINUS}1, 1 tool changed, tools reordered"


def test_tool_keys_that_differ():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["tools"][0]["input_schema"] = {"type": "object", "properties": {}}
    transformed["tools"][0]["x-extra"] = True
    entry = diff_request(original, transformed).tools[0]
    assert entry.kind == "changed"
    assert entry.keys == ("input_schema", "x-extra")


def test_a_boolean_is_not_a_number_in_tools_and_options():
    original = {"tools": [{"name": "t", "description": "", "input_schema": {"strict": True}}]}
    transformed = {"tools": [{"name": "t", "description": "", "input_schema": {"strict": 1}}]}
    assert diff_request(original, transformed).tools[0].keys == ("input_schema",)
    diff = diff_request({"options": {"x": True}}, {"options": {"x": 1}})
    assert diff.summary == "x true → 1"


# ---------------------------------------------------------------------------------------------
# Messages


def test_an_added_message_in_the_middle():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["messages"].insert(3, text("user", "A reminder from the hook."))
    diff = diff_request(original, transformed)
    assert diff.summary == "1 message added"
    assert [(e.kind, e.original_index, e.transformed_index) for e in diff.messages] == [
        ("same", 0, 0),
        ("same", 1, 1),
        ("same", 2, 2),
        ("added", None, 3),
        ("same", 3, 4),
        ("same", 4, 5),
        ("same", 5, 6),
    ]
    added = diff.messages[3]
    assert added.role == "user"
    assert added.label == "user · text"
    assert added.transformed == text("user", "A reminder from the hook.")
    assert added.original is None
    assert added.original_label is None
    assert [e.transformed_index for e in only_changes(diff).messages] == [3]


def test_removed_messages():
    original = request()
    transformed = copy.deepcopy(original)
    del transformed["messages"][4:6]
    diff = diff_request(original, transformed)
    assert diff.summary == "2 messages removed"
    removed = [e for e in diff.messages if e.kind == "removed"]
    assert [(e.original_index, e.label) for e in removed] == [
        (4, "user · text"),
        (5, "assistant · text"),
    ]


def test_a_changed_text_block():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["messages"][3]["content"][1]["text"] = "The notes cover alpha and delta."
    diff = diff_request(original, transformed)
    assert diff.summary == "1 message changed"
    entry = diff.messages[3]
    assert (entry.kind, entry.original_index, entry.transformed_index) == ("changed", 3, 3)
    assert entry.role == "assistant"
    assert entry.label == "assistant · thinking, text"
    assert entry.original_label == "assistant · thinking, text"
    assert entry.fields == ()
    assert [
        (b.kind, b.block_type, b.original_index, b.transformed_index) for b in entry.blocks
    ] == [
        ("same", "thinking", 0, 0),
        ("changed", "text", 1, 1),
    ]
    block = entry.blocks[1]
    assert block.fields == ("text",)
    assert block.text_field == "text"
    assert block.segments == (
        Segment("equal", "The notes cover alpha"),
        Segment("delete", ", beta"),
        Segment("equal", " and "),
        Segment("delete", "gamma"),
        Segment("insert", "delta"),
        Segment("equal", "."),
    )
    assert joined(block.segments, "original") == "The notes cover alpha, beta and gamma."
    assert joined(block.segments, "transformed") == "The notes cover alpha and delta."


def test_a_text_too_long_to_diff_by_words_is_changed_as_a_whole():
    original = request()
    transformed = copy.deepcopy(original)
    # Each side may be long; it is the two together that count.
    half = TEXT_DIFF_MOST // 2
    transformed["messages"][3]["content"][1]["text"] = "word " * (half // 5)
    block = diff_request(original, transformed).messages[3].blocks[1]
    assert (block.kind, block.fields, block.text_field) == ("changed", ("text",), "text")
    assert joined(block.segments, "transformed") == "word " * (half // 5)
    transformed["messages"][3]["content"][1]["text"] = "word " * (TEXT_DIFF_MOST // 5)
    block = diff_request(original, transformed).messages[3].blocks[1]
    assert (block.kind, block.fields) == ("changed", ("text",))
    assert (block.text_field, block.segments) == (None, ())


def test_changed_tool_result_and_thinking_get_an_inline_diff():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["messages"][2]["content"][0]["content"] = "alpha [redacted] gamma"
    transformed["messages"][3]["content"][0]["thinking"] = "The notes mention two things."
    diff = diff_request(original, transformed)
    result = diff.messages[2]
    assert result.label == "user · tool_result fs_read"
    (block,) = result.blocks
    assert (block.kind, block.text_field, block.label) == (
        "changed",
        "content",
        "tool_result fs_read",
    )
    assert [s.op for s in block.segments] == ["equal", "delete", "insert", "equal"]
    assert diff.messages[3].blocks[0].text_field == "thinking"
    assert diff.messages[3].blocks[0].segments[1] == Segment("delete", "three")


def test_blocks_added_and_removed_in_a_changed_message():
    original = request()
    transformed = copy.deepcopy(original)
    assistant = transformed["messages"][1]["content"]
    assistant.insert(0, {"type": "thinking", "thinking": "Read first."})
    del assistant[1]  # the text block
    assistant[-1]["input"] = {"p": "b"}
    entry = diff_request(original, transformed).messages[1]
    assert entry.kind == "changed"
    assert entry.label == "assistant · thinking, tool_use fs_read"
    assert entry.original_label == "assistant · text, tool_use fs_read"
    assert [(b.kind, b.label) for b in entry.blocks] == [
        ("added", "thinking"),
        ("removed", "text"),
        ("changed", "tool_use fs_read"),
    ]
    assert entry.blocks[2].fields == ("input",)
    assert entry.blocks[2].segments == ()


def test_a_string_content_that_becomes_blocks():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["messages"][0]["content"] = [
        {"type": "text", "text": "Summarise the notes in docs/."},
        {"type": "text", "text": "Be brief."},
    ]
    entry = diff_request(original, transformed).messages[0]
    assert entry.kind == "changed"
    assert entry.notes == ("content was a string, now blocks",)
    assert [b.kind for b in entry.blocks] == ["same", "added"]
    assert entry.label == "user · text, text"
    assert entry.original_label == "user · text"


def test_other_message_keys_that_differ():
    original = {"messages": [{"role": "user", "content": "hi"}]}
    transformed = {"messages": [{"role": "user", "content": "hi", "name": "bob"}]}
    entry = diff_request(original, transformed).messages[0]
    assert (entry.kind, entry.fields, entry.blocks[0].kind) == ("changed", ("name",), "same")


def test_a_message_of_another_role_is_not_paired():
    original = {"messages": [text("user", "a")]}
    transformed = {"messages": [text("assistant", "a")]}
    diff = diff_request(original, transformed)
    assert kinds(diff.messages) == ["removed", "added"]
    assert diff.summary == "1 message removed, 1 message added"


def test_a_removal_next_to_an_edit_pairs_the_alike_messages():
    original = {
        "messages": [
            text("user", "start"),
            text("user", "Please delete the temporary files in build."),
            text("user", "Then list the remaining files in the output folder."),
            text("assistant", "done"),
        ]
    }
    transformed = copy.deepcopy(original)
    del transformed["messages"][1]
    transformed["messages"][1]["content"][0]["text"] = "Then list every file in the output folder."
    diff = diff_request(original, transformed)
    assert [(e.kind, e.original_index, e.transformed_index) for e in diff.messages] == [
        ("same", 0, 0),
        ("removed", 1, None),
        ("changed", 2, 1),
        ("same", 3, 2),
    ]


def test_labels():
    original = request()
    diff = diff_request(original, original)
    assert [e.label for e in diff.messages] == [
        "user · text",
        "assistant · text, tool_use fs_read",
        "user · tool_result fs_read",
        "assistant · thinking, text",
        "user · text",
        "assistant · text",
    ]
    odd = {
        "messages": [
            {"role": "user", "content": []},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": ""}]},
            {"role": "user"},
            {"role": "user", "content": 5},
            {"role": "user", "content": [{"type": "text", "text": str(k)} for k in range(5)]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "nope", "content": "", "is_error": True}
                ],
            },
            {"role": 7, "content": [3]},
            "hello",
        ]
    }
    assert [e.label for e in diff_request(odd, odd).messages] == [
        "user · empty",
        "assistant · tool_use",
        "user · no content",
        "user · content is a number",
        "user · text, text, +3 more",
        "user · tool_result (error)",
        "? · not a block (a number)",
        "? · not an object (a string)",
    ]


def test_a_tool_result_far_from_its_tool_use_is_still_named():
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "far", "name": "fs_read", "input": {}}],
        }
    ]
    messages += [text("user", f"filler {k}") for k in range(20)]
    messages.append(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "far", "content": ""}]}
    )
    diff = diff_request({"messages": messages}, {"messages": messages})
    assert diff.messages[-1].label == "user · tool_result fs_read"


def test_reordered_messages_are_moved():
    original = request()
    transformed = copy.deepcopy(original)
    messages = transformed["messages"]
    messages[4], messages[5] = messages[5], messages[4]
    diff = diff_request(original, transformed)
    assert diff.summary == "1 message moved"
    moved = [e for e in diff.messages if e.moved]
    assert len(moved) == 2
    removed = next(e for e in moved if e.kind == "removed")
    added = next(e for e in moved if e.kind == "added")
    assert transformed["messages"][removed.moved_to] == original["messages"][removed.original_index]
    assert added.moved_from == removed.original_index
    assert added.transformed_index == removed.moved_to
    originals, transformeds = sides(diff)
    assert originals == list(range(6))
    assert transformeds == list(range(6))


def test_reversed_messages():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["messages"].reverse()
    diff = diff_request(original, transformed)
    assert diff.summary == "5 messages moved"
    assert sides(diff) == (list(range(6)), list(range(6)))


def test_repeated_messages_are_aligned_exactly_and_fast():
    # Many equal messages make SequenceMatcher quadratic; Myers' algorithm takes over.
    original = {"messages": [text("user", "A"), text("assistant", "B")] * 1500}
    transformed = copy.deepcopy(original)
    del transformed["messages"][1501]
    transformed["messages"].insert(10, text("user", "C"))
    diff = diff_request(original, transformed)
    assert diff.summary == "1 message removed, 1 message added"
    assert sides(diff) == (list(range(3000)), list(range(3000)))


# ---------------------------------------------------------------------------------------------
# System and options


def test_system_change():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["system"] = (
        "You are a careful assistant.\nAnswer very briefly.\nCite files.\nNever guess."
    )
    diff = diff_request(original, transformed)
    assert diff.summary == "system changed"
    assert diff.system.kind == "changed"
    assert diff.system.original == original["system"]
    assert diff.system.transformed == transformed["system"]
    rows = diff.system.lines
    assert [(r.kind, r.original_line, r.transformed_line) for r in rows] == [
        ("same", 0, 0),
        ("changed", 1, 1),
        ("same", 2, 2),
        ("added", None, 3),
    ]
    assert rows[1].segments == (
        Segment("equal", "Answer "),
        Segment("insert", "very "),
        Segment("equal", "briefly."),
    )
    assert rows[3].transformed_text == "Never guess."


def test_system_added_or_emptied():
    assert diff_request({}, {"system": "Be kind."}).summary == "system changed"
    assert diff_request({"system": "Be kind."}, {"system": ""}).summary == "system changed"
    assert diff_request({"system": ""}, {}).summary == "system changed"


def test_options_changes():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["options"]["temperature"] = 0.2
    transformed["options"]["maxTokens"] = 4096
    diff = diff_request(original, transformed)
    assert diff.summary == "temperature 0.7 → 0.2, maxTokens added (4096)"
    assert [(e.kind, e.key, e.old, e.new) for e in diff.options] == [
        ("changed", "temperature", 0.7, 0.2),
        ("same", "topP", 0.9, 0.9),
        ("added", "maxTokens", None, 4096),
    ]
    assert [e.key for e in only_changes(diff).options] == ["temperature", "maxTokens"]


def test_options_removed_objects_and_long_strings():
    original = {
        "options": {
            "topP": 0.9,
            "reasoning": {"effort": "low"},
            "dynamicInstructions": "x" * 100,
            "providerParams": {},
        }
    }
    transformed = {
        "options": {
            "reasoning": {"effort": "high"},
            "dynamicInstructions": "short",
            "thinkingBudget": 2048,
        }
    }
    diff = diff_request(original, transformed)
    assert [(e.kind, e.key) for e in diff.options] == [
        ("removed", "topP"),
        ("changed", "reasoning"),
        ("changed", "dynamicInstructions"),
        ("removed", "providerParams"),
        ("added", "thinkingBudget"),
    ]
    assert diff.summary == (
        "topP removed (0.9), reasoning changed, dynamicInstructions changed, "
        "providerParams removed, thinkingBudget added (2048)"
    )


def test_numbers_as_json_writes_them():
    assert json_number(0.7) == "0.7"
    assert json_number(1.0) == "1"
    assert json_number(4096) == "4096"
    assert json_number(1e21) == "1e+21"
    assert json_number(1e-7) == "1e-7"
    assert json_number(2**53 + 1) == "9007199254740992"
    assert json_number(10**400) == "Infinity"
    assert json_number(float("nan")) == "NaN"
    assert json_number(float("-inf")) == "-Infinity"
    assert short_json("a\nb") == '"a\\nb"'
    assert short_json([1]) is None
    diff = diff_request({"options": {"temperature": 1.0}}, {"options": {"temperature": 1.5}})
    assert diff.summary == "temperature 1 → 1.5"


# ---------------------------------------------------------------------------------------------
# The summary line


def test_summary_in_the_words_of_the_issue():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["system"] = "Be brief."
    del transformed["messages"][4:6]
    transformed["messages"].insert(1, text("user", "Injected."))
    del transformed["tools"][1:4]
    transformed["options"]["temperature"] = 0.2
    diff = diff_request(original, transformed)
    assert diff.summary == (
        "system changed, 2 messages removed, 1 message added, tools \u22123, temperature 0.7 → 0.2"
    )


def test_summary_counts_and_plurals():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["messages"][0]["content"] = "Summarise the notes."
    transformed["messages"][5]["content"][0]["text"] = "Reading."
    transformed["tools"].append({"name": "a", "description": "", "input_schema": {}})
    transformed["tools"].append({"name": "b", "description": "", "input_schema": {}})
    del transformed["options"]["topP"]
    assert diff_request(original, transformed).summary == (
        "2 messages changed, tools +2, topP removed (0.9)"
    )


# ---------------------------------------------------------------------------------------------
# Only changes


def test_only_changes_keeps_the_changes_and_their_details():
    original = request()
    transformed = copy.deepcopy(original)
    transformed["messages"][3]["content"][1]["text"] = "Different."
    del transformed["messages"][5]
    del transformed["tools"][0]
    diff = diff_request(original, transformed)
    changes = only_changes(diff)
    assert [(e.kind, e.original_index) for e in changes.messages] == [
        ("changed", 3),
        ("removed", 5),
    ]
    assert [b.kind for b in changes.messages[0].blocks] == ["same", "changed"]
    assert [e.name for e in changes.tools] == ["fs_read"]
    assert changes.summary == diff.summary
    assert changes.system == diff.system


# ---------------------------------------------------------------------------------------------
# Odd inputs


class Hostile:
    """A value whose own code fails at everything."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def __str__(self) -> str:
        raise RuntimeError("str")

    def __len__(self) -> int:
        raise RuntimeError("len")


@pytest.mark.parametrize(
    "transformed, problem",
    [
        (None, "the transformed request is null, not an object"),
        ("oops", "the transformed request is a string, not an object"),
        ([1, 2], "the transformed request is an array, not an object"),
        (3.5, "the transformed request is a number, not an object"),
        (Hostile(), "the transformed request is a Python Hostile, which is not JSON"),
    ],
)
def test_a_transformed_value_that_is_not_an_object(transformed: Any, problem: str):
    diff = diff_request(request(), transformed)
    assert diff.summary == problem
    assert diff.problems == (problem,)
    assert set(kinds(diff.messages)) == {"removed"}
    assert sides(diff) == (list(range(6)), [])
    assert not diff.identical


def test_the_outer_object_returned_by_mistake():
    original = request()
    diff = diff_request(original, {"request": original, "loop": {"name": "main"}})
    assert diff.problems == ("the transformed request has unexpected keys: request, loop",)
    assert diff.summary.startswith(
        "the transformed request has unexpected keys: request, loop, system changed, "
        "6 messages removed"
    )


def test_parts_of_the_wrong_type():
    original = request()
    transformed = {"system": 5, "messages": "hi", "tools": {"a": 1}, "options": [1]}
    diff = diff_request(original, transformed)
    assert diff.problems == (
        "the transformed system is a number, not a string",
        "the transformed messages is a string, not an array",
        "the transformed tools is an object, not an array",
        "the transformed options is an array, not an object",
    )
    assert diff.system.transformed == "5"
    assert set(kinds(diff.messages)) == {"removed"}
    assert set(kinds(diff.tools)) == {"removed"}


def test_odd_messages_tools_and_options_do_not_raise():
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    deep: Any = "bottom"
    for _ in range(5000):
        deep = [deep]
    odd = [
        None,
        5,
        "text",
        Hostile(),
        {"role": Hostile(), "content": Hostile()},
        {"role": "user", "content": [Hostile(), None, {"type": 5}, {"type": "text", "text": 5}]},
        {"role": "user", "content": cyclic},
        {"role": "user", "content": deep},
        {1: "non-string key", "role": "assistant", "content": float("nan")},
    ]
    original = {
        "system": Hostile(),
        "messages": odd,
        "tools": [Hostile(), None, {"name": 5}, {"name": "x"}, {"name": "x"}],
        "options": {"a": Hostile(), "b": cyclic, "c": deep, 7: float("nan")},
    }
    transformed = {
        "system": "fine",
        "messages": [*odd[::-1], {"role": "user", "content": [Hostile()]}],
        "tools": [{"name": "x", "description": "changed"}, Hostile()],
        "options": {"a": 1, "b": [cyclic], "c": deep, 7: float("nan")},
    }
    for a, b in ((original, transformed), (transformed, original), (original, original)):
        diff = diff_request(a, b)
        assert isinstance(diff.summary, str)
        assert sides(diff) == (list(range(len(a["messages"]))), list(range(len(b["messages"]))))
        for entry in diff.messages:
            assert isinstance(entry.label, str)
            for block in entry.blocks:
                assert isinstance(block.label, str)
        assert only_changes(diff).summary == diff.summary
    # Tools without a name line up by how many unnamed ones came before.
    tools = diff_request(original, transformed).tools
    assert [(e.kind, e.name, e.original_index, e.transformed_index) for e in tools] == [
        ("changed", "x", 3, 0),
        ("removed", "x", 4, None),
        ("changed", "(unnamed)", 0, 1),
        ("removed", "(unnamed)", 1, None),
        ("removed", "(unnamed)", 2, None),
    ]


def test_a_message_entry_without_its_sides():
    entry = MessageEntry("same", 0, 0, "user")
    assert entry.label == "user · ?"
    assert entry.original is None
    assert entry.blocks == ()


# ---------------------------------------------------------------------------------------------
# Text diffs


def test_text_diff_shapes():
    assert diff_text("same", "same") == (Segment("equal", "same"),)
    assert diff_text("", "") == ()
    assert diff_text("", "new") == (Segment("insert", "new"),)
    assert diff_text("old", "") == (Segment("delete", "old"),)
    assert diff_text("hello world", "hello word") == (
        Segment("equal", "hello "),
        Segment("delete", "world"),
        Segment("insert", "word"),
    )
    # Changed words separated only by spaces read as one replacement.
    assert diff_text("a b c", "x y z") == (Segment("delete", "a b c"), Segment("insert", "x y z"))
    assert diff_text("one\ntwo\nthree\n", "one\n2\nthree\n") == (
        Segment("equal", "one\n"),
        Segment("delete", "two"),
        Segment("insert", "2"),
        Segment("equal", "\nthree\n"),
    )


def test_a_long_text_with_a_small_change_is_diffed_in_words():
    words = " ".join(f"w{k}" for k in range(50_000))
    changed = words.replace("w25000 ", "CHANGED ")
    segments = diff_text(words, changed)
    assert [s.op for s in segments] == ["equal", "delete", "insert", "equal"]
    assert (segments[1].text, segments[2].text) == ("w25000", "CHANGED")


def test_diff_lines_rows():
    rows = diff_lines("a\nb\nc", "a\nc\nd")
    assert [(r.kind, r.original_line, r.transformed_line) for r in rows] == [
        ("same", 0, 0),
        ("removed", 1, None),
        ("same", 2, 1),
        ("added", None, 2),
    ]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.text(alphabet="ab \n.é", max_size=40),
    st.text(alphabet="ab \n.é", max_size=40),
)
def test_text_diff_rebuilds_both_sides(a: str, b: str):
    segments = diff_text(a, b)
    assert joined(segments, "original") == a
    assert joined(segments, "transformed") == b
    assert all(s.text for s in segments)
    ops = [s.op for s in segments]
    assert all(x != y for x, y in itertools.pairwise(ops))
    rows = diff_lines(a, b)
    assert [r.original_text for r in rows if r.original_line is not None] == a.splitlines()
    assert [r.transformed_text for r in rows if r.transformed_line is not None] == b.splitlines()


# ---------------------------------------------------------------------------------------------
# The alignment property

messages_strategy = st.lists(
    st.builds(
        lambda role, words: {"role": role, "content": words},
        st.sampled_from(["user", "assistant"]),
        st.sampled_from(["a", "b", "c", "d"]),
    )
    | st.builds(
        lambda role, words: text(role, words),
        st.sampled_from(["user", "assistant"]),
        st.sampled_from(["a", "b", "x y"]),
    ),
    max_size=14,
)


@st.composite
def edited(draw: st.DrawFn) -> tuple[list[Any], list[Any]]:
    original = draw(messages_strategy)
    if draw(st.booleans()):
        return original, draw(messages_strategy)
    transformed = copy.deepcopy(original)
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(["insert", "delete", "edit", "swap"]))
        if action == "insert" or not transformed:
            position = draw(st.integers(0, len(transformed)))
            transformed.insert(position, draw(messages_strategy.filter(bool))[0])
            continue
        k = draw(st.integers(0, len(transformed) - 1))
        if action == "delete":
            del transformed[k]
        elif action == "edit":
            transformed[k] = {"role": transformed[k]["role"], "content": "edited"}
        else:
            j = draw(st.integers(0, len(transformed) - 1))
            transformed[k], transformed[j] = transformed[j], transformed[k]
    return original, transformed


@settings(max_examples=examples(400), deadline=None)
@given(edited())
def test_every_message_appears_once_on_its_side(pair: tuple[list[Any], list[Any]]):
    original, transformed = pair
    diff = diff_request({"messages": original}, {"messages": transformed})
    on_original = [e for e in diff.messages if e.kind in ("same", "removed", "changed")]
    on_transformed = [e for e in diff.messages if e.kind in ("same", "added", "changed")]
    assert len(on_original) == len(original)
    assert len(on_transformed) == len(transformed)
    assert [e.original_index for e in on_original] == list(range(len(original)))
    assert [e.transformed_index for e in on_transformed] == list(range(len(transformed)))
    for entry in diff.messages:
        if entry.kind == "same":
            assert original[entry.original_index] == transformed[entry.transformed_index]
        if entry.kind == "changed":
            assert entry.original["role"] == entry.transformed["role"]
            assert entry.original != entry.transformed
        if entry.moved_to is not None:
            assert transformed[entry.moved_to] == original[entry.original_index]
    if original == transformed:
        assert diff.summary == "no changes"
    else:
        assert diff.summary != "no changes"
    changes = only_changes(diff)
    assert all(e.kind != "same" for e in changes.messages)
    assert len(changes.messages) == sum(1 for e in diff.messages if e.kind != "same")


def _lcs_length(a: list[int], b: list[int]) -> int:
    best = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            best[i][j] = (
                best[i + 1][j + 1] + 1 if a[i] == b[j] else max(best[i + 1][j], best[i][j + 1])
            )
    return best[0][0]


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(st.integers(0, 3), max_size=20),
    st.lists(st.integers(0, 3), max_size=20),
)
def test_the_repetitive_fallback_finds_a_shortest_edit_script(a: list[int], b: list[int]):
    # Myers' algorithm, used when repeated messages would make SequenceMatcher quadratic.
    from studio.core.pre_llm.diff_align import myers

    ops = myers(a, b)
    assert ops is not None
    i = j = equal = 0
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
            equal += i2 - i1
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))
    assert equal == _lcs_length(a, b)
