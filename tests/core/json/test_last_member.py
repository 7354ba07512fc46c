"""Reading a JSON object while keeping the exact text of its last member's value."""

from __future__ import annotations

import json

import pytest

from studio.core.json.last_member import loads_with_last_member


def test_the_last_members_text_is_cut_out_exactly():
    data = b'{"status":"ok","extra":{"calls":[]},"value":{"a":[1,2.5,true,null],"b":"x"}}'
    value, text = loads_with_last_member(data, "value")
    assert value == json.loads(data)
    assert text == b'{"a":[1,2.5,true,null],"b":"x"}'


def test_text_before_the_member_that_is_not_ascii_does_not_shift_the_cut():
    data = '{"extra":{"note":"Grüße 👋 \\ud800"},"value":["é",{"k":"👋"}]}'.encode()
    value, text = loads_with_last_member(data, "value")
    assert value == json.loads(data)
    assert text == '["é",{"k":"👋"}]'.encode()


def test_a_raw_lone_surrogate_is_read_as_json_loads_reads_it():
    data = '{"extra":"\ud800","value":"\udfff"}'.encode("utf-8", "surrogatepass")
    value, text = loads_with_last_member(data, "value")
    assert value == json.loads(data)
    assert text == '"\udfff"'.encode("utf-8", "surrogatepass")


def test_a_repeated_key_keeps_the_last_value_and_its_text():
    data = b'{"value":1,"status":"ok","value":[2]}'
    value, text = loads_with_last_member(data, "value")
    assert value == json.loads(data) == {"value": [2], "status": "ok"}
    assert list(value) == list(json.loads(data))
    assert text == b"[2]"


@pytest.mark.parametrize(
    "data",
    [
        b'{"value":[1],"status":"ok"}',  # not the last member
        b'{"status": "ok", "value": [1]}',  # not compact
        b' {"value":[1]}',
        b'{"value":[1]} ',
        b"[1,2]",
        b"{}",
        b'{"value":"a\\u0022"}garbage',
    ],
)
def test_without_a_compact_object_ending_in_the_member_no_text_is_given(data):
    try:
        expected = json.loads(data)
    except ValueError:
        with pytest.raises(ValueError):
            loads_with_last_member(data, "value")
        return
    value, text = loads_with_last_member(data, "value")
    assert value == expected
    assert text is None


@pytest.mark.parametrize(
    "data",
    [b'{"value":[1,}', b'{"value":', b'{"value":1,}', b"\xff\xfe", b'{"value":NaNa}'],
)
def test_what_is_not_json_fails_as_json_loads_fails(data):
    with pytest.raises(ValueError):
        json.loads(data)
    with pytest.raises(ValueError):
        loads_with_last_member(data, "value")


def test_constants_that_json_loads_accepts_are_read_the_same():
    data = b'{"value":[NaN,Infinity,-Infinity,1e400]}'
    value, text = loads_with_last_member(data, "value")
    assert repr(value) == repr(json.loads(data))
    assert text == b"[NaN,Infinity,-Infinity,1e400]"
