"""A worker's result whose value holds large members of the request exactly as they were sent:
those members are the request's own values, unread, and the value is in every case the one
``json.loads`` reads from the frame (the same members, values, types and key order)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.worker_results import read_frame

MESSAGES = [
    {"role": "user", "content": f"question {i}: é 👋 \ud800 " + "x" * 100} for i in range(300)
]
REQUEST = {"system": "Be kind.", "messages": MESSAGES, "tools": [], "options": {"n": 1}}


def written(value: Any) -> bytes:
    """``value`` as the studio's worker writes it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


def members(request: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    return {k: (written(v).decode("utf-8", "surrogatepass"), v) for k, v in request.items()}


SENT = members(REQUEST)


def read(value_text: bytes, in_pieces: bool = False):
    payload = b'{"status":"ok","extra":{},"value":' + value_text + b"}"
    reply = read_frame(payload, in_pieces=in_pieces, echo=written(REQUEST), echo_members=SENT)
    return reply, payload


def as_json_reads(payload: bytes) -> Any:
    return json.loads(payload)["value"]


def test_the_messages_sent_back_are_the_request_s_own(in_pieces):
    reply, payload = read(written({**REQUEST, "system": "Be brief."}), in_pieces)
    assert reply.error is None and reply.echoed is False
    assert reply.value == as_json_reads(payload)
    assert list(reply.value) == list(REQUEST)
    assert reply.value["system"] == "Be brief."
    assert reply.value["messages"] is MESSAGES


@pytest.fixture(params=[False, True], ids=["whole", "in pieces"])
def in_pieces(request) -> bool:
    return request.param


CHANGED = [*MESSAGES[:-1], {"role": "user", "content": "changed"}]


@pytest.mark.parametrize(
    "value",
    [
        # The messages' exact text inside another member first; the messages themselves changed.
        {"options": {"messages": MESSAGES}, "messages": CHANGED, "system": "s"},
        # ... or the same: either way each is what its text says.
        {"options": {"messages": MESSAGES}, "messages": MESSAGES, "system": "s"},
        # A key that ends in the text '"messages":' (its quote escaped) before the real one.
        {'a"messages': MESSAGES, "messages": CHANGED},
        # One more message: the text sent is only the beginning of the one returned.
        {"messages": [*MESSAGES, {"role": "user", "content": "more"}], "system": "s"},
        # Inside a list, not a member of the request.
        {"messages": CHANGED, "tools": [{"messages": MESSAGES}]},
    ],
    ids=["nested-then-changed", "nested-then-same", "escaped-key", "longer", "in-a-list"],
)
def test_the_sent_text_found_elsewhere_is_read_as_written(value, in_pieces):
    reply, payload = read(written(value), in_pieces)
    assert reply.error is None
    assert reply.value == as_json_reads(payload)
    assert list(reply.value) == list(value)
    assert json.dumps(reply.value) == json.dumps(value)


def test_the_messages_sent_back_after_a_copy_of_their_text_are_still_the_request_s_own(
    in_pieces,
):
    value = {"options": {"messages": MESSAGES}, "messages": MESSAGES, "system": "s"}
    reply, payload = read(written(value), in_pieces)
    assert reply.value == as_json_reads(payload)
    assert reply.value["messages"] is MESSAGES


def test_a_repeated_key_takes_the_last_as_json_reads_it(in_pieces):
    text = written({"messages": MESSAGES, "system": "s"})
    text = text[:-1] + b',"messages":' + written(CHANGED) + b"}"
    reply, payload = read(text, in_pieces)
    assert reply.error is None
    assert reply.value == as_json_reads(payload)
    assert reply.value["messages"] == CHANGED


def test_a_repeated_key_sent_back_last_is_the_request_s_own(in_pieces):
    text = written({"messages": CHANGED, "system": "s"})
    text = text[:-1] + b',"messages":' + written(MESSAGES) + b"}"
    reply, payload = read(text, in_pieces)
    assert reply.error is None
    assert reply.value == as_json_reads(payload)
    assert reply.value["messages"] is MESSAGES


@pytest.mark.parametrize(
    "around",
    [
        (b'{"system":"\xff",', b"}"),  # not UTF-8 next to the messages
        (b'{"system":"s",', b',"x":NaN}'.replace(b"NaN", b"nope")),  # not JSON after them
        (b'{"system":"s"\x00,', b"}"),  # the character that stands for a member, as written
    ],
)
def test_a_frame_that_is_not_json_around_the_shared_text_is_unreadable(around, in_pieces):
    value_text = around[0] + b'"messages":' + written(MESSAGES) + around[1]
    with pytest.raises(ValueError):
        json.loads(b'{"status":"ok","extra":{},"value":' + value_text + b"}")
    reply, _ = read(value_text, in_pieces)
    assert reply.error is not None and reply.error.kind == "channel_corrupted"
