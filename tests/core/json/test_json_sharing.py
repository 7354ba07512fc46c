"""Reading JSON text that holds, at a known place, an object some of whose members are known
already as text and value: the value read is the one ``json.loads`` reads, and a member whose
text is exactly the known text is the known value itself."""

from __future__ import annotations

import json

import pytest

from studio.core.json.locate import parse_json_sharing

KNOWN = {
    "system": "You are terse.",
    "messages": [{"role": "user", "content": "é 👋 \ud800"}],
    "n": 1,
    "flag": True,
}


def compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


SHARED = {key: (compact(value), value) for key, value in KNOWN.items()}


def envelope(value_text: str) -> str:
    return '{"status":"ok","extra":{"calls":[]},"value":' + value_text + "}"


@pytest.mark.parametrize("depth", [0, 3])
def test_members_sent_back_as_they_are_are_the_known_values(depth):
    returned = {**KNOWN, "system": "You are brief."}
    text = envelope(compact(returned))
    value, taken = parse_json_sharing(text, ("value",), SHARED, depth)
    assert value == json.loads(text)
    assert list(value["value"]) == list(returned)
    assert taken == {"messages", "n", "flag"}
    assert value["value"]["messages"] is KNOWN["messages"]
    assert value["value"]["system"] == "You are brief."


@pytest.mark.parametrize(
    ("value_text", "taken"),
    [
        ('{"n":12}', set()),  # "1" starts "12": not the known member
        ('{"n":1.0}', set()),
        ('{"n":1 }', {"n"}),  # the same value, then space
        ('{ "n" : 1 , "flag" : true }', {"n", "flag"}),
        ('{"flag":true,"flag":false}', set()),  # the last of a repeated key counts
        ('{"flag":false,"flag":true}', {"flag"}),
        ('{"messages":[{"content":"é 👋 \\ud800","role":"user"}]}', set()),  # other key order
        ('{"other":{"n":1}}', set()),
        ("{}", set()),
        ("[1,2]", set()),  # not an object: read as it is
        ('"text"', set()),
    ],
)
def test_any_other_text_is_read_as_json_reads_it(value_text, taken):
    text = envelope(value_text)
    value, got = parse_json_sharing(text, ("value",), SHARED)
    assert value == json.loads(text)
    assert got == taken


def test_a_repeated_value_key_takes_the_last():
    text = '{"value":{"n":1},"status":"ok","value":{"flag":true}}'
    value, taken = parse_json_sharing(text, ("value",), SHARED)
    assert value == {"value": {"flag": True}, "status": "ok"}
    assert taken == {"flag"}


@pytest.mark.parametrize(
    "text",
    [
        envelope('{"n":1'),
        envelope('{"n":1,}'),
        envelope('{"n":NaN}'),  # not JSON, though Python's reader takes it
        envelope('{"n":1}') + "x",
        '{"value":' + compact(KNOWN)[:-1],
        '["value",{"n":1}]',  # no object on the way to the place
        '{"status":"ok"',
        "",
    ],
)
def test_text_that_is_not_json_or_not_an_object_on_the_way_is_left_to_the_caller(text):
    assert parse_json_sharing(text, ("value",), SHARED) is None
