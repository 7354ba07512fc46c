"""A worker's result frame whose value is exactly the text the caller said it sent: the reply
says it was echoed and leaves the value unread; every other frame reads as it always did."""

from __future__ import annotations

import json

import pytest

from tests.support.worker_results import read_frame

ECHO = json.dumps({"system": "s", "messages": [{"role": "user", "content": "é 👋"}]}).encode()


def read(payload: bytes, echo: bytes | None = ECHO, in_pieces: bool = False):
    return read_frame(payload, in_pieces=in_pieces, echo=echo)


@pytest.mark.parametrize("in_pieces", [False, True])
@pytest.mark.parametrize("echo", [ECHO, memoryview(b"[" + ECHO + b"]")[1:-1]])
def test_the_very_text_sent_comes_back_echoed_and_unread(in_pieces, echo):
    calls = [{"method": "sys_lambda", "gate": "allowed", "depth": 0}]
    head = json.dumps({"status": "ok", "extra": {"calls": calls}}, separators=(",", ":"))
    reply = read(head[:-1].encode() + b',"value":' + ECHO + b"}", echo, in_pieces)
    assert reply.error is None
    assert reply.echoed is True
    assert reply.value is None
    assert reply.extra == {"calls": calls}


def test_an_earlier_value_member_is_replaced_by_the_last_as_json_reads_it():
    payload = b'{"status":"ok","value":[1],"extra":{},"value":' + ECHO + b"}"
    assert json.loads(payload)["value"] == json.loads(ECHO)
    reply = read(payload)
    assert reply.echoed is True and reply.error is None


@pytest.mark.parametrize(
    "payload",
    [
        b'{"status":"ok","extra":{},"value":' + ECHO[:-1] + b" }}",  # other text, same value
        b'{"status":"ok","extra":{},"value":{"echo":' + ECHO + b"}}",
        b'{"status":"ok","extra":{},"value":[' + ECHO + b"]}",
        b'{"status":"ok","extra":{},"value":' + ECHO + b"} ",
    ],
)
def test_any_other_text_is_read_in_full(payload):
    reply = read(payload)
    assert reply.echoed is False
    assert reply.error is None
    assert reply.value == json.loads(payload)["value"]


def test_without_an_echo_to_compare_with_the_value_is_read():
    payload = b'{"status":"ok","extra":{},"value":' + ECHO + b"}"
    reply = read(payload, echo=None)
    assert reply.echoed is False and reply.value == json.loads(ECHO)


def test_a_failure_that_carries_the_text_is_a_failure():
    head = {"status": "error", "kind": "exception", "message": "boom", "extra": {}}
    payload = json.dumps(head, separators=(",", ":"))[:-1].encode() + b',"value":' + ECHO + b"}"
    reply = read(payload)
    assert reply.echoed is False
    assert reply.error is not None and reply.error.kind == "exception"


@pytest.mark.parametrize(
    "payload",
    [
        b'{"status":"ok",,"value":' + ECHO + b"}",
        b'{"status":"ok","extra":{"value":' + ECHO + b"}",
        b'{"status":"ok","extra":"x,"value":' + ECHO + b"}",
        b'{,"value":' + ECHO + b"}",
        '{"status":"ok","extra":{}'.encode("utf-16") + b',"value":' + ECHO + b"}",
    ],
)
def test_a_frame_that_is_not_json_is_unreadable_as_before(payload):
    with pytest.raises(ValueError):
        json.loads(payload)
    reply = read(payload)
    assert reply.echoed is False
    assert reply.error is not None and reply.error.kind == "channel_corrupted"


def test_a_frame_with_the_text_but_no_status_is_not_one_the_worker_writes():
    reply = read(b'{"extra":{},"value":' + ECHO + b"}")
    assert reply.error is not None and reply.error.kind == "channel_corrupted"
