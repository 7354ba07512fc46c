"""A hook's returned JSON text read sharing what came back unchanged, or in pieces: the value is
the one ``json.loads`` gives (types, key order), and whatever is not plain UTF-8 JSON is left to
the caller's own read."""

from __future__ import annotations

import json

import pytest

from studio.core.json.pieces import compact_json
from studio.engine.returned_json import IN_PIECES_FROM, read_returned


def request(rounds: int) -> dict:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": f"é 👋 {i} " + "x" * 200}]}
        for i in range(rounds)
    ]
    return {"system": "be kind", "messages": messages, "options": {"temperature": 0.5, "n": 1}}


def members_of(value: dict) -> dict:
    return {k: (compact_json(v), v) for k, v in value.items()}


def test_the_very_text_sent_is_not_read():
    sent = compact_json(request(10)).encode()
    assert read_returned(sent, echo=memoryview(sent), echo_members=None, in_pieces=True) == (
        True,
        None,
    )


@pytest.mark.parametrize("in_pieces", [True, False])
def test_members_sent_back_as_they_went_are_the_request_s_own(in_pieces):
    sent = request(2000)
    returned = {**sent, "system": "be brief"}
    text = compact_json(returned).encode()
    read = read_returned(text, echo=None, echo_members=members_of(sent), in_pieces=in_pieces)
    assert read is not None
    echoed, value = read
    assert not echoed
    assert value == json.loads(text)
    assert list(value) == list(returned)
    assert value["messages"] is sent["messages"]


def test_an_indented_large_text_is_read_as_json_loads_reads_it():
    # As Node writes a result: JSON.stringify(value, null, 2).
    value = {**request(2000), "tools": [], "flags": [True, None, 1.5, -0, 10**20]}
    text = json.dumps(value, indent=2, ensure_ascii=False).encode()
    assert len(text) >= IN_PIECES_FROM
    read = read_returned(text, echo=None, echo_members=None, in_pieces=True)
    assert read is not None
    assert read[1] == json.loads(text)
    assert list(read[1]) == list(json.loads(text))
    assert [type(x) for x in read[1]["flags"]] == [bool, type(None), float, int, int]


def test_a_small_text_without_shared_members_is_left_to_the_caller():
    text = json.dumps(request(2), indent=2).encode()
    assert len(text) < IN_PIECES_FROM
    assert read_returned(text, echo=None, echo_members=None, in_pieces=True) is None


@pytest.mark.parametrize(
    "text",
    [
        b'{"a": NaN, "b": "' + b"x" * IN_PIECES_FROM + b'"}',
        b'{"a": [1, 2,], "b": "' + b"x" * IN_PIECES_FROM + b'"}',
        b'{"a": "\xff", "b": "' + b"x" * IN_PIECES_FROM + b'"}',
        b'\xef\xbb\xbf{"b": "' + b"x" * IN_PIECES_FROM + b'"}',
        '{"b": "'.encode("utf-16-le") + b"x\x00" * IN_PIECES_FROM + '"}'.encode("utf-16-le"),
        b'"' + b"x" * IN_PIECES_FROM + b'"',
    ],
    ids=["nan", "syntax", "not-utf8", "bom", "utf16", "not-a-container"],
)
def test_text_that_is_not_plain_utf8_json_is_left_to_the_caller(text):
    members = {"a": ("1", 1)}
    assert read_returned(text, echo=None, echo_members=members, in_pieces=True) is None
    assert read_returned(text, echo=None, echo_members=None, in_pieces=True) is None
