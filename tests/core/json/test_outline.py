"""The generic rows of a structured view: glimpses of values, JSON trees, messages and tools."""

from __future__ import annotations

from studio.core.json.outline import json_entries, message_entries, short, tool_entries


def test_a_glimpse_never_reads_more_than_it_shows():
    assert short("a  b\nc") == '"a b c"'
    assert short("x" * 200, limit=10) == '"' + "x" * 10 + '…"'
    assert short({k: 1 for k in "abcdefgh"}) == "{a, b, c, d, e, f, …}"
    assert short([1]) == "[1 item]" and short([]) == "[0 items]"
    assert short(None) == "null"


def test_a_json_tree_opens_only_what_holds_something():
    entries = json_entries({"a/b": {"c": [1]}, "d": [], "e": 2}, "/x")
    assert [(e.label, e.pointer) for e in entries] == [
        ("a/b", "/x/a~1b"),
        ("d", "/x/d"),
        ("e", "/x/e"),
    ]
    assert entries[1].children is None and entries[2].children is None
    assert entries[0].children is not None
    (inner,) = entries[0].children()
    assert (inner.label, inner.detail, inner.pointer) == ("c", "[1 item]", "/x/a~1b/c")


def test_messages_show_roles_blocks_and_calls():
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "name": "f", "input": {}, "id": "t1"}],
            "toolCalls": [{"name": "f"}],
        },
        "odd",
    ]
    entries = message_entries(messages, "/m")
    assert [e.label for e in entries] == ["0  user", "1  assistant", "2"]
    assert entries[1].detail == "1 block: tool_use  · calls f"
    assert entries[1].children is not None
    (block,) = entries[1].children()
    assert (block.label, block.pointer) == ("tool_use", "/m/1/content/0")
    assert block.detail == "f {}  id t1"
    assert message_entries({"not": "a list"}, "/m") == []


def test_tools_show_name_and_description_and_open_their_schema():
    (tool,) = tool_entries(
        [{"name": "s", "description": "d", "input_schema": {"type": "object"}}], "/t"
    )
    assert (tool.label, tool.detail) == ("s", '"d"')
    assert tool.children is not None
    assert [(e.label, e.pointer) for e in tool.children()] == [("type", "/t/0/input_schema/type")]
